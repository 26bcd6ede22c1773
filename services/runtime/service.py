"""The harness every service runs in: settings, logs, PostgreSQL, NATS, ops server, shutdown.

A service is an ``async def main(rt: Runtime) -> None`` that starts its work and returns when
``rt.stop`` is set. `run_service` opens every resource before it and closes them after it in
reverse order: on SIGTERM the service stops taking new work, finishes what is in flight, then
NATS is drained (pending replies and acks flushed) before the pool closes.

NATS health. Every service probes its own connection end to end (`events.bus.NatsHealth`);
/readyz's ``nats`` check is that probe. A client that cannot recover by itself (closed, or
connected with its read loop gone), or a probe that has failed for `NATS_DEAD_SECONDS` on
end, stops the service and makes the process exit with `EXIT_NATS_DEAD` (70): a process
manager (Kubernetes, `spades dev`) starts it again, where staying up would leave it deaf.
Its way out is bounded too: if the shutdown has not ended `EXIT_STALL_SECONDS` after giving
the connection up (a task that ignores its cancellation, a close that waits on a socket that
never drains), the process exits there and then, with the same code.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import structlog
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from events.bus import NatsHealth, close_nats, connect, ensure_streams
from events.consumer import Handler, consume
from events.contracts import ladders
from events.envelope import REGISTRY
from events.logs import bind_ids
from events.pgstore import PostgresEventStore, create_pool
from events.subjects import Subjects
from services.runtime import logs, ops
from services.runtime.config import Settings, SettingsError
from services.runtime.loop import LoopLag, current_loop_name, settle_collector


@dataclass
class Runtime:
    """What a running service is given: its settings and its open connections."""

    name: str
    settings: Settings
    subjects: Subjects
    pool: asyncpg.Pool
    store: PostgresEventStore
    nc: NATS
    js: JetStreamContext
    stop: asyncio.Event
    log: Any
    checks: dict[str, ops.Check] = field(default_factory=dict)
    """The /readyz checks; a service adds its own (the table: its leases are being renewed)."""
    nats_health: NatsHealth | None = None
    """The end-to-end probe of ``nc`` (the table gives its leases up while it fails)."""
    consumers_down: dict[str, str] = field(default_factory=dict)
    """The durable consumers not fetching now, and why (``starting`` until the first time)."""

    def consume(
        self, consumer: str, filter_subject: str, handler: Handler, **options: Any
    ) -> Coroutine[Any, Any, None]:
        """Return the exactly-once consumer loop of ``handler`` on this service's connections.

        Its backlog is the ``spades_consumer_lag_messages{consumer=...}`` gauge of /metrics.
        /readyz says ``consumers`` is down from now until it fetches, and again whenever it
        is subscribing anew (`events.consumer.consume` does so after any failure): a service
        deaf to a subject it must follow is not ready.
        """
        options.setdefault("on_lag", _show_consumer_lag)
        self.consumers_down[consumer] = "starting"
        self.checks.setdefault("consumers", self._consumers_check)
        return consume(
            self.js,
            self.pool,
            subjects=self.subjects,
            consumer=consumer,
            filter_subject=filter_subject,
            handler=handler,
            stop=self.stop,
            registry=REGISTRY,
            on_state=self._consumer_state,
            **options,
        )

    def _consumer_state(self, consumer: str, why: str | None) -> None:
        if why is None:
            self.consumers_down.pop(consumer, None)
        else:
            self.consumers_down[consumer] = why

    async def _consumers_check(self) -> bool:
        return not self.consumers_down


def _show_consumer_lag(consumer: str, messages: int) -> None:
    ops.CONSUMER_LAG.labels(consumer=consumer).set(messages)


ServiceMain = Callable[[Runtime], Awaitable[None]]

# A NATS connection that has not answered its own probe for SPADES_NATS_DEAD_SECONDS (120 s)
# is given up: the process exits with EXIT_NATS_DEAD and its supervisor starts it again. Longer
# than any outage the client rides out by reconnecting (a NATS restart, a partition).
EXIT_NATS_DEAD = 70  # EX_SOFTWARE
EXIT_STALL_SECONDS = 30.0
"""Once the connection is given up, the longest the service's orderly shutdown may take (its
NATS closes are bounded to seconds, a relay session's pool close to 5 s) before the process
exits anyway. A fresh clone's suite, on a loaded machine, once saw a relay log its NATS
connection reconnecting for the test's whole minute after the cut instead of exiting."""


