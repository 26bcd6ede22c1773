"""Table talk in the browser (issue 29): partners bid with the seed's presets, from the mouse
and the keyboard, one of them on a phone-sized screen; the opponent at the table is told
nothing of it; a player's menu mutes; the lobby lists the players one follows, and invites
one to a friends' table with his seat kept."""

from __future__ import annotations

import re
import uuid

import msgspec
from nats.aio.client import Client as NATS
from playwright.async_api import Page, expect

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.browser.conftest import NewPage, StartStack
from tests.browser.test_practice import sign_up

PLAYERS = ("ann", "bob", "cyd", "dan")


async def _open_casual(nc: NATS, subjects: Subjects) -> str:
    body = msgspec.json.encode(wire.OpenCasual(players=PLAYERS, command_id=uuid.uuid4()))
    reply = msgspec.json.decode(
        (await nc.request(subjects.table_open(), body, timeout=30)).data, type=wire.TableReply
    )
    assert reply.ok, reply
    return reply.game_id


async def _at_table(page: Page, game_id: str) -> None:
    await page.goto(f"/#/table/{game_id}")
    await expect(page.get_by_test_id("connection")).to_have_text("● live")


async def _seen_up_to(page: Page, seq: int) -> None:
    await page.wait_for_function(f"window.__spades.game().seq >= {seq}", timeout=30_000)


async def test_partners_bid_with_presets_and_the_opponents_hear_nothing(
    start: StartStack,
    new_page: NewPage,
    nc: NATS,
    subjects: Subjects,
    event_store: PostgresEventStore,
) -> None:
    # a long turn clock: the bidding waits for the people; no deal contributions to wait for
    stack = await start(
        SPADES_TURN_SECONDS="600", SPADES_CONTRIBUTION_SECONDS="0", SPADES_PRESENCE_SECONDS="0.5"
    )
    ann = await new_page(stack)
    cyd = await new_page(stack, width=390, height=800)  # a phone
    bob = await new_page(stack)
    for page, name in ((ann, "ann"), (cyd, "cyd"), (bob, "bob")):
        await sign_up(page, name)
    game_id = await _open_casual(nc, subjects)
    for page in (ann, cyd, bob):
        await _at_table(page, game_id)

    # ann (North) tells her partner she can take 5: the number, then the preset
    await expect(ann.get_by_test_id("talk-sure")).to_be_visible()
    await expect(ann.get_by_test_id("talk-nice")).to_have_count(0)  # courtesies after the bidding
    await ann.get_by_label("Tricks").select_option("5")
    await ann.get_by_test_id("talk-sure").click()
    await expect(cyd.get_by_test_id("talk-log")).to_contain_text(
        "ann (North) to partner: I can take 5"
    )
    await expect(ann.get_by_test_id("talk-log")).to_contain_text("I can take 5")

    # cyd answers from the keyboard, on her phone
    await cyd.get_by_test_id("talk-half").focus()
    await cyd.keyboard.press("Enter")
    await expect(ann.get_by_test_id("talk-log")).to_contain_text(
        "cyd (South) to partner: And a half, maybe"
    )

    # bob (East) got both events, withheld: nothing of it shows
    logged = [REGISTRY.decode(s) for s in await event_store.read(stream_of(game_id))]
    talk = [e for e in logged if isinstance(e, wire.Talked)]
    assert [(e.seat, e.preset, e.n) for e in talk] == [(0, "sure", 5), (2, "half", 0)]
    await _seen_up_to(bob, len(logged))
    await expect(bob.get_by_test_id("talk-log")).to_have_text("Nothing said yet.")
    await expect(bob.get_by_test_id("talk-sure")).to_be_visible()  # his own buttons

    # cyd mutes ann from her menu: what ann says next reaches cyd's screen no more
    menu = cyd.get_by_test_id("menu-ann")
    await menu.locator("summary").click()
    await menu.get_by_role("button", name="Mute here").click()
    await expect(menu.get_by_role("button", name="Unmute")).to_be_visible()
    await ann.get_by_test_id("talk-nil").click()
    await expect(ann.get_by_test_id("talk-log")).to_contain_text("I might go nil")
    logged = await event_store.read(stream_of(game_id))
    await _seen_up_to(cyd, len(logged))
    await expect(cyd.get_by_test_id("talk-log")).not_to_contain_text("ann (North)")
    said = REGISTRY.decode(logged[-1])
    assert isinstance(said, wire.Talked)
    assert (said.preset, said.hearers) == ("nil", ())  # the server told cyd nothing of it

    # ann follows bob from his menu; the lobby lists him online
    await ann.get_by_test_id("menu-bob").locator("summary").click()
    await ann.get_by_test_id("menu-bob").get_by_role("button", name="Follow").click()
    await expect(ann.get_by_text("Following bob")).to_be_visible()  # the server has it
    await ann.goto("/#/lobby")
    await expect(ann.get_by_test_id("followed-bob")).to_contain_text(re.compile("bob · online"))

    # ...and invites him from there: a friends' table form with his seat kept (the partner's)
    await ann.get_by_test_id("invite-bob").click()
    await expect(ann.get_by_test_id("seat-kind-2")).to_have_value("player")
    await expect(ann.get_by_test_id("seat-player-2")).to_have_value("bob")
    await ann.get_by_test_id("open-friends-table").click()
    await expect(ann.get_by_test_id("room-seat-2")).to_contain_text("bob")
