"""A person signs up, opens a practice game against three bots, bids, plays whole hands by
clicking legal cards, sees each hand's result and the game's end, then replays the game.

The table is drawn from her seat (North, at the bottom), labels say "bid 3 · took 1", the
keyboard starts on a fair bid (never Nil), practice is untimed, a phone keeps the score in
sight, the badge says when the game is over, and the replay turns to any seat."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from playwright.async_api import Page, Route, WebSocket, expect

from tests.browser.conftest import NewPage, StartStack
from tests.browser.stack import screenshot_path
from tests.shared import unique_name

PASSWORD = "a good password"

ACTIONABLE = """() => {
  if (document.querySelector('[data-testid="game-over"]')) return "over";
  if (document.querySelector('[data-testid="hand-card-continue"]')) return "continue";
  if (document.querySelector('[data-testid="blind-offer"] button:not([disabled])')) return "blind";
  if (document.querySelector('.bid-row button:not([disabled])')) return "bid";
  const legalCard = document.querySelector('.hand button.legal:not([disabled])');
  if (legalCard && document.querySelector('[data-testid="exchange"]')) return "exchange";
  if (legalCard) return "card";
  return null;
}"""


async def sign_up(page: Page, name: str) -> None:
    """Create an account through the sign-up form; land in the lobby."""
    await page.goto("/#/signup")
    await page.get_by_label("Name").fill(name)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign up").click()
    # two argon2id hashes (sign up, then log in): seconds on a loaded machine, not 5 s
    await expect(page.get_by_role("heading", name=f"Welcome, {name}")).to_be_visible(timeout=30_000)


async def next_move(page: Page) -> str:
    """Wait until the page offers something to do (or the game is over); return what. The
    card between two hands is dismissed on the way ("Next hand"), as a person does."""
    while True:
        handle = await page.wait_for_function(ACTIONABLE, timeout=60_000)
        move = str(await handle.json_value())
        if move != "continue":
            return move
        await page.get_by_test_id("hand-card-continue").click()


async def play_card(page: Page) -> str:
    """Click the first legal card; check the hand shrinks by one; return the card."""
    hand = page.get_by_test_id("hand").get_by_role("button")
    before = await hand.count()
    card = page.locator(".hand button.legal:not([disabled])").first
    name = await card.get_attribute("data-card")
    label = await card.get_attribute("aria-label")
    assert name
    assert label
    assert " of " in label or label in ("Big joker", "Little joker")
    await card.click()
    if before == 1:
        # the hand's last card: the next hand may be dealt at once (the bots play without
        # delay), so the hand is not sure to be seen empty; the hand's result is
        await expect(page.get_by_test_id("hand-result")).to_be_visible()
        return str(name)
    await expect(hand).to_have_count(before - 1)
    await expect(page.locator(f'.hand button[data-card="{name}"]')).to_have_count(0)
    return str(name)


async def pass_cards(page: Page) -> None:
    """A (blind) nil exchange: the partner of a bot that bid nil chooses the cards and passes them.

    During it her hand can hold 15 cards (two received before she gives two back), and a click
    on a card chooses it rather than plays it."""
    exchange = page.get_by_test_id("exchange")
    button = exchange.locator('button[data-key="pass"]')
    count = int(re.findall(r"\d+", await button.inner_text())[0])
    unchosen = page.locator('.hand button.legal:not([disabled])[aria-pressed="false"]')
    for _ in range(count):
        await unchosen.first.click()
    await expect(exchange).to_contain_text(f"({count} chosen)")
    await button.click()
    await expect(exchange).to_have_count(0)


async def check_hand_result(page: Page, cards_played: int) -> None:
    """The first hand's result: contract made or set per side, and totals as on the board."""
    assert cards_played == 13, cards_played
    result = page.get_by_test_id("hand-result")
    await expect(result).to_contain_text("Hand 1 result")
    await expect(result).to_contain_text(re.compile(r"Bid \d+, took \d+: (contract made|set)"))
    text = await result.inner_text()
    assert not re.search(r"-\d", text), text  # a minus is U+2212 everywhere, never "-"
    totals = [int(m) for m in re.findall(r"→ (-?\d+)", text.replace("−", "-"))]
    assert len(totals) == 2, text
    for side, total in enumerate(totals):
        shown = str(total).replace("-", "−")
        await expect(page.get_by_test_id(f"score-{side}")).to_have_text(shown)


