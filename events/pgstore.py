"""The event store on PostgreSQL (asyncpg), with group commit and a gap-safe global read.

Writes: every append becomes one row of a compare-and-set on `spades_streams` plus its events,
and the appends waiting at the same moment go to the server as ONE statement (unnest arrays,
data-modifying CTEs): one round trip and one commit for the whole group. Each append in the group
still succeeds or fails on its own expected version.

Reads of the global log: see `PostgresEventStore.read_all`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import msgspec

from events.directory import LogDirectory, Opening, count_unfinished_openings
from events.envelope import NewEvent, StoredEvent
from events.logs import get_logger
from events.pgrows import COLUMNS, Conn, read_all_on, row_to_event
from events.store import (
    START,
    Checkpoint,
    ConcurrencyConflict,
    EventIdReused,
    Fence,
    Fenced,
    is_retry_of,
    same_ids,
)

__all__ = [
    "Conn",
    "Opening",
    "PostgresEventStore",
    "append_with",
    "count_unfinished_openings",
    "create_pool",
    "load_checkpoint",
    "save_checkpoint",
    "stream_exists",
]

_metadata_encoder = msgspec.json.Encoder()

_log = get_logger("store")


async def _release_without_reset(conn: asyncpg.Connection) -> None:
    """Pool reset hook: asyncpg has already rolled back any open transaction; skip RESET ALL.

    The default reset runs `SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`
    on every release: one more round trip per append, and it would undo session settings made
    in `init`. Code here never leaves session state behind (advisory locks and LISTEN live on
    dedicated connections, not pooled ones), so there is nothing to reset.
    """


async def create_pool(
    dsn: str, *, min_size: int = 2, max_size: int = 10, **kwargs: Any
) -> asyncpg.Pool:
    """Return an asyncpg pool whose releases cost no round trip (see _release_without_reset)."""
    pool = await asyncpg.create_pool(
        dsn, min_size=min_size, max_size=max_size, reset=_release_without_reset, **kwargs
    )
    assert pool is not None
    return pool


_APPEND = """
WITH req AS (
    SELECT * FROM unnest($1::int4[], $2::text[], $3::int8[], $4::int8[], $12::text[], $13::int8[])
        AS r(req, stream_id, expected, next_version, fence_name, fence_epoch)
), locked AS (
    -- the fences' lease rows, share-locked until commit: a claim (which bumps the epoch)
    -- waits for this append, or this append sees the claim's new epoch and is refused
    SELECT l.name, l.epoch FROM spades_leases l WHERE l.name = ANY($12::text[]) FOR SHARE
), fenced AS (
    SELECT r.* FROM req r
    WHERE r.fence_name IS NULL
       OR EXISTS (SELECT FROM locked k WHERE k.name = r.fence_name AND k.epoch = r.fence_epoch)
), bumped AS (
    UPDATE spades_streams s SET version = r.next_version
    FROM fenced r
    WHERE r.expected > 0 AND s.stream_id = r.stream_id AND s.version = r.expected
    RETURNING r.req
), created AS (
    INSERT INTO spades_streams (stream_id, version)
    SELECT r.stream_id, r.next_version FROM fenced r WHERE r.expected = 0
    ON CONFLICT (stream_id) DO NOTHING
    RETURNING stream_id
), ok AS (
    SELECT req FROM bumped
    UNION ALL
    SELECT r.req FROM fenced r JOIN created c ON c.stream_id = r.stream_id
)
INSERT INTO spades_events (event_id, stream_id, version, type, schema_version, data, metadata)
SELECT e.event_id, r.stream_id, e.version, e.type, e.schema_version,
       e.data::json, e.metadata::jsonb
FROM unnest($5::int4[], $6::uuid[], $7::int8[], $8::text[], $9::int4[], $10::text[], $11::text[])
    WITH ORDINALITY AS e(req, event_id, version, type, schema_version, data, metadata, ord)
JOIN ok ON ok.req = e.req
JOIN req r ON r.req = e.req
ORDER BY e.ord
RETURNING event_id, position, transaction_id, recorded_at
"""


# The same append for a group of one (the common case of a lone writer): scalar parameters,
# so the stream row is found by its key without a join, and the plan is much cheaper.
_APPEND_ONE = """
WITH fenced AS (
    -- $9/$10: the writer's fence (NULL: none); see _APPEND's `locked`
    SELECT FROM spades_leases WHERE name = $9 AND epoch = $10 FOR SHARE
), allowed AS (
    SELECT $9::text IS NULL OR EXISTS (SELECT FROM fenced) AS yes
), bumped AS (
    UPDATE spades_streams SET version = $3
    WHERE $2 > 0 AND stream_id = $1 AND version = $2 AND (SELECT yes FROM allowed)
    RETURNING 1
), created AS (
    INSERT INTO spades_streams (stream_id, version)
    SELECT $1, $3 WHERE $2 = 0 AND (SELECT yes FROM allowed)
    ON CONFLICT (stream_id) DO NOTHING
    RETURNING 1
)
INSERT INTO spades_events (event_id, stream_id, version, type, schema_version, data, metadata)
SELECT e.event_id, $1, $2 + e.ord, e.type, e.schema_version, e.data::json, e.metadata::jsonb
FROM unnest($4::uuid[], $5::text[], $6::int4[], $7::text[], $8::text[])
    WITH ORDINALITY AS e(event_id, type, schema_version, data, metadata, ord)