def _exit_unless_ended(seconds: float, log: Any) -> threading.Timer:
    """Exit the process with `EXIT_NATS_DEAD` in `seconds` unless it has ended by then: a
    timer thread, which runs whatever the event loop is stuck on."""

    def now() -> None:
        log.error("shutdown stalled after giving NATS up: exiting now", seconds=seconds)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_NATS_DEAD)

    timer = threading.Timer(seconds, now)
    timer.daemon = True  # a process that ended on its own does not wait for it
    timer.start()
    return timer


def _count_nats_event(what: str) -> None:
    ops.NATS_CONNECTION_EVENTS.labels(event=what).inc()


def _show_nats_health(alive: bool) -> None:
    ops.NATS_ALIVE.set(1 if alive else 0)
    _count_nats_event("answered" if alive else "unanswered")


async def _watch_nats(health: NatsHealth, stop: asyncio.Event, log: Any, dead_after: float) -> str:
    """Return why the connection is given up (set ``stop`` first), once it must be."""
    bind_ids(request_id=f"nats:{health.name}")  # this task's lines: the connection's work
    while not stop.is_set():
        if health.fatal:
            why = "the NATS client cannot recover (closed, or its read loop ended)"
            break
        if health.dead_for > dead_after:
            why = f"NATS has not answered for {dead_after:.0f} s"
            break
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)
    else:
        return ""
    log.error("giving up the NATS connection: exiting to be restarted", why=why)
    _exit_unless_ended(EXIT_STALL_SECONDS, log)
    stop.set()
    return why


async def run_service(name: str, main: ServiceMain, settings: Settings | None = None) -> None:
    """Run ``main`` as service ``name`` until SIGINT/SIGTERM, with every resource around it."""
    try:
        settings = settings or Settings.from_env()
    except SettingsError as exc:
        raise SystemExit(f"spades {name}: {exc}") from None
    try:  # every service reads the one ladders file: a broken one stops it here, in one line
        ladders.configure(settings.ladders or None)
    except ladders.LadderFileError as exc:
        raise SystemExit(f"spades {name}: ladders file {exc}") from None
    logs.configure(settings.log_level, settings.log_format)
    log = structlog.get_logger(name).bind(service=name)
    if not settings.database_url or not settings.nats_url:
        raise SystemExit(
            "no servers: set SPADES_DATABASE_URL and SPADES_NATS_URL or run `spades infra up`"
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    subjects = Subjects(settings.nats_prefix)
    pool = await create_pool(settings.database_url)
    nc = await connect(settings.nats_url, name=f"spades-{name}", on_event=_count_nats_event)
    health = NatsHealth(nc, name=f"spades-{name}", on_change=_show_nats_health)
    gave_up = ""
    watch: asyncio.Task[str] | None = None
    lag = LoopLag()
    sampler = asyncio.create_task(lag.run())
    try:
        js = nc.jetstream()
        await ensure_streams(js, subjects)
        await health.start()
        watch = asyncio.create_task(_watch_nats(health, stop, log, settings.nats_dead_seconds))
        store = PostgresEventStore(pool)
        checks = {
            "postgres": ops.postgres_check(pool),
            "nats": ops.nats_check(health),
            "event_loop": lag.check(),
        }
        async with ops.ops_server(settings.ops_port, checks) as server:
            settle_collector(settings.gc_young)
            log.info("service started", ops_port=server.port, event_loop=current_loop_name())
            rt = Runtime(name, settings, subjects, pool, store, nc, js, stop, log, checks, health)
            await main(rt)
            log.info("service stopping")
            await store.aclose()
        stop.set()
        gave_up = await watch
    finally:
        sampler.cancel()
        if watch is not None and not watch.done():
            watch.cancel()
        await health.stop()
        await close_nats(nc, drain_for=1.0 if gave_up else 5.0)
        await pool.close()
    if gave_up:
        log.info("service stopped", exit_code=EXIT_NATS_DEAD)
        raise SystemExit(EXIT_NATS_DEAD)
    log.info("service stopped")
