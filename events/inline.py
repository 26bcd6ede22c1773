"""Core NATS without the client's per-message machinery: a subscription whose messages are
handled as the client reads them, and a publish written on the loop's next turn.

nats-py hands each message of a subscription with a callback to an `asyncio.Queue`, and a task
of the subscription's own takes it from there and awaits the callback: per message a queue put
and get, a future, a task step and a coroutine. For a handler that never awaits (it files the
message and returns) that is most of the cost of a message: the gateway receives two per card
play, the table's answer and the game's frame. `subscribe_inline` gives the subscription a sink
in place of that queue, which calls the handler at once, in the client's read loop, in the order
the server sent the messages (what the queue and its one task did too).

The sink answers what nats-py asks of a subscription's queue (`put_nowait`, `qsize`, `empty`,
`task_done`, `join`): nothing is ever pending, so no slow-consumer limit is reached and a drain
has nothing to wait for. A handler that raises is logged and the next message is handled as
usual (the read loop must not see it).

`publish_soon` is the other way: nats-py's ``publish`` checks the subject and the reply with
regular expressions, then hands a future to its flusher task through a queue, and the
flusher wakes to write. The gateway publishes once per card play (its command to the table),
to subjects it built itself; `publish_soon` adds the PUB to the client's own buffer, in order
with everything else the client sends, and one callback on the loop's next turn writes the
buffer, as the flusher would. Whenever the client is not plainly connected, or its socket's
buffer is backed up, it answers False and the caller publishes the usual way (which buffers
for a reconnect, or waits for the socket to drain).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from events.logs import get_logger

__all__ = ["publish_soon", "subscribe_inline"]

log = get_logger("bus")

Handler = Callable[[Msg], None]


class _Sink:
    """What nats-py takes for a subscription's pending queue: hands each message on at once."""

    __slots__ = ("handle", "sub")

    def __init__(self, sub: Subscription, handle: Handler) -> None:
        self.sub = sub
        self.handle = handle

    def put_nowait(self, msg: Msg) -> None:
        # The client counted the message as pending before handing it over; it is not.
        self.sub._pending_size -= len(msg.data)
        try:
            self.handle(msg)
        except Exception as exc:
            log.exception("message handler failed", error=type(exc).__name__, subject=msg.subject)

    def qsize(self) -> int:
        return 0

    def empty(self) -> bool:
        return True

    def task_done(self) -> None:
        pass

    async def join(self) -> None:
        pass


async def subscribe_inline(nc: NATS, subject: str, handle: Handler, **kwargs: Any) -> Subscription:
    """Subscribe to ``subject`` (core NATS) and call ``handle`` with each message as soon as the
    client has read it; ``handle`` must not block (it runs in the client's read loop)."""
    sub = await nc.subscribe(subject, **kwargs)  # no callback: no task waits on its queue
    queue, sink = sub._pending_queue, _Sink(sub, handle)
    sub._pending_queue = sink  # type: ignore[assignment]
    while not queue.empty():  # whatever came while the SUB was being sent, first and in order
        sink.put_nowait(queue.get_nowait())
    return sub


BACKED_UP = 1 << 20
"""Bytes waiting in the socket's buffer past which `publish_soon` leaves it to ``publish``."""

_due: set[int] = set()
"""The clients (by id) with a write of their buffer scheduled by `publish_soon`."""


def publish_soon(nc: NATS, subject: str, payload: bytes, reply: str = "") -> bool:
    """Queue ``payload`` on ``subject`` (a subject the caller built: it is not checked again)
    for the loop's next turn; False (nothing queued) when ``nc.publish`` must do it."""
    writer = getattr(nc._transport, "_io_writer", None)
    if (
        writer is None
        or not nc.is_connected
        or nc.is_draining_pubs
        or len(payload) > nc._max_payload
        or writer.transport.get_write_buffer_size() > BACKED_UP
    ):
        return False
    size = len(payload)
    head = f"PUB {subject} {reply} {size}\r\n" if reply else f"PUB {subject} {size}\r\n"
    command = head.encode() + payload + b"\r\n"
    nc._pending.append(command)
    nc._pending_data_size += len(command)
    nc.stats["out_msgs"] += 1
    nc.stats["out_bytes"] += len(payload)
    key = id(nc)
    if key not in _due:
        _due.add(key)
        asyncio.get_running_loop().call_soon(_write, nc, key)
    return True


def _write(nc: NATS, key: int) -> None:
    """Write the client's buffer, as its flusher does (unless it did already, or the connection
    went: then the client sends the buffer once it is back)."""
    _due.discard(key)
    transport = nc._transport
    if nc._pending_data_size > 0 and nc.is_connected and transport is not None:
        transport.writelines(nc._pending[:])
        nc._pending = []
        nc._pending_data_size = 0
