"""What the gateway pushes without being asked: match_found, the turn clock; and the ids its
WebSocket log lines carry. Real gateway, table, relay and matchmaking processes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.conftest import register_and_login, start_gateway
from tests.gateway.hidden import leaks, states
from tests.gateway.test_ws_play import open_casual, seated, start_platform
from tests.gateway.wsclient import WsClient
from tests.infra import Processes
from tests.shared import unique_name

TURN_SECONDS = 30.0


def bearer(token: str) -> dict[str, str]:
    """Return the Authorization header of a token."""
    return {"Authorization": f"Bearer {token}"}


async def queue_up(http: httpx.AsyncClient, token: str) -> None:
    """Join the standard ladder's queue (retrying while matchmaking starts)."""
    while True:
        answer = await http.post("/api/queue", json={"ladder": "standard"}, headers=bearer(token))
        if answer.status_code != 503:
            assert answer.status_code == 200, answer.text
            assert answer.json()["code"] == "queued"
            return
        await asyncio.sleep(0.2)


async def test_queued_players_are_told_their_match_and_play_it(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    # four players on one machine: the gateway's fair-play linking off (a window of 0 days)
    for name in ("relay", "table", "matchmaking"):
        processes.start(
            "-m",
            "services.tools.cli",
            "serve",
            name,
            env={"SPADES_OPS_PORT": "0"},
        )
    gateway = await start_gateway(processes, SPADES_FAIRPLAY_DAYS="0")
    names = ["mia", "noah", "olga", "piet"]
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = [await register_and_login(http, name) for name in names]
        clients = [WsClient(gateway.ws_url, token) for token in tokens]
        for client in clients:
            assert await client.connect() is not None
        # nobody is matched yet: an idle player hears nothing but his pong
        await clients[0].send({"type": "ping"})
        await clients[0].expect("pong")
        assert not [r for r in clients[0].received if r.body["type"] == "match_found"]
        for token in tokens:
            await queue_up(http, token)
        first = await clients[0].expect("match_found", within=60)
        # announced only once the table has opened the game: subscribing at once finds it
        assert await event_store.read(stream_of(first["game_id"]))
        found = [first] + [await client.expect("match_found", within=60) for client in clients[1:]]
        status = (await http.get("/api/queue", headers=bearer(tokens[0]))).json()

    game_id = found[0]["game_id"]
    assert status["game_id"] == game_id  # the same game GET /api/queue names
    players = found[0]["players"]
    assert sorted(players) == names
    for name, body in zip(names, found, strict=True):
        assert body["game_id"] == game_id
        assert body["ladder"] == "standard"
        assert body["players"] == players
        assert players[body["seat"]] == name
        assert body["match_id"] == status["match_id"]

    # a second connection of a matched player, opened after the match, learns it on auth
    late = WsClient(gateway.ws_url, tokens[2])
    await late.connect()
    again = await late.expect("match_found")
    assert (again["game_id"], again["seat"]) == (game_id, found[2]["seat"])
    await late.close()

    # every seat subscribes where it was told and plays: the bids and the first tricks
    await asyncio.wait_for(asyncio.gather(*(c.play(game_id, until_seq=30) for c in clients)), 300)
    stored = await event_store.read(stream_of(game_id))
    opened = REGISTRY.decode(stored[0])
    assert isinstance(opened, wire.TableOpened)
    assert opened.rated
    assert list(opened.players) == players
    assert any(isinstance(REGISTRY.decode(s), wire.CardPlayed) for s in stored)
    for client, body in zip(clients, found, strict=True):
        subscribed = next(r.body for r in client.received if r.body["type"] == "subscribed")
        assert (subscribed["role"], subscribed["seat"]) == ("seat", body["seat"])
        # match_found came once per connection, though the push and the lookup both ran
        assert len([r for r in client.received if r.body["type"] == "match_found"]) == 1


def clocks(client: WsClient, game_id: str) -> list[dict[str, Any]]:
    """Return the clock messages a client got for a game."""
    return [
        r.body
        for r in client.received
        if (r.body["type"], r.body.get("game_id")) == ("clock", game_id)
    ]


async def finish(client: WsClient, game_id: str) -> None:
    """Read everything a watcher is sent until the game's end has reached it."""
    while True:
        body = await client.recv(120)
        if body["type"] == "event" and body["event"]["type"] == "GameFinished":
            return


async def test_clock_names_the_turn_and_the_tables_deadline_and_stops_at_the_end(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    gateway = await start_platform(processes, SPADES_TURN_SECONDS=str(TURN_SECONDS))
    names = ["quinn", "rosa", "sami", "tess", "watcher"]
    clients = await seated(gateway, names)
    seats, spectator = clients[:4], clients[4]
    game_id = await open_casual(nc, subjects, names[:4], target=100, mercy=-100)

    # before anyone acts: the clock comes with the subscription (no ticks: the client counts
    # down from deadline - now; a new clock comes whenever the turn passes)
    await seats[0].send({"type": "subscribe", "game_id": game_id})
    view = await seats[0].expect("view")
    first = await seats[0].expect("clock")
    assert (first["seq"], first["seat"]) == (view["seq"], view["view"]["turn"])
    # a spectator is told the live clock too (whose turn is no secret), though its events
    # come a trick behind
    await spectator.send({"type": "subscribe", "game_id": game_id})
    told = await spectator.expect("clock")
    assert {**told, "now": 0} == {**first, "now": 0}
    assert told["now"] >= first["now"]  # the table's time when it answered each

    # play the whole (short) game while the spectator watches
    watching = asyncio.create_task(finish(spectator, game_id))
    await asyncio.wait_for(asyncio.gather(*(c.play(game_id) for c in seats)), 600)
    await asyncio.wait_for(watching, 120)
    stored = await event_store.read(stream_of(game_id))
    assert isinstance(REGISTRY.decode(stored[-1]), wire.GameFinished)
    truth = states(stored)
    abandoned: list[set[int]] = [set()]
    for s in stored:
        event = REGISTRY.decode(s)
        seat_left = {event.seat} if isinstance(event, wire.SeatAbandoned) else set()
        abandoned.append(abandoned[-1] | seat_left)
    # a ping closes what each was sent
    for client in clients:
        await client.send({"type": "ping"})
        await client.expect("pong")

    for seat, client in enumerate([*seats, spectator]):
        got = clocks(client, game_id)
        assert len(got) > 10, f"seat {seat} got {len(got)} clocks"
        for body in got:
            # whose turn: the true state's after event seq, in a game not over
            state = truth[body["seq"]]
            assert state.phase != "over"
            assert body["seat"] == state.turn
            assert body.get("bot", False) == (state.turn in abandoned[body["seq"]])
            # until when: the table's timer, as the table wrote it in the log with event seq
            # (a full turn from the append that left this seat on turn)
            recorded = stored[body["seq"] - 1]
            assert body["deadline"] == recorded.metadata.deadline, body
            started = recorded.recorded_at.timestamp()
            assert started - 1 < body["deadline"] - TURN_SECONDS <= started, body
        # nothing after the end: the clock stops with the game
        bodies = [r.body for r in client.received if r.body.get("game_id") == game_id]
        end = next(
            i
            for i, b in enumerate(bodies)
            if b["type"] == "event" and b["event"]["type"] == "GameFinished"
        )
        assert not [b for b in bodies[end:] if b["type"] == "clock"]
        # every your_turn was announced to the watchers by a clock of the same turn
        if seat < 4:
            announced = {(b["seat"], b["deadline"]) for b in got}
            for r in client.received:
                if r.body["type"] == "your_turn":
                    assert (seat, r.body["deadline"]) in announced, r.body
        assert not leaks(client.received, game_id, seat if seat < 4 else -1, truth)


# names of its own; processes.log(gateway.proc) is what the gateway logged during the test
@pytest.mark.shared_platform
async def test_websocket_log_lines_carry_request_connection_and_game_ids(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    gateway = await start_platform(processes)
    names = [unique_name(n) for n in ("uma", "vic", "wen", "xia")]
    clients = await seated(gateway, names)
    game_id = await open_casual(nc, subjects, names)
    turn = -1
    for client in clients:
        await client.send({"type": "subscribe", "game_id": game_id})
        turn = (await client.expect("view"))["view"]["turn"]
    # every seat not on turn tries to bid: refused out_of_turn, which the gateway logs
    refused_ids = []
    for seat, client in enumerate(clients):
        if seat != turn:
            refused_ids.append(await client.command(game_id, {"type": "PlaceBid", "tricks": 3}))
            assert (await client.expect("error"))["code"] == "out_of_turn"

    records = []
    for line in processes.log(gateway.proc).splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    refused = [r for r in records if isinstance(r, dict) and r.get("event") == "command refused"]
    assert sorted(r["request_id"] for r in refused) == sorted(refused_ids)
    subscribed = [r for r in records if isinstance(r, dict) and r.get("event") == "subscribed"]
    assert len(subscribed) == 4
    # one id per connection, one per message, and the game on each
    assert len({r["connection_id"] for r in subscribed}) == 4
    assert len({r["request_id"] for r in [*subscribed, *refused]}) == 7
    assert all(r["game_id"] == game_id for r in [*subscribed, *refused])
    assert {r["connection_id"] for r in refused} < {r["connection_id"] for r in subscribed}
