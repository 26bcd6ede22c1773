"""A player leaves practice tables she no longer wants, from the lobby and from the table: each
closes at once (recorded in its log), leaves the live list, and no longer counts against the
three unfinished tables an account may have."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page, expect

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from tests.browser.conftest import NewPage, StartStack
from tests.browser.test_practice import sign_up
from tests.shared import unique_name

# on the worker's shared platform (tests/shared.py), with names of their own
pytestmark = pytest.mark.shared_platform

TABLE = re.compile(r"#/table/([0-9a-f-]{36})$")


async def open_practice(page: Page) -> str:
    """Press "Shuffle and play" in the lobby; return the game id once at the table."""
    await page.get_by_test_id("start-practice").click()
    await expect(page).to_have_url(TABLE)
    await expect(page.get_by_test_id("connection")).to_have_text("● live")
    return page.url.rsplit("/", 1)[1]


async def test_leaving_practice_tables_closes_them_and_frees_the_account(
    start: StartStack, new_page: NewPage, event_store: PostgresEventStore
) -> None:
    stack = await start()
    page = await new_page(stack)
    ann = unique_name("ann")
    await sign_up(page, ann)
    games = []
    for _ in range(3):
        games.append(await open_practice(page))
        await page.goto("/#/lobby")
    # a fourth is refused: the text says how to free a place
    await page.get_by_test_id("start-practice").click()
    await expect(page.get_by_test_id("practice-error")).to_contain_text("too_many_tables")
    await expect(page.get_by_test_id("practice-error")).to_contain_text("leave")

    # from the lobby: Leave, asked once more, closes the table
    mine = page.get_by_role("region", name="Your games")
    first = mine.get_by_test_id(f"game-{games[0]}")
    live = page.get_by_test_id("live-games")
    await expect(live.get_by_test_id(f"game-{games[0]}")).to_be_visible()
    await first.get_by_test_id("leave").click()
    await expect(first).to_contain_text("A bot takes your seat; a table with nobody left closes")
    await first.get_by_test_id("leave-confirm").click()
    await expect(first).to_contain_text("closed, nobody left at it")
    await expect(first.get_by_role("link")).to_have_text("Replay")
    await expect(live.get_by_test_id(f"game-{games[0]}")).to_have_count(0)
    logged = [REGISTRY.decode(e) for e in await event_store.read(stream_of(games[0]))]
    left = [e for e in logged if isinstance(e, wire.SeatAbandoned)]
    assert left == [wire.SeatAbandoned(seat=0, player_id=ann, streak=0, left=True)]
    finished = logged[-1]
    assert isinstance(finished, wire.GameFinished)
    assert finished.reason == "abandoned"

    # from the table: Leave sends her to the lobby, the table closed
    await page.goto(f"/#/table/{games[1]}")
    await expect(page.get_by_test_id("connection")).to_have_text("● live")
    await page.locator(".table-head").get_by_test_id("leave").click()
    await page.locator(".table-head").get_by_test_id("leave-confirm").click()
    await expect(page).to_have_url(re.compile(r"#/lobby$"))
    await expect(mine.get_by_test_id(f"game-{games[1]}")).to_contain_text(
        "closed, nobody left at it"
    )
    await expect(live.get_by_test_id(f"game-{games[1]}")).to_have_count(0)

    # with two tables closed, "Shuffle and play" opens a table again
    await open_practice(page)
