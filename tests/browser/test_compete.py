"""The competition screens in a real browser against the real platform: a player's
statistics on his page after a finished ladder game, a ladder's rules in words, and an ended
season's leaderboard kept frozen (`#/ladder/NAME?season=N`) once a test clock
(SPADES_CLOCK_FILE) rolls the season over."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from pathlib import Path

import httpx
from playwright.async_api import expect

from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from tests.browser.conftest import NewPage, StartStack
from tests.browser.stack import screenshot_path
from tests.browser.test_practice import sign_up
from tests.infra import eventually
from tests.services.test_seasons import ladders_file
from tests.services.test_stats import played_game


async def test_statistics_and_a_frozen_season_on_their_pages(
    start: StartStack, new_page: NewPage, event_store: PostgresEventStore, tmp_path: Path
) -> None:
    path = ladders_file(tmp_path, dt.datetime.now(dt.UTC).date())
    clock = tmp_path / "clock"
    clock.write_text(str(time.time()))
    stack = await start(SPADES_LADDERS=str(path), SPADES_CLOCK_FILE=str(clock))
    page = await new_page(stack)
    await sign_up(page, "ann")
    players = ("bob", "ann", "cy", "di")
    events = played_game(players, seed=3, ladder="daily")
    await event_store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(e) for e in events])

    async def recorded() -> bool:  # the rating service's consumers took the game in
        async with httpx.AsyncClient(base_url=stack.url, timeout=30) as http:
            answer = await http.get("/api/players/ann/stats")
        return answer.status_code == 200 and bool(answer.json()["ladders"][0]["rating_history"])

    await eventually(recorded, within=90, what="the game in ann's statistics")
    await page.goto("/#/player/ann")
    stats = page.get_by_test_id("stats-daily")
    await expect(stats).to_be_visible(timeout=60_000)
    await expect(stats).to_contain_text("Games")
    await expect(stats).to_contain_text("Partners most met: di (1)")
    await expect(stats).to_contain_text("a hand")
    await page.screenshot(path=screenshot_path("player-stats"), full_page=True)

    await page.goto("/#/ladder/daily")
    await expect(page.get_by_test_id("ladder-rules")).to_contain_text("First to 500 points wins")
    await expect(page.get_by_test_id("ladder")).to_contain_text("ann")
    await expect(page.get_by_test_id("ladder-seasons")).to_contain_text("Season 1 (running)")

    start_of_tomorrow = dt.datetime.combine(
        dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1), dt.time(), dt.UTC
    )
    clock.write_text(str(start_of_tomorrow.timestamp() + 5))  # season 1 is over
    await page.goto("/#/lobby")
    await page.goto("/#/ladder/daily?season=1")
    state = page.get_by_test_id("season-state")
    await expect(state).to_contain_text("kept as it stood then", timeout=60_000)
    await expect(page.get_by_test_id("ladder")).to_contain_text("ann")
    await expect(page.get_by_test_id("ladder-seasons")).to_contain_text("Season 2 (running)")
    await page.screenshot(path=screenshot_path("ladder-season"), full_page=True)
