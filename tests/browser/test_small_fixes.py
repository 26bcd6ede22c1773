"""Issue 27, item 8: the small inaccuracies a player met, each where the browser shows it."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.async_api import expect

from tests.browser.conftest import NewPage, StartStack
from tests.browser.test_leave import open_practice
from tests.browser.test_practice import sign_up
from tests.shared import unique_name

# on the worker's shared platform (tests/shared.py), with names of their own
pytestmark = pytest.mark.shared_platform

SORT = """(hand) => import('/static/js/cards.js').then((c) => [
  c.sortHand(hand, { deuces_high: true, jokers: false }),
  c.sortHand(hand.concat(['BJ', 'LJ']).filter((x) => x !== '2H' && x !== '2D'),
             { deuces_high: true, jokers: true }),
])"""


async def test_the_small_things_a_player_met(start: StartStack, new_page: NewPage) -> None:
    stack = await start()
    page = await new_page(stack)

    # a watch link to a game that does not exist says so at once, and stops there
    await page.goto(f"/#/watch/{uuid.uuid4()}")
    await expect(page.get_by_test_id("no-such-game")).to_contain_text("No such game")
    await expect(page.locator(".toast")).to_have_count(0)

    await sign_up(page, unique_name("ann"))
    # with deuces high the 2♠ is a trump above the ace (all four deuces without jokers:
    # 2♥ > 2♣ > 2♦ > 2♠; with jokers only the 2♠, under them), never the lowest spade
    plain, jjd = await page.evaluate(SORT, ["3S", "AS", "2S", "KS", "2H", "3C", "2D", "2C"])
    assert plain == ["2H", "2C", "2D", "2S", "AS", "KS", "3S", "3C"], plain
    assert jjd == ["BJ", "LJ", "2S", "AS", "KS", "3S", "3C", "2C"], jjd

    # a newcomer at a ranked table is shown as everyone starts: 1500, provisional
    shown = await page.evaluate(
        """() => import('/static/js/pages/table.js').then((t) => [
          t.seatRating({ ratings: {} }, { ladder: 'standard', rated: true }),
          t.seatRating({ ratings: {} }, { ladder: 'practice', rated: false }),
        ])"""
    )
    assert shown == [{"display": 1500, "provisional": True}, {"none": True}], shown

    # five players get a compass rose too, one number a seat
    await page.get_by_label("Variant").select_option(label="Five players")
    await open_practice(page)
    rose = page.get_by_test_id("compass").locator("span")
    await expect(rose).to_have_count(5)
    await expect(page.locator(".compass-bottom")).to_have_text("1")

    # the replay of a game that ended says so, not "Hand 1 · dealing"
    await page.locator(".table-head").get_by_test_id("leave").click()
    await page.locator(".table-head").get_by_test_id("leave-confirm").click()
    await expect(page).to_have_url(re.compile(r"#/lobby$"))
    game = page.get_by_role("region", name="Your games").locator("li").first
    await game.get_by_role("link", name="Replay").click()
    await page.get_by_role("button", name="Last step").click()
    await expect(page.get_by_test_id("step-caption")).to_contain_text("The table closed")
    await expect(page.get_by_test_id("replay-phase")).to_have_text("Game over")
