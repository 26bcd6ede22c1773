"""Every list of games shows each finished game's real result: both sides' scores (the
viewer's side first), won or lost from the viewer's side, and how the game moved his rating.

The games are written to the real event store as the table writes them (`TableOpened`, then
`GameFinished`); the real rating service rates the ranked one. The lobby, the player page
and the page of someone else's profile then list them."""

from __future__ import annotations

import asyncio
import re
import uuid

import pytest
from playwright.async_api import expect

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from tests.browser.conftest import NewPage, StartStack
from tests.browser.test_practice import sign_up
from tests.shared import unique_name

# on the worker's shared platform (tests/shared.py), with names of its own
pytestmark = pytest.mark.shared_platform


async def finished_game(
    store: PostgresEventStore,
    *,
    players: tuple[str, ...],
    rated: bool,
    winner: int,
    scores: tuple[int, ...],
) -> str:
    """Append a whole game's opening and end to the store; return its id."""
    game_id = str(uuid.uuid4())
    ladder = "standard" if rated else wire.PRACTICE_LADDER
    opened = wire.TableOpened(game_id=game_id, ladder=ladder, rated=rated, players=players)
    finished = wire.GameFinished(
        winner=winner, reason="target", scores=scores, ladder=ladder, rated=rated, players=players
    )
    await store.append(
        stream_of(game_id), 0, [REGISTRY.new_event(opened), REGISTRY.new_event(finished)]
    )
    return game_id


async def test_game_lists_show_each_sides_score_the_result_and_the_rating_change(
    start: StartStack, new_page: NewPage, event_store: PostgresEventStore
) -> None:
    stack = await start()
    page = await new_page(stack)
    ann, bob, cyd, dee = (unique_name(n) for n in ("ann", "bob", "cyd", "dee"))
    await sign_up(page, ann)
    # practice: ann (North, side 0) lost −291 to 330
    practice = await finished_game(
        event_store,
        players=(ann, "bot:1", "bot:2", "bot:3"),
        rated=False,
        winner=1,
        scores=(-291, 330),
    )
    # ranked: ann (East, side 1) won 555 to 377; the rating service rates it
    ranked = await finished_game(
        event_store,
        players=(bob, ann, cyd, dee),
        rated=True,
        winner=1,
        scores=(377, 555),
    )
    for _ in range(600):  # the rating service rates it within a minute
        if await event_store.read(f"rating-{ranked}"):
            break
        await asyncio.sleep(0.1)
    await page.reload()
    await expect(page.get_by_role("heading", name=f"Welcome, {ann}")).to_be_visible()
    lost = page.get_by_test_id(f"game-{practice}")
    won = page.get_by_test_id(f"game-{ranked}")
    await expect(lost).to_contain_text("lost −291–330")
    await expect(won).to_contain_text(
        re.compile(r"won 555–377 · \+\d+ \(1500\? → 15\d\d\?\): for the win")
    )

    # her own profile: the same lines
    await page.goto(f"/#/player/{ann}")
    await expect(page.get_by_test_id(f"game-{practice}")).to_contain_text("lost −291–330")
    await expect(page.get_by_test_id(f"game-{ranked}")).to_contain_text(
        re.compile(r"won 555–377 · \+\d+ \(1500\? → 15\d\d\?\): for the win")
    )
    # bob's profile, seen by ann: from bob's side (North, side 0), who lost the ranked game
    await page.goto(f"/#/player/{bob}")
    await expect(page.get_by_test_id(f"game-{ranked}")).to_contain_text(
        re.compile(r"lost 377–555 · −\d+ \(1500\? → 1[0-4]\d\d\?\): for the loss")
    )
