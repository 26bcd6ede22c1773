"""`services.gateway.outbox.Outbox`: who writes what is queued, the callback or the writer.

The callback (``flush``) writes while the writer waits; when it answers None (the session
awaits the table's answer to its own command) it is called once more on the next turn, so an
ack queued meanwhile leaves with the move without waking the writer; a second None, or a
False, wakes the writer, which then writes whatever is queued."""

from __future__ import annotations

import asyncio

import pytest

from services.gateway.outbox import Outbox


async def test_a_flush_that_waits_a_turn_writes_what_came_meanwhile_without_the_writer() -> None:
    answers: list[bool | None] = [None, True]
    written: list[list[bytes | None]] = []
    outbox: Outbox

    def flush() -> bool | None:
        answer = answers.pop(0)
        if answer:
            written.append(list(outbox.items))
            outbox.items.clear()
        return answer

    outbox = Outbox(flush)
    waiting = asyncio.ensure_future(outbox.wait())
    await asyncio.sleep(0)  # the writer waits
    outbox.put(b"move")
    asyncio.get_running_loop().call_soon(outbox.put, b"ack")  # the answer, a turn later
    for _ in range(5):
        await asyncio.sleep(0)
    assert written == [[b"move", b"ack"]]
    assert not waiting.done()  # the writer was never woken
    waiting.cancel()


@pytest.mark.parametrize(
    ("answer", "flushes"),
    [(None, 2), (False, 1)],
    ids=["waits-twice-then-wakes", "cannot-write-wakes-at-once"],
)
async def test_a_flush_that_cannot_write_wakes_the_writer(
    answer: bool | None, flushes: int
) -> None:
    """A flush that waits (None) is called once more on the next turn, then wakes the writer;
    one that cannot write (False) wakes it at once. Either way the writer writes the move."""
    calls: list[None] = []

    def flush() -> bool | None:
        calls.append(None)
        return answer

    outbox = Outbox(flush)
    waiting = asyncio.ensure_future(outbox.wait())
    await asyncio.sleep(0)
    outbox.put(b"move")
    await asyncio.wait_for(waiting, 30)
    assert len(calls) == flushes
    assert list(outbox.items) == [b"move"]  # the writer writes it