async def test_sign_up_practice_play_a_hand_see_the_result_and_replay_the_game(
    start: StartStack, new_page: NewPage
) -> None:
    # committed deals: hand 1 waits up to 20 s for the browser's contribution
    stack = await start(SPADES_CONTRIBUTION_SECONDS="20")
    page = await new_page(stack)
    module = await page.request.get("/static/js/app.js")
    assert module.ok
    assert "javascript" in module.headers["content-type"]
    assert module.headers["cache-control"] == "no-cache"  # an upgrade is never half cached
    sockets: list[WebSocket] = []
    page.on("websocket", lambda socket: sockets.append(socket))
    await sign_up(page, "ann")

    # a short game: to 100 (the least a table may choose), so a hand or few finish it
    await page.get_by_text("Rules (every option of the rule book)").click()
    await page.get_by_label("Play to (points)").fill("100")
    await page.get_by_test_id("start-practice").click()
    await expect(page).to_have_url(re.compile(r"#/table/[0-9a-f-]{36}$"))
    game_id = page.url.rsplit("/", 1)[1]
    await expect(page.get_by_text("House rules: Play to (points): 100")).to_be_visible()
    await expect(page.get_by_test_id("connection")).to_have_text("● live")

    # four seats with names, the bid row Nil, 1 ... 13
    for seat in range(4):
        await expect(page.get_by_test_id(f"bidtricks-{seat}")).to_be_visible()
    await expect(page.locator(".seat.mine")).to_contain_text("ann")
    # hand 1 is dealt well inside the 20 s window only because the browser contributed
    await expect(page.locator(".bid-row button")).to_have_count(14, timeout=15_000)
    # from her seat: ann (North, seat 0) at the bottom, her partner South at the top, East (who
    # plays after her) on her left; the compass rose turns with the table
    mine = page.locator(".seat.mine")
    await expect(mine).to_have_class(re.compile(r"\bseat-bottom\b"))
    await expect(mine).to_contain_text("North")
    await expect(page.locator(".seat-top")).to_contain_text("South")
    await expect(page.locator(".seat-left")).to_contain_text("East")
    await expect(page.locator(".compass-bottom")).to_have_text("N")
    await expect(page.locator(".compass-top")).to_have_text("S")
    # every number with a true minus sign
    shown = await page.evaluate(
        "import('/static/js/ui.js').then((ui) => [ui.num(-40), ui.signed(-100), ui.num(7)])"
    )
    assert shown == ["−40", "−100", "7"]

    hands_seen = 0
    cards_played = 0
    dropped = False
    while True:
        move = await next_move(page)
        if hands_seen == 0 and await page.get_by_test_id("hand-result").count():
            hands_seen = 1
            await check_hand_result(page, cards_played)
        if move == "over":
            break
        if move == "blind":
            await page.get_by_role("button", name="Show my cards").click()
        elif move == "exchange":
            await pass_cards(page)
        elif move == "bid" and cards_played == 0:
            # by keyboard: the focus lands on a fair estimate of the hand, never on Nil (the
            # riskiest bid); practice is untimed: no clock runs for her
            likely = page.locator(".bid-row button.likely")
            await expect(likely).to_be_focused()
            label = str(await likely.get_attribute("aria-label"))
            assert label.startswith("Bid ")
            assert label != "Bid nil"
            await expect(page.locator('[data-timer="mine"]')).to_have_count(0)
            await expect(mine).to_contain_text("your turn")
            await expect(mine).not_to_contain_text(re.compile(r"\d:\d\d"))
            await page.screenshot(path=screenshot_path("table-bid-focus"), full_page=True)
            await page.keyboard.press("Enter")
            await expect(page.locator(".seat.mine .bid")).to_have_text(
                "bid " + label.removeprefix("Bid ")
            )
            await expect(page.locator(".seat.mine .bidtricks")).to_have_text(
                re.compile(r"^bid \d+ · took 0$")
            )
        elif move == "bid":
            await expect(page.get_by_role("button", name="Bid nil")).to_be_visible()
            three = page.get_by_role("button", name="Bid 3", exact=True)
            enabled = page.locator(".bid-row button:not([disabled])")
            bid = three if await three.is_enabled() else enabled.last
            label = await bid.get_attribute("aria-label")
            await bid.click()
            shown = "Nil" if label == "Bid nil" else str(label).removeprefix("Bid ")
            await expect(page.locator(".seat.mine .bid")).to_have_text(f"bid {shown}")
        elif cards_played == 0:
            # by keyboard too: the focus is on a legal card; arrows move along the hand
            hand = page.get_by_test_id("hand").get_by_role("button")
            legal = page.locator(".hand button.legal:not([disabled])")
            await expect(legal.first).to_be_focused()
            await page.keyboard.press("End")
            await expect(legal.last).to_be_focused()
            card = await legal.last.get_attribute("data-card")
            await page.keyboard.press("Enter")
            await expect(hand).to_have_count(12)
            await expect(page.locator(f'.hand button[data-card="{card}"]')).to_have_count(0)
            cards_played += 1
        else:
            await play_card(page)
            cards_played += 1
            if cards_played == 5 and not dropped:
                await page.screenshot(path=screenshot_path("table"), full_page=True)
                # on a phone the score stays in sight above the hand (the panel goes below it)
                await page.set_viewport_size({"width": 390, "height": 844})
                strip = page.get_by_test_id("score-strip")
                await expect(strip).to_be_visible()
                await expect(strip).to_contain_text(re.compile(r"N\+S −?\d+ \(\d+ bags?\)"))
                # both boxes in one task of the page: the bots keep playing, and a render
                # between two separate measurements replaces the strip (a detached element
                # has no box)
                boxes = await page.evaluate(
                    """() => {
                      const strip = document.querySelector('[data-testid="score-strip"]');
                      const hand = document.querySelector('[data-testid="hand"]');
                      if (!strip || !hand) return null;
                      const s = strip.getBoundingClientRect(), h = hand.getBoundingClientRect();
                      return {bottom: s.bottom, top: s.top + window.scrollY, hand: h.top,
                              height: s.height};
                    }"""
                )
                assert boxes is not None
                assert boxes["height"] > 0
                assert boxes["bottom"] <= boxes["hand"]
                assert boxes["top"] < 844  # on the first screen, no scrolling needed
                await page.screenshot(path=screenshot_path("table-phone"))
                await page.set_viewport_size({"width": 1280, "height": 900})
                await expect(strip).to_be_hidden()  # the scores panel is beside the table
                # the connection drops mid-hand: the client reconnects and resumes by itself
                await page.evaluate("window.__spades.socket.drop()")
                await expect(page.get_by_test_id("connection")).not_to_have_text("● live")
                await expect(page.get_by_test_id("connection")).to_have_text("● live")
                dropped = True
        assert cards_played <= 13 * 12, "the game does not end"

    assert hands_seen == 1
    assert cards_played >= 13
    over = page.get_by_test_id("game-over")
    await expect(over).to_contain_text("Game over")
    await expect(over).to_contain_text(re.compile(r"(N\+S|E\+W) win|draw"))
    await expect(over).to_contain_text("Practice game: no rating change.")
    # the browser contributed to the deals by itself, and checked them all at the end
    await expect(page.get_by_test_id("deals-verified")).to_contain_text("Deals verified: all")
    log = await (await page.request.get(f"/api/games/{game_id}/events")).json()
    contributed = [e["event"] for e in log if e["type"] == "SeedContributed"]
    assert [c["seat"] for c in contributed] == [0]
    assert [e["type"] for e in log].index("SeedContributed") < [e["type"] for e in log].index(
        "HandDealt"
    )
    await expect(page.get_by_test_id("connection")).to_have_text("■ game over")
    resumed = [s for s in sockets if s.url.endswith("/ws?batch=1")]
    assert len(resumed) >= 2, "the client did not reconnect"
    await page.screenshot(path=screenshot_path("table-game-over"), full_page=True)

    # the replay of the finished game, step by step, every hand face up
    await over.get_by_role("link", name="Replay this game").click()
    await expect(page).to_have_url(re.compile(rf"#/replay/{game_id}\?at=0$"))
    await page.get_by_role("button", name="Next step").click()
    await expect(page).to_have_url(re.compile(rf"#/replay/{game_id}\?at=1$"))
    await expect(page.get_by_test_id("step-caption")).to_contain_text("Step 1")
    await page.get_by_role("button", name="Hand 1, trick 3").click()
    await expect(page).to_have_url(re.compile(rf"#/replay/{game_id}\?at=\d+$"))
    at = int(page.url.rsplit("=", 1)[1])
    await expect(page.get_by_test_id("step-caption")).to_contain_text("won trick 3")
    hands = page.locator(".open-hand")
    await expect(hands).to_have_count(4)
    for i in range(4):
        await expect(hands.nth(i).locator(".card")).to_have_count(10)  # 3 tricks played
    await page.get_by_role("button", name="Previous step").click()
    await expect(page).to_have_url(re.compile(rf"\?at={at - 1}$"))
    # the replay opens from her seat, as her table was; it turns to any seat and stays turned
    await expect(page.locator(".replay .seat-bottom")).to_contain_text("ann")
    await expect(page.locator(".replay .compass-bottom")).to_have_text("N")
    await page.screenshot(path=screenshot_path("replay"), full_page=True)
    await page.locator('[data-key="from-1"]').click()
    await expect(page).to_have_url(re.compile(rf"\?at={at - 1}&from=1$"))
    await expect(page.locator(".replay .seat-bottom")).to_contain_text("East")
    await expect(page.locator(".replay .seat-top")).to_contain_text("West")
    await expect(page.locator(".replay .compass-bottom")).to_have_text("E")
    await page.get_by_role("button", name="Next step").click()
    await expect(page).to_have_url(re.compile(rf"\?at={at}&from=1$"))
    await expect(page.locator(".replay .seat-bottom")).to_contain_text("East")
    await page.screenshot(path=screenshot_path("replay-from-east"), full_page=True)

    # a step's URL is shareable: opened afresh it shows the same step
    other = await new_page(stack, width=390, height=844)
    await other.goto(f"/#/replay/{game_id}?at={at}")
    await expect(other.get_by_test_id("step-caption")).to_contain_text("won trick 3")
    await expect(other.locator(".replay .seat-bottom")).to_contain_text("South")  # nobody's seat
    await expect(other.locator(".open-hand").first.locator(".card")).to_have_count(10)
    await other.screenshot(path=screenshot_path("replay-phone"), full_page=True)

    # an error from the server is shown in words: the name is taken
    await other.goto("/#/signup")
    await other.get_by_label("Name").fill("Ann")
    await other.get_by_label("Password").fill(PASSWORD)
    await other.get_by_role("button", name="Sign up").click()
    await expect(other.get_by_test_id("form-error")).to_contain_text("is taken (name_taken)")


