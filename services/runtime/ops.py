"""The operational surface of every service: liveness, readiness and Prometheus metrics.

Every service, the gateway included, serves three paths on its ops port
(``SPADES_OPS_PORT``, default 9000), which the Kubernetes probes and Prometheus use and
which no Ingress routes to:

| path       | answers                                                              |
|------------|----------------------------------------------------------------------|
| ``/livez`` | 200 while the process's event loop runs                              |
| ``/readyz``| 200 when every readiness check passes; 503 and a JSON body naming    |
|            | the checks that failed otherwise                                     |
| ``/metrics``| the Prometheus text exposition of the platform's metrics            |

``ops_app`` is a small ASGI app (``/metrics`` is prometheus-client's own ``make_asgi_app``),
served by uvicorn on the ops port. A service wraps its run in ``ops_server``::

    async with ops_server(settings.ops_port, checks={
        "postgres": postgres_check(pool),
        "nats": nats_check(health),  # events.bus.NatsHealth of the connection
    }):
        await stop.wait()

The gateway may run the same ``ops_server`` from its litestar lifespan (that is the port
the manifests probe), and may also mount ``ops_router(checks)`` to answer the same paths
on its API port, e.g. for ``spades dev`` where one port is simpler.

The metric objects of the whole platform are defined here, once, so that services import
and update them and the names stay the ones dashboards and alerts use. Never put a game,
player or request id in a label: ids go in log lines, labels stay low-cardinality.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
import uvicorn
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    make_asgi_app,
)

LIVEZ = "/livez"
READYZ = "/readyz"
METRICS = "/metrics"
PATHS = (LIVEZ, READYZ, METRICS)

DEFAULT_OPS_PORT = 9000
OPS_PORT_ENV = "SPADES_OPS_PORT"

# A readiness check is "up" when it returns anything but False without raising in time.
Check = Callable[[], Awaitable[object]]
CHECK_TIMEOUT_SECONDS = 2.0

_MAX_REQUEST_BYTES = 8192
_READ_TIMEOUT_SECONDS = 5

log = structlog.get_logger("spades.ops")

# No *_created series: Prometheus derives resets itself, and they double every counter's series.
disable_created_metrics()  # type: ignore[no-untyped-call]

# --- the platform's metrics --------------------------------------------------------------

COMMANDS_HANDLED = Counter(
    "spades_commands_handled",
    "Commands the table service accepted and turned into events, by command type.",
    ["command"],
)
COMMANDS_REJECTED = Counter(
    "spades_commands_rejected",
    "Commands refused without any event appended, by command type and the engine's reason "
    "(e.g. out_of_turn, illegal_card, not_seated, malformed).",
    ["command", "reason"],
)
APPEND_LATENCY = Histogram(
    "spades_event_append_seconds",
    "Time to append one command's events to the PostgreSQL event store, by outcome "
    "(ok, or conflict when another writer won the expected version).",
    ["outcome"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
RELAY_LAG_EVENTS = Gauge(
    "spades_relay_lag_events",
    "Events committed to the event store and not yet published to JetStream.",
)
RELAY_LAG_SECONDS = Gauge(
    "spades_relay_lag_seconds",
    "Age of the oldest event committed to the event store and not yet published to JetStream.",
)
CONSUMER_LAG = Gauge(
    "spades_consumer_lag_messages",
    "Messages pending for a JetStream durable consumer of this service, by consumer name.",
    ["consumer"],
)
ACTIVE_GAMES = Gauge(
    "spades_active_games",
    "Games in progress that this table replica owns (has loaded and runs timers for).",
)
FINISHED_CACHE_BYTES = Gauge(
    "spades_table_finished_cache_bytes",
    "Bytes (of their events) of the finished games this table replica keeps for readers; "
    "bounded by SPADES_TABLE_FINISHED_CACHE_BYTES.",
)
FINISHED_CACHE_GAMES = Gauge(
    "spades_table_finished_cache_games",
    "Finished games this table replica keeps for readers (least recently read dropped first).",
)
FINISHED_CACHE_EVICTIONS = Counter(
    "spades_table_finished_cache_evictions",
    "Finished games a table replica dropped from its cache to stay within its byte limit.",
)
SLOTS_OWNED = Gauge(
    "spades_slots_owned",
    "Table hash slots whose lease this replica holds (serves); summed over replicas it is the"
    " slot count (1024), except for the seconds of a failover.",
)
LEASE_CHANGES = Counter(
    "spades_lease_changes_total",
    "Leases this replica claimed or gave up, by what happened (claimed, released, rebalanced,"
    " lost, expired, fenced, withdrawn: NATS did not answer).",
    ["event"],
)
QUEUE_SIZE = Gauge(
    "spades_matchmaking_queue_size",
    "Players waiting in a matchmaking queue, by ladder.",
    ["ladder"],
)
QUEUE_WAIT = Histogram(
    "spades_matchmaking_wait_seconds",
    "Time a player waited in a matchmaking queue before being seated, by ladder.",
    ["ladder"],
    buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600),
)
WEBSOCKET_CONNECTIONS = Gauge(
    "spades_websocket_connections",
    "Open WebSocket connections on this gateway replica, by role (player, spectator, bot).",
    ["role"],
)
RATING_UPDATES = Counter(
    "spades_rating_updates",
    "Finished games the rating service processed, by outcome "
    "(applied, or duplicate when a redelivered GameFinished changed nothing).",
    ["outcome"],
)

BOT_DECISIONS = Counter(
    "spades_bot_decisions",
    "Decisions of the bot tier, by kind (decide, hint), level and outcome (ok; fallback: the "
    "level failed and the baseline's move was answered; refused: a request that was not one).",
    ["kind", "level", "outcome"],
)
BOT_DECISION_SECONDS = Histogram(
    "spades_bot_decision_seconds",
    "CPU seconds of one bot tier decision, by kind and level.",
    ["kind", "level"],
    buckets=(0.0005, 0.002, 0.01, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0),
)
TABLE_BOT_MOVES = Counter(
    "spades_table_bot_moves",
    "Bot moves a table replica played, by source: tier (answered by a bot worker) or "
    "fallback (no worker answered in time: the baseline's move, computed on the table).",
    ["source"],
)
EVENT_LOOP_LAG = Gauge(
    "spades_event_loop_lag_seconds",
    "How late this process's event loop ran a timer that was due (sampled every 0.25 s): a "
    "starved loop shows here and on /readyz before its leases or pings suffer.",
)
NATS_CONNECTION_EVENTS = Counter(
    "spades_nats_connection_events",
    "Changes of this process's NATS connection, by what happened (disconnected, reconnected,"
    " error, closed, and unanswered/answered for its own end-to-end probe).",
    ["event"],
)
NATS_ALIVE = Gauge(
    "spades_nats_alive",
    "1 while this process's NATS connection answers its own end-to-end probe (a request to"
    " an inbox of its own) within the last few seconds, else 0.",
)

PLATFORM_METRICS = (
    COMMANDS_HANDLED,
    COMMANDS_REJECTED,
    APPEND_LATENCY,
    RELAY_LAG_EVENTS,
    RELAY_LAG_SECONDS,
    CONSUMER_LAG,
    ACTIVE_GAMES,
    FINISHED_CACHE_BYTES,
    FINISHED_CACHE_GAMES,
    FINISHED_CACHE_EVICTIONS,
    QUEUE_SIZE,
    QUEUE_WAIT,
    WEBSOCKET_CONNECTIONS,
    RATING_UPDATES,
    BOT_DECISIONS,
    BOT_DECISION_SECONDS,
    TABLE_BOT_MOVES,
    EVENT_LOOP_LAG,
    NATS_CONNECTION_EVENTS,
    NATS_ALIVE,
)


def metric_names() -> tuple[str, ...]:
    """Return the exposition names (as a scrape shows them) of the platform's metrics."""
    # prometheus_client keeps a counter's name without the _total a scrape shows.
    return tuple(
        f"{m._name}_total" if isinstance(m, Counter) else m._name for m in PLATFORM_METRICS
    )


