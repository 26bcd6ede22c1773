"""The transcript format in the engine (`engine.transcript`, `engine.notation`): over the
engine's own events and the table's facts as plain records, with no platform in sight.

Every entry is written and read back to itself; a whole bot game (with the table's timeouts,
abandoned seats, restarted clocks and talk) reads back entry for entry to the engine's state;
a game in progress is written face down and refused; a line the rules refuse is named by its
code and number. The platform's adapter and the golden files are tested in
tests/events/test_transcript.py.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
import engine.bot
from engine import transcript
from engine.notation import (
    Abandoned,
    ClockRestarted,
    Entry,
    LineRefused,
    Notation,
    Opened,
    Talk,
    TimedOut,
    describe,
)

SAY = ["sure", "nil_please", "good_luck"]
EVENTS = tuple(engine.EVENT_TYPES.values())
"""The engine's event classes (the entries the engine folds)."""


def bot_game(
    seed: int, options: dict[str, object], *, facts: bool, until: int | None = None
) -> list[Entry]:
    """Return the entries of a game of baseline bots: its opening, the engine's events and,
    with ``facts``, the table's own facts at random seats' turns (a talk, a timeout, a
    restarted clock, an abandoned seat after three timeouts); stop after ``until`` actions."""
    rules = engine.Ruleset.from_options(options)  # type: ignore[arg-type]
    players = tuple(f"p {s}" if s % 2 else f"p{s}" for s in range(rules.players))
    entries: list[Entry] = [
        Opened(f"g-{seed}", "casual", seed % 2 == 0, players, bots=(1,), turn_seconds=10.0)
    ]
    rng = random.Random(seed)
    decided = engine.decide(engine.initial_state(), engine.StartGame(rules, seed))
    state = engine.replay(decided)
    entries += decided
    streaks = [0] * rules.players
    actions = 0
    while state.phase != "over" and (until is None or actions < until):
        seat = state.turn
        if facts and rng.random() < 0.05:
            heard = ((seat + 1) % rules.players,)
            entries.append(Talk(seat, "table", rng.choice(SAY), hearers=heard, spectators=True))
        if facts and rng.random() < 0.03:
            entries.append(ClockRestarted(seat, round(rng.uniform(1.0, 30.0), 1)))
        if facts and streaks[seat] < 3 and rng.random() < 0.05:
            streaks[seat] += 1
            entries.append(TimedOut(seat, streaks[seat]))
            if streaks[seat] == 3:
                entries.append(Abandoned(seat, players[seat], 3))
        new = engine.decide(state, engine.bot.choose(engine.view(state, seat), rng))
        for event in new:
            state = engine.apply(state, event)
        entries += new
        actions += 1
    return entries


@settings(max_examples=15)
@given(
    seed=st.integers(0, 2**32),
    options=st.sampled_from(
        [
            {},
            {"players": 2, "deal": "draw", "blind_nil": False, "first_lead": "lowest_club"},
            {"players": 3, "mercy": 0},
            {"players": 5, "jokers": True, "power_checks": 2},
            {"moe": True, "nil_exchange": True, "blind_nil_deficit": 0},
        ]
    ),
)
def test_a_bot_game_reads_back_entry_for_entry(seed: int, options: dict[str, object]) -> None:
    entries = bot_game(seed, options, facts=True)
    text = transcript.export(entries)
    read = transcript.parse(text)
    started = entries[1]
    assert isinstance(started, engine.GameStarted)
    unseeded = dataclasses.replace(started, seed=0)  # unwritten: the deals come from the text
    assert list(read.entries) == [entries[0], unseeded, *entries[2:]]
    assert read.state == engine.replay(e for e in read.entries if isinstance(e, EVENTS))
    assert read.state._replace(seed=started.seed) == engine.replay(
        e for e in entries if isinstance(e, EVENTS)
    )
    assert read.opened == entries[0]
    assert read.seeded is False
    assert transcript.export(list(read.entries)) == text


def test_the_seed_is_written_only_when_asked_and_then_checks_the_deals() -> None:
    entries = bot_game(7, {}, facts=False)
    assert " seed 7," not in transcript.export(entries)
    seeded = transcript.export(entries, seed=True)
    assert " seed 7," in seeded
    read = transcript.parse(seeded)
    assert read.seeded is True
    assert read.entries[1] == entries[1]  # GameStarted with its seed, as decided


