"""A private duplicate event in two browsers: ann creates it (one board), the board's
commitment is on its page before any card; ann enters with a bot partner, bob opens the
event's link and enters with a bot too; ann starts it, both play their board from the event's
page, and the standings move (a board scored, the arithmetic shown); the seed revealed at the
end is the one committed."""

from __future__ import annotations

import asyncio
import hashlib
import re

import pytest
from playwright.async_api import Locator, Page, expect

from tests.browser.conftest import NewPage, StartStack
from tests.browser.stack import screenshot_path
from tests.browser.test_friends import play_out
from tests.browser.test_practice import sign_up
from tests.shared import unique_name

# on the worker's shared platform (tests/shared.py): names of their own, their own event
pytestmark = pytest.mark.shared_platform

EVENT = re.compile(r"#/events/([0-9a-f-]{36})$")


def listed(page: Page, event_id: str) -> Locator:
    """The events list's entry of this event (the list also shows other tests' public ones)."""
    return page.get_by_test_id("events-list").locator(
        "li", has=page.locator(f"a[href*='{event_id}']")
    )


async def test_a_private_event_is_created_joined_played_and_its_standings_move(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start()
    host = await new_page(stack)
    friend = await new_page(stack, width=390, height=844)  # bob is on a phone
    ann, bob = unique_name("ann"), unique_name("bob")
    await sign_up(host, ann)
    await sign_up(friend, bob)

    await host.get_by_role("link", name="Events").click()
    await host.get_by_test_id("event-name").fill("Friday pairs")
    await host.get_by_test_id("event-boards").fill("1")
    await host.get_by_test_id("create-event").click()
    await expect(host).to_have_url(EVENT)
    event_id = EVENT.search(host.url).group(1)  # type: ignore[union-attr]
    commitment = host.get_by_test_id("commitment-1")
    await expect(commitment).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
    committed = await commitment.inner_text()

    await host.get_by_test_id("event-bot").check()
    await host.get_by_test_id("join-event").click()
    await expect(host.get_by_test_id("event-pairs")).to_contain_text(f"{ann} & a bot")

    await friend.goto(f"/#/events/{event_id}")
    await expect(friend.get_by_test_id("commitment-1")).to_have_text(committed)
    await friend.get_by_test_id("event-bot").check()
    await friend.get_by_test_id("join-event").click()
    await expect(friend.get_by_test_id("event-pairs")).to_contain_text(f"{bob} & a bot")
    # ann's page hears of bob's entry (pushed, or at the next poll)
    await expect(host.get_by_test_id("event-pairs")).to_contain_text(f"{bob} & a bot")
    await expect(host.get_by_test_id("boards-1")).to_have_text("0")
    await expect(host.get_by_test_id("board-scores")).to_have_count(0)

    await host.get_by_test_id("start-event").click()
    await expect(host.get_by_test_id("event-status")).to_contain_text("under way")
    await host.get_by_test_id("play-board").click()
    await friend.get_by_test_id("play-board").click()
    await asyncio.gather(play_out(host), play_out(friend))

    await host.goto(f"/#/events/{event_id}")
    await expect(host.get_by_test_id("event-status")).to_contain_text("finished", timeout=60_000)
    await expect(host.get_by_test_id("boards-1")).to_have_text("1")
    await expect(host.get_by_test_id("boards-2")).to_have_text("1")
    await expect(host.get_by_test_id("board-scores")).to_contain_text("NS")
    await expect(host.get_by_test_id("board-scores")).to_contain_text("EW")
    seed = host.get_by_test_id("event-boards").locator("code.hash").nth(1)
    revealed = await seed.inner_text()
    assert hashlib.sha256(bytes.fromhex(revealed)).hexdigest() == committed
    await host.screenshot(path=screenshot_path("event-finished"), full_page=True)


async def test_a_swiss_event_shows_its_format_and_round(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start()
    host = await new_page(stack)
    cyd = unique_name("cyd")
    await sign_up(host, cyd)
    await host.get_by_role("link", name="Events").click()
    await host.get_by_test_id("event-name").fill("Swiss night")
    await host.get_by_test_id("event-format").select_option("swiss")
    await host.get_by_test_id("event-boards").fill("1")
    await host.get_by_test_id("event-rounds").fill("1")
    await host.get_by_test_id("create-event").click()
    await expect(host).to_have_url(EVENT)
    event_id = EVENT.search(host.url).group(1)  # type: ignore[union-attr]
    status = host.get_by_test_id("event-status")
    await expect(status).to_contain_text("Swiss")
    await expect(status).to_contain_text("sign-up open")
    await host.get_by_test_id("event-bot").check()
    await host.get_by_test_id("join-event").click()
    await expect(host.get_by_test_id("event-pairs")).to_contain_text(f"{cyd} & a bot")
    await host.get_by_test_id("start-event").click()  # a bot pair makes the count even
    await expect(status).to_contain_text("under way")
    await expect(status).to_contain_text("round 1 of 1")
    await expect(status).to_contain_text("Swiss")
    await host.get_by_role("link", name="Events").click()
    await expect(listed(host, event_id)).to_contain_text("Swiss")
    await expect(listed(host, event_id)).to_contain_text("round 1 of 1")
    await host.screenshot(path=screenshot_path("event-swiss"), full_page=True)


async def test_an_arena_shows_its_format_time_left_and_standings(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start()
    host = await new_page(stack)
    dee = unique_name("dee")
    await sign_up(host, dee)
    await host.get_by_role("link", name="Events").click()
    await host.get_by_test_id("event-name").fill("Lunch arena")
    await host.get_by_test_id("event-format").select_option("arena")
    await expect(host.get_by_test_id("event-boards")).to_be_hidden()
    await host.get_by_test_id("event-minutes").fill("20")
    await host.get_by_test_id("event-length").select_option("hand_cap=1")
    await host.get_by_test_id("create-event").click()
    await expect(host).to_have_url(EVENT)
    event_id = EVENT.search(host.url).group(1)  # type: ignore[union-attr]
    status = host.get_by_test_id("event-status")
    await expect(status).to_contain_text("Arena")
    await expect(status).to_contain_text("20 minutes")
    await host.get_by_test_id("event-bot").check()
    await host.get_by_test_id("join-event").click()
    await expect(host.get_by_test_id("event-pairs")).to_contain_text(f"{dee} & a bot")
    await host.get_by_test_id("start-event").click()  # a bot pair to meet
    await expect(status).to_contain_text("under way")
    await expect(status).to_contain_text(re.compile(r"(19|20) min \d+ s left"))
    await expect(host.get_by_test_id("games-1")).to_have_text("0")
    await expect(host.get_by_test_id("pause-arena")).to_be_visible()
    await host.get_by_test_id("play-board").click()
    await play_out(host)

    await host.goto(f"/#/events/{event_id}")
    # the standings moved: pair 1 has a game, its points are a win's, a draw's or a loss's
    await expect(host.get_by_test_id("games-1")).to_have_text("1", timeout=60_000)
    await expect(host.get_by_test_id("points-1")).to_have_text(re.compile(r"^[012]$"))
    await expect(host.get_by_test_id("arena-games")).to_contain_text(re.compile(r"won|a draw"))
    await host.get_by_test_id("pause-arena").click()
    await expect(host.get_by_test_id("resume-arena")).to_be_visible()
    await expect(host.get_by_test_id("standing-1")).to_contain_text("paused")
    await host.get_by_role("link", name="Events").click()
    await expect(listed(host, event_id)).to_contain_text("Arena")
    await expect(listed(host, event_id)).to_contain_text(" s left")
    await host.screenshot(path=screenshot_path("event-arena"), full_page=True)
