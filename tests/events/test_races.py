"""Guarantee 2 on PostgreSQL: racing writers never both win, and no reader skips a late commit."""

from __future__ import annotations

import asyncio
import contextlib
import random

import asyncpg
import pytest

from events.pgstore import PostgresEventStore, append_with, create_pool
from events.store import START, ConcurrencyConflict, checkpoint_of
from tests.events.helpers import new_events, stream


@pytest.fixture
async def two_stores(database_url: str):  # type: ignore[no-untyped-def]
    """Two stores on two pools: two independent writers, as two processes would be."""
    pools = [await create_pool(database_url, min_size=1, max_size=4) for _ in range(2)]
    try:
        yield [PostgresEventStore(pool) for pool in pools]
    finally:
        for pool in pools:
            await pool.close()


async def test_two_writers_racing_on_one_stream_never_both_win(
    two_stores: list[PostgresEventStore],
) -> None:
    rng = random.Random(20261121)
    sid = stream("game")
    version = 0
    for round_ in range(150):
        # Each writer appends 1-3 events after the version both saw, starting after a jitter
        # from 0 (same instant) to a few ms; round 0 mod 3 also puts both in the same store.
        writers = two_stores if round_ % 3 else [two_stores[0], two_stores[0]]
        batches = [new_events(rng.randint(1, 3), tag=f"{round_}-{w}") for w in range(2)]
        delays = [rng.choice([0, 0, 0.0005, 0.001, 0.003]) for _ in range(2)]

        async def write(
            store: PostgresEventStore, delay: float, batch: list, at: int = version
        ) -> list:
            await asyncio.sleep(delay)
            return await store.append(sid, at, batch)

        outcomes = await asyncio.gather(
            *(write(s, d, b) for s, d, b in zip(writers, delays, batches, strict=True)),
            return_exceptions=True,
        )
        wins = [o for o in outcomes if not isinstance(o, BaseException)]
        losses = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(wins) == 1, f"round {round_}: {outcomes}"
        assert len(losses) == 1
        assert isinstance(losses[0], ConcurrencyConflict), losses
        winner = outcomes.index(wins[0])
        assert [e.event_id for e in wins[0]] == [e.event_id for e in batches[winner]]
        version += len(batches[winner])
    history = await two_stores[1].read(sid)
    assert [e.version for e in history] == list(range(1, version + 1))  # no gap, no fork
    assert len({e.event_id for e in history}) == version


async def test_reader_does_not_skip_an_event_whose_transaction_commits_late(
    event_store: PostgresEventStore, database_url: str
) -> None:
    """The Marten trap: hold one insert open while later ones commit; nothing may be skipped."""
    slow = await asyncpg.connect(database_url)
    try:
        early = await event_store.append(stream(), 0, new_events(2, tag="early"))
        tx = slow.transaction()
        await tx.start()
        late = await append_with(slow, stream("late"), 0, new_events(1, tag="late"))
        later = []
        for _ in range(5):
            later += await event_store.append(stream(), 0, new_events(2, tag="later"))
        # The held insert drew its position first: a position-ordered reader would see the
        # later ones, move past the held one, and lose it when it commits.
        assert late[0].position < later[0].position

        delivered = []
        checkpoint = START
        for _ in range(3):  # a polling reader keeps reading while the insert is held
            page = await event_store.read_all(after=checkpoint, limit=3)
            delivered += page
            if page:
                checkpoint = checkpoint_of(page[-1])
        assert [e.event_id for e in delivered] == [e.event_id for e in early]

        await tx.commit()
        while page := await event_store.read_all(after=checkpoint, limit=3):
            delivered += page
            checkpoint = checkpoint_of(page[-1])
    finally:
        await slow.close()
    expected = [e.event_id for e in early + late + later]
    assert [e.event_id for e in delivered] == expected


async def test_naive_position_reader_would_skip_the_late_event(
    event_store: PostgresEventStore, database_url: str, pg_pool: asyncpg.Pool
) -> None:
    """The same scenario read by position: shows the trap is real on this server."""
    slow = await asyncpg.connect(database_url)
    try:
        tx = slow.transaction()
        await tx.start()
        late = await append_with(slow, stream(), 0, new_events(1))
        await event_store.append(stream(), 0, new_events(1))
        seen = await pg_pool.fetch("SELECT position FROM spades_events ORDER BY position")
        naive_checkpoint = max(r["position"] for r in seen)
        await tx.commit()
    finally:
        await slow.close()
    after = await pg_pool.fetch(
        "SELECT event_id FROM spades_events WHERE position > $1", naive_checkpoint
    )
    assert late[0].event_id not in {r["event_id"] for r in after}
    assert late[0].event_id in {e.event_id for e in await event_store.read_all()}


async def test_reader_polling_during_concurrent_writers_sees_each_event_once_in_stream_order(
    database_url: str,
) -> None:
    """Many writers (own pools, as separate processes would be) commit in arbitrary order while
    a reader pages through read_all: every event arrives exactly once, streams in order."""
    pools = [await create_pool(database_url, min_size=1, max_size=4) for _ in range(4)]
    try:
        stores = [PostgresEventStore(pool) for pool in pools]
        streams = [stream() for _ in range(12)]
        written: list = []
        done = asyncio.Event()

        async def writer(store: PostgresEventStore, seed: int) -> None:
            rng = random.Random(seed)
            for _ in range(60):
                sid = rng.choice(streams)
                version = await store.stream_version(sid)
                # A conflict means another writer got there first: fine, nothing was written.
                with contextlib.suppress(ConcurrencyConflict):
                    written.extend(await store.append(sid, version, new_events(rng.randint(1, 3))))
                await asyncio.sleep(rng.choice([0, 0, 0.001]))

        delivered: list = []

        async def reader() -> None:
            checkpoint = START
            while True:
                finished = done.is_set()  # read once more after the writers are done
                page = await stores[0].read_all(after=checkpoint, limit=25)
                delivered.extend(page)
                if page:
                    checkpoint = checkpoint_of(page[-1])
                elif finished:
                    return
                else:
                    await asyncio.sleep(0.002)

        reading = asyncio.create_task(reader())
        await asyncio.gather(*(writer(s, seed) for seed, s in enumerate(stores * 2)))
        done.set()
        await reading
    finally:
        for pool in pools:
            await pool.close()
    assert len(delivered) == len({e.event_id for e in delivered})
    assert {e.event_id for e in delivered} == {e.event_id for e in written}
    for sid in streams:
        versions = [e.version for e in delivered if e.stream_id == sid]
        assert versions == list(range(1, len(versions) + 1))
