"""What waits for one WebSocket client, in order, and who writes it (`Session`'s writer).

A card play queues about ten messages for the four seats of a table, all in the turn of the
loop that hands the gateway the table's frame. Waking each seat's writer task to write them
cost a task step, a future and two coroutine resumptions per seat; here the first message
queued for a writer that waits schedules one plain callback for the next turn instead
(`Outbox.put`), which writes what is queued by then (the session's ``flush``: the same
frames the writer would have written, everything ready at once in one frame on a batching
connection) and wakes the writer only when it cannot: the transport is paused, the session
waits for a table's answer (its ack leaves with the move), or the connection is closing.
Only one of the two ever writes: the callback runs only while the writer waits with nothing
in hand, and the writer runs only once woken.

The move a seat's own command made usually reaches the gateway in the same read as the table's
answer to it, just after it: the callback then waits one more turn of the loop (``flush``
answers None) instead of waking the writer to wait that turn, and the ack leaves with the move
from the callback too, a task step fewer per play. A second wait wakes the writer, which
waits no longer than it did before (`services.gateway.session.Session._writer`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from litestar.types import WebSocketSendEvent


def text_frame(data: bytes) -> WebSocketSendEvent:
    """Return the ASGI event that sends ``data`` (UTF-8 JSON) as a text frame."""
    return {"type": "websocket.send", "bytes": None, "text": data.decode()}


class Outbox:
    """What waits for the client, in order (None: close): a deque and at most one waiting
    future, not an `asyncio.Queue`, whose bookkeeping (getters, putters, unfinished tasks, an
    event cleared on every put) cost more than the append itself, ten times a card play."""

    __slots__ = ("_deferred", "_due", "_waiter", "flush", "items")

    def __init__(self, flush: Callable[[], bool | None] | None = None) -> None:
        self.items: deque[bytes | None] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._due = False
        self._deferred = False
        self.flush = flush
        """Write what is queued without the writer; False when the writer must, None to be
        called again on the next turn (once; see the module docstring). None: always the
        writer."""

    def put(self, data: bytes | None) -> None:
        """Queue ``data``; have it written on the loop's next turn if the writer waits."""
        self.items.append(data)
        waiter = self._waiter
        if waiter is None or waiter.done():
            return  # the writer is at work: it takes this too
        if data is None or self.flush is None:
            waiter.set_result(None)
        elif not self._due:
            self._due = True
            waiter.get_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._due = False
        waiter = self._waiter
        if waiter is None or waiter.done() or not self.items:
            return  # the writer was woken meanwhile (a close): it writes what is here
        assert self.flush is not None
        done = self.flush()
        if done is None and not self._deferred:
            self._deferred = self._due = True
            waiter.get_loop().call_soon(self._flush)
            return
        self._deferred = False
        if not done:
            waiter.set_result(None)

    async def wait(self) -> None:
        """Return once something is queued for the writer."""
        while not self.items:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None
