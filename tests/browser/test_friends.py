"""Two friends in two browsers: one opens a friends' table (him, an open seat, two bots) with a
one-hand game, shares the link, the other joins by it; the host swaps seats and starts; the
partners bid with the table-talk presets and play the hand out, the game ends, both accept a
rematch, and the new game seats the same people at the same seats. A code typed by hand joins
too, and an unknown one says so."""

from __future__ import annotations

import asyncio
import re

import pytest
from playwright.async_api import Page, expect

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from tests.browser.conftest import NewPage, StartStack
from tests.browser.stack import screenshot_path
from tests.browser.test_practice import next_move, pass_cards, play_card, sign_up
from tests.shared import unique_name

TABLE = re.compile(r"#/table/([0-9a-f-]{36})$")
ROOM = re.compile(r"#/friends/([A-Z0-9]{8})$")


async def play_out(page: Page) -> None:
    """Play every turn of the page's seat until the game is over."""
    while True:
        move = await next_move(page)
        if move == "over":
            return
        if move == "blind":
            await page.get_by_role("button", name="Show my cards").click()
        elif move == "exchange":
            await pass_cards(page)
        elif move == "bid":
            enabled = page.locator(".bid-row button:not([disabled])")
            likely = page.locator(".bid-row button.likely:not([disabled])")
            bid = likely if await likely.count() else enabled.last
            label = str(await bid.get_attribute("aria-label"))
            await bid.click()
            shown = "Nil" if label == "Bid nil" else label.removeprefix("Bid ")
            await expect(page.locator(".seat.mine .bid")).to_have_text(f"bid {shown}")
        else:
            await play_card(page)


