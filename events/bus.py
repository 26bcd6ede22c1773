"""JetStream set-up: connections that reconnect forever, and streams created idempotently.

A connection tells the truth about itself (issue 25: a service went deaf for minutes and
still said it was ready):

- it pings the server every `PING_INTERVAL` seconds and gives the socket up as stale after
  `MAX_OUTSTANDING_PINGS` unanswered pings (nats-py's defaults are 120 s and 2: four to six
  minutes of silence before it noticed), then reconnects;
- every disconnect, reconnect, error and close is logged and handed to ``on_event`` (the
  services count them: ``spades_nats_connection_events_total``);
- it is a `GuardedClient`, which survives the nats-py 2.16 defect of docs/nats-py-pong.md
  (a PONG arriving after its flush() timed out killed the read loop for good);
- `NatsHealth` probes it end to end (a request to an inbox of its own, answered by itself:
  out through the socket, through the server, back through the read loop), which is what
  readiness and the table's ownership use: it cannot pass on a dead read loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from typing import Any

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError

from events.logs import fresh_ids, get_logger
from events.retry import Backoff
from events.settings import infra_setting
from events.subjects import Subjects

__all__ = [
    "DUPLICATE_WINDOW",
    "EVENTS_MAX_AGE",
    "MAX_OUTSTANDING_PINGS",
    "PING_INTERVAL",
    "GuardedClient",
    "NatsHealth",
    "StreamMismatch",
    "close_nats",
    "connect",
    "ensure_streams",
    "nats_url",
    "stream_configs",
]

# How long JetStream remembers a Nats-Msg-Id. A relay that crashes and comes back within this
# window republishes without duplicates in the stream; beyond it, consumers still drop
# duplicates by (stream, version).
DUPLICATE_WINDOW = 120.0
# How long the EVENTS stream keeps an event (a week).
EVENTS_MAX_AGE = 7 * 24 * 3600.0

# The first connect of a starting service: NATS may still be starting beside it.
CONNECT_BACKOFF = Backoff(first=0.25, factor=2.0, most=2.0, jitter=0.2)

# Seconds between the client's own PINGs, and how many may go unanswered before the socket
# counts as stale and the client reconnects: a silent server is noticed within 2-3 pings.
PING_INTERVAL = 2
MAX_OUTSTANDING_PINGS = 2

log = get_logger("bus")

ConnectionEvent = Callable[[str], None]


class GuardedClient(NATS):
    """nats-py's client, guarded against nats-py 2.16's late-PONG defect (docs/nats-py-pong.md).

    ``flush(timeout)`` appends a future to ``_pongs``, sends a PING, and on timeout cancels
    the future but leaves it in the list. When the PONG arrives after all, the client pops
    that cancelled future and calls ``set_result`` on it: ``InvalidStateError`` escapes into
    the read loop, which logs "nats: encountered error" and ends, with the connection still
    counted as connected. From then on nothing is received (no message, no reply), and
    ``flush()`` itself falls back to a path that never waits for a PONG, so a flush-based
    readiness check passes. The guard consumes the late PONG for the cancelled future it
    answers (PONGs come back in the order of the PINGs) without resolving it.
    """

    async def _process_pong(self) -> None:
        if len(self._pongs) > 0:
            future = self._pongs.pop(0)
            if not future.done():  # a flush() that timed out cancelled its future
                future.set_result(True)
            self._pongs_received += 1
            self._pings_outstanding = 0

    @property
    def read_loop_alive(self) -> bool:
        """Whether the task reading the socket runs (False also while not connected)."""
        return _read_loop_alive(self)


def _read_loop_alive(nc: NATS) -> bool:
    task = nc._reading_task
    return task is not None and not task.done()


def nats_url() -> str:
    """Return the NATS URL: $SPADES_NATS_URL, else the running embedded stack's."""
    return infra_setting("SPADES_NATS_URL", "no NATS: set SPADES_NATS_URL or run `spades infra up`")


