"""The table's answer to an accepted seat command rides inside the game's frame (issue 32).

Before, a play made the table publish two NATS messages to the gateway: the game's frame and,
on the gateway's reply inbox, the answer to the command. Now the gateway says its room of the
game is subscribed (`SubmitCommand.framed`) and the table carries the answer in the frame of
the command's append (`Frame.reply`, `Frame.answer`): one message per play. What the client
sees is unchanged: each accepted command is acked ``applied`` after its event, a command
sent again with its id is acked ``already_applied`` (answered on its own: nothing was
appended), and a refused one gets its error (no frame: answered on its own too).

A wiretap connection counts what crosses the bus for the game: frames on its audience subject,
and answers on reply inboxes (the gateway's; the wiretap's own requests are made before it
listens).
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from events.contracts import game as wire
from events.contracts.audience import frame_decoder
from events.subjects import Subjects
from tests.gateway.test_ws_play import open_casual, seated, start_platform
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually
from tests.shared import unique_name

_reply = msgspec.json.Decoder(wire.TableReply)


def acks(client: WsClient) -> list[dict[str, Any]]:
    return [r.body for r in client.received if r.body["type"] == "ack"]


async def reply_to(client: WsClient, command_id: str) -> dict[str, Any]:
    """Return the next ack or error naming ``command_id`` (others are passed over)."""
    while True:
        body = await client.recv(30)
        if body["type"] in ("ack", "error") and body.get("command_id") == command_id:
            return body


async def test_an_accepted_command_is_answered_inside_its_frame_and_nothing_else_changes(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    gateway = await start_platform(processes)
    names = [unique_name(n) for n in ("north", "east", "south", "west")]
    clients = await seated(gateway, names)
    game_id = await open_casual(nc, subjects, names)

    framed: list[wire.TableReply] = []  # answers carried in the game's frames
    alone: list[wire.TableReply] = []  # answers to this game's commands sent on their own

    async def on_frame(msg: Msg) -> None:
        frame = frame_decoder.decode(msg.data)
        if frame.reply:
            framed.append(_reply.decode(frame.answer))

    async def on_inbox(msg: Msg) -> None:
        try:
            reply = _reply.decode(msg.data)
        except msgspec.DecodeError:  # a catch-up's answer (msgpack)
            return
        if reply.game_id == game_id:
            alone.append(reply)

    taps = [
        await nc.subscribe(subjects.game_audiences(game_id), cb=on_frame),
        await nc.subscribe("_INBOX.>", cb=on_inbox),
    ]
    await nc.flush()
    try:
        await asyncio.wait_for(
            asyncio.gather(*(c.play(game_id, until_seq=16) for c in clients)), 300
        )
        applied = [a for c in clients for a in acks(c)]
        assert applied
        assert all(a["code"] == "applied" for a in applied), applied
        for client in clients:  # each ack after the event its command appended, as before
            seen: set[int] = set()
            for got in client.received:
                body = got.body
                if body["type"] == "event":
                    seen.add(body["seq"])
                elif body["type"] == "ack":
                    assert body["seq"] in seen, (body, sorted(seen))
        await eventually(lambda: len(framed) >= len(applied), within=30, what="framed answers")
        assert all(r.ok and not r.retry and r.game_id == game_id for r in framed), framed
        assert {r.version for r in framed} >= {a["seq"] for a in applied}
        assert [r for r in alone if r.ok] == [], "an accepted command was answered on its own"

        # A command sent again with its id: applied once, answered on its own (no append).
        mover = next(c for c in clients if acks(c))
        first = acks(mover)[0]
        sent = next(b for b in mover.sent if b.get("command_id") == first["command_id"])
        await mover.send(sent)
        again = await reply_to(mover, sent["command_id"])
        assert (again["type"], again["seq"], again["code"]) == (
            "ack",
            first["seq"],
            "already_applied",
        )
        # The same move under a new id, long after it was made: the table refuses it, on its own.
        refused_id = await mover.command(game_id, sent["command"])
        error = await reply_to(mover, refused_id)
        assert error["type"] == "error", error
        assert error["code"] not in ("malformed", "unavailable"), error
        await eventually(lambda: any(r.retry for r in alone), within=30, what="a retry answer")
        await eventually(lambda: any(not r.ok for r in alone), within=30, what="a refusal")
        assert [r for r in alone if r.ok and not r.retry] == []
    finally:
        for tap in taps:
            await tap.unsubscribe()
        for client in clients:
            await client.close()
