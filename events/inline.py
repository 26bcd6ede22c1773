"""A core NATS subscription whose messages are handled as the client reads them.

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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from events.logs import get_logger

__all__ = ["subscribe_inline"]

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
