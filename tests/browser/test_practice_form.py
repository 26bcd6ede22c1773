"""Practice made friendly: a named variant fills the rules form, the server's bounds and every
dependency between options are shown and enforced as you change them, the bots' level is
yours to choose, and at the table "Hint" shows what the bot would do."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from tests.browser.conftest import NewPage, StartStack
from tests.browser.test_practice import sign_up
from tests.shared import unique_name

# on the worker's shared platform (tests/shared.py), with names of their own
pytestmark = pytest.mark.shared_platform


async def test_presets_bounds_dependencies_bot_level_and_the_hint(
    start: StartStack, new_page: NewPage, event_store: PostgresEventStore
) -> None:
    stack = await start()
    page = await new_page(stack)
    await sign_up(page, unique_name("ann"))
    await page.get_by_text("Rules (every option of the rule book)").click()
    problem = page.get_by_test_id("rules-problem")
    start_button = page.get_by_test_id("start-practice")

    # the server's bounds: "Play to" takes 100..1000, and beyond is refused before opening
    target = page.get_by_label("Play to (points)")
    await expect(target).to_have_attribute("min", "100")
    await expect(target).to_have_attribute("max", "1000")
    await target.fill("5000")
    await expect(problem).to_contain_text("target must be between 100 and 1000, not 5000")
    await expect(start_button).to_be_disabled()
    await target.fill("300")
    await expect(problem).to_have_text("")
    await expect(start_button).to_be_enabled()

    # a named variant fills the form; a dependency broken by hand is named and marked
    await page.get_by_label("Variant").select_option(label="Joker-Joker-Deuce")
    await expect(page.get_by_test_id("preset-note")).to_contain_text("Little Willie")
    jokers = page.get_by_label("Jokers (Big and Little Joker top trumps)")
    willie = page.get_by_label(re.compile(r"^Little Willie"))
    await expect(jokers).to_be_checked()
    await expect(page.get_by_label("Deuces high", exact=True)).to_be_checked()
    await expect(willie).to_be_checked()
    await expect(target).to_have_value("500")  # a variant starts from the ladder's rules
    await jokers.uncheck()
    await expect(problem).to_contain_text("little_willie")
    await expect(problem).to_contain_text("needs jokers and deuces_high")
    await expect(willie).to_have_attribute("aria-invalid", "true")
    await expect(start_button).to_be_disabled()
    await jokers.check()
    await expect(problem).to_have_text("")
    await expect(willie).to_have_attribute("aria-invalid", "false")

    # the bots' level, then the table: the game is played with these rules and bots
    await page.get_by_label("Bots").select_option("strong")
    await start_button.click()
    await expect(page).to_have_url(re.compile(r"#/table/[0-9a-f-]{36}$"))
    game_id = page.url.rsplit("/", 1)[1]
    opened = REGISTRY.decode((await event_store.read(stream_of(game_id)))[0])
    assert isinstance(opened, wire.TableOpened)
    assert opened.bot_level == "strong"
    started = next(
        e
        for e in map(REGISTRY.decode, await event_store.read(stream_of(game_id)))
        if isinstance(e, wire.GameStarted)
    )
    assert started.rules["little_willie"] is True

    # the hint: asked for, it shows the server's suggestion for this turn
    await expect(page.locator(".bid-row button:not([disabled])").first).to_be_visible(
        timeout=30_000
    )
    await page.get_by_test_id("hint").click()
    await expect(page.get_by_test_id("hint-text")).to_have_text(
        re.compile(r"^The bot would (bid (Nil|\d+|Blind nil)|look at the hand \(no blind nil\))\.$")
    )
