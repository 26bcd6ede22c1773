"""How the store's rows are read: the columns of an event and the StoredEvent of a row, shared
by the store (`events.pgstore`) and its directory reads (`events.directory`)."""

from __future__ import annotations

import asyncpg
import msgspec
from asyncpg.pool import PoolConnectionProxy

from events.envelope import Metadata, StoredEvent

__all__ = ["COLUMNS", "QUALIFIED_COLUMNS", "Conn", "row_to_event"]

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
