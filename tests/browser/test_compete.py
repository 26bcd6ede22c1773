"""The competition screens in a real browser against the real platform: a player's
statistics on his page after a finished ladder game, a ladder's rules in words, and an ended
season's leaderboard kept frozen (`#/ladder/NAME?season=N`) once a test clock
(SPADES_CLOCK_FILE) rolls the season over; a player banned for leaving rated games told why
and until when in the lobby."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from pathlib import Path

import httpx
from playwright.async_api import expect

from events.contracts import game as wire
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


async def test_a_banned_player_is_told_why_and_until_when_in_the_lobby(
    start: StartStack, new_page: NewPage, event_store: PostgresEventStore
) -> None:
    stack = await start()
    page = await new_page(stack)
    await sign_up(page, "quitter")
    players = ("quitter", "x1", "x2", "x3")
    for _ in range(2):  # a warning, then a 15 minute ban
        game = [
            wire.TableOpened(game_id="g", ladder="standard", rated=True, players=players),
            wire.SeatAbandoned(seat=0, player_id="quitter", streak=3),
            wire.GameFinished(
                winner=1,
                reason="target",
                scores=(90, 510),
                ladder="standard",
                rated=True,
                players=players,
                abandoned=(0,),
            ),
        ]
        await event_store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(e) for e in game])

    async def banned() -> bool:
        return len(await event_store.read("playban-quitter")) == 2

    await eventually(banned, within=90, what="the second offence recorded")
    await page.goto("/#/lobby")
    await page.get_by_test_id("join-standard").click()
    notice = page.get_by_test_id("playban")
    await expect(notice).to_contain_text("You may not queue until")
    await expect(notice).to_contain_text("you missed three turns in a row in a rated game")
    await expect(notice).to_contain_text("15 min from now")
    await expect(page.get_by_test_id("join-standard")).to_be_disabled()
    await page.screenshot(path=screenshot_path("lobby-playban"), full_page=True)
