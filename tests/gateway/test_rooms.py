"""`services.gateway.rooms.Rooms` on a real NATS server: a gateway receives only the games it
serves. A game's frames reach this replica while somebody here watches it and stop crossing
the network when its last watcher leaves (counted by `Rooms.received`, which every frame the
bus hands over increments); a room opened again at once gets each frame once."""

from __future__ import annotations

import asyncio
import uuid

import msgspec
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from events.contracts.audience import Frame
from events.logs import get_logger
from events.subjects import Subjects
from services.gateway.rooms import Inbox, Rooms


def frame(game_id: str, seq: int) -> bytes:
    return msgspec.msgpack.encode(
        Frame(
            game_id=game_id,
            first=seq,
            last=seq,
            seats=((f"e{seq}".encode(),), (), (), ()),
            turns=(b"", b"", b"", b""),
            clock=b"",
        )
    )


async def publish(nc: NATS, subjects: Subjects, game_id: str, *seqs: int) -> None:
    for seq in seqs:
        await nc.publish(subjects.audiences(game_id), frame(game_id, seq))


async def next_seq(inbox: Inbox) -> int:
    return (await asyncio.wait_for(inbox.get(), 30)).last


async def test_a_gateway_receives_only_the_frames_of_games_it_serves(
    nc: NATS, js: JetStreamContext, subjects: Subjects
) -> None:
    rooms = Rooms(nc, js, subjects, get_logger("test"))
    watched, other, unwatched = (str(uuid.uuid4()) for _ in range(3))
    _, inbox = await rooms.join(watched)
    _, other_inbox = await rooms.join(other)
    try:
        # NATS keeps one publisher's order on one subscriber's connection: once the watched
        # game's last frame is in, any frame of the unwatched game sent before it would be too.
        await publish(nc, subjects, unwatched, 1, 2, 3)
        await publish(nc, subjects, watched, 1, 2)
        assert [await next_seq(inbox), await next_seq(inbox)] == [1, 2]
        assert rooms.received == 2

        # The last watcher of `watched` leaves: its frames stop reaching this replica.
        rooms.leave(watched, inbox)
        await asyncio.wait_for(rooms.settled(), 30)
        await publish(nc, subjects, watched, 3, 4)
        await publish(nc, subjects, other, 1)
        assert await next_seq(other_inbox) == 1
        assert rooms.received == 3, "a game nobody here watches still reached the replica"
        assert rooms.watched() == 1
    finally:
        await rooms.close()


async def test_a_room_opened_again_while_the_last_one_ends_gets_each_frame_once(
    nc: NATS, js: JetStreamContext, subjects: Subjects
) -> None:
    rooms = Rooms(nc, js, subjects, get_logger("test"))
    game = str(uuid.uuid4())
    _, first = await rooms.join(game)
    try:
        rooms.leave(game, first)  # its subscription is ending in the background...
        _, again = await rooms.join(game)  # ...while a new room subscribes afresh
        await publish(nc, subjects, game, 1, 2, 3)
        assert [await next_seq(again) for _ in range(3)] == [1, 2, 3]
        await asyncio.wait_for(rooms.settled(), 30)
        await publish(nc, subjects, game, 4)
        assert await next_seq(again) == 4
        assert again.empty(), "a frame came twice"
        assert first.empty(), "the room that was left still got frames"
    finally:
        await rooms.close()


async def test_presence_names_a_listed_table_and_never_an_unlisted_one(
    nc: NATS, js: JetStreamContext, subjects: Subjects
) -> None:
    rooms = Rooms(nc, js, subjects, get_logger("test"))
    listed, unlisted = str(uuid.uuid4()), str(uuid.uuid4())
    try:
        for game, players, hidden in ((listed, ("ann", "bob"), False), (unlisted, ("cy",), True)):
            room, _ = await rooms.join(game)
            room.players, room.unlisted = players, hidden  # as a watch learns from the table
        assert rooms.seats() == {"ann": listed, "bob": listed}
    finally:
        await rooms.close()
