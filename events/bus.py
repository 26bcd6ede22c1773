"""JetStream set-up: connections that reconnect forever, and streams created idempotently."""

from __future__ import annotations

import asyncio
import os

import nats
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError

from events.logs import get_logger
from events.subjects import Subjects

__all__ = ["DUPLICATE_WINDOW", "close_nats", "connect", "ensure_streams", "nats_url"]

# How long JetStream remembers a Nats-Msg-Id. A relay that crashes and comes back within this
# window republishes without duplicates in the stream; beyond it, consumers still drop
# duplicates by (stream, version).
DUPLICATE_WINDOW = 120.0

log = get_logger("bus")


def nats_url() -> str:
    """Return the NATS URL: $SPADES_NATS_URL, else the running embedded stack's."""
    url = os.environ.get("SPADES_NATS_URL")
    if url:
        return url
    from services.infra import read_env_file

    url = read_env_file().get("SPADES_NATS_URL")
    if not url:
        raise SystemExit("no NATS: set SPADES_NATS_URL or run `spades infra up`")
    return url


async def connect(url: str, *, name: str, connect_timeout: float = 60.0) -> NATS:
    """Return a NATS connection that reconnects forever; retry the first connect too."""
    deadline = asyncio.get_running_loop().time() + connect_timeout
    while True:
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
            if asyncio.get_running_loop().time() > deadline:
                raise
            log.warning("nats connect failed, retrying", error=type(exc).__name__)
            await asyncio.sleep(0.5)


async def close_nats(nc: NATS, *, drain_for: float = 5.0) -> None:
    """Drain `nc` (finish in-flight work) and close it; just close it if draining stalls."""
    try:
        await asyncio.wait_for(nc.drain(), timeout=drain_for)
    except Exception as exc:
        log.warning("nats drain failed, closing", error=type(exc).__name__)
    finally:
        if not nc.is_closed:
            await nc.close()


async def ensure_streams(js: JetStreamContext, subjects: Subjects) -> None:
    """Create (or bring up to date) the EVENTS and PARKED streams; safe to call at every start."""
    configs = [
        StreamConfig(
            name=subjects.events_stream,
            subjects=subjects.events_stream_subjects(),
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            discard=DiscardPolicy.OLD,
            duplicate_window=DUPLICATE_WINDOW,
            max_age=7 * 24 * 3600.0,
        ),
        StreamConfig(
            name=subjects.parked_stream,
            subjects=subjects.parked_stream_subjects(),
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            duplicate_window=DUPLICATE_WINDOW,
        ),
    ]
    for config in configs:
        try:
            await js.add_stream(config)
        except BadRequestError:
            # Exists with another config (an older deployment): bring it to this one.
            await js.update_stream(config)
