"""Relay lag and consumer lag on /metrics rise while work piles up and clear once it moves.

Everything is real: the relay and the rating service run as `spades serve` processes, events
are appended to PostgreSQL, and the pile-up is made the way it happens in production: the
active relay stops (SIGSTOP, like a frozen node), or a consumer's database writes block.
"""

from __future__ import annotations

import os
import signal
import uuid

import asyncpg
import pytest
from nats.js import JetStreamContext

from events.contracts.game import GameFinished
from events.envelope import REGISTRY, StoredEvent
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.rating.app import CONSUMER as RATING_CONSUMER
from tests.infra import Processes, eventually
from tests.services.opskit import gauge, ops_port

pytestmark = pytest.mark.infra

SERVE = ("-m", "services.tools.cli", "serve")
OPS = {"SPADES_OPS_PORT": "0"}
LAG_EVENTS = "spades_relay_lag_events"
LAG_SECONDS = "spades_relay_lag_seconds"


async def finished_games(store: PostgresEventStore, count: int) -> list[StoredEvent]:
    """Append ``count`` game streams each ending in an unrated GameFinished."""
    stored = []
    for _ in range(count):
        finished = GameFinished(winner=0, reason="target", scores=(500, 100), ladder="practice")
        stored += await store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(finished)])
    return stored


async def on_the_bus(js: JetStreamContext, subjects: Subjects) -> int:
    info = await js.stream_info(subjects.events_stream)
    return int(info.state.messages)


async def test_relay_lag_rises_while_the_active_relay_is_frozen_and_clears_when_it_runs(
    processes: Processes, event_store: PostgresEventStore, js: JetStreamContext, subjects: Subjects
) -> None:
    active = processes.start(*SERVE, "relay", env=OPS)
    await eventually(lambda: "relay active" in processes.log(active), what="the relay is active")
    standby = processes.start(*SERVE, "relay", env=OPS)
    await eventually(lambda: "standby" in processes.log(standby), what="a second relay waits")
    active_port = await ops_port(processes, active)
    standby_port = await ops_port(processes, standby)
    await eventually(lambda: gauge(standby_port, LAG_EVENTS) == 0, what="no lag at first")

    os.kill(active.pid, signal.SIGSTOP)
    try:
        await finished_games(event_store, 5)
        await eventually(
            lambda: gauge(standby_port, LAG_EVENTS) == 5, what="the standby sees 5 unpublished"
        )
        first = await eventually(lambda: gauge(standby_port, LAG_SECONDS), what="an age")
        assert first > 0
        await eventually(
            lambda: (gauge(standby_port, LAG_SECONDS) or 0) > first, what="the age grows"
        )
        assert await on_the_bus(js, subjects) == 0, "a frozen relay published nothing"
    finally:
        os.kill(active.pid, signal.SIGCONT)

    def cleared() -> bool:
        return all(
            gauge(port, LAG_EVENTS) == 0 and gauge(port, LAG_SECONDS) == 0
            for port in (active_port, standby_port)
        )

    await eventually(cleared, what="the lag clears on both relays once the active one runs")
    assert await on_the_bus(js, subjects) == 5


async def test_consumer_lag_rises_while_a_consumer_is_blocked_and_clears_when_it_catches_up(
    processes: Processes,
    event_store: PostgresEventStore,
    database_url: str,
    pg_pool: asyncpg.Pool,
) -> None:
    processes.start(*SERVE, "relay", env=OPS)
    rating = processes.start(*SERVE, "rating", env=OPS)
    port = await ops_port(processes, rating)
    series = f'spades_consumer_lag_messages{{consumer="{RATING_CONSUMER}"}}'
    await eventually(lambda: gauge(port, series) == 0, what="the consumer reports no lag")

    # The consumer's effect and position are written in one transaction; while this lock is
    # held that write waits, as it would behind a slow or overloaded database.
    blocker = await asyncpg.connect(database_url)
    try:
        transaction = blocker.transaction()
        await transaction.start()
        await blocker.execute("LOCK TABLE spades_consumer_positions IN EXCLUSIVE MODE")
        games = await finished_games(event_store, 3)
        await eventually(lambda: (gauge(port, series) or 0) >= 1, what="the backlog shows")
        handled = await pg_pool.fetchval(
            "SELECT count(*) FROM spades_consumer_positions WHERE consumer = $1", RATING_CONSUMER
        )
        assert handled == 0
        await transaction.rollback()
    finally:
        await blocker.close()

    await eventually(lambda: gauge(port, series) == 0, what="the backlog clears")
    handled_streams = {
        row["stream_id"]
        for row in await pg_pool.fetch(
            "SELECT stream_id FROM spades_consumer_positions WHERE consumer = $1", RATING_CONSUMER
        )
    }
    assert handled_streams == {g.stream_id for g in games}