# --- readiness ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Readiness:
    """The result of running every readiness check once."""

    down: Mapping[str, str]
    checked: tuple[str, ...]

    @property
    def ready(self) -> bool:
        """Return True when no check failed."""
        return not self.down

    def body(self) -> dict[str, Any]:
        """Return the JSON document /readyz answers with."""
        return {
            "status": "ready" if self.ready else "unavailable",
            "checks": {name: self.down.get(name, "ok") for name in self.checked},
            "down": sorted(self.down),
        }


async def _run_check(check: Check) -> str | None:
    """Return None when the check passes, else a short reason (no message text)."""
    try:
        result = await check()
    except Exception as exc:  # a check's failure is data here, not a crash
        # The type only: a driver's message can carry a DSN, and /readyz is unauthenticated.
        return type(exc).__name__
    return "failed" if result is False else None


# Checks still running past their limit: cancelled, and kept referenced until they end.
_abandoned: set[asyncio.Task[str | None]] = set()


async def run_checks(
    checks: Mapping[str, Check], limit_seconds: float = CHECK_TIMEOUT_SECONDS
) -> Readiness:
    """Return the readiness of ``checks``, run concurrently, within ``limit_seconds`` in all.

    The deadline is the answer's, whatever the network does: a check still running then is
    "timeout", cancelled and left to end on its own. (Awaiting its cancellation could take as
    long as the network lets it: a driver cancelling a query on a black-holed connection
    waits for the socket, and /readyz then did not answer at all.)
    """
    names = tuple(checks)
    tasks = {name: asyncio.ensure_future(_run_check(checks[name])) for name in names}
    if tasks:
        await asyncio.wait(tasks.values(), timeout=limit_seconds)
    down: dict[str, str] = {}
    for name, task in tasks.items():
        if not task.done():
            task.cancel()
            _abandoned.add(task)
            task.add_done_callback(_abandoned.discard)
            down[name] = "timeout"
        elif task.cancelled():
            down[name] = "cancelled"
        elif (reason := task.result()) is not None:
            down[name] = reason
    if down:
        log.warning("not ready", down=down)
    return Readiness(down=down, checked=names)


