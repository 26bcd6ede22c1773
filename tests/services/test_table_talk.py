"""Table talk at the table, without servers (`services.table.talk`, `events.contracts.talk`):
every refusal with its own code, and a property over random games that no talk reaches an
audience that may not hear it at that moment, through the per-audience frames the table
publishes or the catch-ups it replays from the log; and the records (replay, transcript,
export, verify) read a game with talk in it."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
import engine.bot
from events.contracts import game as wire
from events.contracts import talk as talk_wire
from events.contracts.audience import Frame, messages_after
from events.contracts.game import stream_of
from events.contracts.talk import Say
from events.envelope import REGISTRY
from events.store import InMemoryEventStore
from services.records import export, fairness, openspiel, transcript
from services.records.public import Game
from services.table import audiences, talk
from services.table.openings import opening_events
from services.table.tables import Rejected, Table
from tests.services.tablekit import append_as_the_table

PLAYERS = ("ann", "bob", "cy", "di", "eve")
POLICY = talk.TalkSettings(talk_max_chars=40, talk_per_minute=5)


async def _open(
    store: InMemoryEventStore,
    *,
    rated: bool = False,
    free_text_chat: bool = False,
    rules: engine.Ruleset | None = None,
) -> tuple[Table, list[Frame]]:
    rules = rules or engine.Ruleset(target=100)
    table = Table(str(uuid.uuid4()))
    opening = opening_events(
        table.game_id,
        ladder="standard" if rated else "casual",
        rated=rated,
        players=PLAYERS[: rules.players],
        bots=(),
        rules=rules,
        seed=3,
        turn_seconds=25.0,
        free_text_chat=free_text_chat,
    )
    return table, [await append_as_the_table(store, table, opening)]


def _say(table: Table, player: str, say: Say, now: float | None = None) -> list[wire.GameEvent]:
    return list(talk.decide(table, player, say, now=now, policy=POLICY))


async def _play_until(store: InMemoryEventStore, table: Table, phase: str) -> list[Frame]:
    frames = []
    while table.state.phase != phase and not table.over:
        seat = table.state.turn
        command = engine.bot.choose(engine.view(table.state, seat))
        events = table.decide(table.players[seat], wire.command_to_wire(command))
        frames.append(await append_as_the_table(store, table, events))
    return frames


def _refused(table: Table, player: str, say: Say, now: float | None = None) -> str:
    with pytest.raises(Rejected) as caught:
        _say(table, player, say, now)
    return caught.value.code


# -- refusals, each with its own code ----------------------------------------------------------


async def test_a_spectator_may_not_talk() -> None:
    table, _ = await _open(InMemoryEventStore())
    assert _refused(table, "mallory", Say(preset="sure", n=3)) == "talk_not_seated"
    assert table.decide  # the same through the table's own door:
    with pytest.raises(Rejected) as caught:
        table.decide("mallory", Say(preset="sure", n=3))
    assert caught.value.code == "talk_not_seated"


async def test_presets_belong_to_their_phase() -> None:
    store = InMemoryEventStore()
    table, _ = await _open(store)
    assert table.state.phase == "bid"
    assert _refused(table, "ann", Say(preset="nice")) == "talk_wrong_phase"
    said = _say(table, "ann", Say(preset="sure", n=4))
    assert said == [
        talk_wire.Talked(seat=0, to="partner", preset="sure", n=4, hearers=(2,), spectators=False)
    ]
    await _play_until(store, table, "play")
    assert _refused(table, "ann", Say(preset="maybe", n=6)) == "talk_wrong_phase"
    assert _say(table, "ann", Say(preset="nice"))[0].hearers == (1, 2, 3)  # type: ignore[attr-defined]
    await _play_until(store, table, "over")
    assert _refused(table, "ann", Say(preset="good_game")) == "talk_wrong_phase"


async def test_unknown_presets_and_numbers_are_refused() -> None:
    table, _ = await _open(InMemoryEventStore())
    for say in (
        Say(preset="hearts_are_high"),
        Say(preset="sure"),
        Say(preset="sure", n=14),
        Say(preset="nil", n=2),
        Say(preset="sure", n=3, text="and some"),
        Say(),
    ):
        assert _refused(table, "ann", say) == "talk_unknown_preset", say


async def test_free_text_only_where_the_table_allows_it_and_within_the_limit() -> None:
    closed, _ = await _open(InMemoryEventStore())
    assert _refused(closed, "ann", Say(text="hi all")) == "talk_free_text_off"
    table, _ = await _open(InMemoryEventStore(), free_text_chat=True)
    assert _refused(table, "ann", Say(text="x" * 41)) == "talk_too_long"
    said = _say(table, "ann", Say(text="  hi\x00 \n all  "))
    assert said[0].text == "hi all"  # type: ignore[attr-defined]
    assert said[0].to == "table"  # type: ignore[attr-defined]  # free text: never partner-only


async def test_no_partner_talk_without_partnerships() -> None:
    table, _ = await _open(InMemoryEventStore(), rules=engine.Ruleset(players=3, target=100))
    assert _refused(table, "ann", Say(preset="sure", n=2)) == "talk_no_partner"


async def test_a_flood_is_refused_counted_from_the_log() -> None:
    store = InMemoryEventStore()
    table, _ = await _open(store)
    for _ in range(POLICY.talk_per_minute):
        await append_as_the_table(store, table, _say(table, "ann", Say(preset="no_help")))
    assert _refused(table, "ann", Say(preset="no_help")) == "talk_flood"
    assert _say(table, "bob", Say(preset="no_help"))  # another seat has its own count
    later = time.time() + talk.WINDOW + 1
    assert _say(table, "ann", Say(preset="no_help"), now=later)
    # a new owner folding the log counts the same
    again = Table(table.game_id)
    for s in await store.read(stream_of(table.game_id)):
        again.fold(s, REGISTRY.decode(s))
    assert _refused(again, "ann", Say(preset="no_help")) == "talk_flood"


async def test_partner_talk_to_or_from_a_blocked_player_is_refused_as_not_available() -> None:
    table, _ = await _open(InMemoryEventStore())
    # ann and cy are partners; the gateway says they are apart (one blocked the other)
    for speaker, other in (("ann", "cy"), ("cy", "ann")):
        with pytest.raises(Rejected) as caught:
            _say(table, speaker, Say(preset="sure", n=3, apart=(other,)))
        assert caught.value.code == "talk_unavailable"
        assert "block" not in str(caught.value)  # nothing beyond "not available"


async def test_table_talk_skips_the_blocked_and_the_muting_silently() -> None:
    store = InMemoryEventStore()
    table, _ = await _open(store, free_text_chat=True)
    said = _say(table, "ann", Say(text="hello", apart=("bob",), deaf=("di",)))
    assert said[0].hearers == (2,)  # type: ignore[attr-defined]
    muted = _say(table, "ann", Say(preset="sure", n=2, deaf=("cy",)))
    assert muted[0].hearers == ()  # type: ignore[attr-defined]  # accepted; cy hears nothing


async def test_talk_moves_no_clock_and_resets_no_streak() -> None:
    store = InMemoryEventStore()
    table, _ = await _open(store)
    deadline, seat = table.deadline, table.state.turn
    table.streaks[seat] = 2
    await append_as_the_table(store, table, _say(table, PLAYERS[seat], Say(preset="nil")))
    assert table.deadline == deadline
    assert table.streaks[seat] == 2
    assert table.state.turn == seat


# -- who hears what: a property over random games ----------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """A seat tries to say something after ``at`` moves of the game."""

    at: int
    seat: int
    say: Say


SAYINGS = st.one_of(
    st.builds(Say, preset=st.sampled_from(["sure", "maybe"]), n=st.integers(1, 13)),
    st.builds(Say, preset=st.sampled_from([*sorted(talk_wire.BID_PRESETS), "nice", "sorry"])),
    st.builds(Say, text=st.sampled_from(["hello", "nice one", "oops"])),
)
APART = st.sampled_from([(), ("bob",), ("cy",)])
DEAF = st.sampled_from([(), ("ann",), ("di",), ("bob", "cy")])


def _allowed(table: Table, seat: int, event: talk_wire.Talked, audience: int, over: bool) -> bool:
    """The oracle, written apart from the code: may ``audience`` hear ``event`` now?"""
    if over or audience == seat:
        return True
    if audience < 0:
        return event.to == "table" and not (table.opened and table.opened.rated)
    return audience in event.hearers


@settings(settings.get_profile("ci"), max_examples=25)
@given(
    rated=st.booleans(),
    free=st.booleans(),
    seed=st.integers(0, 10_000),
    attempts=st.lists(
        st.builds(Attempt, at=st.integers(0, 80), seat=st.integers(0, 3), say=SAYINGS),
        max_size=25,
    ),
    apart=APART,
    deaf=DEAF,
)
async def test_no_talk_reaches_anyone_who_may_not_hear_it_at_that_moment(
    rated: bool, free: bool, seed: int, attempts: list[Attempt], apart: tuple, deaf: tuple
) -> None:
    store = InMemoryEventStore()
    table, frames = await _open(store, rated=rated, free_text_chat=free)
    pending = sorted(attempts, key=lambda a: a.at)
    said: dict[int, talk_wire.Talked] = {}
    policy = talk.TalkSettings(talk_per_minute=1000)
    moves = 0
    while not table.over:
        while pending and pending[0].at <= moves:
            a = pending.pop(0)
            say = Say(preset=a.say.preset, n=a.say.n, text=a.say.text, apart=apart, deaf=deaf)
            try:
                events = list(talk.decide(table, PLAYERS[a.seat], say, policy=policy))
            except Rejected:
                continue
            frames.append(await append_as_the_table(store, table, events))
            said[table.version] = events[0]  # type: ignore[assignment]
        seat = table.state.turn
        rng_move = engine.bot.choose(engine.view(table.state, seat))
        events = table.decide(PLAYERS[seat], wire.command_to_wire(rng_move))
        frames.append(await append_as_the_table(store, table, events))
        moves += 1
    stored = await store.read(stream_of(table.game_id))
    last = len(stored)
    for audience in range(-1, 4):
        sent = messages_after(frames, audience, 0, last)
        assert sent is not None
        assert [json.loads(m)["seq"] for m in sent] == list(range(1, last + 1))
        replayed = audiences.replayed_messages(table.game_id, stored, audience, 0, last)
        assert list(replayed) == sent
        for message in sent:
            body = json.loads(message)
            seq, event = body["seq"], body["event"]
            if seq not in said:
                assert event["type"] not in ("Talked", "TalkWithheld")
                continue
            truth = said[seq]
            if _allowed(table, truth.seat, truth, audience, over=False):
                assert event == json.loads(msgspec.json.encode(truth))
            else:
                assert event == {"type": "TalkWithheld"}, (audience, truth)
    # after the game everything said is public in the replay
    game = Game(table.game_id, stored)
    public = {e.seq: e.event for e in game.events()}
    for seq, truth in said.items():
        assert public[seq] == truth


# -- the records read a game with talk in it -----------------------------------------------------


async def test_transcript_replay_and_export_keep_the_talk(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    table, _ = await _open(store, free_text_chat=True)
    await append_as_the_table(store, table, _say(table, "ann", Say(preset="sure", n=4)))
    await append_as_the_table(store, table, _say(table, "cy", Say(preset="maybe", n=2)))
    await append_as_the_table(store, table, _say(table, "bob", Say(text='he said "go" \\ nil')))
    await _play_until(store, table, "play")
    await append_as_the_table(store, table, _say(table, "di", Say(preset="nice")))
    await _play_until(store, table, "over")
    stored = await store.read(stream_of(table.game_id))
    events = [REGISTRY.decode(s) for s in stored]
    text = transcript.export(events)
    assert "N says to partner: sure 4 (heard by S)" in text
    assert 'E says to table: "he said \\"go\\" \\\\ nil" (heard by N S W, spectators)' in text
    back = transcript.parse(text)
    assert [e for e in back.events if isinstance(e, talk_wire.Talked)] == [
        e for e in events if isinstance(e, talk_wire.Talked)
    ]
    assert back.state.scores == table.state.scores
    # the export carries it, and reads back to the same game
    record = export.game_record(table.game_id, stored, {})
    line = json.loads(export.encode_line(record))
    assert [e for e in export.events_of(line) if isinstance(e, talk_wire.Talked)] == [
        e for e in events if isinstance(e, talk_wire.Talked)
    ]
    assert export.replay_record(line).scores == table.state.scores
    assert fairness.verify(events)  # the deals check out, talk or not
    episodes, _ = openspiel.hands_of(table.game_id, events)
    assert episodes
    # a game in progress: its public transcript withholds what spectators may not hear
    live = transcript.export(events[:12])
    assert "sure 4" not in live
    assert "talk withheld" in live
    assert 'E says to table: "he said' in live  # table talk at an unrated table is public


async def test_the_operators_word_filter_masks_whole_words_in_any_case(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("# the operator's list\nbadword\nvery rude\n\n")
    policy = talk.TalkSettings(talk_words_file=str(words))
    table, _ = await _open(InMemoryEventStore(), free_text_chat=True)
    said = talk.decide(table, "ann", Say(text="BadWord! very  rude, badwords stay"), policy=policy)
    # whole words only ("badwords" is another word); the event, as logged, never holds them
    assert said[0].text == "*******! *********, badwords stay"  # type: ignore[attr-defined]


def test_a_bad_talk_setting_or_word_file_is_named_at_the_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from events.settings import SettingsError

    monkeypatch.setenv("SPADES_TALK_MAX_CHARS", "0")
    talk.settings.cache_clear()
    try:
        with pytest.raises(SettingsError, match="SPADES_TALK_MAX_CHARS"):
            talk.check()
        monkeypatch.setenv("SPADES_TALK_MAX_CHARS", "120")
        monkeypatch.setenv("SPADES_TALK_WORDS_FILE", str(tmp_path / "missing.txt"))
        talk.settings.cache_clear()
        with pytest.raises(FileNotFoundError, match=r"missing\.txt"):
            talk.check()
    finally:
        talk.settings.cache_clear()