def _callbacks(name: str, on_event: ConnectionEvent | None) -> dict[str, Any]:
    """Return the client's callbacks: log every change of the connection and count it."""

    def count(what: str) -> None:
        if on_event is not None:
            with contextlib.suppress(Exception):
                on_event(what)

    # Every line of the connection's own work carries one request id naming it.
    work = f"nats:{name}"

    async def disconnected() -> None:
        with fresh_ids(request_id=work):
            log.warning("nats disconnected", connection=name)
        count("disconnected")

    async def reconnected() -> None:
        with fresh_ids(request_id=work):
            log.info("nats reconnected", connection=name)
        count("reconnected")

    async def error(exc: Exception) -> None:
        # The type only: a message can name the server's address and credentials' user.
        with fresh_ids(request_id=work):
            log.warning("nats connection error", connection=name, error=type(exc).__name__)
        count("error")

    async def closed() -> None:
        with fresh_ids(request_id=work):
            log.info("nats connection closed", connection=name)
        count("closed")

    return {
        "disconnected_cb": disconnected,
        "reconnected_cb": reconnected,
        "error_cb": error,
        "closed_cb": closed,
    }


async def connect(
    url: str,
    *,
    name: str,
    connect_timeout: float = 60.0,
    on_event: ConnectionEvent | None = None,
) -> GuardedClient:
    """Return a NATS connection that reconnects forever; retry the first connect too.

    ``on_event(what)`` is told every "disconnected", "reconnected", "error" and "closed".
    """
    failure: Exception | None = None
    async for attempt in CONNECT_BACKOFF.attempts(within=connect_timeout):
        nc = GuardedClient()
        try:
            await nc.connect(
                url,
                name=name,
                max_reconnect_attempts=-1,
                reconnect_time_wait=0.25,  # type: ignore[arg-type]  # typed int, used as seconds
                connect_timeout=2,
                allow_reconnect=True,
                ping_interval=PING_INTERVAL,
                max_outstanding_pings=MAX_OUTSTANDING_PINGS,
                **_callbacks(name, on_event),
            )
            return nc
        except Exception as exc:
            failure = exc
            log.warning("nats connect failed, retrying", error=type(exc).__name__, attempt=attempt)
    assert failure is not None
    raise failure


class NatsHealth:
    """An end-to-end probe of one connection: a request to an inbox of its own, answered by
    the same connection, every ``interval`` seconds, each within ``timeout``.

    ``alive`` is True while the last answered probe is less than ``stale_after`` seconds old.
    A probe travels out through the socket, through the server, and back in through the read
    loop twice, so it fails on a dead read loop, a paused or unreachable server, and a socket
    that is open but silent, where ``flush()`` or ``is_connected`` may still look fine.
    ``dead_for`` is how long it has not been alive (0 while it is); ``fatal`` says the client
    cannot recover by itself: closed, or connected with its read loop gone.
    """

    def __init__(
        self,
        nc: NATS,
        *,
        name: str,
        interval: float = 1.0,
        timeout: float = 1.0,
        stale_after: float = 3.0,
        on_change: Callable[[bool], None] | None = None,
    ) -> None:
        self.nc = nc
        self.name = name
        self.interval = interval
        self.timeout = timeout
        self.stale_after = stale_after
        self._on_change = on_change
        self.last_ok = -math.inf
        self._since = time.monotonic()  # when it was last alive, or started
        self._was_alive = False
        self._subject = ""
        self._task: asyncio.Task[None] | None = None
        self.changed = asyncio.Event()

    @property
    def alive(self) -> bool:
        """Whether a probe was answered within the last ``stale_after`` seconds."""
        return time.monotonic() - self.last_ok < self.stale_after

    @property
    def dead_for(self) -> float:
        """Seconds since the connection was last known alive (0 while it is)."""
        if self.alive:
            return 0.0
        return time.monotonic() - max(self._since, self.last_ok)

    @property
    def fatal(self) -> bool:
        """Whether the client cannot recover: closed, or connected with no read loop."""
        if self.nc.is_closed:
            return True
        return self.nc.is_connected and not _read_loop_alive(self.nc)

    def answered_within(self, seconds: float) -> bool:
        """Whether a probe was answered within the last ``seconds``."""
        return time.monotonic() - self.last_ok < seconds

    async def check(self) -> bool:
        """A /readyz check: the last probe is recent, and one sent now comes back."""
        if not self.alive:
            return False
        started = time.monotonic()
        if not await self.probe():
            return False
        self.last_ok = max(self.last_ok, started)
        return True

    async def probe(self) -> bool:
        """Send one probe now; return whether it came back in time."""
        try:
            answer = await self.nc.request(self._subject, b"ping", timeout=self.timeout)
        except Exception:
            return False
        return answer.data == b"pong"

    async def start(self) -> None:
        """Subscribe the probe's inbox and start probing."""
        self._subject = f"{self.nc.new_inbox()}.health"

        async def answer(msg: Msg) -> None:
            with contextlib.suppress(Exception):
                await msg.respond(b"pong")

        await self.nc.subscribe(self._subject, cb=answer)
        if await self.probe():
            self.last_ok = time.monotonic()
        self._report()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop probing."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            started = time.monotonic()
            if await self.probe():
                self.last_ok = started
            self._report()
            await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - started)))

    def _report(self) -> None:
        alive = self.alive
        if alive == self._was_alive:
            return
        with fresh_ids(request_id=f"nats:{self.name}"):
            self._log_change(alive)
        self._was_alive = alive
        self.changed.set()
        if self._on_change is not None:
            with contextlib.suppress(Exception):
                self._on_change(alive)

    def _log_change(self, alive: bool) -> None:
        if alive:
            log.info("nats answers again", connection=self.name)
        else:
            self._since = time.monotonic()
            log.warning(
                "nats does not answer",
                connection=self.name,
                connected=self.nc.is_connected,
                read_loop=_read_loop_alive(self.nc),
            )


