"""The frame every service runs in: settings, logs, PostgreSQL, NATS, ops server, shutdown.

A service is an ``async def main(rt: Runtime) -> None`` that starts its work and returns when
``rt.stop`` is set. `run_service` opens every resource before it and closes them after it in
reverse order: on SIGTERM the service stops taking new work, finishes what is in flight, then
NATS is drained (pending replies and acks flushed) before the pool closes.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import structlog
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from events.bus import close_nats, connect, ensure_streams
from events.consumer import Handler, consume
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore, create_pool
from events.subjects import Subjects
from services.runtime import logs, ops
from services.runtime.config import Settings, SettingsError
from services.runtime.loop import LoopLag, current_loop_name


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

    def consume(
        self, consumer: str, filter_subject: str, handler: Handler, **options: Any
    ) -> Coroutine[Any, Any, None]:
        """Return the exactly-once consumer loop of ``handler`` on this service's connections.

        Its backlog is the ``spades_consumer_lag_messages{consumer=...}`` gauge of /metrics.
        """
        options.setdefault("on_lag", _show_consumer_lag)
        return consume(
            self.js,
            self.pool,
            subjects=self.subjects,
            consumer=consumer,
            filter_subject=filter_subject,
            handler=handler,
            stop=self.stop,
            registry=REGISTRY,
            **options,
        )


def _show_consumer_lag(consumer: str, messages: int) -> None:
    ops.CONSUMER_LAG.labels(consumer=consumer).set(messages)


ServiceMain = Callable[[Runtime], Awaitable[None]]


async def run_service(name: str, main: ServiceMain, settings: Settings | None = None) -> None:
    """Run ``main`` as service ``name`` until SIGINT/SIGTERM, with every resource around it."""
    try:
        settings = settings or Settings.from_env()
    except SettingsError as exc:
        raise SystemExit(f"spades {name}: {exc}") from None
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
    nc = await connect(settings.nats_url, name=f"spades-{name}")
    lag = LoopLag()
    sampler = asyncio.create_task(lag.run())
    try:
        js = nc.jetstream()
        await ensure_streams(js, subjects)
        store = PostgresEventStore(pool)
        checks = {
            "postgres": ops.postgres_check(pool),
            "nats": ops.nats_check(nc),
            "event_loop": lag.check(),
        }
        async with ops.ops_server(settings.ops_port, checks) as server:
            log.info("service started", ops_port=server.port, event_loop=current_loop_name())
            rt = Runtime(name, settings, subjects, pool, store, nc, js, stop, log, checks)
            await main(rt)
            log.info("service stopping")
            await store.aclose()
    finally:
        sampler.cancel()
        await close_nats(nc)
        await pool.close()
    log.info("service stopped")
