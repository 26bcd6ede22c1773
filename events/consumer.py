"""Consuming events from JetStream with exactly-once effects, and parking what cannot be read.

A consumer is a durable pull consumer with explicit acks. For each message:

1. The envelope is decoded (and, with a registry, the payload too). A message that does not
   decode is parked: a row in `spades_parked`, a `MessageParked` on the parking subject, a
   warning naming the reason, and `term` so JetStream never redelivers it.
2. In ONE PostgreSQL transaction: the consumer's position for the event's stream is moved to
   the event's version (only forward: `spades_consumer_positions`), then the handler's effect
   runs on the same connection. A redelivered or duplicated event finds its version already
   there and has no second effect. Commit, then ack.
3. A handler that raises `Unprocessable` parks the message at once; any other exception is
   retried in place, with a growing delay, before any later message is looked at (so a later
   event of the same stream can never overtake it and make it look like a duplicate), and
   the message is parked after `max_attempts` attempts in all: nothing is retried forever,
   nothing is dropped silently.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
import msgspec
import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from events.bookkeeping import MessageParked
from events.bus import ensure_streams
from events.envelope import Registry, StoredEvent
from events.logs import get_logger
from events.pgstore import Conn
from events.subjects import Subjects

__all__ = ["Handler", "Received", "Unprocessable", "consume", "park"]

log = get_logger("consumer")
_envelope = msgspec.json.Decoder(StoredEvent)
_encoder = msgspec.json.Encoder()


class Unprocessable(Exception):
    """A handler's verdict that this message can never be handled: park it, do not retry."""


@dataclass(frozen=True)
class Received:
    """One event handed to a handler: the envelope, the decoded payload (with a registry)."""

    event: StoredEvent
    payload: Any
    subject: str
    stream_sequence: int


Handler = Callable[[Conn, Received], Awaitable[None]]


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


async def _apply(pool: asyncpg.Pool, consumer: str, received: Received, handler: Handler) -> bool:
    """Run the handler and move the position in one transaction; False for a duplicate."""
    event = received.event
    async with pool.acquire() as conn, conn.transaction():
        moved = await conn.fetchval(
            "INSERT INTO spades_consumer_positions AS p (consumer, stream_id, version)"
            " VALUES ($1, $2, $3) ON CONFLICT (consumer, stream_id)"
            " DO UPDATE SET version = EXCLUDED.version WHERE p.version < EXCLUDED.version"
            " RETURNING true",
            consumer,
            event.stream_id,
            event.version,
        )
        if not moved:
            return False
        await handler(conn, received)
    return True


async def consume(
    js: JetStreamContext,
    pool: asyncpg.Pool,
    *,
    subjects: Subjects,
    consumer: str,
    filter_subject: str,
    handler: Handler,
    stop: asyncio.Event,
    registry: Registry | None = None,
    batch: int = 64,
    max_attempts: int = 5,
    retry_delay: float = 1.0,
    ack_wait: float = 30.0,
) -> None:
    """Feed `handler` every event on `filter_subject` until `stop`; see the module docstring.

    `consumer` names the durable consumer and the positions row set; `registry` makes the
    payload decode (and upcast) before the handler runs, so a payload of the wrong shape is
    parked instead of reaching the handler.
    """
    await ensure_streams(js, subjects)
    durable = subjects.durable(consumer)
    sub = await js.pull_subscribe(
        filter_subject,
        durable=durable,
        stream=subjects.events_stream,
        config=ConsumerConfig(
            durable_name=durable,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=ack_wait,
            max_deliver=-1,  # this helper decides when to give up (and parks)
        ),
    )
    bound = log.bind(consumer=consumer)
    try:
        await _consume_loop(
            sub,
            js,
            pool,
            subjects,
            consumer,
            handler,
            registry,
            bound,
            stop,
            batch,
            max_attempts,
            retry_delay,
        )
    finally:
        with contextlib.suppress(Exception):
            await sub.unsubscribe()


async def _consume_loop(
    sub: Any,
    js: JetStreamContext,
    pool: asyncpg.Pool,
    subjects: Subjects,
    consumer: str,
    handler: Handler,
    registry: Registry | None,
    bound: Any,
    stop: asyncio.Event,
    batch: int,
    max_attempts: int,
    retry_delay: float,
) -> None:
    while not stop.is_set():
        try:
            msgs = await sub.fetch(batch, timeout=0.5)
        except TimeoutError:  # nats' own TimeoutError and asyncio's both derive from it
            continue
        except (nats.errors.ConnectionClosedError, nats.errors.ConnectionReconnectingError):
            await asyncio.sleep(0.2)
            continue
        except nats.js.errors.ServiceUnavailableError:
            # JetStream answers 503 while busy or electing a leader: a pause, not a failure
            bound.warning("jetstream unavailable; fetching again")
            await asyncio.sleep(0.5)
            continue
        for msg in msgs:
            await _handle(
                msg,
                js,
                pool,
                subjects,
                consumer,
                handler,
                registry,
                bound,
                max_attempts,
                retry_delay,
                stop,
            )


async def _handle(
    msg: Msg,
    js: JetStreamContext,
    pool: asyncpg.Pool,
    subjects: Subjects,
    consumer: str,
    handler: Handler,
    registry: Registry | None,
    bound: Any,
    max_attempts: int,
    retry_delay: float,
    stop: asyncio.Event,
) -> None:
    try:
        event = _envelope.decode(msg.data)
        payload = registry.decode(event) if registry is not None else None
    except (msgspec.DecodeError, msgspec.ValidationError, LookupError) as exc:
        await park(
            pool,
            js,
            subjects,
            msg,
            consumer=consumer,
            reason=f"undecodable: {type(exc).__name__}: {exc}"[:500],
        )
        return
    received = Received(event, payload, msg.subject, msg.metadata.sequence.stream)
    attempt = msg.metadata.num_delivered
    while True:
        try:
            applied = await _apply(pool, consumer, received, handler)
            break
        except Unprocessable as exc:
            reason = f"unprocessable: {exc}"[:500]
            await park(pool, js, subjects, msg, consumer=consumer, reason=reason)
            return
        except Exception as exc:
            if attempt >= max_attempts:
                reason = f"handler failed {attempt} times: {type(exc).__name__}"[:500]
                await park(pool, js, subjects, msg, consumer=consumer, reason=reason)
                return
            bound.warning(
                "handler failed, will retry",
                event_id=str(event.event_id),
                type=event.type,
                attempt=attempt,
                error=type(exc).__name__,
            )
            if stop.is_set():
                await msg.nak()
                return
            # Retry here, holding the rest of the batch: letting a later event of the same
            # stream through first would move the position past this one, which would then be
            # taken for a duplicate. JetStream is told the message is still being worked on.
            await msg.in_progress()
            await asyncio.sleep(retry_delay * attempt)
            attempt += 1
    if not applied:
        bound.debug("duplicate skipped", event_id=str(event.event_id), version=event.version)
    await msg.ack()