async def test_blind_nil_is_offered_before_the_hand_is_shown_then_cards_are_exchanged(
    start: StartStack, new_page: NewPage
) -> None:
    # tokens last 70 s: an open tab renews them by itself a minute before they run out
    stack = await start(SPADES_TOKEN_SECONDS="70")
    page = await new_page(stack)
    await sign_up(page, "bea")
    first = json.loads(await page.evaluate("() => localStorage.getItem('spades.session')"))
    # blind nil open to a side behind by 0 or more: offered from the first hand
    await page.get_by_text("Rules (every option of the rule book)").click()
    await page.get_by_label("Blind nil only when behind by at least").fill("0")
    await page.get_by_test_id("start-practice").click()
    await expect(page).to_have_url(re.compile(r"#/table/[0-9a-f-]{36}$"))
    # the renewal comes 5-10 s after the login, silently: new tokens stored, and they work
    await page.wait_for_function(
        "(old) => JSON.parse(localStorage.getItem('spades.session')).token !== old",
        arg=first["token"],
        timeout=30_000,
    )
    renewed = json.loads(await page.evaluate("() => localStorage.getItem('spades.session')"))
    assert renewed["refresh_token"] != first["refresh_token"]
    me = await page.request.get("/api/me", headers={"Authorization": f"Bearer {renewed['token']}"})
    assert (me.status, (await me.json())["name"]) == (200, "bea")

    offer = page.get_by_test_id("blind-offer")
    await expect(offer.get_by_role("button", name="Bid blind nil")).to_be_enabled()
    await expect(page.locator(".hand .card.back")).to_have_count(13)  # still face down
    await expect(page.get_by_test_id("hand")).to_have_count(0)
    await offer.get_by_role("button", name="Bid blind nil").click()
    await expect(page.locator(".seat.mine .bid")).to_have_text("bid Blind nil")

    # once all have bid: give partner two cards, and get two back
    exchange = page.get_by_test_id("exchange")
    await expect(exchange).to_contain_text("choose 2 cards to give Bot 2 (South)")
    hand = page.get_by_test_id("hand").get_by_role("button")
    await expect(hand).to_have_count(13)
    pass_two = exchange.get_by_role("button", name="Pass 2 cards")
    await expect(pass_two).to_be_disabled()
    for i in (0, 1):
        await hand.nth(i).click()
        await expect(hand.nth(i)).to_have_attribute("aria-pressed", "true")
    await expect(exchange).to_contain_text("(2 chosen)")
    await pass_two.click()
    await expect(page.locator(".toasts")).to_contain_text("passed you 2 card(s)")
    await expect(exchange).to_have_count(0)
    await expect(hand).to_have_count(13)


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_a_cut_throat_practice_table_seats_three_with_seventeen_cards_each(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start()
    page = await new_page(stack, width=390, height=844)  # a phone
    await sign_up(page, unique_name("cat"))
    await page.get_by_text("Rules (every option of the rule book)").click()
    await page.get_by_label("Players").select_option("3")
    await page.get_by_test_id("start-practice").click()
    await expect(page).to_have_url(re.compile(r"#/table/[0-9a-f-]{36}$"))
    await expect(page.locator(".seat:not([hidden])")).to_have_count(3)
    await expect(page.get_by_test_id("hand").get_by_role("button")).to_have_count(17)
    assert await page.locator(".bid-row button").count() == 18  # Nil, 1 ... 17
    await expect(page.locator("table.scores tbody tr")).to_have_count(3)  # each his own side

    assert await next_move(page) == "bid"
    await page.get_by_role("button", name="Bid 4", exact=True).click()
    await expect(page.locator(".seat.mine .bid")).to_have_text("bid 4")
    assert await next_move(page) == "card"
    await play_card(page)
    await expect(page.get_by_test_id("hand").get_by_role("button")).to_have_count(16)
    await page.screenshot(path=screenshot_path("cut-throat-phone"), full_page=True)


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_a_heads_up_draw_deal_shows_the_card_on_offer_and_keeps_it(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start()
    page = await new_page(stack)
    await sign_up(page, unique_name("drew"))
    await page.get_by_text("Rules (every option of the rule book)").click()
    await page.get_by_label("Players").select_option("2")
    # two players take the heads-up ladder's rules: no blind nil, which the draw deal refuses
    await expect(page.get_by_label("Blind nil allowed")).not_to_be_checked()
    await page.get_by_label("Two-player deal").select_option("draw")
    await page.get_by_test_id("start-practice").click()
    await expect(page).to_have_url(re.compile(r"#/table/[0-9a-f-]{36}$"))
    hand = page.get_by_test_id("hand").get_by_role("button")
    for _ in range(3):  # three draws: each time the card on offer is shown, and kept
        offered = page.get_by_test_id("drawn").get_by_role("img")
        await expect(offered).to_be_visible(timeout=60_000)
        label = await offered.get_attribute("aria-label")
        assert label
        assert " of " in label
        before = await hand.count()
        if not before:
            await page.screenshot(path=screenshot_path("draw"), full_page=True)
        assert not await page.locator(f'.hand button[aria-label="{label}"]').count()
        await page.get_by_role("button", name="Keep it").click()
        await expect(hand).to_have_count(before + 1)
        await expect(page.locator(f'.hand button[aria-label="{label}"]')).to_have_count(1)


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_a_table_size_chosen_before_the_ladders_came_takes_its_ladders_rules(
    start: StartStack, new_page: NewPage
) -> None:
    # The fresh clone's run once chose two players before a loaded gateway had answered
    # GET /api/ladders: blind nil stayed on. Here the answer is held until the choice is made.
    stack = await start()
    page = await new_page(stack)
    release = asyncio.Event()
    held: list[str] = []

    async def hold(route: Route) -> None:
        held.append(route.request.url)
        await release.wait()
        await route.continue_()

    await page.route("**/api/ladders", hold)
    await sign_up(page, unique_name("early"))
    await page.get_by_text("Rules (every option of the rule book)").click()
    await expect(page.get_by_label("Blind nil allowed")).to_be_checked()
    await page.get_by_label("Players").select_option("2")
    assert held, "the ladders were asked for before the choice"
    await expect(page.get_by_label("Blind nil allowed")).to_be_checked()  # nothing known yet
    release.set()
    await expect(page.get_by_label("Blind nil allowed")).not_to_be_checked()
