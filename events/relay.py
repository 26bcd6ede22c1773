"""The relay: the log is the outbox. Committed events go to JetStream, in order, exactly once.

    PostgreSQL (read_all after checkpoint) ──▶ JetStream (Nats-Msg-Id = event id) ──▶ checkpoint

- Order, without waiting (issue 32; `events.relaypipe` has the argument): events are published
  as one chain in the log's order; each message carries `Nats-Expected-Last-Msg-Id` = the id of
  the event before it, so JetStream stores it only right after its predecessor, and a refused or
  lost message keeps every later one out. No subscriber can see version n+1 before n, even when
  NATS dies mid-pipeline. A page goes out in one write, built from the row's text (no event
  decoded and encoded again); only its last message asks for an acknowledgement, which confirms
  the page and all before it (a busy relay asks one page in 0.1 s or in 4, and has the last one
  confirmed when the flow pauses); up to 8 pages are in flight. After a failure the relay
  republishes from the confirmed checkpoint, an acknowledgement asked of every message, and
  starts a new chain at the first that failed. The older awaited way (each event after its
  predecessor's acknowledgement, a page's streams concurrently) remains behind
  SPADES_RELAY_PIPELINE=0 (`events.relayloops`).
- Exactly once on the bus: the checkpoint is saved only at a position the server confirmed (at
  most every 0.1 s while busy, by the statement of the next read). A crash republishes from it;
  JetStream answers the events already in the stream as duplicates by Nats-Msg-Id within its
  duplicate window (they are not stored again, whatever they expect), and consumers also drop
  duplicates by version.
- Nothing lost: an unconfirmed event leaves the checkpoint behind it, and it is published
  again (after a pause that grows to 2 s) until it goes through; NATS restarts are survived
  by the client's reconnects.
- Woken, not polling: a trigger notifies channel `spades_events` at the commit of every
  transaction that appends (migration 5); the active relay LISTENs on its lock connection and
  reads the log as soon as it is told (while busy, at most every SPADES_RELAY_BATCH_WAIT = 0.025
  s, so one read carries several commits; under a steady flow it stops listening and reads on
  that clock until a read finds nothing: `events.relayloops`). It still polls every `idle_wait`
  seconds, and quickly for a moment after a wake-up that found a commit held back (events of a
  transaction that committed while an older one is still running are held back by `read_all`
  until that one ends).
- One active relay: the instance holding a PostgreSQL advisory lock (on a dedicated
  connection, so the lock dies with the process) publishes; others wait as standbys. A
  database restart ends the session (the lock went with the connection); the relay connects
  again and waits for the lock like a standby. Two relays briefly both publishing (one not yet
  aware it lost the lock) is safe: each one's messages expect their log predecessor, so
  neither can put an event ahead of a missing one, and JetStream keeps the first copy of
  every event id (the loser of a collision retries from its confirmed checkpoint).
- Lag: every `lag_interval` seconds each instance, standbys included, measures what is
  committed and not yet published: the events after the *stored* checkpoint and the age of
  the oldest of them (`relay_lag`), and hands it to `on_lag`. A standby therefore reports the
  lag of an active relay that is stuck, which the active relay itself cannot.

Run it as `python -m events.relay` (or `spades serve relay`): configuration from
SPADES_DATABASE_URL, SPADES_NATS_URL, SPADES_NATS_PREFIX, SPADES_RELAY_PIPELINE (1),
SPADES_RELAY_BATCH_WAIT (0.025 s) and, for
`python -m events.relay`, SPADES_RELAY_PAGE_SIZE.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import asyncpg

from events.bus import close_nats, connect, ensure_streams, nats_url
from events.logs import configure_logging, get_logger
from events.migrations import database_url
from events.pgstore import (
    Conn,
    PostgresEventStore,
    create_pool,
    load_checkpoint,
)
from events.relayloops import EVENTS_CHANNEL, Pacing, RelayStats, Session, Wake, publish_page
from events.relayloops import awaited as _awaited
from events.relayloops import pipelined as _pipelined
from events.retry import Backoff
from events.subjects import Subjects, current

__all__ = [
    "LAG_COUNT_CAP",
    "RELAY_LOCK",
    "Pacing",
    "RelayLag",
    "RelayStats",
    "main",
    "publish_page",
    "relay_lag",
    "run_relay",
]

# pg_advisory_lock key held by the active relay.
RELAY_LOCK = 0x5BADE5_0002
# Test hook: the process kills itself (SIGKILL) once it has published this many events, after
# JetStream acknowledged them and before the checkpoint is saved: the worst moment to die.
_CRASH_ENV = "SPADES_RELAY_CRASH_AFTER"
# Counting unpublished events stops here: past it the number says "very far behind" already,
# and a count must stay cheap when the relay has been down for hours.
LAG_COUNT_CAP = 100_000
MAX_RESTART_PAUSE = 5.0  # seconds between attempts to reconnect after a session failed
# After a session failed (lost lock connection, NATS away): connect again, less often each time.
RESTART_BACKOFF = Backoff(first=0.2, factor=2.0, most=MAX_RESTART_PAUSE, jitter=0.2)

log = get_logger("relay")


@dataclass(frozen=True)
class RelayLag:
    """What is committed and not yet published: how many events (at most LAG_COUNT_CAP), and
    the age in seconds of the oldest of them (0 when nothing waits)."""

    events: int
    seconds: float


_LAG = """
SELECT count(*) AS events,
       COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(recorded_at)), 0)::float8 AS seconds
