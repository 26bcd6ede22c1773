"""POST /api/games/GAME/leave against the real gateway, table, relay and matchmaking: leaving a
practice table closes it (it leaves the live list), resigning a ranked game hands the seat
to the bot as an abandonment; every refusal says why and changes nothing."""

from __future__ import annotations

import asyncio
import uuid

import httpx

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from tests.gateway.conftest import register_and_login, start_gateway
from tests.gateway.test_ws_push import queue_up
from tests.infra import Processes


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def logged(store: PostgresEventStore, game_id: str) -> list[wire.GameEvent]:
    return [REGISTRY.decode(e) for e in await store.read(stream_of(game_id))]


async def test_leave_closes_a_practice_table_and_resigns_a_ranked_game(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    for name in ("relay", "table", "matchmaking"):
        processes.start(
            "-m",
            "services.tools.cli",
            "serve",
            name,
            env={"SPADES_OPS_PORT": "0"},
        )
    # four accounts on one machine: the gateway's fair-play linking off (0 days)
    gateway = await start_gateway(processes, SPADES_FAIRPLAY_DAYS="0")
    names = ["mia", "noah", "olga", "piet"]
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = [await register_and_login(http, name) for name in names]

        # practice: leaving closes the table at once, and it leaves the live list
        opened = await http.post("/api/practice", json={}, headers=bearer(tokens[0]))
        assert opened.status_code == 201, opened.text
        practice = opened.json()["game_id"]
        live = [g["game_id"] for g in (await http.get("/api/games")).json()]
        assert practice in live
        stranger = await http.post(
            f"/api/games/{practice}/leave", json={}, headers=bearer(tokens[1])
        )
        assert stranger.status_code == 403
        assert stranger.json()["code"] == "not_your_seat"
        unknown = await http.post(
            f"/api/games/{uuid.uuid4()}/leave", json={}, headers=bearer(tokens[0])
        )
        assert unknown.status_code == 404
        assert unknown.json()["code"] == "unknown_game"
        odd = await http.post(
            f"/api/games/{practice}/leave", json={"why": "bored"}, headers=bearer(tokens[0])
        )
        assert odd.status_code == 400
        anonymous = await http.post(f"/api/games/{practice}/leave", json={})
        assert anonymous.status_code == 401
        before = await logged(event_store, practice)
        assert not any(isinstance(e, wire.SeatAbandoned) for e in before)  # nothing changed

        command_id = str(uuid.uuid4())
        left = await http.post(
            f"/api/games/{practice}/leave",
            json={"command_id": command_id},
            headers=bearer(tokens[0]),
        )
        assert left.status_code == 200, left.text
        assert left.json()["outcome"] == "closed"
        assert "closed" in left.json()["message"]
        again = await http.post(
            f"/api/games/{practice}/leave",
            json={"command_id": command_id},
            headers=bearer(tokens[0]),
        )
        assert again.json() == left.json()  # a retry: the same answer, nothing appended
        events = await logged(event_store, practice)
        assert [e for e in events if isinstance(e, wire.SeatAbandoned)] == [
            wire.SeatAbandoned(seat=0, player_id="mia", streak=0, left=True)
        ]
        assert isinstance(events[-1], wire.GameFinished)
        assert events[-1].reason == "abandoned"
        over = await http.post(f"/api/games/{practice}/leave", json={}, headers=bearer(tokens[0]))
        assert over.status_code == 409
        assert over.json()["code"] == "game_over"
        assert await logged(event_store, practice) == events
        live = [g["game_id"] for g in (await http.get("/api/games")).json()]
        assert practice not in live

        # ranked: resigning hands the seat to the bot, as an abandonment
        for token in tokens:
            await queue_up(http, token)
        game_id = None
        while game_id is None:
            status = (await http.get("/api/queue", headers=bearer(tokens[0]))).json()
            game_id = status.get("game_id") if status["code"] == "in_game" else None
            await asyncio.sleep(0.2)
        for _ in range(600):  # matched first, then opened by the table
            if await event_store.read(stream_of(game_id)):
                break
            await asyncio.sleep(0.1)
        resigned = await http.post(
            f"/api/games/{game_id}/leave", json={}, headers=bearer(tokens[2])
        )
        assert resigned.status_code == 200, resigned.text
        assert resigned.json()["outcome"] == "resigned"
        assert "loss" in resigned.json()["message"]
        events = await logged(event_store, game_id)
        opened_event = events[0]
        assert isinstance(opened_event, wire.TableOpened)
        seat = opened_event.players.index("olga")
        assert [e for e in events if isinstance(e, wire.SeatAbandoned)] == [
            wire.SeatAbandoned(seat=seat, player_id="olga", streak=0, left=True)
        ]
        assert not any(isinstance(e, wire.GameFinished) for e in events)  # played out
        twice = await http.post(
            f"/api/games/{game_id}/leave",
            json={"command_id": str(uuid.uuid4())},
            headers=bearer(tokens[2]),
        )
        assert twice.status_code == 409
        assert twice.json()["code"] == "seat_abandoned"
