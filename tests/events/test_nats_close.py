"""Closing a NATS connection ends, whatever its peer does: a service that gives up a deaf
connection must be able to exit."""

from __future__ import annotations

import asyncio

from events.bus import close_nats, connect
from tests.netproxy import FreezableProxy


async def test_closing_a_connection_whose_peer_stopped_reading_returns(nats_url: str) -> None:
    """A frozen network with megabytes still to send: the drain stalls, and so would the close
    (its socket's buffer never empties); `close_nats` gives both up after its time."""
    proxy = FreezableProxy.to_url(nats_url)
    await proxy.start()
    nc = await connect(proxy.url, name="test-frozen-close")
    try:
        proxy.freeze()
        payload = b"x" * 500_000
        # 8 MB, more than the kernel's and the proxy's buffers hold, put in the client's
        # buffer directly: `publish` would itself wait on the frozen socket past its limit.
        for _ in range(16):
            nc._pending.append(b"PUB t.frozen %d\r\n%s\r\n" % (len(payload), payload))
            nc._pending_data_size += len(payload)
        await nc._flush_pending()
        await asyncio.wait_for(close_nats(nc, drain_for=0.5), timeout=60)
    finally:
        proxy.thaw()
        await proxy.close()