class _Pool(Protocol):
    async def fetchval(self, query: str) -> object: ...


class _NatsHealth(Protocol):
    async def check(self) -> bool: ...


def postgres_check(pool: _Pool) -> Check:
    """Return a check that PostgreSQL answers a query through ``pool`` (an asyncpg Pool)."""

    async def check() -> bool:
        return await pool.fetchval("SELECT 1") == 1

    return check


def nats_check(health: _NatsHealth) -> Check:
    """Return a check that NATS answered the connection's own probe lately.

    ``health`` is the connection's `events.bus.NatsHealth`: a request to an inbox of its own,
    answered by itself, every second. Not ``flush()``: with nats-py 2.16 a flush passes on a
    connection whose read loop has died (docs/nats-py-pong.md), and the service was deaf for
    minutes while it said it was ready.
    """
    return health.check


# --- the ops server: an ASGI app under uvicorn ---------------------------------------------


def ops_port_from_env(environ: Mapping[str, str] | None = None) -> int:
    """Return the ops port from SPADES_OPS_PORT, or the default 9000."""
    from services.runtime.config import Settings

    return Settings.from_env(environ).ops_port


_JSON = "application/json"
_Scope = dict[str, Any]
_Receive = Callable[[], Awaitable[dict[str, Any]]]
_Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


def _readiness_answer(readiness: Readiness) -> tuple[int, dict[str, Any]]:
    return (200 if readiness.ready else 503), readiness.body()