async def opening(store: PostgresEventStore, game_id: str) -> wire.TableOpened:
    first = REGISTRY.decode((await store.read(stream_of(game_id)))[0])
    assert isinstance(first, wire.TableOpened)
    return first


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_friends_open_a_table_join_by_link_play_and_rematch(
    start: StartStack, new_page: NewPage, event_store: PostgresEventStore
) -> None:
    stack = await start()
    host = await new_page(stack)
    friend = await new_page(stack, width=390, height=844)  # the friend is on a phone
    ann, bob = unique_name("ann"), unique_name("bob")
    await sign_up(host, ann)
    await sign_up(friend, bob)

    # ann opens a table from the lobby: one hand, seat 2 open, seats 3 and 4 bots
    await host.get_by_test_id("play-with-friends").click()
    await host.get_by_text("Rules (every option of the rule book)").click()
    await host.get_by_label("Most hands in a game").fill("1")
    await host.get_by_test_id("seat-kind-2").select_option("bot")
    await host.get_by_test_id("seat-kind-3").select_option("bot")
    await host.get_by_test_id("open-friends-table").click()
    await expect(host).to_have_url(ROOM)
    code = ROOM.search(host.url).group(1)  # type: ignore[union-attr]
    await expect(host.get_by_test_id("table-code")).to_have_text(code)
    link = await host.get_by_test_id("invite-link").input_value()
    assert link.endswith(f"/#/join/{code}")
    await expect(host.get_by_test_id("start-friends")).to_be_disabled()  # a seat is empty

    # an unknown code typed by hand is refused in words
    await friend.goto("/#/friends")
    await friend.get_by_test_id("join-code").fill("NOPE-NOPE")
    await friend.get_by_test_id("join-code-go").click()
    await expect(friend.get_by_test_id("join-error")).to_contain_text(
        "no friends' table has this code"
    )

    # bob follows the link: he sits at the open seat, and ann sees him arrive (pushed)
    await friend.goto(link.removeprefix(stack.url))
    await expect(friend).to_have_url(ROOM)
    await expect(friend.get_by_test_id("room-seat-1")).to_contain_text(f"{bob} (you)")
    await expect(host.get_by_test_id("room-seat-1")).to_contain_text(bob)
    await friend.screenshot(path=screenshot_path("friends-waiting-room-phone"), full_page=True)

    # ann swaps bob with the bot after him, by keyboard, then starts
    await host.get_by_test_id("swap-seat-1").focus()
    await host.keyboard.press("Enter")
    await expect(host.get_by_test_id("room-seat-2")).to_contain_text(bob)
    await expect(host.get_by_test_id("swap-seat-1")).to_be_focused()  # kept through re-renders
    await expect(friend.get_by_test_id("room-seat-2")).to_contain_text(f"{bob} (you)")
    await expect(host.get_by_test_id("room-seat-1")).to_contain_text("Bot")
    await host.get_by_test_id("start-friends").click()
    await expect(host).to_have_url(TABLE)
    await expect(friend).to_have_url(TABLE)  # told over the WebSocket
    game_id = TABLE.search(host.url).group(1)  # type: ignore[union-attr]
    assert TABLE.search(friend.url).group(1) == game_id  # type: ignore[union-attr]
    first = await opening(event_store, game_id)
    assert first.players == (ann, "bot:1", bob, "bot:3")
    assert first.bots == (1, 3)

    # ann and bob are partners now (North and South): they bid with the presets
    await expect(host.get_by_test_id("talk-sure")).to_be_visible()
    await host.get_by_label("Tricks").select_option("4")
    await host.get_by_test_id("talk-sure").click()
    await expect(friend.get_by_test_id("talk-log")).to_contain_text(
        f"{ann} (North) to partner: I can take 4"
    )
    await friend.get_by_test_id("talk-half").click()
    await expect(host.get_by_test_id("talk-log")).to_contain_text(
        f"{bob} (South) to partner: And a half, maybe"
    )

    # both play the one hand out
    await asyncio.gather(play_out(host), play_out(friend))
    for page in (host, friend):
        await expect(page.get_by_test_id("game-over")).to_be_visible()
        await expect(page.get_by_test_id("rematch-accept")).to_be_visible()

    # ann asks for a rematch; bob is asked at once, accepts, and both go to the new game
    await host.get_by_test_id("rematch-accept").click()
    await expect(host.get_by_test_id("rematch-waiting")).to_contain_text(f"waiting for {bob}")
    await expect(friend.get_by_test_id("rematch-offer")).to_contain_text(f"{ann} wants a rematch")
    await friend.get_by_test_id("rematch-accept").click()
    await expect(friend).not_to_have_url(re.compile(game_id))
    await expect(host).not_to_have_url(re.compile(game_id))
    await expect(host).to_have_url(TABLE)
    await expect(friend).to_have_url(TABLE)
    again = TABLE.search(host.url).group(1)  # type: ignore[union-attr]
    assert TABLE.search(friend.url).group(1) == again  # type: ignore[union-attr]
    second = await opening(event_store, again)
    assert second.players == first.players
    assert second.bots == first.bots
    await expect(host.get_by_test_id("connection")).to_have_text("● live")
    await expect(host.locator(".seat.mine")).to_contain_text(ann)
    await expect(friend.locator(".seat.mine")).to_contain_text(bob)


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_a_kept_seat_is_an_invitation_in_the_lobby_and_the_rest_fills_with_bots(
    start: StartStack, new_page: NewPage, event_store: PostgresEventStore
) -> None:
    stack = await start()
    host = await new_page(stack)
    guest = await new_page(stack)
    ann, cyd = unique_name("ann"), unique_name("cyd")
    await sign_up(host, ann)
    await sign_up(guest, cyd)

    # ann keeps seat 2 for cyd, leaves seat 3 open to anyone, and seat 4 to a bot
    await host.goto("/#/friends")
    await host.get_by_test_id("seat-kind-1").select_option("player")
    await host.get_by_test_id("seat-player-1").fill(cyd)
    await host.get_by_test_id("seat-kind-3").select_option("bot")
    await host.get_by_test_id("open-friends-table").click()
    await expect(host).to_have_url(ROOM)
    code = ROOM.search(host.url).group(1)  # type: ignore[union-attr]
    await expect(host.get_by_test_id("room-seat-1")).to_contain_text(f"Kept for {cyd}")

    # cyd's lobby shows the invitation; the table's open seat is listed for everyone too
    invitation = guest.get_by_test_id(f"invitation-{code}")
    await expect(invitation).to_contain_text(f"{ann} keeps a seat for you")
    await guest.get_by_role("link", name="Friends", exact=True).click()
    await expect(guest.get_by_test_id("open-seats")).to_contain_text(f"{ann}'s table")
    await guest.goto("/#/lobby")
    await invitation.get_by_role("link", name="Join").click()
    await expect(guest).to_have_url(ROOM)
    await expect(guest.get_by_test_id("room-seat-1")).to_contain_text(f"{cyd} (you)")
    await expect(host.get_by_test_id("room-seat-1")).to_contain_text(cyd)

    # seat 3 is still open: ann fills it with a bot and starts
    await expect(host.get_by_test_id("start-friends")).to_be_disabled()
    await host.get_by_test_id("fill-start-friends").click()
    await expect(host).to_have_url(TABLE)
    await expect(guest).to_have_url(TABLE)
    game_id = TABLE.search(guest.url).group(1)  # type: ignore[union-attr]
    first = await opening(event_store, game_id)
    assert first.players == (ann, cyd, "bot:2", "bot:3")
    assert first.bots == (2, 3)
