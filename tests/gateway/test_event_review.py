"""Event boards in the review (issue 31): a duplicate board is sealed while another table of
its event still has it to play (its cards are that table's cards): its summary, events,
states, transcript and review all answer 403 `board_in_play`. Once the event is over every
board is replayable (summary, events, each state) and the review of the analysis route
(`GET /api/games/{id}/analysis`, the bot tier's) answers for it, ready with every decision
graded."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from nats.aio.client import Client as NATS

from events.subjects import Subjects
from tests.gateway.test_friends import platform, refused, tokens_of
from tests.infra import Processes, eventually
from tests.services.tablekit import TableClient, play_together
from tests.shared import SLOW_TURNS, unique_name

PLAYERS = ["rv1", "rv2", "rv3", "rv4"]


def reads(game_id: str) -> list[str]:
    """Every public read of a game: what the replay and the review ask for."""
    base = f"/api/games/{game_id}"
    return [base, f"{base}/events", f"{base}/state?at=1", f"{base}/transcript", f"{base}/analysis"]


@pytest.mark.shared_platform(**SLOW_TURNS)  # names and an event of its own (tests/shared.py)
async def test_a_board_is_sealed_while_played_elsewhere_and_replayed_and_reviewed_after(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    gateway = await platform(processes, **SLOW_TURNS)
    players = [unique_name(p) for p in PLAYERS]
    host, other = players[0], players[2]
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, *players)
        made = await http.post(
            "/api/events",
            json={"name": "Review night", "boards_per_round": 1, "rounds": 1, "max_pairs": 4},
            headers=h[host],
        )
        assert made.status_code == 201, made.text
        url = f"/api/events/{made.json()['event']['event_id']}"
        for player in players:
            joined = await http.post(f"{url}/join", json={"partner": "bot"}, headers=h[player])
            assert joined.status_code == 200, joined.text
        started = await http.post(f"{url}/start", json={}, headers=h[host])
        assert started.status_code == 200, started.text
        shown = started.json()
        pairs = {p["pair"]: p["player"] for p in shown["pairs"]}
        first, second = shown["games"]
        assert first["board"] == second["board"] == 1
        clients = {n: TableClient(nc, subjects, n) for n in players}

        def seats(g: dict[str, Any]) -> list[TableClient]:
            return [clients[pairs[g["ns_pair"]]], clients[pairs[g["ew_pair"]]]]

        await play_together(seats(first), first["game_id"])

        async def scored() -> dict[str, Any] | None:
            page: dict[str, Any] = (await http.get(url)).json()
            return page if page["games"][0]["ns_points"] is not None else None

        await eventually(scored, within=120, what="table 1's board scored")
        # over at table 1, still to be played at table 2: sealed, to anyone, the host too
        for path in reads(first["game_id"]):
            for headers in ({}, h[other]):
                refused(await http.get(path, headers=headers), 403, "board_in_play")

        await play_together(seats(second), second["game_id"])

        async def finished() -> dict[str, Any] | None:
            page: dict[str, Any] = (await http.get(url)).json()
            return page if page["event"]["status"] == "finished" else None

        await eventually(finished, within=120, what="the event to finish")
        for g in (first, second):
            summary = await http.get(f"/api/games/{g['game_id']}")
            assert summary.status_code == 200, summary.text
            events = (await http.get(f"/api/games/{g['game_id']}/events")).json()
            assert events[-1]["type"] == "GameFinished"
            for at in (1, len(events) // 2, len(events) - 1):  # every step replays
                state = await http.get(f"/api/games/{g['game_id']}/state", params={"at": at})
                assert state.status_code == 200, state.text
            transcript = await http.get(f"/api/games/{g['game_id']}/transcript")
            assert transcript.status_code == 200, transcript.text

        async def reviewed() -> dict[str, Any] | None:
            answer = await http.get(f"/api/games/{first['game_id']}/analysis")
            assert answer.status_code in (200, 202), answer.text
            body: dict[str, Any] = answer.json()
            assert body["status"] in ("pending", "ready"), body
            return body if body["status"] == "ready" else None

        body = await eventually(reviewed, within=600, interval=0.5, what="the board's review")
        review = body["analysis"]
        events = (await http.get(f"/api/games/{first['game_id']}/events")).json()
        assert review["decisions"]
        for decision in review["decisions"]:
            assert events[decision["at"]]["type"] in ("BidPlaced", "CardPlayed")
        assert len(review["accuracy"]) == 4