def ops_app(
    checks: Mapping[str, Check],
    registry: CollectorRegistry = REGISTRY,
    check_timeout: float = CHECK_TIMEOUT_SECONDS,
) -> ASGIApp:
    """Return the ASGI app of the three ops paths; /metrics is prometheus-client's own app.

    ``checks`` is read at every /readyz, by reference: a service may add checks once it runs.
    """
    metrics = make_asgi_app(registry)

    async def send_json(send: _Send, status: int, doc: object, *, head: bool) -> None:
        body = json.dumps(doc).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", _JSON.encode()),
                    (b"content-length", str(len(body)).encode()),
                    (b"cache-control", b"no-store"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b"" if head else body})

    async def app(scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; nothing else is served
        method, path = scope["method"], scope["path"]
        head = method == "HEAD"
        if method not in ("GET", "HEAD"):
            await send_json(send, 405, {"error": "method not allowed"}, head=False)
        elif path == METRICS:
            await metrics(scope, receive, send)
        elif path == LIVEZ:
            await send_json(send, 200, {"status": "alive"}, head=head)
        elif path == READYZ:
            status, doc = _readiness_answer(await run_checks(checks, check_timeout))
            await send_json(send, status, doc, head=head)
        else:
            await send_json(send, 404, {"error": "not found", "paths": list(PATHS)}, head=head)

    return app


class QuietServer(uvicorn.Server):
    """uvicorn without its own signal handlers (the service's runtime owns SIGINT/SIGTERM),
    that says when it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.listening.set()


class OpsServer:
    """The ops paths served by uvicorn on their own port, beside whatever the service does."""

    def __init__(
        self,
        checks: Mapping[str, Check],
        registry: CollectorRegistry = REGISTRY,
        check_timeout: float = CHECK_TIMEOUT_SECONDS,
    ) -> None:
        self.checks = checks  # by reference: a service may add its own checks once it runs
        self.app = ops_app(checks, registry, check_timeout)
        self._server: QuietServer | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        """Return the port the server listens on (useful after binding port 0)."""
        if self._server is None or not self._server.servers:
            raise RuntimeError("ops server is not started")
        port: int = self._server.servers[0].sockets[0].getsockname()[1]
        return port

    async def start(self, port: int, host: str = "0.0.0.0") -> None:  # probes come from the kubelet
        """Start listening on ``host:port``; return once it accepts connections."""
        self._server = QuietServer(
            uvicorn.Config(
                self.app,
                host=host,
                port=port,
                lifespan="off",
                log_config=None,
                access_log=False,
                # A probe's request is one line and a few headers; anything larger is not one.
                # h11, not httptools (installed for the gateway): only h11 enforces this bound.
                http="h11",
                h11_max_incomplete_event_size=_MAX_REQUEST_BYTES,
                timeout_keep_alive=_READ_TIMEOUT_SECONDS,
                timeout_graceful_shutdown=2,
            )
        )
        self._task = asyncio.create_task(self._server.serve())
        started = asyncio.create_task(self._server.listening.wait())
        done, _ = await asyncio.wait({self._task, started}, return_when=asyncio.FIRST_COMPLETED)
        if self._task in done:
            started.cancel()
            await self._task  # raises what stopped it (e.g. the port is taken)
            raise SystemExit(f"the ops server did not start on port {port}")

    async def stop(self) -> None:
        """Stop listening and wait for the server to close."""
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
        self._server = None
        self._task = None


@contextlib.asynccontextmanager
async def ops_server(
    port: int | None = None,
    checks: Mapping[str, Check] | None = None,
    *,
    host: str = "0.0.0.0",  # probes come from the kubelet
    registry: CollectorRegistry = REGISTRY,
    check_timeout: float = CHECK_TIMEOUT_SECONDS,
) -> AsyncIterator[OpsServer]:
    """Yield a running ops server on ``port`` (default SPADES_OPS_PORT; 0 = any free port)."""
    server = OpsServer(checks if checks is not None else {}, registry, check_timeout)
    await server.start(ops_port_from_env() if port is None else port, host)
    log.info("ops server listening", port=server.port, checks=sorted(server.checks))
    try:
        yield server
    finally:
        await server.stop()


# --- the same paths for the litestar gateway ---------------------------------------------


def ops_router(
    checks: Mapping[str, Check] | None = None, registry: CollectorRegistry = REGISTRY
) -> Any:
    """Return a litestar Router answering /livez, /readyz and /metrics like ``ops_server``."""
    from litestar import Response, Router, get  # only the gateway pays for litestar

    bound = dict(checks or {})

    def answer(status: int, doc: object) -> Response[bytes]:
        return Response(json.dumps(doc).encode(), status_code=status, media_type=_JSON)

    @get(LIVEZ, include_in_schema=False)
    async def livez() -> Response[bytes]:
        return answer(200, {"status": "alive"})

    @get(READYZ, include_in_schema=False)
    async def readyz() -> Response[bytes]:
        return answer(*_readiness_answer(await run_checks(bound)))

    @get(METRICS, include_in_schema=False)
    async def metrics() -> Response[bytes]:
        # litestar appends the charset to text/* itself; don't say it twice.
        media_type = CONTENT_TYPE_LATEST.replace("; charset=utf-8", "")
        return Response(generate_latest(registry), media_type=media_type)

    # Annotations are strings here (PEP 563): litestar resolves them in this namespace.
    return Router(
        path="/",
        route_handlers=[livez, readyz, metrics],
        signature_namespace={"Response": Response},
    )