@pytest.mark.parametrize(
    "entry",
    [
        Opened('a "quoted" id', "ladder-1", True, ("ann", "b o b", "cy", "di"), match_id="m 1"),
        engine.BidPlaced(0, 0),
        engine.BidPlaced(1, 5, blind=True),
        engine.BidPlaced(2, 6, moe=True),
        engine.BidPlaced(3, 8, moe=True),
        engine.BlindNilDeclared(0),
        engine.BlindNilDeclined(1),
        engine.CardsPassed(0, 2, (engine.parse_card("QS"), engine.parse_card("2C"))),
        engine.CardPlayed(3, engine.parse_card("TH")),
        engine.CardDrawn(1, engine.parse_card("AS"), engine.parse_card("3D")),
        engine.TrickWon(2, tuple(engine.parse_cards("2C 9C QC 4C"))),
        engine.HandScored(2, (3, 4, 3, 3), (60, -70), (60, -70), (0, 0)),
        engine.GameFinished(-1, "hand_cap", (510, 510)),
        engine.SeedContributed(1, "ab" * 32),
        engine.SeedRevealed("cd" * 32),
        TimedOut(2, 1),
        ClockRestarted(0, 12.5),
        Abandoned(1, "b o b", 3),
        Talk(0, "partner", preset="sure", n=4, hearers=(2,)),
        Talk(1, "table", text='good luck, "all"', hearers=(0, 2, 3), spectators=True),
        Talk(3, "table", preset="good_luck"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_each_line_reads_back_to_the_entry_it_was_written_from(entry: Entry) -> None:
    line = describe(entry, 4, face_up=True).strip()
    if isinstance(entry, Opened):  # the first line, read by the transcript (it names the seats)
        assert transcript._Reader()._opened(line) == entry
    else:
        assert Notation(4).entry(line) == entry


def test_a_game_in_progress_is_written_face_down_and_refused() -> None:
    entries = bot_game(11, {"nil_exchange": True, "blind_nil_deficit": 0}, facts=True, until=30)
    text = transcript.export(entries)
    assert text.endswith(transcript.FACE_DOWN_NOTE + "\n")
    state = engine.replay(e for e in entries if isinstance(e, EVENTS))
    for hand in state.hands:  # nobody's cards, but the cards already played, are in the text
        for card in set(hand):
            assert f" {engine.card_str(card)}" not in text
    with pytest.raises(transcript.TranscriptError) as refused:
        transcript.parse(text)
    assert refused.value.code == "face_down"
    assert refused.value.line == 3  # the deal line shows no hand


def test_a_line_the_rules_refuse_is_named_by_its_code_and_number() -> None:
    entries = bot_game(5, {}, facts=False)
    lines = transcript.export(entries).splitlines(keepends=True)
    first_play = next(i for i, e in enumerate(entries) if isinstance(e, engine.CardPlayed))
    play = entries[first_play]
    assert isinstance(play, engine.CardPlayed)
    held = engine.replay(e for e in entries[:first_play] if isinstance(e, EVENTS)).hands
    stranger = next(c for seat, h in enumerate(held) if seat != play.seat for c in h)
    lines[first_play] = lines[first_play].replace(
        f"plays {engine.card_str(play.card)}", f"plays {engine.card_str(stranger)}"
    )
    with pytest.raises(transcript.TranscriptError) as refused:
        transcript.parse("".join(lines))
    assert refused.value.code == "card_not_in_hand"
    assert refused.value.line == first_play + 1
    assert str(refused.value).startswith(f"line {first_play + 1}: ")
    assert refused.value.detail in str(refused.value)


def test_a_line_outside_the_format_is_refused_with_its_code() -> None:
    with pytest.raises(LineRefused) as refused:
        Notation(4).entry("N shrugs")
    assert refused.value.code == "malformed_line"
    with pytest.raises(LineRefused) as refused:
        Notation(4).entry("P3 plays QS")  # no such seat at a table of four
    assert refused.value.code == "malformed_line"
