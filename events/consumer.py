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

Every line logged while a message is handled carries its event id as `request_id` (the
`Nats-Msg-Id`, or `consumer:sequence` for a message without one) and the `game_id` when the
event belongs to a game stream; the consumer's own polling logs under `fetch:<consumer>` and
`lag:<consumer>`. With `on_lag`, the durable consumer's backlog (JetStream's
`num_pending + num_ack_pending`: not yet delivered plus delivered and not yet acknowledged)
is polled every `lag_interval` seconds and handed over with the consumer's name.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import msgspec
import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from events.bus import ensure_streams
from events.envelope import Registry, StoredEvent
from events.logs import bound_ids, get_logger
from events.parking import park
from events.pgstore import Conn
from events.retry import Backoff
from events.subjects import Subjects

__all__ = [
    "ConsumerLost",
    "Handler",
    "LagHandler",
    "Received",
    "StateHandler",
    "Unprocessable",
    "consume",
    "game_id_of",
    "park",
]

log = get_logger("consumer")
_envelope = msgspec.json.Decoder(StoredEvent)


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
# Told the consumer's name and its backlog in messages.
LagHandler = Callable[[str, int], None]


def game_id_of(stream_id: str) -> str | None:
    """Return the game id of a game stream (`game-<id>`), None for any other stream."""
    category, _, rest = stream_id.partition("-")
    return rest if category == "game" and rest else None


@contextlib.contextmanager
def _message_context(msg: Msg, consumer: str, event: StoredEvent | None) -> Iterator[None]:
    """Bind the message's ids to every log line emitted while it is handled."""
    if event is not None:
        ids = {"request_id": str(event.event_id)}
        game_id = game_id_of(event.stream_id)
        if game_id is not None:
            ids["game_id"] = game_id
    else:
        msg_id = (msg.headers or {}).get("Nats-Msg-Id")
        sequence = msg.metadata.sequence.stream if msg.reply else None
        ids = {"request_id": msg_id or f"{consumer}:{sequence}"}
    with bound_ids(**ids):
        yield


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


RESTART = Backoff(first=0.2, factor=2.0, most=5.0, jitter=0.2)
"""The pause before a stopped consumer subscribes again (growing while it keeps failing)."""


class ConsumerLost(Exception):
    """JetStream has answered nothing but "unavailable" for too long: subscribe again."""


StateHandler = Callable[[str, "str | None"], None]
"""``(consumer, why)``: None once the consumer is fetching, else why it is not."""


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
    on_lag: LagHandler | None = None,
    lag_interval: float = 2.0,
    on_state: StateHandler | None = None,
    lost_after: float = 5.0,
    restart: Backoff = RESTART,
) -> None:
    """Feed `handler` every event on `filter_subject` until `stop`; see the module docstring.

    `consumer` names the durable consumer and the positions row set; `registry` makes the
    payload decode (and upcast) before the handler runs, so a payload of the wrong shape is
    parked instead of reaching the handler. `on_lag(consumer, messages)` is called every
    `lag_interval` seconds with the consumer's backlog.

    Supervised: a consumer that cannot be created (JetStream slow to answer at start, a stream
    being recreated), or whose fetches JetStream has answered with nothing but "unavailable"
    for `lost_after` seconds (the durable consumer deleted), is subscribed again after the
    `restart` schedule's pause, for as long as the service runs; before, a failed start ended
    the loop's task silently and the service stayed deaf to the subject while reporting ready.
    `on_state(consumer, None)` is called each time it is fetching, `on_state(consumer, why)`
    each time it is not: a service's readiness follows it.
    """
    attempt = 0
    fetching = False

    def ready() -> None:
        nonlocal fetching
        fetching = True
        _tell(on_state, consumer, None)

    async def subscribe_and_feed() -> None:
        """Subscribe the durable consumer and feed `handler` until `stop` (or raise)."""
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
        watcher = (
            asyncio.create_task(
                _watch_lag(
                    js, subjects.events_stream, durable, consumer, on_lag, stop, lag_interval
                )
            )
            if on_lag is not None
            else None
        )
        ready()
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
                lost_after,
            )
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    while not stop.is_set():
        attempt = 1 if fetching else attempt + 1  # a consumer that ran starts its pauses over
        fetching = False
        try:
            await subscribe_and_feed()
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # any failure: report, pause, subscribe again
            why = type(exc).__name__
            _tell(on_state, consumer, why)
            pause = restart.delay(attempt)
            log.warning(
                "consumer stopped: subscribing again",
                consumer=consumer,
                error=why,
                retry_in=round(pause, 2),
                request_id=f"fetch:{consumer}",
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=pause)


