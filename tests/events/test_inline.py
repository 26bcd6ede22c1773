"""`events.inline.subscribe_inline` on a real NATS server: every message reaches the handler
once, in the order it was published, with nothing left pending on the subscription (so no
slow-consumer limit is ever reached, however many come), a handler that raises does not stop
the messages after it, and an unsubscribe or a drain ends the deliveries."""

from __future__ import annotations

import asyncio
import uuid

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from events.inline import publish_soon, subscribe_inline


async def test_every_message_is_handled_once_in_order_with_nothing_pending(nc: NATS) -> None:
    subject = f"inline.{uuid.uuid4().hex}"
    got: list[bytes] = []
    done = asyncio.Event()
    count = 3000  # past a small pending limit: a message left counted as pending would trip it

    def handle(msg: Msg) -> None:
        got.append(msg.data)
        if len(got) == count:
            done.set()

    sub = await subscribe_inline(
        nc, subject, handle, pending_msgs_limit=100, pending_bytes_limit=4096
    )
    await nc.flush()
    for n in range(count):
        await nc.publish(subject, str(n).encode())
    await asyncio.wait_for(done.wait(), 30)
    assert got == [str(n).encode() for n in range(count)]
    assert sub.pending_msgs == 0
    assert sub._pending_size == 0
    await sub.unsubscribe()
    await nc.publish(subject, b"after")
    await nc.flush()
    assert len(got) == count


async def test_a_handler_that_raises_does_not_stop_the_next_messages(nc: NATS) -> None:
    subject = f"inline.{uuid.uuid4().hex}"
    got: list[bytes] = []
    last = asyncio.Event()

    def handle(msg: Msg) -> None:
        if msg.data == b"bad":
            raise ValueError("refused")
        got.append(msg.data)
        if msg.data == b"last":
            last.set()

    await subscribe_inline(nc, subject, handle)
    await nc.flush()
    for data in (b"first", b"bad", b"last"):
        await nc.publish(subject, data)
    await asyncio.wait_for(last.wait(), 30)
    assert got == [b"first", b"last"]
    assert nc.is_connected


async def test_a_request_is_answered_through_an_inline_reply_subscription(nc: NATS) -> None:
    """The gateway's shape: one inline inbox, a request's answer filed as it is read."""
    subject = f"inline.{uuid.uuid4().hex}"
    inbox = nc.new_inbox()
    answers: asyncio.Queue[bytes] = asyncio.Queue()

    async def answer(msg: Msg) -> None:
        await msg.respond(b"re:" + msg.data)

    await nc.subscribe(subject, cb=answer)
    sub = await subscribe_inline(nc, f"{inbox}.*", lambda msg: answers.put_nowait(msg.data))
    await nc.flush()
    await nc.publish(subject, b"one", reply=f"{inbox}.1")
    assert await asyncio.wait_for(answers.get(), 30) == b"re:one"
    await sub.drain()  # type: ignore[no-untyped-call]  # nothing pending: returns at once


async def test_publish_soon_keeps_the_order_of_the_clients_own_publishes(nc: NATS) -> None:
    """Interleaved with the client's publish, each message arrives once and in order; a
    reply subject travels with it."""
    subject = f"inline.{uuid.uuid4().hex}"
    got: list[tuple[bytes, str]] = []
    done = asyncio.Event()
    count = 600

    def handle(msg: Msg) -> None:
        got.append((msg.data, msg.reply))
        if len(got) == count:
            done.set()

    await subscribe_inline(nc, subject, handle)
    await nc.flush()
    for n in range(count):
        data = str(n).encode()
        if n % 3 == 0:
            await nc.publish(subject, data)
        else:
            assert publish_soon(nc, subject, data, f"re.{n}" if n % 3 == 1 else "")
        if n % 50 == 0:
            await asyncio.sleep(0)
    await asyncio.wait_for(done.wait(), 30)
    assert got == [(str(n).encode(), f"re.{n}" if n % 3 == 1 else "") for n in range(count)]


async def test_publish_soon_leaves_a_closed_or_oversized_publish_to_the_client(nc: NATS) -> None:
    subject = f"inline.{uuid.uuid4().hex}"
    assert not publish_soon(nc, subject, b"x" * (nc.max_payload + 1))
    await nc.close()
    assert not publish_soon(nc, subject, b"late")