WHERE EXISTS (SELECT FROM bumped) OR EXISTS (SELECT FROM created)
ORDER BY e.ord
RETURNING event_id, position, transaction_id, recorded_at
"""


@dataclass
class _Append:
    stream_id: str
    expected_version: int
    events: Sequence[NewEvent]
    future: asyncio.Future[list[StoredEvent]] | None = field(repr=False)
    fence: Fence | None = None


async def _write_group(conn: Conn, group: Sequence[_Append]) -> list[list[StoredEvent] | None]:
    """Run the append statement for a group on `conn`; None marks a refused append."""
    req_ids: list[int] = []
    req_streams: list[str] = []
    req_expected: list[int] = []
    req_next: list[int] = []
    req_fence_names: list[str | None] = []
    req_fence_epochs: list[int | None] = []
    ev_req: list[int] = []
    ev_ids: list[uuid.UUID] = []
    ev_versions: list[int] = []
    ev_types: list[str] = []
    ev_schema: list[int] = []
    ev_data: list[str] = []
    ev_meta: list[str] = []
    encoded_meta: dict[int, str] = {}  # one command's events share one Metadata: encode once
    for index, item in enumerate(group):
        req_ids.append(index)
        req_streams.append(item.stream_id)
        req_expected.append(item.expected_version)
        req_next.append(item.expected_version + len(item.events))
        req_fence_names.append(item.fence.name if item.fence else None)
        req_fence_epochs.append(item.fence.epoch if item.fence else None)
        for offset, event in enumerate(item.events, start=1):
            ev_req.append(index)
            ev_ids.append(event.event_id)
            ev_versions.append(item.expected_version + offset)
            ev_types.append(event.type)
            ev_schema.append(event.schema_version)
            ev_data.append(bytes(event.data).decode())
            meta = encoded_meta.get(id(event.metadata))
            if meta is None:
                meta = _metadata_encoder.encode(event.metadata).decode()
                encoded_meta[id(event.metadata)] = meta
            ev_meta.append(meta)
    if len(group) == 1:
        only = group[0]
        rows = await conn.fetch(
            _APPEND_ONE,
            only.stream_id,
            only.expected_version,
            only.expected_version + len(only.events),
            ev_ids,
            ev_types,
            ev_schema,
            ev_data,
            ev_meta,
            only.fence.name if only.fence else None,
            only.fence.epoch if only.fence else None,
        )
    else:
        rows = await conn.fetch(
            _APPEND,
            req_ids,
            req_streams,
            req_expected,
            req_next,
            ev_req,
            ev_ids,
            ev_versions,
            ev_types,
            ev_schema,
            ev_data,
            ev_meta,
            req_fence_names,
            req_fence_epochs,
        )
    written: dict[uuid.UUID, asyncpg.Record] = {row["event_id"]: row for row in rows}
    results: list[list[StoredEvent] | None] = []
    for item in group:
        if item.events[0].event_id not in written:
            results.append(None)
            continue
        stored = []
        for offset, event in enumerate(item.events, start=1):
            row = written[event.event_id]
            stored.append(
                StoredEvent(
                    event_id=event.event_id,
                    stream_id=item.stream_id,
                    version=item.expected_version + offset,
                    type=event.type,
                    data=event.data,
                    schema_version=event.schema_version,
                    metadata=event.metadata,
                    recorded_at=row["recorded_at"],
                    position=row["position"],
                    transaction_id=row["transaction_id"],
                )
            )
        results.append(stored)
    return results


async def _explain_refusal(
    conn: Conn, item: _Append
) -> list[StoredEvent] | ConcurrencyConflict | Fenced:
    """Return the stored events if the refused append was a retry, else why it was refused."""
    slots = await conn.fetch(
        f"SELECT {COLUMNS} FROM spades_events"
        " WHERE stream_id = $1 AND version > $2 AND version <= $3 ORDER BY version",
        item.stream_id,
        item.expected_version,
        item.expected_version + len(item.events),
    )
    stored = [row_to_event(row) for row in slots]
    if is_retry_of(item.events, stored):
        return stored
    if same_ids(item.events, stored):
        # A late append of the same ids with another content (two writers acting on one
        # version): a different write, never taken for a retry. Ids and types only here.
        _log.warning(
            "an append reused stored event ids with other content: refused as a conflict",
            stream_id=item.stream_id,
            expected_version=item.expected_version,
            types=[e.type for e in item.events],
        )
    if item.fence is not None:
        epoch = await conn.fetchval(
            "SELECT epoch FROM spades_leases WHERE name = $1", item.fence.name
        )
        if epoch != item.fence.epoch:
            return Fenced(item.fence, epoch)
    actual = await conn.fetchval(
        "SELECT version FROM spades_streams WHERE stream_id = $1", item.stream_id
    )
    return ConcurrencyConflict(item.stream_id, item.expected_version, int(actual or 0))


async def append_with(
    conn: Conn,
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    *,
    fence: Fence | None = None,
) -> list[StoredEvent]:
    """Append on `conn`, inside the caller's transaction if one is open; return the events.

    No group commit: for code that must append atomically with other writes of its own (a
    consumer's effect, a test holding a transaction open). Same contract as `append`.
    """
    if expected_version < 0:
        raise ValueError(f"expected_version must be >= 0, got {expected_version}")
    if not events:
        return []
    item = _Append(stream_id, expected_version, list(events), None, fence)
    try:
        async with conn.transaction():  # a savepoint when the caller's transaction is open
            (stored,) = await _write_group(conn, [item])
    except asyncpg.UniqueViolationError:
        raise EventIdReused(
            f"an event id in this batch for {stream_id!r} is already stored"
        ) from None
    if stored is not None:
        return stored
    outcome = await _explain_refusal(conn, item)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


async def stream_exists(conn: Conn, stream_id: str) -> bool:
    """Return whether ``stream_id`` holds any event, read on ``conn`` (inside your transaction)."""
    found = await conn.fetchval("SELECT 1 FROM spades_streams WHERE stream_id = $1", stream_id)
    return found is not None


class PostgresEventStore(LogDirectory):
    """The EventStore on PostgreSQL. Concurrent appends from one process share a commit.

    Group commit: an append that arrives while a flush is running waits for it, then goes out
    with every other append that arrived meanwhile, as one statement. A lone append goes out at
    once, so a single writer pays no added latency. At most one append per stream rides in a
    group (a second one waits for the next), and one flusher runs at a time per store, so the
    stream rows of two groups are never locked in opposite orders by this process. The flusher
    keeps its pooled connection while groups keep coming (no acquire/release between them).
    """

    def __init__(self, pool: asyncpg.Pool, *, max_group_events: int = 2000) -> None:
        self._pool = pool
        self._max_group_events = max_group_events
        self._queue: list[_Append] = []
        self._flusher: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def pool(self) -> asyncpg.Pool:
        """The asyncpg pool the store runs on."""
        return self._pool

    async def append(
        self,
        stream_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        *,
        fence: Fence | None = None,
    ) -> list[StoredEvent]:
        """See EventStore.append: one transaction and one statement for the whole group.

        With a ``fence`` the append commits only while that lease is still at the fence's
        epoch (checked under a row lock in the same statement); otherwise it raises `Fenced`.
        """
        if expected_version < 0:
            raise ValueError(f"expected_version must be >= 0, got {expected_version}")
        if not events:
            return []
        future: asyncio.Future[list[StoredEvent]] = asyncio.get_running_loop().create_future()
        self._queue.append(_Append(stream_id, expected_version, list(events), future, fence))
        self._kick()
        return await future

    def _kick(self) -> None:
        if self._flusher is not None or not self._queue:
            return
        task = asyncio.get_running_loop().create_task(self._run_flusher())
        self._flusher = task
        self._tasks.add(task)
        task.add_done_callback(self._flusher_done)

    def _flusher_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._flusher = None
        self._kick()  # appends that arrived after the flusher's last look

    async def _run_flusher(self) -> None:
        """Flush groups back to back on one connection until nothing waits."""
        try:
            async with self._pool.acquire() as conn:
                while not conn.is_closed():
                    group = self._take_group()
                    if not group:
                        # One turn of the loop lets the callers just answered append again
                        # (a writer's next command): keep the connection for them.
                        await asyncio.sleep(0)
                        group = self._take_group()
                        if not group:
                            break
                    await self._flush(conn, group)
        except BaseException as exc:  # no connection to be had: fail the waiting appends
            waiting, self._queue = self._queue, []
            for item in waiting:
                self._settle(item, exc)
            if not isinstance(exc, Exception):
                raise

    def _take_group(self) -> list[_Append]:
        group: list[_Append] = []
        rest: list[_Append] = []
        streams: set[str] = set()
        size = 0
        for item in self._queue:
            if item.future is None or item.future.done():  # the caller was cancelled
                continue
            fits = size == 0 or size + len(item.events) <= self._max_group_events
            if item.stream_id in streams or not fits:
                rest.append(item)
                continue
            group.append(item)
            streams.add(item.stream_id)
            size += len(item.events)
        self._queue = rest
        return group

    async def _flush(self, conn: Conn, group: list[_Append]) -> None:
        try:
            results = await _write_group(conn, group)
        except asyncpg.UniqueViolationError:
            if len(group) == 1:
                self._settle(group[0], EventIdReused(f"event id reused in {group[0].stream_id!r}"))
                return
            # One append reuses an event id: write them one by one so only it fails.
            for item in group:
                await self._flush(conn, [item])
            return
        except asyncpg.DeadlockDetectedError:
            # Another process locked the same streams in the other order; the statement was
            # rolled back whole, so writing the group again is safe.
            await self._flush(conn, group)
            return
        except BaseException as exc:
            for item in group:
                self._settle(item, exc)
            if not isinstance(exc, Exception):
                raise
            return
        for item, stored in zip(group, results, strict=True):
            if stored is None:
                try:
                    self._settle(item, await _explain_refusal(conn, item))
                except Exception as exc:
                    self._settle(item, exc)
            else:
                self._settle(item, stored)

    @staticmethod
    def _settle(item: _Append, outcome: list[StoredEvent] | BaseException) -> None:
        if item.future is None or item.future.done():
            return
        if isinstance(outcome, BaseException):
            item.future.set_exception(outcome)
        else:
            item.future.set_result(outcome)

    async def read(self, stream_id: str, from_version: int = 0) -> list[StoredEvent]:
        """See EventStore.read."""
        rows = await self._pool.fetch(
            f"SELECT {COLUMNS} FROM spades_events"
            " WHERE stream_id = $1 AND version >= $2 ORDER BY version",
            stream_id,
            from_version,
        )
        return [row_to_event(row) for row in rows]

    async def read_all(self, after: Checkpoint = START, limit: int = 1000) -> list[StoredEvent]:
        """Return up to `limit` committed events after `after`, in (transaction id, position) order.

        Why not simply `WHERE position > checkpoint ORDER BY position`: positions come from a
        sequence, drawn when a row is inserted, not when its transaction commits. If transaction
        A draws position 10 and B draws 11, and B commits first, a reader sees 11, moves its
        checkpoint past 10, and never sees A's event when A commits: the trap Marten's async
        daemon fell into.

        Here each event carries the 64-bit id of the transaction that wrote it, and the reader
        only takes events whose transaction id is below the `xmin` of its own snapshot
        (`pg_snapshot_xmin(pg_current_snapshot())`, which is the statement's active snapshot).
        Every transaction below that xmin has finished: its events are all visible now, or it
        rolled back. Any transaction that commits later has an id >= that xmin, hence greater
        than every id already delivered, so it sorts after the checkpoint: nothing is skipped,
        and a stream's events still come in version order (a writer only appends after seeing
        the previous version committed, so its transaction id is larger).

        The price: the read stops at the oldest transaction still running in the cluster, so a
        long-open transaction anywhere delays delivery (it never loses it). Keep transactions
        short; the store's own are one statement.
        """
        return await read_all_on(self._pool, after, limit)

    async def stream_version(self, stream_id: str) -> int:
        """See EventStore.stream_version."""
        version = await self._pool.fetchval(
            "SELECT version FROM spades_streams WHERE stream_id = $1", stream_id
        )
        return int(version or 0)

    async def aclose(self) -> None:
        """Wait for the appends in flight (the pool belongs to the caller)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


async def load_checkpoint(conn: Conn | asyncpg.Pool, name: str) -> Checkpoint:
    """Return the named reader's saved checkpoint, START if it has none."""
    row = await conn.fetchrow(
        "SELECT transaction_id, position FROM spades_checkpoints WHERE name = $1", name
    )
    return START if row is None else Checkpoint(row["transaction_id"], row["position"])


async def save_checkpoint(conn: Conn | asyncpg.Pool, name: str, checkpoint: Checkpoint) -> None:
    """Save the named reader's checkpoint."""
    await conn.execute(
        "INSERT INTO spades_checkpoints (name, transaction_id, position) VALUES ($1, $2, $3)"
        " ON CONFLICT (name) DO UPDATE SET transaction_id = EXCLUDED.transaction_id,"
        " position = EXCLUDED.position, updated_at = now()",
        name,
        checkpoint.transaction_id,
        checkpoint.position,
    )
