"""The rule book's variants in the browser: a five-player practice game with power checks,
played to its end on a desktop and checked on a phone, and a Big/Little Moe hand."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page, expect

from tests.browser.conftest import NewPage, StartStack
from tests.browser.test_practice import next_move, play_card, sign_up
from tests.shared import unique_name

# on the worker's shared platform (tests/shared.py), with names of their own
pytestmark = pytest.mark.shared_platform

PHONE = {"width": 390, "height": 844}


async def open_rules(page: Page) -> None:
    await page.get_by_text("Rules (every option of the rule book)").click()


async def bid_or_show(page: Page, move: str) -> None:
    """Answer a blind offer by seeing the hand, a bid by 3 (or the highest bid allowed)."""
    if move == "blind":
        await page.get_by_role("button", name="Show my cards").click()
        return
    three = page.get_by_role("button", name="Bid 3", exact=True)
    enabled = page.locator('.bid-row[aria-label="Bid"] button:not([disabled])')
    bid = three if await three.is_enabled() else enabled.last
    await bid.click()


async def seats_inside(page: Page, width: int) -> None:
    """Every one of the five seats is shown, side by side inside the screen's width."""
    # all five in one task of the page: the bots keep playing, and a render between two
    # separate measurements replaces the seats (a detached element has no box)
    boxes = await page.evaluate(
        """() => [0, 1, 2, 3, 4].map((seat) => {
          const el = document.querySelector(`[data-testid="bidtricks-${seat}"]`);
          if (!el) return null;
          const r = el.getBoundingClientRect();
          return {x: r.x, width: r.width, height: r.height};
        })"""
    )
    for seat, box in enumerate(boxes):
        assert box is not None, seat
        assert box["height"] > 0, (seat, box)
        assert box["x"] >= 0, (seat, box)
        assert box["x"] + box["width"] <= width, (seat, box)


async def test_five_player_practice_game_with_power_checks_desktop_and_phone(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start()
    page = await new_page(stack)
    await sign_up(page, unique_name("fay"))
    await open_rules(page)
    await page.get_by_label("Players").select_option("5")
    await page.get_by_label("Power checks (cards each dealt face up)").select_option("1")
    await page.get_by_label("Most hands in a game").fill("1")
    await page.get_by_test_id("start-practice").click()
    await expect(page).to_have_url(re.compile(r"#/table/[0-9a-f-]{36}$"))
    await expect(
        page.get_by_text(re.compile(r"House rules: Players: 5 — each for himself"))
    ).to_be_visible()

    # five seats around the table, yours at the bottom, four bots; bids Nil, 1 ... 10
    await expect(page.locator(".felt.seats-5")).to_be_visible()
    for seat in range(5):
        await expect(page.get_by_test_id(f"bidtricks-{seat}")).to_be_visible()
    await expect(page.locator(".seat.seat-bottom.mine")).to_contain_text("fay")
    await seats_inside(page, 1280)
    await expect(page.locator('.bid-row[aria-label="Bid"] button')).to_have_count(11)

    # power checks: one face-up card per seat, shown at every seat; mine is in my hand
    for seat in range(5):
        await expect(page.get_by_test_id(f"face-up-{seat}").locator(".card")).to_have_count(1)
    mine = await page.get_by_test_id("face-up-0").locator(".card").get_attribute("aria-label")
    assert mine
    await expect(page.locator(f'.hand button[aria-label^="{mine}"]')).to_have_count(1)
    await expect(page.get_by_test_id("hand").get_by_role("button")).to_have_count(10)

    # on a phone the same table keeps all five seats inside the screen
    await page.set_viewport_size(PHONE)
    await seats_inside(page, PHONE["width"])
    await page.set_viewport_size({"width": 1280, "height": 900})

    cards = 0
    while True:
        move = await next_move(page)
        if move == "over":
            break
        if move in ("blind", "bid"):
            await bid_or_show(page, move)
        else:
            await play_card(page)
            cards += 1
    assert cards == 10
    over = page.get_by_test_id("game-over")
    await expect(over).to_contain_text("Game over")
    await expect(over).to_contain_text("the hand limit")
    # one score per player on the board
    for seat in range(5):
        await expect(page.get_by_test_id(f"score-{seat}")).to_be_visible()


async def test_a_moe_hand_bid_seconded_and_scored(start: StartStack, new_page: NewPage) -> None:
    stack = await start()
    page = await new_page(stack)
    await sign_up(page, unique_name("moe"))
    await open_rules(page)
    await page.get_by_label("Big and Little Moe (8 or 6 tricks in a row: 300 / 150)").check()
    await page.get_by_label("Blind nil allowed").uncheck()
    await page.get_by_label("Mercy: a side at or below this score loses (0 = off)").fill("0")
    await page.get_by_label("Play to (points)").fill("1000")  # the highest target allowed
    await page.get_by_label("Most hands in a game").fill("4")
    await page.get_by_test_id("start-practice").click()
    await expect(page).to_have_url(re.compile(r"#/table/[0-9a-f-]{36}$"))

    # In four hands the deal passes every seat: in some hand you bid before your partner and
    # are offered the Moes; bid Little Moe there.
    moe_hand = 0
    while not moe_hand:
        move = await next_move(page)
        assert move != "over", "no hand offered a Moe"
        if move == "bid" and await page.locator('[data-key="moe-6"]').count():
            big = page.get_by_role("button", name=re.compile("Big Moe: 8 tricks"))
            await expect(big).to_be_visible()
            caption = await page.get_by_test_id("phase").inner_text()
            found = re.search(r"Hand (\d+)", caption)
            assert found, caption
            moe_hand = int(found[1])
            await page.locator('[data-key="moe-6"]').click()
            await expect(page.locator(".seat.mine .bid")).to_have_text("bid Little Moe")
        elif move in ("blind", "bid"):
            await bid_or_show(page, move)
        else:
            await play_card(page)

    # the partner (a bot) can only second it: both seats of the side show Little Moe
    partner = page.get_by_test_id("bidtricks-2").locator(".bid")
    await expect(partner).to_have_text("bid Little Moe")
    while True:
        move = await next_move(page)
        if move == "over":
            break
        result = page.get_by_test_id("hand-result")
        if await result.count() and f"Hand {moe_hand} result" in await result.inner_text():
            break
        if move in ("blind", "bid"):
            await bid_or_show(page, move)
        else:
            await play_card(page)
    result = page.get_by_test_id("hand-result")
    await expect(result).to_contain_text(f"Hand {moe_hand} result")
    await expect(result).to_contain_text(
        re.compile(r"Little Moe \(6 tricks in a row\): (made \+150|set −150)")
    )
