"""The table's timers against a lease whose renewal is late, on real PostgreSQL and NATS.

While a slot's lease is held but its renewal is late (`LeaseGroup.fence` None, the lease not
dropped), a game of the slot may not be served. A timer armed in that window must not be lost:
the lease comes back at the renewal, without a new claim that would resume the slot's games,
and a game left with no timer would wait for ever on a bot's move or a person's clock (a
fresh clone's suite, loaded, saw a game stop at a bot's lead after a database restart).
"""

from __future__ import annotations

import asyncio
import time
import uuid

import asyncpg
import structlog
from nats.aio.client import Client as NATS

import engine
from events.leases import LeaseGroup, _Held
from events.pgstore import PostgresEventStore
from events.store import InMemoryEventStore
from events.subjects import Subjects, slot_of
from services.runtime.config import Settings
from services.runtime.service import Runtime
from services.table.games import Games, lease_name
from services.table.openings import opening_events
from services.table.tables import Table
from services.table.tier import BotTier
from services.table.timers import Timers
from tests.infra import eventually
from tests.services.test_tables import _commit


async def _noop(*_: object) -> None:
    return None


async def test_a_timer_armed_while_its_lease_renewal_is_late_is_armed_once_it_is_renewed(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore, nc: NATS, subjects: Subjects
) -> None:
    log = structlog.get_logger("test")
    rt = Runtime(
        "table",
        Settings(),
        subjects,
        pg_pool,
        event_store,
        nc,
        nc.jetstream(),
        asyncio.Event(),
        log,
    )
    game_id = str(uuid.uuid4())
    table = Table(game_id)
    opening = opening_events(
        game_id,
        ladder="casual",
        rated=False,
        players=("ann", "bob", "cy", "di"),
        bots=(),
        rules=engine.Ruleset(),
        seed=7,
        turn_seconds=60,
    )
    await _commit(InMemoryEventStore(), table, list(opening), actor="table")
    seat = table.seat_to_act()  # a person's turn clock, to run out in a minute
    assert seat is not None
    name = lease_name(slot_of(game_id))
    leases = LeaseGroup(
        pg_pool, group="t", names=[name], member="m", on_gain=_noop, on_lose=_noop, log=log
    )
    leases.held[name] = _Held(epoch=1, valid_until=time.monotonic() - 1.0)  # renewal late
    games = Games(rt, leases)
    games.tables[game_id] = table
    timers = Timers(rt, games, BotTier(rt, log))
    assert games.fence(game_id) is None
    assert games.in_doubt(game_id)

    timers.schedule(table)
    leases.held[name].valid_until = time.monotonic() + 60.0  # the renewal comes

    def clock_armed() -> bool:
        handle = timers.timers.get(game_id)
        return (
            isinstance(handle, asyncio.TimerHandle)
            and handle._args[:3] == (game_id, table.version, seat)  # type: ignore[attr-defined]
        )

    await eventually(clock_armed, within=30, what="the turn clock armed")
    # a lease given up meanwhile instead: nothing armed (its games go with it)
    leases.held.pop(name)
    timers.schedule(table)
    assert game_id not in timers.timers
