"""Whole games played by WebSocket clients through the real gateway, table and relay processes."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from nats.aio.client import Client as NATS

import engine
from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.conftest import GatewayProcess, register_and_login, start_gateway
from tests.gateway.hidden import leaks, states
from tests.gateway.wsclient import WsClient
from tests.infra import Processes
from tests.services.tablekit import TableClient
from tests.shared import unique_name


async def start_platform(processes: Processes, **env: str) -> GatewayProcess:
    """Start relay, table and a bot worker, then the gateway; return the gateway (on a
    `shared_platform` test, the shared platform's, which runs those and more with the same
    settings: the marker's, which must be ``env``)."""
    if processes.shared is not None:
        processes.shared.check_settings(env)
        shared: GatewayProcess = await processes.shared.gateway()
        return shared
    for name in ("relay", "table", "bots"):
        processes.start(
            "-m", "services.tools.cli", "serve", name, env={"SPADES_OPS_PORT": "0", **env}
        )
    return await start_gateway(processes)


async def seated(gateway: GatewayProcess, names: list[str]) -> list[WsClient]:
    """Register ``names`` and return a connected, authenticated client for each."""
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = [await register_and_login(http, name) for name in names]
    clients = [WsClient(gateway.ws_url, token) for token in tokens]
    for client in clients:
        welcome = await client.connect()
        assert welcome is not None
    return clients


async def open_casual(nc: NATS, subjects: Subjects, players: list[str], **rules: object) -> str:
    """Open an unrated table for ``players`` (ids in seat order); return the game id."""
    reply = await TableClient(nc, subjects, players[0]).open_casual(tuple(players), **rules)  # type: ignore[arg-type]
    assert reply.ok, reply
    return reply.game_id


def assert_no_gap(client: WsClient, game_id: str) -> None:
    """The client got a view at seq V, then every event after V once, in order."""
    views = [r.body for r in client.received if r.body["type"] == "view"]
    assert views, "no view"
    seqs = [e["seq"] for e in client.events(game_id)]
    start = views[0]["seq"]
    assert seqs == list(range(start + 1, start + 1 + len(seqs))), seqs


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_four_websocket_clients_play_a_whole_game(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    gateway = await start_platform(processes)
    names = [unique_name(n) for n in ("north", "east", "south", "west")]
    clients = await seated(gateway, names)
    game_id = await open_casual(nc, subjects, names)

    await asyncio.wait_for(asyncio.gather(*(c.play(game_id) for c in clients)), 600)

    stored = await event_store.read(stream_of(game_id))
    finished = REGISTRY.decode(stored[-1])
    assert isinstance(finished, wire.GameFinished)
    for seat, client in enumerate(clients):
        subscribed = next(r.body for r in client.received if r.body["type"] == "subscribed")
        assert subscribed["seat"] == seat
        assert subscribed["role"] == "seat"
        assert_no_gap(client, game_id)
        last = client.events(game_id)[-1]
        assert last["seq"] == len(stored)
        assert last["event"]["scores"] == list(finished.scores)
        acks = [r.body for r in client.received if r.body["type"] == "ack"]
        assert acks
        assert all(a["code"] == "applied" for a in acks)
        errors = [r.body for r in client.received if r.body["type"] == "error"]
        assert not errors, errors
    replayed = engine.replay(
        [e for e in (wire.to_engine(REGISTRY.decode(s)) for s in stored) if e is not None]
    )
    assert replayed.scores == finished.scores
    for client in clients:
        await client.close()


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_no_seat_or_spectator_ever_learns_a_hidden_card_or_the_seed(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    gateway = await start_platform(processes)
    rule_sets: list[dict[str, object]] = [
        {},
        {"blind_nil_deficit": 0},  # every seat a blind-nil candidate every hand: exchanges
        {"blind_bids": True, "blind_bid_deficit": 0, "target": 250},
    ]
    games = []
    players: list[list[str]] = []
    for g, rules in enumerate(rule_sets):
        names = [unique_name(f"p{g}{seat}") for seat in "nesw"]
        clients = await seated(gateway, [*names, unique_name(f"watcher{g}")])
        game_id = await open_casual(nc, subjects, names, **rules)
        watcher = clients[4]
        if g == 1:  # the game with exchanges is watched without an account: same rules
            watcher = WsClient(gateway.ws_url, "")  # connects when it starts watching
        games.append((game_id, clients[:4], watcher))
        players.append(names)

    async def watch(spectator: WsClient, game_id: str) -> None:
        if spectator.connection is None:  # no account: no auth, straight to subscribe
            assert await spectator.connect(auth=False) is None
        await spectator.send({"type": "subscribe", "game_id": game_id})
        while True:
            body = await spectator.recv(120)
            if body["type"] == "event" and body["event"]["type"] == "GameFinished":
                return

    await asyncio.wait_for(
        asyncio.gather(
            *(
                # north of the second game bids blind nil whenever offered: exchanges happen
                c.play(game_id, prefer="DeclareBlindNil" if (g, seat) == (1, 0) else "")
                for g, (game_id, seats, _) in enumerate(games)
                for seat, c in enumerate(seats)
            ),
            *(watch(spectator, game_id) for game_id, _, spectator in games),
        ),
        600,
    )
    exchanges = blind = 0
    for game_id, seats, spectator in games:
        stored = await event_store.read(stream_of(game_id))
        truth = states(stored)
        for seat, client in enumerate(seats):
            assert leaks(client.received, game_id, seat, truth) == []
            assert_no_gap(client, game_id)
        assert leaks(spectator.received, game_id, -1, truth) == []
        assert_no_gap(spectator, game_id)
        spectator_view = next(r.body for r in spectator.received if r.body["type"] == "view")
        assert spectator_view["view"]["hand"] == []
        # spectators are a trick behind: a card reaches them only once its trick is complete
        decoded = [REGISTRY.decode(s) for s in stored]
        for r in spectator.received:
            if r.body["type"] == "event" and r.body["event"]["type"] == "CardPlayed":
                seq = r.body["seq"]
                done = next(
                    s
                    for s, e in zip(stored[seq:], decoded[seq:], strict=True)
                    if isinstance(e, wire.TrickWon)
                )
                assert r.at >= done.recorded_at.timestamp() - 0.05, (seq, r.at)
        exchanges += sum(isinstance(e, wire.CardsPassed) for e in decoded)
        blind += sum(isinstance(e, wire.BlindNilDeclined | wire.BlindNilDeclared) for e in decoded)
    # the games did exercise the secret paths: blind choices and exchanges
    assert blind > 0
    assert exchanges > 0

    # the anonymous spectator (kept past the 10 s a connection has to authenticate, since it
    # watches) was a spectator, may not act, and may watch only a few games at once
    anonymous = games[1][2]
    assert next(r.body for r in anonymous.received if r.body["type"] == "subscribed") == {
        "type": "subscribed",
        "game_id": games[1][0],
        "role": "spectator",
        "seat": -1,
        "players": players[1],
    }
    play = {"type": "PlayCard", "card": "AS"}
    await anonymous.send(
        {
            "type": "command",
            "game_id": games[1][0],
            "command_id": str(uuid.uuid4()),
            "command": play,
        }
    )
    assert (await anonymous.expect("error"))["code"] == "unauthenticated"
    for game_id in (games[0][0], games[2][0]):  # three games at once: allowed
        await anonymous.send({"type": "subscribe", "game_id": game_id})
        assert (await anonymous.expect("subscribed"))["role"] == "spectator"
    await anonymous.send({"type": "subscribe", "game_id": str(uuid.uuid4())})
    refused = await anonymous.expect("error")
    assert refused["code"] == "unauthenticated"
    assert "at most 3 games" in refused["message"]
