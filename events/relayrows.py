"""The relay's page of the log, as it publishes it: each row read once and turned into its
message payload (`read_page`), without a `StoredEvent` decoded and encoded again.

`events.relaypipe` publishes what this reads; `events.relayloops` reads with it (and saves its
checkpoint in the same statement when one is due: `SAVE_AND_READ_PAGE`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple

import msgspec

from events.envelope import StoredEvent
from events.pgrows import Conn
from events.store import Checkpoint
from events.subjects import Subjects

__all__ = ["READ_PAGE", "SAVE_AND_READ_PAGE", "Outgoing", "Page", "outgoing_of", "read_page"]

_encoder = msgspec.json.Encoder()

READ_PAGE = (
    "SELECT event_id::text, stream_id, version, type, schema_version, data::text,"
    " metadata::text, recorded_at, position, transaction_id,"
    " EXISTS (SELECT 1 FROM spades_events WHERE"
    " transaction_id >= pg_snapshot_xmin(pg_current_snapshot())) FROM spades_events"
    " WHERE (transaction_id, position) > ($1::xid8, $2::int8)"
    " AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())"
    " ORDER BY transaction_id, position LIMIT $3"
)
"""`events.pgrows.READ_ALL`'s page (the same order, the same held-back rule), in the columns
the relay publishes from: the id, the payload and the metadata as text. The last column says
whether committed events are held back behind the page (a transaction older than theirs still
running: one index probe, evaluated once per statement), so the relay knows to read again
without a notification: the older transaction may be one that never notifies (a lease's
renewal, an ANALYZE, another database of the cluster), and its commit would wake nobody."""


class Outgoing(NamedTuple):
    """One event as the relay publishes it: built once from its row (`read_page`)."""

    event_id: bytes  # the event id as text: Nats-Msg-Id, and what the next link expects
    subject: bytes
    payload: bytes  # the `StoredEvent` JSON consumers decode
    transaction_id: int
    position: int

    @property
    def checkpoint(self) -> Checkpoint:
        """The checkpoint just after this event."""
        return Checkpoint(self.transaction_id, self.position)


class Page(NamedTuple):
    """What one read of the relay found: the events to publish, and whether committed events
    are held back behind them (readable once an older transaction ends: read again soon)."""

    events: list[Outgoing]
    held: bool


class _Payload(msgspec.Struct):
    """`StoredEvent`'s fields in its order, the JSON parts as the log holds them (text of
    jsonb, passed through as raw JSON: never decoded and encoded again). A consumer decodes
    the payload as a `StoredEvent` (`tests/events/test_relay_pipeline.py` checks it field by
    field against the log)."""

    event_id: str
    stream_id: str
    version: int
    type: str
    data: msgspec.Raw
    schema_version: int
    metadata: msgspec.Raw
    recorded_at: datetime
    position: int
    transaction_id: int


SAVE_AND_READ_PAGE = (
    "WITH saved AS (INSERT INTO spades_checkpoints (name, transaction_id, position)"
    " VALUES ($4, $5, $6) ON CONFLICT (name) DO UPDATE SET"
    " transaction_id = EXCLUDED.transaction_id, position = EXCLUDED.position,"
    " updated_at = now()) " + READ_PAGE
)
"""`READ_PAGE` that also saves a checkpoint (`events.pgstore.save_checkpoint`'s upsert) in the
same statement: one round trip, not two. The read's snapshot is taken before the statement's
own transaction id exists, so the held-back rule is the plain read's."""


async def read_page(
    conn: Conn,
    after: Checkpoint,
    limit: int,
    subject: Callable[[str, str], bytes],
    save: tuple[str, Checkpoint] | None = None,
) -> Page:
    """The committed events after `after` (at most `limit`), ready to publish; with `save`
    (a name and a checkpoint), that checkpoint saved by the same statement. An empty page
    says nothing of held-back events (no row carries the flag): `held` is False then.

    Each row becomes its message payload at once, from the columns as text: no `StoredEvent`,
    no `Metadata` decoded and encoded again, no UUID turned into text per header (a third of
    the CPU per event of the relay's former path: `row_to_event`, then `_command`'s encoding)."""
    if save is None:
        rows = await conn.fetch(READ_PAGE, after.transaction_id, after.position, limit)
    else:
        name, checkpoint = save
        rows = await conn.fetch(
            SAVE_AND_READ_PAGE,
            after.transaction_id,
            after.position,
            limit,
            name,
            checkpoint.transaction_id,
            checkpoint.position,
        )
    encode, raw = _encoder.encode, msgspec.Raw
    events = [
        Outgoing(
            row[0].encode(),
            subject(row[1], row[3]),
            encode(
                _Payload(
                    row[0], row[1], row[2], row[3], raw(row[5]), row[4], raw(row[6]), *row[7:10]
                )
            ),
            row[9],
            row[8],
        )
        for row in rows
    ]
    return Page(events, bool(rows) and rows[0][10])


def outgoing_of(event: StoredEvent, subjects: Subjects) -> Outgoing:
    """An event read as a `StoredEvent` (tests, tools), as the relay publishes it."""
    return Outgoing(
        str(event.event_id).encode(),
        subjects.event(event.stream_id, event.type).encode(),
        _encoder.encode(event),
        event.transaction_id,
        event.position,
    )
