"""Parking a message a consumer can never handle: a row in `spades_parked`, a `MessageParked`
on the consumer's parking subject, a warning naming the reason, and `term` so JetStream never
redelivers it (see `events.consumer`, whose loop parks undecodable and unprocessable messages)."""

from __future__ import annotations

import asyncpg
import msgspec
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from events.bookkeeping import MessageParked
from events.logs import get_logger
from events.subjects import Subjects

__all__ = ["park"]

log = get_logger("consumer")
_encoder = msgspec.json.Encoder()


async def park(
    pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
    msg: Msg,
    *,
    consumer: str,
    reason: str,
) -> None:
    """Set `msg` aside with `reason` (table + parking subject + log), then `term` it."""
    sequence = msg.metadata.sequence.stream if msg.reply else None
    event_id = (msg.headers or {}).get("Nats-Msg-Id")
    await pool.execute(
        "INSERT INTO spades_parked (consumer, subject, stream_sequence, reason, payload, headers)"
        " VALUES ($1, $2, $3, $4, $5, $6::jsonb) ON CONFLICT (consumer, stream_sequence)"
        " DO NOTHING",
        consumer,
        msg.subject,
        sequence,
        reason,
        msg.data,
        _encoder.encode(msg.headers or {}).decode(),
    )
    parked = MessageParked(
        consumer=consumer,
        subject=msg.subject,
        reason=reason,
        stream_sequence=sequence,
        event_id=event_id,
        payload=msg.data[:4096].decode("utf-8", errors="replace"),
    )
    try:
        await js.publish(
            subjects.parked(consumer),
            _encoder.encode(parked),
            headers={"Nats-Msg-Id": f"{consumer}:{sequence}"},
        )
    except Exception as exc:  # the table row is the record; the subject is a courtesy
        log.error("parking subject publish failed", consumer=consumer, error=type(exc).__name__)
    log.warning(
        "message parked",
        consumer=consumer,
        subject=msg.subject,
        stream_sequence=sequence,
        event_id=event_id,
        reason=reason,
    )
    await msg.term()
