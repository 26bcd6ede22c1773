"""The two-player draw deal through the real gateway, table and relay: the seat to draw sees
the offered card in its view (the WebSocket `view` and `GET /api/games/{id}/view`), also after
a reconnect mid-draw; the other seat never does."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from nats.aio.client import Client as NATS

import engine
from events.contracts.game import stream_of
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.hidden import leaks, secret_cards, states
from tests.gateway.test_ws_play import start_platform
from tests.gateway.wsclient import WsClient
from tests.infra import Processes
from tests.services.tablekit import TableClient
from tests.shared import SLOW_TURNS, unique_name

NAMES = ["dora", "dave"]


async def fresh_view(client: WsClient, game_id: str) -> dict[str, Any]:
    await client.send({"type": "view", "game_id": game_id})
    return await client.expect("view")


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_the_seat_to_draw_sees_the_offered_card_and_the_other_never(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    gateway = await start_platform(processes, **SLOW_TURNS)
    names = [unique_name(n) for n in NAMES]
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = []
        for name in names:
            made = await http.post("/api/accounts", json={"name": name, "password": "pw-" * 4})
            assert made.status_code == 201, made.text
            got = await http.post("/api/tokens", json={"name": name, "password": "pw-" * 4})
            tokens.append(got.json()["access_token"])
        opened = await TableClient(nc, subjects, names[0]).open_casual(
            tuple(names), players=2, deal="draw", blind_nil=False
        )
        assert opened.ok, opened
        game_id = opened.game_id
        clients = [WsClient(gateway.ws_url, t) for t in tokens]
        sessions = list(enumerate(clients))  # (seat, connection), for the hidden-card check
        for client in clients:
            await client.connect()
            await client.send({"type": "subscribe", "game_id": game_id})
            await client.expect("view")

        async def check_views() -> int:
            """Both seats' views now: only the drawer is shown the stock's top card."""
            truth = states(await event_store.read(stream_of(game_id)))
            views = [await fresh_view(c, game_id) for c in clients]
            seq = views[0]["seq"]
            assert [v["seq"] for v in views] == [seq, seq]
            state = truth[seq]
            assert state.phase == "draw"
            drawer: int = state.turn
            for seat, view in enumerate(views):
                body = view["view"]
                assert body["seat"] == seat
                own = [engine.card_str(c) for c in state.discards[seat]]
                assert body["discards"] == own
                if seat == drawer:
                    assert body["drawn"] == engine.card_str(state.stock[0])
                else:
                    assert body.get("drawn") is None
                    assert engine.card_str(state.stock[0]) in secret_cards(state, seat)
            for seat, token in enumerate(tokens):
                answer = await http.get(
                    f"/api/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"}
                )
                assert answer.status_code == 200, answer.text
                body = answer.json()
                assert body["version"] == seq  # nobody acts meanwhile: the timer is 600 s
                top = engine.card_str(state.stock[0])
                assert body.get("drawn") == (top if seat == drawer else None)
            return drawer

        for turn in range(5):
            drawer = await check_views()
            await clients[drawer].command(game_id, {"type": "DrawCard", "keep": turn % 2 == 0})
            ack = await clients[drawer].expect("ack")
            assert ack["code"] == "applied"

        # the drawer's connection drops mid-draw; he comes back and resumes after what he saw
        drawer = await check_views()
        last = clients[drawer].last_seq(game_id)
        await clients[drawer].close()
        await clients[1 - drawer].command(game_id, {"type": "DrawCard", "keep": True})
        refused = await clients[1 - drawer].expect("error")
        assert refused["code"] == "out_of_turn"  # the game waits for the drawer
        back = WsClient(gateway.ws_url, tokens[drawer])
        await back.connect()
        await back.send({"type": "subscribe", "game_id": game_id, "last_seq": last})
        await back.expect("subscribed")
        clients[drawer] = back
        sessions.append((drawer, back))
        assert await check_views() == drawer
        await back.command(game_id, {"type": "DrawCard", "keep": True})
        assert (await back.expect("ack"))["code"] == "applied"
        await check_views()

        stored = await event_store.read(stream_of(game_id))
        for client in clients:  # read until every event so far reached both seats, then look
            while client.last_seq(game_id) < len(stored):
                await client.recv()
        truth = states(stored)
        for seat, client in sessions:
            assert leaks(client.received, game_id, seat, truth) == []
        shown = [
            r.body["view"].get("drawn")
            for _, c in sessions
            for r in c.received
            if r.body["type"] == "view"
        ]
        assert sum(d is not None for d in shown) >= 7  # the drawer's views did carry it
        for client in clients:
            await client.close()


def test_the_hidden_card_check_flags_the_offered_card_told_to_the_other_seat() -> None:
    rules = engine.Ruleset(players=2, deal="draw", blind_nil=False)
    state = engine.replay(engine.decide(engine.initial_state(), engine.StartGame(rules, 4)))
    assert state.phase == "draw"
    top = engine.card_str(state.stock[0])
    assert top not in secret_cards(state, state.turn)
    assert top in secret_cards(state, 1 - state.turn)
    assert top in secret_cards(state, -1)
    view = engine.view(state, 1 - state.turn)
    assert view.drawn == -1
