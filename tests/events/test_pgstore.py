"""What only the PostgreSQL store has: group commit, the pool without RESET, append_with."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import msgspec
import pytest

from events.envelope import NewEvent
from events.pgstore import PostgresEventStore, append_with, create_pool
from tests.events.helpers import new_events, stream


async def test_concurrent_appends_share_transactions(event_store: PostgresEventStore) -> None:
    results = await asyncio.gather(
        *(event_store.append(stream(), 0, new_events(2)) for _ in range(60))
    )
    transactions = {stored[0].transaction_id for stored in results}
    assert len(transactions) < 60 / 4  # coalesced: many appends per commit
    for stored in results:  # each append still got its own versions, all in one transaction
        assert [e.version for e in stored] == [1, 2]
        assert len({e.transaction_id for e in stored}) == 1


async def test_pool_release_does_not_reset_the_session(database_url: str) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=1)
    try:
        async with pool.acquire() as conn:
            await conn.execute("SET application_name = 'kept-by-the-pool'")
        async with pool.acquire() as conn:  # the same, only connection
            assert await conn.fetchval("SHOW application_name") == "kept-by-the-pool"
            async with conn.transaction():
                await conn.execute("SELECT 1")
            assert not conn.is_in_transaction()
    finally:
        await pool.close()


async def test_append_with_joins_the_callers_transaction(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    sid = stream()
    async with pg_pool.acquire() as conn:
        tx = conn.transaction()
        await tx.start()
        stored = await append_with(conn, sid, 0, new_events(2))
        assert [e.version for e in stored] == [1, 2]
        await tx.rollback()
    assert await event_store.read(sid) == []
    assert await event_store.stream_version(sid) == 0


async def test_append_fails_instead_of_hanging_when_the_pool_is_closed(database_url: str) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=1)
    store = PostgresEventStore(pool)
    await pool.close()
    with pytest.raises(asyncpg.InterfaceError):
        await asyncio.wait_for(store.append(stream(), 0, new_events(1)), timeout=30)


def _event(type_: str, **data: object) -> NewEvent:
    return NewEvent(event_id=uuid.uuid4(), type=type_, data=msgspec.Raw(msgspec.json.encode(data)))


async def test_unfinished_games_and_openings_answer_the_directory_reads(
    event_store: PostgresEventStore,
) -> None:
    """The reads services used to write in SQL against the store's tables: unfinished
    games, and openings newest first with their finished flag."""
    done, live, other = stream("game"), stream("game"), stream("gamex")
    await event_store.append(done, 0, [_event("TableOpened", players=["ann", "bob"])])
    await event_store.append(live, 0, [_event("TableOpened", players=["bob", "cy"])])
    await event_store.append(other, 0, [_event("TableOpened", players=["ann"])])
    await event_store.append(done, 1, [_event("GameFinished")])

    unfinished = set(await event_store.unfinished_games())
    assert live in unfinished
    assert done not in unfinished
    assert other not in unfinished  # "gamex-..." is another category, not a "game-" stream

    everything = await event_store.openings("TableOpened", "GameFinished", limit=10)
    assert [(o.event.stream_id, o.finished) for o in everything] == [
        (other, False),
        (live, False),
        (done, True),
    ]
    running = await event_store.openings("TableOpened", "GameFinished", limit=10, unfinished=True)
    assert [o.event.stream_id for o in running] == [live]  # games only
    with pytest.raises(ValueError, match="only games"):
        await event_store.openings("AnalysisQueued", "AnalysisFinished", limit=1, unfinished=True)
    bobs = await event_store.openings("TableOpened", "GameFinished", limit=10, player="bob")
    assert [o.event.stream_id for o in bobs] == [live, done]
    assert len(await event_store.openings("TableOpened", "GameFinished", limit=1)) == 1
    later = stream("game")  # opened after `live`, ids in either order: listed after it
    await event_store.append(later, 0, [_event("TableOpened", players=["dee"])])
    listed = await event_store.unfinished_games()
    assert listed.index(live) < listed.index(later)  # oldest first
    running = await event_store.openings("TableOpened", "GameFinished", limit=10, unfinished=True)
    assert [o.event.stream_id for o in running] == [later, live]  # newest first