async def close_nats(nc: NATS, *, drain_for: float = 5.0) -> None:
    """Drain `nc` (finish in-flight work) and close it; just close it if draining stalls, and
    leave it if closing stalls too: over a network that stopped taking bytes, a close waits
    for its socket's buffer to empty, which never happens, and a service that gave up a deaf
    connection to exit would hang there instead (`tests/events/test_nats_close.py`)."""
    try:
        await asyncio.wait_for(nc.drain(), timeout=drain_for)
    except Exception as exc:
        log.warning("nats drain failed, closing", error=type(exc).__name__)
    finally:
        if not nc.is_closed:
            try:
                await asyncio.wait_for(nc.close(), timeout=drain_for)
            except TimeoutError:
                log.warning("nats close stalled, leaving the connection", seconds=drain_for)


def stream_configs(subjects: Subjects) -> list[StreamConfig]:
    """Return the EVENTS and PARKED streams as the platform needs them.

    In a cluster these are declared as JetStream resources (deploy/base/nats/streams.yaml,
    applied by NACK, with more replicas in production); a manifest test keeps the two equal.
    """
    return [
        StreamConfig(
            name=subjects.events_stream,
            subjects=subjects.events_stream_subjects(),
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            discard=DiscardPolicy.OLD,
            duplicate_window=DUPLICATE_WINDOW,
            max_age=EVENTS_MAX_AGE,
        ),
        StreamConfig(
            name=subjects.parked_stream,
            subjects=subjects.parked_stream_subjects(),
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            discard=DiscardPolicy.OLD,
            duplicate_window=DUPLICATE_WINDOW,
        ),
    ]


class StreamMismatch(RuntimeError):
    """A stream exists but does not capture the subjects this platform publishes on."""


async def ensure_streams(js: JetStreamContext, subjects: Subjects) -> None:
    """Create the EVENTS and PARKED streams when missing; safe to call at every start.

    A stream that exists is left as it is (its replicas and limits are the operator's, set
    through the JetStream resources), as long as it captures the subjects the platform uses:
    otherwise StreamMismatch says which stream to fix, because publishing would go nowhere.
    """
    for config in stream_configs(subjects):
        assert config.name is not None
        try:
            info = await js.stream_info(config.name)
        except NotFoundError:
            try:
                await js.add_stream(config)
                continue
            except BadRequestError:
                # Another replica (or NACK) created it between our two calls.
                info = await js.stream_info(config.name)
        missing = set(config.subjects or []) - set(info.config.subjects or [])
        if missing:
            raise StreamMismatch(
                f"JetStream stream {config.name} does not capture {sorted(missing)}: "
                "fix its subjects (deploy/base/nats/streams.yaml)"
            )
