"""How the table reads a request and answers it: one decoder, one encoder, one `unavailable`."""

from __future__ import annotations

import contextlib

import msgspec
from nats.aio.msg import Msg

from events.contracts import game as wire
from events.inline import publish_soon

REQUESTS = msgspec.json.Decoder(wire.AnyTableRequest)
REPLY = msgspec.json.Decoder(wire.TableReply)
ENCODER = msgspec.json.Encoder()


async def send(msg: Msg, reply: wire.TableReply) -> None:
    """Answer ``msg`` (if it asked for an answer) with ``reply``."""
    if msg.reply:
        with contextlib.suppress(Exception):  # NATS away: the asker times out and retries
            await respond(msg, ENCODER.encode(reply))


async def respond(msg: Msg, data: bytes) -> None:
    """``msg.respond(data)``, without a flusher step when the request carried no headers (a
    gateway's never do): the answer goes out in the client's next write, with the frame of
    the same command (`events.inline.publish_soon`)."""
    if msg.headers is not None or not publish_soon(msg._client, msg.reply, data):
        await msg.respond(data)


def unavailable(game_id: str, exc: BaseException) -> wire.TableReply:
    """Return the answer to a request the table could not serve: send it again."""
    return wire.TableReply(
        ok=False,
        code="unavailable",
        message=f"the table could not answer ({type(exc).__name__}): send it again",
        game_id=game_id,
    )
