"""Issue 26, item 5, matchmaking's share: the queue stream grows with every join and leave,
and a start, a take-over or a rebuild after a conflict reads a bounded amount of it."""

from __future__ import annotations

import asyncpg
import structlog

from events.contracts.matchmaking import JoinQueue, LeaveQueue, queue_stream
from events.envelope import StoredEvent
from events.pgstore import PostgresEventStore
from services.matchmaking.matcher import SNAPSHOT_EVERY, Matchmaker

CYCLES = 3 * SNAPSHOT_EVERY // 2 + 7


class CountingStore(PostgresEventStore):
    """The event store, counting the events a reader was given."""

    read_events = 0

    async def read(self, stream_id: str, from_version: int = 0) -> list[StoredEvent]:
        stored = await super().read(stream_id, from_version)
        self.read_events += len(stored)
        return stored


async def test_a_rebuild_reads_a_bounded_part_of_a_long_queue_stream(
    pg_pool: asyncpg.Pool,
) -> None:
    log = structlog.get_logger("test")
    serving = Matchmaker(PostgresEventStore(pg_pool), pg_pool, log)
    await serving.load("standard")
    assert (await serving.join(JoinQueue(player_id="stays", ladder="standard"), 1.0)).ok
    for cycle in range(CYCLES):  # a player who keeps joining and leaving
        assert (await serving.join(JoinQueue(player_id="fickle", ladder="standard"), 2.0)).ok
        assert (await serving.leave(LeaveQueue(player_id="fickle"))).ok
        if cycle == CYCLES // 2:
            await serving.join(JoinQueue(player_id="midway", ladder="standard"), 3.0)
    stream = await PostgresEventStore(pg_pool).read(queue_stream("standard"))
    assert len(stream) == 2 * CYCLES + 2  # the log keeps every event

    store = CountingStore(pg_pool)
    restarted = Matchmaker(store, pg_pool, log)
    await restarted.load("standard")
    assert store.read_events <= SNAPSHOT_EVERY, store.read_events
    assert restarted.queues["standard"] == serving.queues["standard"]
    assert set(restarted.queues["standard"]) == {"stays", "midway"}
    assert restarted.versions["standard"] == stream[-1].version
    # and it goes on from there: the next join appends at the right version
    assert (await restarted.join(JoinQueue(player_id="later", ladder="standard"), 4.0)).ok
    assert set(restarted.queues["standard"]) == {"stays", "midway", "later"}
