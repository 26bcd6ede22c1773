"""Transcripts (`services.records.transcript`): export -> parse gives the game back, event for
event; a golden example per deal style; every kind of bad text refused with its code and line.

Pure: bot games folded by the engine, no servers. Regenerate the golden files on purpose only,
then review the diff::

    uv run --frozen python -m tests.events.test_transcript --update
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
import engine.bot
from events.contracts import game as wire
from services.records import transcript as tx

GOLDEN = Path(__file__).with_name("golden")

RULES: list[dict[str, object]] = [
    {},
    {"blind_nil_deficit": 0, "target": 250},  # blind choices and exchanges every hand
    {"blind_bids": True, "blind_bid_deficit": 0, "blind_nil": False, "bags": False},
    {"players": 2, "deal": "draw", "blind_nil": False, "first_lead": "lowest_club"},
    {"players": 2, "blind_nil": False, "nil_value": 50},
    {"players": 3, "mercy": 0},
    {"jokers": True, "deuces_high": True, "boston": True, "ten_for_two_hundred": True},
    {"suicide": True, "team_min_bid": 4},
    {"first_lead": "two_of_clubs", "nil_allowed": False, "blind_nil": False, "min_bid": 0},
    # the seed-004 variants of issue 18
    {"players": 5, "jokers": True, "power_checks": 2, "set_scores_zero": True},
    {"players": 3, "jokers": True},
    {"moe": True, "bidding_order": "partners", "power_checks": 1},
    {"jokers": True, "deuces_high": True, "little_willie": True, "min_bid": 2},
    {
        "suicide": True,
        "suicide_forcing": True,
        "nil_exchange": True,
        "nil_exchange_peek": False,
    },
    {
        "blind_bids": True,
        "blind_bid_deficit": 0,
        "blind_bid_min": 6,
        "ten_for_two_hundred": True,
        "ten_for_two_blind": True,
    },
]


def play(
    options: dict[str, object],
    seed: int,
    *,
    players: tuple[str, ...] | None = None,
    ladder: str = "casual",
    rated: bool = False,
    bots: tuple[int, ...] = (),
    match_id: str | None = None,
    turn_seconds: float = 25.0,
    timeout_rate: float = 0.0,
    restart_rate: float = 0.0,
    leave_rate: float = 0.0,
    blind_nil: tuple[int, ...] = (),
    moe: tuple[int, ...] = (),
) -> list[wire.GameEvent]:
    """Return a whole game's stream as the table writes it: the opening, the engine's events
    of bots playing every seat, and (at ``timeout_rate``) turns timed out and seats abandoned
    after three in a row, (at ``leave_rate``) seats whose players left the table, (at
    ``restart_rate``) turn clocks restarted after an outage; the
    seats in ``blind_nil`` bid blind nil whenever they may, those in
    ``moe`` a Moe (the biggest legal) whenever they may."""
    rules = engine.Ruleset.from_options(options)  # type: ignore[arg-type]
    seats = players or tuple(f"p{s}" for s in range(rules.players))
    events: list[wire.GameEvent] = [
        wire.TableOpened(
            game_id=f"game-{seed}",
            ladder=ladder,
            rated=rated,
            players=seats,
            bots=bots,
            match_id=match_id,
            turn_seconds=turn_seconds,
        )
    ]
    rng = random.Random(seed)
    streaks = [0] * rules.players
    abandoned: set[int] = set()
    decided = engine.decide(engine.initial_state(), engine.StartGame(rules, seed))
    state = engine.replay(decided)
    events += [wire.to_wire(e) for e in decided]
    while state.phase != "over":
        seat = state.turn
        if restart_rate and seat not in abandoned and rng.random() < restart_rate:
            seconds = round(rng.uniform(1.0, 600.0), 1)
            events.append(wire.TurnClockRestarted(seat=seat, seconds=seconds))
        if seat not in abandoned and rng.random() < timeout_rate:
            streaks[seat] += 1
            events.append(wire.TurnTimedOut(seat=seat, streak=streaks[seat]))
            if streaks[seat] == 3:
                events.append(wire.SeatAbandoned(seat=seat, player_id=seats[seat], streak=3))
                abandoned.add(seat)
        elif seat not in abandoned:
            streaks[seat] = 0
        leaver = rng.randrange(rules.players) if leave_rate and rng.random() < leave_rate else -1
        if leaver >= 0 and leaver not in abandoned:  # whenever he likes, on turn or not
            events.append(
                wire.SeatAbandoned(
                    seat=leaver, player_id=seats[leaver], streak=streaks[leaver], left=True
                )
            )
            abandoned.add(leaver)
        command = engine.bot.choose(engine.view(state, seat), rng)
        if seat in blind_nil and engine.DeclareBlindNil(seat) in engine.legal_actions(state, seat):
            command = engine.DeclareBlindNil(seat)
        moes = [
            c for c in engine.legal_actions(state, seat) if isinstance(c, engine.PlaceBid) and c.moe
        ]
        if seat in moe and moes:
            command = moes[-1]
        decided = engine.decide(state, command)
        state = engine.replay(decided, state)
        for e in decided:
            extra = {}
            if isinstance(e, engine.GameFinished):
                extra = {
                    "ladder": ladder,
                    "rated": rated,
                    "players": seats,
                    "abandoned": tuple(sorted(abandoned)),
                }
            events.append(wire.to_wire(e, **extra))
    return events


def folded(events: list[wire.GameEvent]) -> engine.GameState:
    return engine.replay([e for e in map(wire.to_engine, events) if e is not None])


def unseeded(events: list[wire.GameEvent]) -> list[wire.GameEvent]:
    """Return the events as a transcript without its seed gives them back: seed 0."""
    return [
        msgspec.structs.replace(e, seed=0) if isinstance(e, wire.GameStarted) else e for e in events
    ]


# a player id or ladder name of any shape: the writer quotes what is not a plain word
names = st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=0, max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=st.sampled_from(RULES),
    seed=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    ids=st.lists(names, min_size=5, max_size=5),
    ladder=names,
    rated=st.booleans(),
    match_id=st.none() | names,
    turn_seconds=st.floats(min_value=0.5, max_value=600, allow_nan=False),
    timeout_rate=st.sampled_from([0.0, 0.02, 0.3]),
    restart_rate=st.sampled_from([0.0, 0.05]),
    leave_rate=st.sampled_from([0.0, 0.01]),
)
def test_export_then_parse_gives_the_same_events_and_state(
    rules: dict[str, object],
    seed: int,
    ids: list[str],
    ladder: str,
    rated: bool,
    match_id: str | None,
    turn_seconds: float,
    timeout_rate: float,
    restart_rate: float,
    leave_rate: float,
) -> None:
    players = engine.Ruleset.from_options(rules).players  # type: ignore[arg-type]
    events = play(
        rules,
        seed,
        players=tuple(ids[:players]),
        ladder=ladder,
        rated=rated,
        bots=(players - 1,),
        match_id=match_id,
        turn_seconds=round(turn_seconds, 3),
        timeout_rate=timeout_rate,
        restart_rate=restart_rate,
        leave_rate=leave_rate,
    )
    final = folded(events)
    assert final.phase == "over"

    # with the seed (`spades replay`): the very same events, and the deals checked against it
    read = tx.parse(tx.export(events, seed=True))
    assert read.seeded
    assert list(read.events) == events
    assert read.state == final

    # as the HTTP API writes it (no seed): the same events bar the seed, the same final state
    text = tx.export(events)
    assert not re.search(r"seed -?\d", text)
    read = tx.parse(text)
    assert not read.seeded
    assert list(read.events) == unseeded(events)
    assert read.state == final._replace(seed=0)
    assert tx.export(list(read.events)) == text  # and it writes back to the same text


def test_a_game_in_progress_exports_face_down_and_is_not_read_back() -> None:
    events = play({"players": 2, "deal": "draw", "blind_nil": False}, 3)
    for cut in (40, 200, len(events) - 1):
        part = events[:cut]
        state = folded(part)
        text = tx.export(part, seed=True)
        assert text.endswith(tx.FACE_DOWN_NOTE + "\n")
        assert not re.search(r"seed -?\d", text)
        # the only cards written are those played (and the tricks they make)
        played = {e.card for e in part if isinstance(e, wire.CardPlayed)}
        unplayed = {engine.card_str(c) for c in (*state.stock, *sum(state.hands, ()))}
        unplayed |= {engine.card_str(c) for d in state.discards for c in d}
        written = set(re.findall(r"\b(?:[2-9TJQKA][CDHS]|LJ|BJ)\b", text))
        assert written <= played
        this_hand = text[text.rindex(" dealt by ") :]  # cards of earlier hands are dealt again
        assert not set(re.findall(r"\b(?:[2-9TJQKA][CDHS]|LJ|BJ)\b", this_hand)) & unplayed
        with pytest.raises(tx.TranscriptError) as refused:
            tx.parse(text)
        assert refused.value.code == "face_down"
        assert refused.value.line == 3  # the first deal, whose cards are not written


# -- golden examples ----------------------------------------------------------------------------

GOLDEN_GAMES: dict[str, tuple[dict[str, object], int, float]] = {  # rules, seed, timeout rate
    "transcript_ladder_timeouts": ({"hand_cap": 2, "blind_nil_deficit": 0}, 2, 0.2),
    "transcript_two_player_draw": (
        {"players": 2, "deal": "draw", "blind_nil": False, "hand_cap": 1},
        12,
        0.0,
    ),
    "transcript_moe_power_checks": (
        {"moe": True, "power_checks": 2, "bidding_order": "partners", "hand_cap": 2},
        5,
        0.0,
    ),
    "transcript_five_players_jokers": (
        {"players": 5, "jokers": True, "power_checks": 1, "hand_cap": 1},
        6,
        0.0,
    ),
}


def golden_events(name: str) -> list[wire.GameEvent]:
    options, seed, rate = GOLDEN_GAMES[name]
    return play(
        options, seed, bots=(1,), match_id="m-1", timeout_rate=rate, blind_nil=(0,), moe=(1, 2)
    )


@pytest.mark.parametrize("name", sorted(GOLDEN_GAMES))
def test_golden_transcript_is_written_and_read_back_exactly(name: str) -> None:
    path = GOLDEN / f"{name}.txt"
    assert path.exists(), f"no {path}: python -m tests.events.test_transcript --update"
    golden = path.read_text()
    events = golden_events(name)
    assert tx.export(events) == golden
    read = tx.parse(golden)
    assert list(read.events) == unseeded(events)
    assert read.state == folded(events)._replace(seed=0)


def test_golden_files_show_what_they_are_kept_for() -> None:
    ladder = (GOLDEN / "transcript_ladder_timeouts.txt").read_text()
    assert " timed out (" in ladder
    assert " abandoned after 3 timeouts" in ladder
    assert re.search(r"passes \w\w \w\w to", ladder)  # a blind-nil exchange, face up
    draw = (GOLDEN / "transcript_two_player_draw.txt").read_text()
    assert re.search(r"dealt by P\d: stock( \w\w){52}$", draw, re.MULTILINE)
    assert " keeps " in draw
    moe = (GOLDEN / "transcript_moe_power_checks.txt").read_text()
    assert re.search(r"[NESW] bids (Big|Little) Moe", moe)
    assert re.search(r"dealt by [NESW] \(face up N \w\w \w\w; E \w\w \w\w;", moe)
    five = (GOLDEN / "transcript_five_players_jokers.txt").read_text()
    assert re.search(r"opened on .*: P0 .*P4 ", five)
    assert re.search(r"scored: tricks \[\d+, \d+, \d+, \d+, \d+\]", five)


# -- refusals -----------------------------------------------------------------------------------


def finished_text() -> tuple[list[wire.GameEvent], list[str]]:
    events = play({}, 21)
    return events, tx.export(events).splitlines()


def refused(text: str) -> tx.TranscriptError:
    with pytest.raises(tx.TranscriptError) as caught:
        tx.parse(text)
    return caught.value


def test_a_truncated_transcript_is_refused() -> None:
    _, lines = finished_text()
    cut = len(lines) // 2
    at_line = refused("\n".join(lines[:cut]) + "\n")
    assert (at_line.code, at_line.line) == ("truncated", cut + 1)
    mid_line = refused("\n".join(lines[:cut]) + "\n" + lines[cut][:12])
    assert (mid_line.code, mid_line.line) == ("truncated", cut + 1)
    assert refused("").code == "truncated"


def test_a_card_played_twice_is_refused() -> None:
    events, lines = finished_text()
    plays = [i for i, e in enumerate(events) if isinstance(e, wire.CardPlayed)]
    first = events[plays[0]]
    assert isinstance(first, wire.CardPlayed)
    again = next(i for i in plays[1:] if events[i].seat == first.seat)  # type: ignore[attr-defined]
    lines[again] = re.sub(r"plays \w\w$", f"plays {first.card}", lines[again])
    error = refused("\n".join(lines))
    assert (error.code, error.line) == ("card_not_in_hand", again + 1)
    assert first.card in str(error)


def test_an_illegal_play_is_refused_with_the_rule_broken() -> None:
    events, lines = finished_text()
    state = engine.initial_state()
    i = 0
    for i, event in enumerate(events):  # noqa: B007 - i is the line found
        if isinstance(event, wire.CardPlayed) and state.trick:
            led = state.tables.suit[state.trick[0]]
            hand = state.hands[event.seat]
            off = [c for c in hand if state.tables.suit[c] != led]
            if off and any(state.tables.suit[c] == led for c in hand):
                break  # the seat follows suit here, and holds a card that does not
        engine_event = wire.to_engine(event)
        if engine_event is not None:
            state = engine.apply(state, engine_event)
    else:
        raise AssertionError("no seat ever held two suits when following")
    lines[i] = re.sub(r"plays \w\w$", f"plays {engine.card_str(off[0])}", lines[i])
    error = refused("\n".join(lines))
    assert (error.code, error.line) == ("must_follow_suit", i + 1)


def test_an_unknown_or_inconsistent_rule_option_is_refused() -> None:
    _, lines = finished_text()
    assert lines[1].endswith("rules: ladder defaults")
    lines[1] = lines[1].replace("ladder defaults", "target=300 shoot_the_moon=true")
    error = refused("\n".join(lines))
    assert (error.code, error.line) == ("unknown_rule", 2)
    assert "shoot_the_moon" in str(error)
    lines[1] = lines[1].replace("target=300 shoot_the_moon=true", "suicide=true players=2")
    assert (refused("\n".join(lines)).code, refused("\n".join(lines)).line) == (
        "invalid_ruleset",
        2,
    )


def test_every_other_kind_of_bad_line_is_refused_where_it_is() -> None:
    events, lines = finished_text()
    dealt = lines[2]

    def bad(index: int, line: str) -> tuple[str, int]:
        changed = list(lines)
        changed[index] = line
        error = refused("\n".join(changed))
        return error.code, error.line

    # a card dealt twice, a short hand, a card no deck of these rules holds
    first, second = re.findall(r"; E (\w\w) (\w\w)", dealt)[0]
    assert bad(2, dealt.replace(f"E {first} {second}", f"E {first} {first}")) == (
        "invalid_deal",
        3,
    )
    assert bad(2, dealt.replace(f"E {first} ", "E ")) == ("invalid_deal", 3)
    assert bad(2, dealt.replace(f"E {first} ", "E LJ ")) == ("invalid_deal", 3)
    # a fact the engine derives otherwise: the trick's winner
    trick = next(i for i, e in enumerate(events) if isinstance(e, wire.TrickWon))
    winner = lines[trick][-1]
    other = next(s for s in "NESW" if s != winner)
    assert bad(trick, lines[trick][:-1] + other) == ("mismatch", trick + 1)
    # an action out of turn, a step out of order, a line of no known shape
    bid = next(i for i, e in enumerate(events) if isinstance(e, wire.BidPlaced))
    seat = lines[bid].split()[1]
    wrong = next(s for s in "NESW" if s != seat)
    assert bad(bid, lines[bid].replace(f"  {seat} bids", f"  {wrong} bids")) == (
        "out_of_turn",
        bid + 1,
    )
    assert bad(bid, lines[bid].replace(f"{bid + 1:5d}", f"{bid + 2:5d}")) == ("bad_step", bid + 1)
    assert bad(bid, f"{bid + 1:5d}  {seat} shrugs") == ("malformed_line", bid + 1)
    # the face-down form of a line: nothing to replay
    assert bad(2, dealt.split(":")[0]) == ("face_down", 3)
    # a line after the end
    extra = refused("\n".join([*lines, f"{len(lines) + 1:5d}  N bids 3"]))
    assert (extra.code, extra.line) == ("game_over", len(lines) + 1)


def test_a_written_seed_must_deal_the_written_hands() -> None:
    events = play({}, 5)
    lines = tx.export(events, seed=True).splitlines()
    lines[1] = re.sub(r"seed -?\d+", "seed 6", lines[1])
    error = refused("\n".join(lines))
    assert error.code == "mismatch"
    assert error.line in (2, 3)  # the first dealer, or else the deal, is not seed 6's


def _update() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name in GOLDEN_GAMES:
        (GOLDEN / f"{name}.txt").write_text(tx.export(golden_events(name)))
        print(f"wrote {GOLDEN / name}.txt")


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    _update()


NOT_TRANSCRIBED = {
    "bot_level": "which bot chose the bots' moves: the moves themselves are its lines",
    "unlisted": "whether the lobby listed the table: nothing of the game",
    "free_text_chat": "whether free text was allowed: what was said is its lines",
}
"""Fields of `TableOpened` a transcript leaves out on purpose, and why."""


def test_the_formats_records_carry_every_field_of_the_table_facts_they_stand_for() -> None:
    # The engine may not import the platform's contracts, so `engine.notation` keeps plain
    # records of the table's facts; a field added to a fact must reach its record (or be
    # named above) or transcripts would drop it without a word.
    from dataclasses import fields

    from engine import notation
    from events.contracts.talk import Talked

    pairs = [
        (notation.Opened, wire.TableOpened, set(NOT_TRANSCRIBED)),
        (notation.TimedOut, wire.TurnTimedOut, set()),
        (notation.ClockRestarted, wire.TurnClockRestarted, set()),
        (notation.Abandoned, wire.SeatAbandoned, set()),
        (notation.Talk, Talked, set()),
    ]
    for record, fact, left_out in pairs:
        carried = [f.name for f in fields(record)]
        assert carried == [f for f in fact.__struct_fields__ if f not in left_out], record
