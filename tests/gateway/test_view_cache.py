"""A client asking for its view again and again costs the table one request per change of
the game: the gateway answers a repeated ``view`` with the last one its watch had while the
game has not moved past it (#24: what a socket sends may not reach the table unbounded)."""

from __future__ import annotations

import asyncio

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from events.contracts import game as wire
from events.subjects import Subjects
from tests.gateway.conftest import start_gateway
from tests.gateway.test_ws_play import open_casual, seated
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually

_request = msgspec.json.Decoder(wire.AnyTableRequest)


async def views(client: WsClient, game_id: str, count: int) -> list[str]:
    """Ask for ``count`` views and return the texts of the answers, in order."""
    for _ in range(count):
        await client.send({"type": "view", "game_id": game_id})
    texts: list[str] = []
    while len(texts) < count:
        body = await client.recv(30)
        if body["type"] == "view" and body["game_id"] == game_id:
            texts.append(client.received[-1].text)
        assert body["type"] != "error", body
    return texts


def view_texts(client: WsClient, game_id: str) -> list[str]:
    return [
        r.text
        for r in client.received
        if r.body["type"] == "view" and r.body.get("game_id") == game_id
    ]


async def test_a_view_asked_again_is_answered_by_the_gateway_until_the_game_moves(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    for name in ("relay", "table"):
        processes.start("-m", "services.tools.cli", "serve", name, env={"SPADES_OPS_PORT": "0"})
    gateway = await start_gateway(processes)
    names = ["vera", "vito", "vlad", "vonn"]
    clients = await seated(gateway, [*names, "viv"])
    seats, spectator = clients[:4], clients[4]
    game_id = await open_casual(nc, subjects, names)
    # every request the table is sent for this game, seen by a plain subscriber beside it
    subject = subjects.table_command(game_id).split(".")
    subject[-2] = "*"
    asked: list[wire.TableRequest] = []

    async def seen(msg: Msg) -> None:
        asked.append(_request.decode(msg.data))

    observer = await nc.subscribe(".".join(subject), cb=seen)

    def catchups(player: str) -> int:
        return sum(isinstance(r, wire.Catchup) and r.player_id == player for r in asked)

    for client in seats:
        await client.send({"type": "subscribe", "game_id": game_id})
        await client.expect("view", 60)
    await eventually(
        lambda: all(catchups(n) == 1 for n in names), within=30, what="the subscribes' catch-ups"
    )
    # the seat on turn: its your_turn follows its view
    waiting = {asyncio.ensure_future(c.expect("your_turn", 60)): c for c in seats}
    done, pending = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    turn = done.pop().result()
    mover = next(c for t, c in waiting.items() if t.done() and not t.cancelled())
    name = names[seats.index(mover)]
    shown = view_texts(mover, game_id)
    assert len(shown) == 1
    again = await views(mover, game_id, 30)
    # the view the subscribe brought, thirty times over, and not one more request to the table
    assert set(again) == set(shown)
    assert catchups(name) == 1

    # the game moves: the next view asks the table once and shows the new seq, then is kept
    before = mover.last_seq(game_id)
    await mover.command(game_id, mover.move(game_id, turn))
    while mover.last_seq(game_id) <= before:  # its own bid comes back as an event
        await mover.recv(30)
    moved = await views(mover, game_id, 20)
    assert len(set(moved)) == 1
    assert msgspec.json.decode(moved[0])["seq"] == mover.last_seq(game_id) > before
    assert catchups(name) == 2

    # a spectator's view is kept the same way, by the last release it was shown
    await spectator.send({"type": "subscribe", "game_id": game_id})
    await spectator.expect("view", 60)
    await eventually(lambda: catchups("viv") == 1, within=30, what="the spectator's catch-up")
    watched = await views(spectator, game_id, 20)
    assert set(watched) == set(view_texts(spectator, game_id)[:1])
    assert catchups("viv") == 1
    await observer.unsubscribe()
    for client in clients:
        await client.close()
