"""The two halves of a commit around the store's append: the records to append, and the
table folded with what was stored and every audience's frame built.

The table service (`services.table.games.Games.append`) runs them around a fenced append to
PostgreSQL; the table bench and the audience tests run the same two around an in-memory store,
so what they measure and check is the service's own path, not a copy of it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import engine
from events.contracts import game as wire
from events.contracts.audience import Frame
from events.envelope import REGISTRY, Metadata, NewEvent, StoredEvent
from services.table import audiences
from services.table.tables import Table, event_ids


def records(
    table: Table,
    events: Sequence[wire.GameEvent],
    states: Sequence[engine.GameState],
    now: float,
    *,
    id_seed: str,
    actor: str,
    command_id: uuid.UUID | None = None,
    epoch: int = 0,
) -> list[NewEvent]:
    """Return the store's records of ``events`` (leaving the game at ``states``), their ids
    derived from ``id_seed`` (so a retried command appends the same ids) and the turn's
    deadline in their metadata."""
    metadata = Metadata(
        command_id=command_id,
        correlation_id=uuid.UUID(table.game_id),
        actor=actor,
        epoch=epoch,
        deadline=table.deadline_after(events, states[-1], now),
    )
    return [
        REGISTRY.new_event(event, metadata, event_id=event_id)
        for event, event_id in zip(events, event_ids(id_seed, len(events)), strict=True)
    ]


def fold(
    table: Table,
    stored: Sequence[StoredEvent],
    events: Sequence[wire.GameEvent],
    states: Sequence[engine.GameState],
    now: float,
) -> Frame:
    """Fold what the store kept into ``table`` (the states deciding computed, never the wire
    events back through the engine) and return every audience's frame of it."""
    held, released = list(table.unreleased), table.released
    steps = []
    for s, event, after in zip(stored, events, states, strict=True):
        steps.append((s.version, event, table.state, after))
        table.fold(s, event, after)
    return audiences.frame(table, steps, held, released, now)
