"""The nats-py 2.16 late-PONG defect (docs/nats-py-pong.md), reproduced on a real NATS server,
and the guard that keeps the services' connections alive through it.

A TCP proxy between the client and the server holds the bytes for a moment (a server paused
for a second or two, a congested link): ``flush(timeout=1)`` times out, then its PONG arrives.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import nats.errors
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from events.bus import MAX_OUTSTANDING_PINGS, PING_INTERVAL, GuardedClient, NatsHealth, connect
from tests.infra import eventually
from tests.netproxy import FreezableProxy


@pytest.fixture
async def proxy(nats_url: str) -> AsyncIterator[FreezableProxy]:
    proxy = FreezableProxy.to_url(nats_url)
    await proxy.start()
    try:
        yield proxy
    finally:
        proxy.thaw()
        await proxy.close()


async def echo(nc: NATS, subject: str) -> None:
    async def answer(msg: Msg) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(subject, cb=answer)
    await nc.flush()


async def late_pong(nc: NATS, proxy: FreezableProxy) -> None:
    """Make one flush time out, then let its PONG arrive; return once it was processed."""
    proxy.freeze()
    with pytest.raises(nats.errors.TimeoutError):
        await nc.flush(timeout=1)
    proxy.thaw()
    # the cancelled flush's future is popped when its PONG is read (then the defect strikes)
    await eventually(lambda: not nc._pongs, within=30, what="the late PONG to be read")


async def answers(nc: NATS, subject: str) -> bool:
    try:
        reply = await nc.request(subject, b"hello", timeout=2)
    except nats.errors.TimeoutError:
        return False
    return reply.data == b"hello"


async def test_nats_py_loses_its_read_loop_to_a_late_pong(proxy: FreezableProxy) -> None:
    """The defect itself, on nats-py's own client: the reproduction of the upstream report.

    If this test fails, the installed nats-py no longer has the defect: `GuardedClient` and
    this test can go (see docs/nats-py-pong.md)."""
    nc = NATS()
    await nc.connect(proxy.url, allow_reconnect=False, ping_interval=3600)
    try:
        await echo(nc, "pong.defect")
        assert await answers(nc, "pong.defect")
        await late_pong(nc, proxy)
        await eventually(lambda: nc._reading_task.done(), within=10, what="the read loop to end")
        assert nc.is_connected  # it still says connected ...
        assert not await answers(nc, "pong.defect")  # ... and hears nothing
        await nc.flush(timeout=1)  # while a flush-based readiness check passes
    finally:
        await nc.close()


async def test_the_guarded_client_keeps_hearing_after_a_late_pong(proxy: FreezableProxy) -> None:
    nc = GuardedClient()
    await nc.connect(proxy.url, allow_reconnect=False, ping_interval=3600)
    try:
        await echo(nc, "pong.guarded")
        await late_pong(nc, proxy)
        assert nc.read_loop_alive
        assert await answers(nc, "pong.guarded")
        await nc.flush(timeout=1)  # and a later flush gets its own PONG
    finally:
        await nc.close()


async def test_the_health_probe_fails_on_a_dead_read_loop_where_flush_passes(
    proxy: FreezableProxy,
) -> None:
    """Readiness from the probe, not from flush(): on an unguarded client that lost its read
    loop, the probe says not alive and `fatal` (the service exits to be restarted)."""
    nc = NATS()
    await nc.connect(proxy.url, allow_reconnect=False, ping_interval=3600)
    health = NatsHealth(nc, name="test", interval=0.2, timeout=0.5, stale_after=1.0)
    try:
        await health.start()
        assert await health.check()
        await late_pong(nc, proxy)
        await eventually(lambda: nc._reading_task.done(), within=10, what="the read loop to end")
        await nc.flush(timeout=1)
        await eventually(lambda: not health.alive, within=10, what="the probe to fail")
        assert not await health.check()
        assert health.dead_for > 0
        assert health.fatal  # connected, with no read loop: it cannot recover by itself
    finally:
        await health.stop()
        await nc.close()


async def test_a_frozen_link_is_noticed_and_the_probe_recovers_after_it(
    proxy: FreezableProxy,
) -> None:
    """The services' connection pings every PING_INTERVAL s: a silent server is given up
    after MAX_OUTSTANDING_PINGS and the client reconnects by itself once the link is back."""
    events: list[str] = []
    nc = await connect(proxy.url, name="test", on_event=events.append)
    assert isinstance(nc, GuardedClient)
    assert (nc.options["ping_interval"], nc.options["max_outstanding_pings"]) == (
        PING_INTERVAL,
        MAX_OUTSTANDING_PINGS,
    )
    health = NatsHealth(nc, name="test", interval=0.2, timeout=0.5, stale_after=1.0)
    try:
        await health.start()
        assert health.alive
        proxy.freeze()
        await eventually(lambda: not health.alive, within=10, what="the probe to fail")
        await eventually(lambda: "disconnected" in events, within=30, what="a stale connection")
        proxy.thaw()
        await eventually(lambda: health.alive, within=30, what="the probe to pass again")
        assert "reconnected" in events
    finally:
        await health.stop()
        await nc.close()
