"""`GET /api/games/{game_id}/analysis` through the real gateway, table and bot tier: a game in
play is refused with its own code, a finished one is reviewed by the bot tier (pending, then
ready), and every graded decision points at its own event's step."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.gateway.conftest import register_and_login
from tests.gateway.test_transcripts import bearer, practice
from tests.gateway.test_ws_play import start_platform
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually
from tests.shared import SLOW_TURNS, unique_name


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_a_finished_game_is_reviewed_and_a_live_one_is_refused(
    processes: Processes,
) -> None:
    gateway = await start_platform(processes, **SLOW_TURNS)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        token = await register_and_login(http, unique_name("reviewer"))
        done_id = await practice(http, token, {"target": 100})
        live_id = await practice(http, token, {})
        done, live = WsClient(gateway.ws_url, token), WsClient(gateway.ws_url, token)
        await done.connect()
        await live.connect()
        await asyncio.wait_for(
            asyncio.gather(done.play(done_id), live.play(live_id, until_seq=40)), 600
        )

        refused = await http.get(f"/api/games/{live_id}/analysis", headers=bearer(token))
        assert refused.status_code == 409, refused.text
        assert refused.json()["code"] == "game_not_finished"
        assert "analysis" not in refused.json()

        first = await http.get(f"/api/games/{done_id}/analysis")
        assert first.status_code in (200, 202), first.text

        async def ready() -> dict[str, object] | None:
            answer = await http.get(f"/api/games/{done_id}/analysis")
            assert answer.status_code in (200, 202), answer.text
            body: dict[str, object] = answer.json()
            assert body["status"] in ("pending", "ready"), body
            return body if body["status"] == "ready" else None

        body = await eventually(ready, within=600, interval=0.5, what="the review")
        review = body["analysis"]
        assert isinstance(review, dict)
        events = (await http.get(f"/api/games/{done_id}/events")).json()
        assert review["decisions"]
        for decision in review["decisions"]:
            event = events[decision["at"]]
            assert event["type"] in ("BidPlaced", "CardPlayed"), event
            assert event["event"]["seat"] == decision["seat"]
        assert len(review["accuracy"]) == 4