FROM (SELECT recorded_at FROM spades_events
      WHERE (transaction_id, position) > ($1::xid8, $2::int8)
      ORDER BY transaction_id, position LIMIT $3) AS unpublished
"""


async def relay_lag(conn: Conn | asyncpg.Pool, name: str = "relay") -> RelayLag:
    """Return the lag of the relay `name`: committed events after its stored checkpoint."""
    checkpoint = await load_checkpoint(conn, name)
    row = await conn.fetchrow(_LAG, checkpoint.transaction_id, checkpoint.position, LAG_COUNT_CAP)
    assert row is not None
    return RelayLag(events=int(row["events"]), seconds=max(0.0, float(row["seconds"])))


async def _watch_lag(
    pool: asyncpg.Pool,
    name: str,
    on_lag: Callable[[RelayLag], None],
    stop: asyncio.Event,
    interval: float,
) -> None:
    """Measure the lag every `interval` seconds until `stop`; a failed measure is skipped."""
    while not stop.is_set():
        try:
            on_lag(await relay_lag(pool, name))
        except Exception as exc:  # PostgreSQL away: the next measure tries again
            log.debug("relay lag not measured", error=type(exc).__name__)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)


async def _hold_lock(conn: asyncpg.Connection, stop: asyncio.Event) -> bool:
    """Wait until this instance holds the relay lock (True) or `stop` is set (False)."""
    announced = False
    while not stop.is_set():
        if await conn.fetchval("SELECT pg_try_advisory_lock($1)", RELAY_LOCK):
            return True
        if not announced:
            log.info("relay standby: another instance is active")
            announced = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=1.0)
    return False


async def run_relay(
    *,
    database_url: str,
    nats_url: str,
    subjects: Subjects | None = None,
    stop: asyncio.Event | None = None,
    name: str = "relay",
    page_size: int = 500,
    idle_wait: float = 0.25,
    stats: RelayStats | None = None,
    on_lag: Callable[[RelayLag], None] | None = None,
    lag_interval: float = 1.0,
    pacing: Pacing | None = None,
) -> RelayStats:
    """Relay committed events to JetStream until `stop` is set; return what was done.

    `name` keys the checkpoint (two relays with different names both publish everything:
    only for tests and benchmarks). Events go out as `StoredEvent` JSON. `on_lag`, when given,
    receives a `RelayLag` every `lag_interval` seconds (the service sets its gauges with it).

    Nothing stops it but `stop`: a database restart (its lock connection lost, a read
    refused) or a NATS server that cannot be reached ends one session, and after a pause that
    grows to `MAX_RESTART_PAUSE` the relay connects again, waits for the lock again and goes on
    from the stored checkpoint (a page published twice is deduplicated by its event ids).
    """
    stop = stop or asyncio.Event()
    stats = stats or RelayStats()
    ended_in_a_row = 0
    while not stop.is_set():
        try:
            await _relay_session(
                database_url=database_url,
                nats_url=nats_url,
                subjects=subjects,
                stop=stop,
                name=name,
                page_size=page_size,
                idle_wait=idle_wait,
                stats=stats,
                on_lag=on_lag,
                lag_interval=lag_interval,
                pacing=pacing or Pacing.from_env(),
            )
            ended_in_a_row = 0
        except Exception as exc:
            stats.restarts += 1
            ended_in_a_row += 1
            log.warning("relay session ended; connecting again", error=type(exc).__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), RESTART_BACKOFF.delay(ended_in_a_row))
    # What it did, in one line (`python -m benchmarks relay` reads it: events per read).
    log.info(
        "relay stopped",
        published=stats.published,
        retries=stats.retries,
        restarts=stats.restarts,
        reads=stats.reads,
        checkpoints=stats.checkpoints,
    )
    return stats


async def _relay_session(
    *,
    database_url: str,
    nats_url: str,
    subjects: Subjects | None = None,
    stop: asyncio.Event | None = None,
    name: str = "relay",
    page_size: int = 500,
    idle_wait: float = 0.25,
    stats: RelayStats | None = None,
    on_lag: Callable[[RelayLag], None] | None = None,
    lag_interval: float = 1.0,
    pacing: Pacing | None = None,
) -> RelayStats:
    """One session of the relay: connect, wait for the lock, publish until stop or a fault."""
    subjects = subjects or current()
    stop = stop or asyncio.Event()
    stats = stats or RelayStats()
    crash_after = int(os.environ.get(_CRASH_ENV, "0") or 0)
    async with contextlib.AsyncExitStack() as opened:
        nc = await connect(nats_url, name=f"spades-{name}")
        opened.push_async_callback(close_nats, nc)
        lock_conn = await asyncpg.connect(database_url)
        opened.push_async_callback(_close_quietly, lock_conn)  # releases the advisory lock
        pool = await create_pool(database_url, min_size=1, max_size=2)
        opened.push_async_callback(_close_pool, pool)
        return await _publish_while_active(
            nc,
            lock_conn,
            pool,
            subjects,
            stop,
            name,
            page_size,
            idle_wait,
            stats,
            on_lag,
            lag_interval,
            crash_after,
            pacing or Pacing(),
        )


async def _close_pool(pool: asyncpg.Pool) -> None:
    try:
        await asyncio.wait_for(pool.close(), 5)
    except Exception:  # the server is gone: drop the connections without a goodbye
        pool.terminate()


async def _close_quietly(conn: asyncpg.Connection) -> None:
    with contextlib.suppress(Exception):
        await conn.close(timeout=2)


async def _publish_while_active(
    nc: Any,
    lock_conn: asyncpg.Connection,
    pool: asyncpg.Pool,
    subjects: Subjects,
    stop: asyncio.Event,
    name: str,
    page_size: int,
    idle_wait: float,
    stats: RelayStats,
    on_lag: Callable[[RelayLag], None] | None,
    lag_interval: float,
    crash_after: int,
    pacing: Pacing,
) -> RelayStats:
    stopping: asyncio.Task[bool] | None = None
    watcher = (
        asyncio.create_task(_watch_lag(pool, name, on_lag, stop, lag_interval))
        if on_lag is not None
        else None
    )
    try:
        js = nc.jetstream()
        await ensure_streams(js, subjects)
        if not await _hold_lock(lock_conn, stop):
            return stats
        store = PostgresEventStore(pool)
        wake = Wake()
        await lock_conn.add_listener(EVENTS_CHANNEL, wake.notify)
        stopping = asyncio.create_task(stop.wait())
        stopping.add_done_callback(lambda _: wake.event.set())
        checkpoint = await load_checkpoint(pool, name)
        log.info(
            "relay active",
            checkpoint=list(checkpoint),
            events_stream=subjects.events_stream,
            pipelined=pacing.pipelined,
        )
        run = _pipelined if pacing.pipelined else _awaited
        await run(
            Session(
                nc=nc,
                js=js,
                lock_conn=lock_conn,
                pool=pool,
                store=store,
                subjects=subjects,
                stop=stop,
                name=name,
                page_size=page_size,
                idle_wait=idle_wait,
                stats=stats,
                crash_after=crash_after,
                pacing=pacing,
                wake=wake,
                checkpoint=checkpoint,
            )
        )
        return stats
    finally:
        if stopping is not None:
            stopping.cancel()
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher


async def _main() -> None:
    configure_logging()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await run_relay(
        database_url=database_url(),
        nats_url=nats_url(),
        stop=stop,
        page_size=int(os.environ.get("SPADES_RELAY_PAGE_SIZE", "500")),
        pacing=Pacing.from_env(),
    )


def main() -> None:
    """Run the relay in the foreground until SIGINT/SIGTERM."""
    asyncio.run(_main())


if __name__ == "__main__":
    main()
