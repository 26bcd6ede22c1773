"""The events' own budget (issue 31): creating, entering, leaving and coming back to events
is limited per account like queue joins (SPADES_EVENT_CHANGES_PER_MINUTE): one more change in
the minute is 429 `rate_limited` with Retry-After and changes nothing; a refused request
spends nothing; another account is untouched."""

from __future__ import annotations

import httpx

from tests.gateway.conftest import start_gateway
from tests.gateway.test_friends import refused, tokens_of
from tests.infra import Processes


async def test_event_changes_are_limited_per_account(processes: Processes) -> None:
    gateway = await start_gateway(processes, SPADES_EVENT_CHANGES_PER_MINUTE="3")
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, "busy", "calm", "mate")
        made = await http.post("/api/events", json={"name": "One"}, headers=h["busy"])  # 1
        assert made.status_code == 201, made.text
        url = f"/api/events/{made.json()['event']['event_id']}"
        # refusals spend nothing: an unknown partner, a withdrawal of no pair
        refused(
            await http.post(f"{url}/join", json={"partner": "nobody"}, headers=h["busy"]),
            404,
            "unknown_player",
        )
        refused(await http.post(f"{url}/leave", headers=h["busy"]), 409, "not_entered")
        assert (
            await http.post(f"{url}/join", json={"partner": "bot"}, headers=h["busy"])
        ).status_code == 200  # 2
        assert (await http.post(f"{url}/leave", headers=h["busy"])).status_code == 200  # 3

        async def state() -> tuple[int, int, int]:
            page = (await http.get(url)).json()
            log = (await http.get(f"{url}/log")).json()
            mine = (await http.get("/api/events", headers=h["busy"])).json()
            return len(page["pairs"]), len(log), len(mine)

        before = await state()
        for answer in (
            await http.post(f"{url}/join", json={"partner": "bot"}, headers=h["busy"]),
            await http.post(f"{url}/leave", headers=h["busy"]),
            await http.post(f"{url}/resume", headers=h["busy"]),
            await http.post("/api/events", json={"name": "Two"}, headers=h["busy"]),
        ):
            refused(answer, 429, "rate_limited")
            assert "at most 3 event creations, entries" in answer.json()["message"]
            assert 1 <= int(answer.headers["retry-after"]) <= 60
        assert await state() == before  # nothing changed
        # another account has its own budget
        joined = await http.post(f"{url}/join", json={"partner": "mate"}, headers=h["calm"])
        assert joined.status_code == 200, joined.text
        assert [p["player"] for p in joined.json()["pairs"]] == ["calm"]
