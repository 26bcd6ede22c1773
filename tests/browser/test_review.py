"""A finished game's review in its replay: each seat's accuracy and the flagged decisions, each
a link to its own step, where the verdict on that decision is shown."""

from __future__ import annotations

import asyncio
import re

import httpx
from playwright.async_api import expect

from tests.browser.conftest import NewPage, StartStack
from tests.browser.stack import screenshot_path
from tests.gateway.conftest import register_and_login
from tests.gateway.test_transcripts import practice
from tests.gateway.wsclient import WsClient


async def test_the_replay_shows_the_review_and_follows_a_flagged_decision(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start()
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