def _tell(on_state: StateHandler | None, consumer: str, why: str | None) -> None:
    if on_state is not None:
        on_state(consumer, why)


async def _watch_lag(
    js: JetStreamContext,
    stream: str,
    durable: str,
    consumer: str,
    on_lag: LagHandler,
    stop: asyncio.Event,
    interval: float,
) -> None:
    """Report the durable consumer's backlog every `interval` seconds until `stop`."""
    while not stop.is_set():
        try:
            info = await js.consumer_info(stream, durable, timeout=interval)
            on_lag(consumer, (info.num_pending or 0) + (info.num_ack_pending or 0))
        except Exception as exc:  # NATS reconnecting or busy: the next poll tries again
            log.debug(
                "consumer lag not measured",
                consumer=consumer,
                error=type(exc).__name__,
                request_id=f"lag:{consumer}",
            )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)


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
    lost_after: float,
) -> None:
    loop = asyncio.get_running_loop()
    unavailable_since: float | None = None
    while not stop.is_set():
        try:
            msgs = await sub.fetch(batch, timeout=0.5)
        except TimeoutError:  # nats' own TimeoutError and asyncio's both derive from it
            unavailable_since = None
            continue
        except (nats.errors.ConnectionClosedError, nats.errors.ConnectionReconnectingError):
            await asyncio.sleep(0.2)
            continue
        except (nats.js.errors.ServiceUnavailableError, nats.errors.NoRespondersError) as exc:
            # JetStream answers 503 while busy or electing a leader: a pause, not a failure;
            # but a durable consumer that is gone is answered so for ever
            now = loop.time()
            unavailable_since = now if unavailable_since is None else unavailable_since
            if now - unavailable_since >= lost_after:
                raise ConsumerLost(f"no fetch answered for {lost_after:.0f} s") from exc
            bound.warning("jetstream unavailable; fetching again", request_id=f"fetch:{consumer}")
            await asyncio.sleep(0.5)
            continue
        unavailable_since = None
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
        with _message_context(msg, consumer, None):
            await park(
                pool,
                js,
                subjects,
                msg,
                consumer=consumer,
                reason=f"undecodable: {type(exc).__name__}: {exc}"[:500],
            )
        return
    with _message_context(msg, consumer, event):
        await _handle_decoded(
            msg,
            event,
            payload,
            js,
            pool,
            subjects,
            consumer,
            handler,
            bound,
            max_attempts,
            retry_delay,
            stop,
        )


def _handler_backoff(first: float) -> Backoff:
    """Return the pauses between a failing handler's attempts: from ``first``, doubling."""
    return Backoff(first=first, factor=2.0, most=max(first, 30.0), jitter=0.1)


async def _handle_decoded(
    msg: Msg,
    event: StoredEvent,
    payload: Any,
    js: JetStreamContext,
    pool: asyncpg.Pool,
    subjects: Subjects,
    consumer: str,
    handler: Handler,
    bound: Any,
    max_attempts: int,
    retry_delay: float,
    stop: asyncio.Event,
) -> None:
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
            await asyncio.sleep(_handler_backoff(retry_delay).delay(attempt))
            attempt += 1
    if not applied:
        bound.debug("duplicate skipped", event_id=str(event.event_id), version=event.version)
    await msg.ack()
