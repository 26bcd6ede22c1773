"""`spades replay`: face up once a game is over, never before."""

from __future__ import annotations

import re
import uuid

import engine
from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY, Metadata
from events.store import InMemoryEventStore
from services.table.openings import opening_events
from services.table.tables import Table, event_ids
from services.tools.replay import transcript

PLAYERS = ("ann", "bob", "cy", "di")


async def _game(moves: int | None, server_seed: str = "") -> tuple[Table, InMemoryEventStore]:
    store = InMemoryEventStore()
    table = Table(str(uuid.uuid4()))
    batches = [
        opening_events(
            table.game_id,
            ladder="casual",
            rated=False,
            players=PLAYERS,
            bots=(),
            rules=engine.Ruleset.from_options({"target": "150"}),
            seed=0 if server_seed else 99,
            turn_seconds=25,
            server_seed=server_seed,
        )
    ]
    done = 0
    while True:
        for batch in batches:
            new = [
                REGISTRY.new_event(e, Metadata(actor="t"), event_id=i)
                for e, i in zip(batch, event_ids(str(uuid.uuid4()), len(batch)), strict=True)
            ]
            for s in await store.append(stream_of(table.game_id), table.version, new):
                table.fold(s, REGISTRY.decode(s))
        seat = table.seat_to_act()
        if seat is None or (moves is not None and done >= moves):
            return table, store
        batches = [table.bot_events(seat)]
        done += 1


def _dealt_cards(stored_events: list[wire.GameEvent]) -> set[str]:
    cards: set[str] = set()
    for e in stored_events:
        if isinstance(e, wire.HandDealt):
            cards.update(c for hand in e.hands for c in hand)
    return cards


async def test_a_finished_game_replays_face_up_to_its_recorded_score() -> None:
    table, store = await _game(None)
    stored = await store.read(stream_of(table.game_id))
    lines = list(transcript(stored))
    assert any("seed 99" in line for line in lines)
    assert any(re.search(r"hand 1 dealt by \w+: N ", line) for line in lines)
    finished = REGISTRY.decode(stored[-1])
    assert isinstance(finished, wire.GameFinished)
    assert lines[-1].endswith(f"scores {finished.scores}")


async def test_a_game_in_progress_shows_no_hand_and_no_seed() -> None:
    table, store = await _game(20)
    stored = await store.read(stream_of(table.game_id))
    text = "\n".join(transcript(stored, at=len(stored)))
    assert "seed 99" not in text
    assert "holds" not in text
    played = {e.card for e in map(REGISTRY.decode, stored) if isinstance(e, wire.CardPlayed)}
    unplayed = _dealt_cards([REGISTRY.decode(s) for s in stored]) - played
    for card in unplayed:
        assert not re.search(rf"\b{card}\b", text), card
    assert "hidden until it ends" in text


async def test_replay_at_a_step_shows_the_state_there() -> None:
    table, store = await _game(None)
    stored = await store.read(stream_of(table.game_id))
    lines = list(transcript(stored, at=3))
    assert lines[-5].startswith("state at step 3: phase ")
    assert [line.split()[0] for line in lines[:3]] == ["1", "2", "3"]
    assert sum(1 for line in lines if " holds " in line) == 4


async def test_a_committed_game_names_its_commitment_and_no_seed_0() -> None:
    """Committed deals come from the server seed (revealed at the end): the unused ``seed``
    field (0) is not printed as if it were the deck seed."""
    table, store = await _game(None, server_seed="ab" * 32)
    stored = await store.read(stream_of(table.game_id))
    text = "\n".join(transcript(stored))
    assert "committed to" in text
    assert "seed 0" not in text
    assert "server seed revealed: " + "ab" * 32 in text
