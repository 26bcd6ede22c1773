"""A finished game's review in its replay: each seat's accuracy and the flagged decisions, each
a link to its own step, where the verdict on that decision is shown."""

from __future__ import annotations

import asyncio
import re
import uuid

import httpx
import pytest
from playwright.async_api import expect

from events.pgstore import PostgresEventStore
from tests.browser.conftest import NewPage, StartStack
from tests.browser.stack import screenshot_path
from tests.browser.test_practice import PASSWORD, sign_up
from tests.gateway.conftest import register_and_login
from tests.gateway.test_transcripts import practice
from tests.gateway.wsclient import WsClient
from tests.services.test_stored_analysis import given_up_review, store_game


async def test_the_replay_shows_the_review_and_follows_a_flagged_decision(
    start: StartStack, new_page: NewPage
) -> None:
    # an asked review's own budget (services.bots.analyst.ASKED), not the suite's tiny one
    # (tests/conftest.py): the decisions it flags are under test here
    stack = await start(SPADES_ANALYSIS_BUDGET="24,4,0")
    async with httpx.AsyncClient(base_url=stack.url, timeout=60) as http:
        token = await register_and_login(http, "reviewed")
        game_id = await practice(http, token, {"target": 100})
        player = WsClient(stack.url.replace("http://", "ws://") + "/ws", token)
        await player.connect()
        await asyncio.wait_for(player.play(game_id), 600)

    page = await new_page(stack)
    await page.goto(f"/#/replay/{game_id}?at=0")
    review = page.get_by_test_id("review")
    await expect(review).to_contain_text("Accuracy", timeout=600_000)
    await expect(review).to_contain_text(re.compile(r"\d+(\.\d)?%"))
    # the player's client plays its first legal choice every time: some of them are flagged
    flagged = page.get_by_test_id("flagged")
    await expect(flagged.first).to_be_visible()
    await page.screenshot(path=screenshot_path("review"), full_page=True)
    first = flagged.first
    step = await first.get_attribute("data-at")
    text = (await first.inner_text()).split(": ", 1)[1]
    await first.click()
    await expect(page).to_have_url(re.compile(rf"#/replay/{game_id}\?at={step}$"))
    await expect(page.get_by_test_id("step-caption")).to_contain_text(f"Step {step}")
    await expect(page.get_by_test_id("verdict")).to_contain_text(text)


async def test_a_rated_games_review_appears_without_a_reload_with_its_par_and_luck(
    start: StartStack, new_page: NewPage, event_store: PostgresEventStore
) -> None:
    # a small review budget: the page's flow is under test, not the grading
    stack = await start(SPADES_ANALYSIS_BUDGET="3,1,1")
    page = await new_page(stack)
    name = f"lucky{uuid.uuid4().hex[:6]}"
    await sign_up(page, name)
    async with httpx.AsyncClient(base_url=stack.url, timeout=60) as http:
        got = await http.post("/api/tokens", json={"name": name, "password": PASSWORD})
        assert got.status_code == 200, got.text
        player = WsClient(stack.url.replace("http://", "ws://") + "/ws", got.json()["access_token"])
        welcome = await player.connect()
        assert welcome is not None
        await player.close()
    me = welcome["player_id"]
    # a rated game this player sat in, finished: the bot tier analyses it by itself
    game_id, _ = await store_game(event_store, rated=True, players=(me, "b", "c", "d"))

    await page.goto(f"/#/replay/{game_id}?at=0")
    review = page.get_by_test_id("review")
    await expect(review).to_be_visible()
    luck = page.get_by_test_id("luck")
    # no reload: the panel hears analysis_ready (or asks again) and shows the review
    await expect(luck).to_contain_text("the cards were worth", timeout=600_000)
    await expect(luck).to_contain_text(re.compile(r"(won|lost) by \d+"))
    await expect(page.get_by_test_id("par").locator("tbody tr").first).to_be_visible()
    await expect(review).to_contain_text("Accuracy")
    await page.screenshot(path=screenshot_path("review-luck"), full_page=True)

    # over his analysed games, the player page shows the luck-adjusted figure beside the rating
    await page.goto(f"/#/player/{me}")
    figure = page.get_by_test_id("luck-figure")
    await expect(figure).to_contain_text("Over 1 analysed ranked game")
    await expect(figure).to_contain_text("not used to rate")


@pytest.mark.shared_platform  # a game of its own (tests/shared.py)
async def test_a_failed_review_says_why_and_is_tried_again_from_the_page(
    start: StartStack, new_page: NewPage, event_store: PostgresEventStore
) -> None:
    stack = await start()
    # a finished game whose review's workers all died: given up
    game_id, _ = await given_up_review(event_store, rounds=1)
    page = await new_page(stack)
    await page.goto(f"/#/replay/{game_id}?at=0")
    progress = page.get_by_test_id("review-progress")
    await expect(progress).to_contain_text("could not be made (died)", timeout=60_000)
    retry = page.get_by_test_id("review-retry")
    await expect(retry).to_have_text("Try again")  # the suite's cool-down is 0 s
    await retry.click()
    # queued anew and worked by the bot tier: the review appears on the page
    await expect(page.get_by_test_id("review")).to_contain_text("Accuracy", timeout=600_000)
