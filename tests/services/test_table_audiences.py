"""What the table builds for each audience (`services.table.audiences`), without servers:
whole bot games appended through a `Table`, every frame checked against the true state
(hidden information), the seats' and spectators' streams complete and in order, a catch-up
from the frames equal to one replayed from the log, and hints at practice tables only."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import msgspec
import pytest

import engine
import engine.bot
import engine.search
from events.contracts import game as wire
from events.contracts.audience import Frame, messages_after
from events.contracts.game import stream_of
from events.envelope import REGISTRY, Metadata, StoredEvent
from events.store import InMemoryEventStore
from services.table import audiences
from services.table.openings import opening_events
from services.table.tables import Table
from tests.gateway.hidden import leaks, states
from tests.gateway.wsclient import Received
from tests.services.tablekit import append_as_the_table

PLAYERS = ("ann", "bob", "cy", "di", "eve")


async def _game(
    rules: engine.Ruleset, ladder: str = "casual"
) -> tuple[Table, list[Frame], list[StoredEvent]]:
    store = InMemoryEventStore()
    game_id = str(uuid.uuid4())
    table = Table(game_id)
    practice = ladder == "practice"
    players = PLAYERS[: rules.players]
    frames = [
        await append_as_the_table(
            store,
            table,
            opening_events(
                game_id,
                ladder=ladder,
                rated=False,
                players=players,
                bots=tuple(range(1, rules.players)) if practice else (),
                rules=rules,
                seed=11,
                turn_seconds=25.0,
            ),
            "table",
        )
    ]
    while not table.over:
        seat = table.state.turn
        command = engine.bot.choose(engine.view(table.state, seat))
        events = table.decide(players[seat], wire.command_to_wire(command))
        frames.append(await append_as_the_table(store, table, events, players[seat]))
    return table, frames, await store.read(stream_of(game_id))


def _received(data: list[bytes]) -> list[Received]:
    return [Received(at=0.0, text=d.decode(), body=json.loads(d)) for d in data]


RULES = [
    engine.Ruleset(target=100),
    engine.Ruleset.from_options({"blind_nil_deficit": 0, "target": 100}),
    engine.Ruleset.from_options({"players": 2, "deal": "draw", "blind_nil": False, "target": 100}),
    engine.Ruleset.from_options({"players": 5, "jokers": True, "power_checks": 3, "target": 100}),
]


@pytest.mark.parametrize("rules", RULES, ids=["ladder", "blind", "draw", "five"])
async def test_every_audience_gets_every_event_once_and_nothing_secret(
    rules: engine.Ruleset,
) -> None:
    table, frames, stored = await _game(rules)
    truth = states(stored)
    last = len(stored)
    for seat in range(-1, rules.players):
        upto = last  # the game's end releases everything to spectators too
        sent = messages_after(frames, seat, 0, upto)
        assert sent is not None
        got = _received(sent)
        assert [r.body["seq"] for r in got] == list(range(1, last + 1))
        assert not leaks(got, table.game_id, seat, truth)
        # the same messages as a catch-up replayed from the log, from any point
        for after in (0, last // 3, last - 5):
            again = audiences.replayed_messages(table.game_id, stored, seat, after, upto)
            assert list(again) == sent[after:]
        # a seat's hand: what the last message told it is the truth
        if seat >= 0:
            hands = [r.body["hand"] for r in got if r.body.get("hand") is not None]
            assert hands, seat
    # spectators only ever get whole tricks: each frame's release ends with a trick or the end
    for f in frames:
        if f.spectators:
            end = json.loads(f.spectators[-1])["event"]["type"]
            assert end in ("TrickWon", "GameFinished")


async def test_the_checker_catches_a_planted_leak() -> None:
    table, frames, stored = await _game(RULES[0])
    truth = states(stored)
    sent = messages_after(frames, 1, 0, len(stored))
    assert sent is not None
    dealt = next(i for i, d in enumerate(sent) if b'"HandDealt"' in d)
    body = json.loads(sent[dealt])
    body["event"]["face_up"] = [[wire.visible_hand(truth[body["seq"]], 0)[0]]]  # type: ignore[index]
    planted = [*sent[:dealt], json.dumps(body).encode(), *sent[dealt + 1 :]]
    assert leaks(_received(planted), table.game_id, 1, truth)


async def test_turns_and_clocks_follow_the_game_and_the_logged_deadline() -> None:
    _, frames, stored = await _game(RULES[0])
    for f in frames[:-1]:
        clock = json.loads(f.clock)
        record = stored[f.last - 1]
        assert clock["seq"] == f.last
        assert clock["deadline"] == record.metadata.deadline
        on_turn = [s for s, t in enumerate(f.turns) if t]
        assert on_turn == [clock["seat"]]
        turn = json.loads(f.turns[clock["seat"]])
        assert turn["deadline"] == clock["deadline"]
        assert turn["legal"]
    assert frames[-1].clock == b""
    assert not any(frames[-1].turns)


def _on_turn(ladder: str) -> Table:
    table = Table(str(uuid.uuid4()))
    events = opening_events(
        table.game_id,
        ladder=ladder,
        rated=False,
        players=PLAYERS[:4],
        bots=(1, 2, 3) if ladder == "practice" else (),
        rules=engine.Ruleset(),
        seed=4,
        turn_seconds=25.0,
    )
    for version, event in enumerate(events, 1):
        table.fold(_stored(version, event), event)
    while table.state.turn != 0:
        command = engine.bot.choose(engine.view(table.state, table.state.turn))
        for event in table._engine_events(command):
            table.fold(_stored(table.version + 1, event), event)
    return table


def _stored(version: int, event: wire.GameEvent) -> StoredEvent:
    new = REGISTRY.new_event(event, Metadata(), event_id=uuid.uuid4())
    return StoredEvent(
        stream_id="game-x",
        version=version,
        event_id=new.event_id,
        type=new.type,
        data=new.data,
        metadata=new.metadata,
        recorded_at=datetime.now(UTC),
        transaction_id=1,
        position=version,
    )


def test_the_hint_is_the_bot_tiers_at_practice_tables_only_and_never_a_search_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(name: str, **budget: object) -> object:
        raise AssertionError(f"the table ran the {name} bot: that belongs to the bot tier")

    monkeypatch.setattr(engine.search, "player", refused)
    practice = _on_turn("practice")
    turn = json.loads(audiences.turn_message(practice, 0, hints=True))
    assert "suggestion" not in turn  # none asked of the tier yet: none invented here
    legal = engine.view(practice.state, 0).legal
    practice.hint = (practice.version, 0, legal[0])
    turn = json.loads(audiences.turn_message(practice, 0, hints=True))
    assert turn["suggestion"] in turn["legal"]
    plain = json.loads(audiences.turn_message(practice, 0))
    assert "suggestion" not in plain
    casual = _on_turn("casual")
    casual.hint = (casual.version, 0, legal[0])
    assert "suggestion" not in json.loads(audiences.turn_message(casual, 0, hints=True))


async def test_a_view_asked_again_is_the_same_bytes_until_the_game_or_its_hint_changes() -> None:
    """Views and turns are kept per (game, version, seat, suggestion): a client asking fifty
    times a second costs one encoding. Kept bytes must equal fresh ones at every version of
    a whole game, for every seat and a spectator, and a hint that comes at the same version
    must show in the next view."""
    from events.contracts.audience import View

    table, _, stored = await _game(engine.Ruleset(target=100))
    replayed = Table(table.game_id)
    fresh = msgspec.json.Encoder()
    for s in stored:
        replayed.fold(s, REGISTRY.decode(s))
        for player in (*PLAYERS[:4], "someone watching"):
            first = audiences.view_message(replayed, player)
            if replayed.seat_of(player) is not None:
                expected = View(
                    game_id=replayed.game_id, seq=replayed.version, view=replayed.view(player)
                )
                assert first == fresh.encode(expected)
            assert audiences.view_message(replayed, player) == first
    practice = _on_turn("practice")
    before = json.loads(audiences.view_message(practice, PLAYERS[0]))
    assert before["view"].get("suggestion") is None
    practice.hint = (practice.version, 0, engine.view(practice.state, 0).legal[0])
    after = json.loads(audiences.view_message(practice, PLAYERS[0]))
    assert after["seq"] == before["seq"]
    assert after["view"]["suggestion"] in after["view"]["legal"]
