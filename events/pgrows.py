"""How the store's rows are read: the columns of an event and the StoredEvent of a row, shared
by the store (`events.pgstore`) and its directory reads (`events.directory`)."""

from __future__ import annotations

import asyncpg
import msgspec
from asyncpg.pool import PoolConnectionProxy

from events.envelope import Metadata, StoredEvent
from events.store import Checkpoint

__all__ = ["COLUMNS", "QUALIFIED_COLUMNS", "READ_ALL", "Conn", "read_all_on", "row_to_event"]

Conn = asyncpg.Connection | PoolConnectionProxy
"""A plain connection or one borrowed from a pool (asyncpg hands out proxies)."""

COLUMNS = (
    "event_id, stream_id, version, type, schema_version, data::text AS data,"
    " metadata::text AS metadata, recorded_at, position, transaction_id"
)

QUALIFIED_COLUMNS = (
    "o.event_id, o.stream_id, o.version, o.type, o.schema_version, o.data::text AS data,"
    " o.metadata::text AS metadata, o.recorded_at, o.position, o.transaction_id"
)
"""The same columns, of the events aliased `o` (a read that joins the log with itself)."""

_metadata_decoder = msgspec.json.Decoder(Metadata)


def row_to_event(row: asyncpg.Record) -> StoredEvent:
    """Return the StoredEvent of a row read with `COLUMNS`."""
    return StoredEvent(
        event_id=row["event_id"],
        stream_id=row["stream_id"],
        version=row["version"],
        type=row["type"],
        data=msgspec.Raw(row["data"].encode()),
        schema_version=row["schema_version"],
        metadata=_metadata_decoder.decode(row["metadata"]),
        recorded_at=row["recorded_at"],
        position=row["position"],
        transaction_id=row["transaction_id"],
    )


READ_ALL = (
    f"SELECT {COLUMNS} FROM spades_events"
    " WHERE (transaction_id, position) > ($1::xid8, $2::int8)"
    " AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())"
    " ORDER BY transaction_id, position LIMIT $3"
)
"""The committed events after a checkpoint, in log order (`PostgresEventStore.read_all` says
why the transaction id comes first and why the read stops at the snapshot's xmin)."""


async def read_all_on(
    conn: Conn | asyncpg.Pool, after: Checkpoint, limit: int
) -> list[StoredEvent]:
    """`PostgresEventStore.read_all` on a given connection or pool: the relay reads on a
    connection of its own, without a pool's acquire and release around every page."""
    rows = await conn.fetch(READ_ALL, after.transaction_id, after.position, limit)
    return [row_to_event(row) for row in rows]
