"""The gateway finds a game's new owner: a table request left unanswered is sent again.

A paused or cut-off table replica keeps its subscription at the NATS server until its
connection is given up, so a request can reach an owner that will never answer while the
partition changes hands. Before, the gateway gave up at the first timeout and the player saw
``unavailable`` during a take-over the operator guide says "only looks slow".
"""

from __future__ import annotations

import asyncio
import uuid
from types import SimpleNamespace
from typing import Any

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from events.contracts import game as wire
from events.subjects import Subjects, slot_of
from services.gateway import state
from services.runtime.config import Settings


async def test_an_unanswered_command_is_resent_unchanged_to_the_new_owner(
    nc: NATS, subjects: Subjects
) -> None:
    settings = Settings()
    game_id = str(uuid.uuid4())
    subject = subjects.table_slot_commands(slot_of(game_id))
    received: list[bytes] = []
    swallowed = asyncio.Event()

    async def paused_owner(msg: Msg) -> None:  # takes the request and never answers
        received.append(msg.data)
        swallowed.set()

    async def new_owner(msg: Msg) -> None:
        received.append(msg.data)
        reply = wire.TableReply(ok=True, game_id=game_id, version=7, retry=True)
        await msg.respond(msgspec.json.encode(reply))

    deaf = await nc.subscribe(subject, cb=paused_owner)

    async def take_over() -> None:  # the partition changes hands once the request is lost
        await swallowed.wait()
        await deaf.unsubscribe()
        await nc.subscribe(subject, cb=new_owner)
        await nc.flush()

    config = SimpleNamespace(failover_seconds=12)  # the default SPADES_FAILOVER_SECONDS
    gateway: Any = SimpleNamespace(
        nc=nc, subjects=subjects, settings=settings, config=config, replies=state.Replies(nc)
    )
    command = wire.SubmitCommand(
        game_id=game_id,
        player_id="ann",
        command_id=uuid.uuid4(),
        command=wire.PlaceBid(tricks=3),
    )
    taking_over = asyncio.create_task(take_over())
    reply = await state.ask_table(gateway, game_id, command)
    await taking_over
    assert (reply.ok, reply.version) == (True, 7)
    assert len(received) == 2
    assert received[0] == received[1]  # the same command, the same command id


async def test_requests_share_one_reply_subscription_and_each_gets_its_own_answer(
    nc: NATS, subjects: Subjects
) -> None:
    """Every table request of a replica waits under one reply subscription (a token each):
    forty requests, twenty at once, add one subscription to the connection, not forty, each
    gets the answer to its own command, and an answer that comes after its request was
    answered is dropped."""
    settings = Settings()
    game_ids = [str(uuid.uuid4()) for _ in range(40)]

    async def owner(msg: Msg) -> None:  # answers every request twice: the second comes late
        asked = msgspec.json.decode(msg.data, type=wire.SubmitCommand)
        version = game_ids.index(asked.game_id) + 1
        reply = wire.TableReply(ok=True, game_id=asked.game_id, version=version)
        await msg.respond(msgspec.json.encode(reply))
        await msg.respond(msgspec.json.encode(reply))

    subs = [
        await nc.subscribe(subjects.table_slot_commands(s), cb=owner)
        for s in {slot_of(g) for g in game_ids}
    ]
    await nc.flush()
    config = SimpleNamespace(failover_seconds=12)
    replies = state.Replies(nc)
    gateway: Any = SimpleNamespace(
        nc=nc, subjects=subjects, settings=settings, config=config, replies=replies
    )
    before = len(nc._subs)

    async def ask(game_id: str) -> int:
        bid = wire.PlaceBid(tricks=3)
        command = wire.SubmitCommand(
            game_id=game_id, player_id="ann", command_id=uuid.uuid4(), command=bid
        )
        reply = await state.ask_table(gateway, game_id, command)
        assert reply.game_id == game_id
        return reply.version

    first = await asyncio.gather(*(ask(g) for g in game_ids[:20]))
    rest = [await ask(g) for g in game_ids[20:]]
    assert [*first, *rest] == list(range(1, 41))
    assert len(nc._subs) == before + 1
    await nc.flush()
    assert replies.waiting == {}  # the late second answers found nobody waiting
    for sub in subs:
        await sub.unsubscribe()
