"""JetStream set-up: connections that reconnect forever, and streams created idempotently."""

from __future__ import annotations

import asyncio

import nats
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError

from events.logs import get_logger
from events.retry import Backoff
from events.settings import infra_setting
from events.subjects import Subjects

__all__ = [
    "DUPLICATE_WINDOW",
    "EVENTS_MAX_AGE",
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

log = get_logger("bus")


def nats_url() -> str:
    """Return the NATS URL: $SPADES_NATS_URL, else the running embedded stack's."""
    return infra_setting("SPADES_NATS_URL", "no NATS: set SPADES_NATS_URL or run `spades infra up`")


async def connect(url: str, *, name: str, connect_timeout: float = 60.0) -> NATS:
    """Return a NATS connection that reconnects forever; retry the first connect too."""
    failure: Exception | None = None
    async for attempt in CONNECT_BACKOFF.attempts(within=connect_timeout):
        try:
            return await nats.connect(
                url,
                name=name,
                max_reconnect_attempts=-1,
                reconnect_time_wait=0.25,
                connect_timeout=2,
                allow_reconnect=True,
            )
        except Exception as exc:
            failure = exc
            log.warning("nats connect failed, retrying", error=type(exc).__name__, attempt=attempt)
    assert failure is not None
    raise failure


async def close_nats(nc: NATS, *, drain_for: float = 5.0) -> None:
    """Drain `nc` (finish in-flight work) and close it; just close it if draining stalls."""
    try:
        await asyncio.wait_for(nc.drain(), timeout=drain_for)
    except Exception as exc:
        log.warning("nats drain failed, closing", error=type(exc).__name__)
    finally:
        if not nc.is_closed:
            await nc.close()


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
