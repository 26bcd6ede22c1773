"""A hand's end you see: while a hand is played each side's combined bid is in the scores, and
once it is scored a card with each side's bid, tricks, points and bags stays up (the next
bidding waits behind it) until dismissed; the scorecard lists every hand, also after a
reload (from the public log)."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.browser.conftest import NewPage, StartStack
from tests.browser.test_practice import ACTIONABLE, next_move, play_card, sign_up
from tests.shared import unique_name

# on the worker's shared platform (tests/shared.py), with names of their own
pytestmark = pytest.mark.shared_platform

A_BID = r"(\d+|Nil|Blind nil)"


async def test_the_hand_card_the_scorecard_and_each_sides_bid_in_play(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start()
    page = await new_page(stack)
    await sign_up(page, unique_name("ann"))
    await page.get_by_test_id("start-practice").click()
    await expect(page).to_have_url(re.compile(r"#/table/[0-9a-f-]{36}$"))

    # play hand 1 (nil is never the first choice: the likely bid is a number)
    while True:
        handle = await page.wait_for_function(ACTIONABLE, timeout=60_000)
        move = await handle.json_value()
        if move == "continue":
            break
        if move == "bid":
            await page.locator(".bid-row button.likely:not([disabled])").click()
            # a side's combined bid is shown once one of it bid: "3" or "3 + 4 = 7 · took 0"
            await expect(page.get_by_test_id("side-bid-0")).to_have_text(
                re.compile(r"^\d+( \+ (\d+|Nil|Blind nil) = \d+)? · took 0$")
            )
        elif move == "blind":
            await page.locator('[data-testid="blind-offer"] button:not([disabled])').last.click()
        elif move == "card":
            await expect(page.get_by_test_id("side-bid-1")).to_have_text(
                re.compile(r"^(\d+|Nil|Blind nil) \+ (\d+|Nil|Blind nil) = \d+ · took \d+$")
            )
            await play_card(page)
        else:
            raise AssertionError(f"unexpected {move} in hand 1")

    card = page.get_by_test_id("hand-card")
    await expect(card).to_contain_text("Hand 1 is over")
    for side, name in ((0, "N+S"), (1, "E+W")):
        part = card.get_by_test_id(f"hand-card-side-{side}")
        await expect(part).to_contain_text(name)
        # a side's bid: "Bid 5 + 3", or with a nil "Bid 5 + Nil" (the bots bid nil too)
        await expect(part).to_contain_text(re.compile(rf"Bid {A_BID} \+ {A_BID}, took \d+"))
        await expect(part).to_contain_text(re.compile(r"[+−]\d+ → −?\d+ · \d+ bags?"))
    shown = (await card.inner_text()).replace("Next hand", "").strip()
    # the next bidding waits behind the card, whoever bids first
    await expect(page.locator(".bid-row")).to_have_count(0)
    await expect(page.get_by_test_id("hand-card-continue")).to_be_focused()
    totals = [await page.get_by_test_id(f"score-{t}").inner_text() for t in (0, 1)]
    row = page.get_by_test_id("scorecard-hand-1")
    await expect(row).to_contain_text(re.compile(rf"→ {totals[0]}.*→ {totals[1]}"))
    await page.keyboard.press("Enter")
    await expect(card).to_have_count(0)
    await expect(page.locator(".bid-row, [data-testid='blind-offer']").first).to_be_visible(
        timeout=30_000
    )

    # after a reload the scorecard still holds hand 1, read from the public log
    await page.reload()
    await expect(page.get_by_test_id("scorecard-hand-1")).to_contain_text(
        re.compile(rf"→ {totals[0]}.*→ {totals[1]}")
    )
    await expect(page.get_by_test_id("hand-card")).to_have_count(0)

    # the replay shows the same card at the step that scored hand 1 (public once hand 2's
    # first trick is complete: spectators are a trick behind)
    game_id = page.url.rsplit("/", 1)[1]
    while True:
        move = await next_move(page)
        if move == "bid":
            await page.locator(".bid-row button.likely:not([disabled])").click()
        elif move == "blind":
            await page.locator('[data-testid="blind-offer"] button:not([disabled])').last.click()
        elif move == "card":
            await play_card(page)
            break
    scored = None
    for _ in range(600):
        events = await (await page.request.get(f"/api/games/{game_id}/events")).json()
        scored = next((e["seq"] for e in events if e["type"] == "HandScored"), None)
        if scored is not None:
            break
        await page.wait_for_timeout(100)
    assert scored is not None
    await page.goto(f"/#/replay/{game_id}?at={scored}")
    replayed = page.get_by_test_id("hand-card")
    await expect(replayed).to_contain_text("Hand 1 is over")
    assert (await replayed.inner_text()).strip() == shown
    await expect(page.get_by_test_id("scorecard-hand-1")).to_contain_text(
        re.compile(rf"→ {totals[0]}.*→ {totals[1]}")
    )
