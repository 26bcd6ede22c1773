"""The browser keeps its session across reloads with the refresh token, never the password:
an expired access token is renewed on load, tabs share one renewal, and logging out ends the
session on the server."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.browser.conftest import NewPage, StartStack
from tests.browser.test_practice import PASSWORD, sign_up
from tests.shared import unique_name

KEY = "spades.session"


async def stored(page: Page) -> dict[str, Any]:
    """Return the session the page keeps in localStorage."""
    text = await page.evaluate(f"() => localStorage.getItem('{KEY}')")
    assert text, "no session stored"
    value: dict[str, Any] = json.loads(text)
    return value


async def expire_access_token(page: Page) -> None:
    """Make the stored access token one the server refuses and the client thinks ran out."""
    await page.evaluate(
        f"""() => {{
          const value = JSON.parse(localStorage.getItem('{KEY}'));
          value.token = 'expired.garbage.token';
          value.expires_at = 0;
          localStorage.setItem('{KEY}', JSON.stringify(value));
        }}"""
    )


async def refresh_answer(page: Page, refresh_token: str) -> tuple[int, dict[str, Any]]:
    answer = await page.request.post(
        "/api/tokens/refresh", data={"refresh_token": refresh_token}, fail_on_status_code=False
    )
    body: dict[str, Any] = await answer.json()
    return answer.status, body


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_a_reload_with_an_expired_token_stays_logged_in_and_logout_ends_the_session(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start()
    page = await new_page(stack)
    ann = unique_name("ann")
    await sign_up(page, ann)
    first = await stored(page)
    assert first["refresh_token"]
    kept = await page.evaluate("() => JSON.stringify({...localStorage, ...sessionStorage})")
    assert PASSWORD not in kept  # the password is kept nowhere

    await expire_access_token(page)
    await page.reload()
    await expect(page.get_by_role("heading", name=f"Welcome, {ann}")).to_be_visible()
    await page.wait_for_function(
        f"old => JSON.parse(localStorage.getItem('{KEY}')).refresh_token !== old",
        arg=first["refresh_token"],
    )
    renewed = await stored(page)
    assert renewed["token"] != "expired.garbage.token"
    assert renewed["expires_at"] > first["expires_at"] - 5
    me = await page.request.get("/api/me", headers={"Authorization": f"Bearer {renewed['token']}"})
    assert me.ok
    assert (await me.json())["name"] == ann
    await expect(page).to_have_url(re.compile(r"#/lobby$"))  # never sent to the login page
    await expect(page.get_by_test_id("form-error")).to_have_count(0)

    async with page.expect_response(
        lambda r: r.request.method == "DELETE" and r.url.endswith("/api/tokens")
    ) as revoked:
        await page.get_by_role("button", name="Log out").click()
    assert (await revoked.value).status == 204
    await expect(page).to_have_url(re.compile(r"#/login$"))
    assert await page.evaluate(f"() => localStorage.getItem('{KEY}')") is None
    status, body = await refresh_answer(page, renewed["refresh_token"])
    assert (status, body["code"]) == (401, "refresh_invalid")


GRACE = 5
"""SPADES_SESSION_REUSE_SECONDS of the two-tab test: short, so the theft can be shown."""


async def test_two_tabs_renew_one_session_once_and_log_out_together(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start(SPADES_SESSION_REUSE_SECONDS=str(GRACE))
    page = await new_page(stack)
    await sign_up(page, "bea")
    other = await page.context.new_page()  # a second tab: the same localStorage
    await other.goto("/#/lobby")
    await expect(other.get_by_role("heading", name="Welcome, bea")).to_be_visible()
    first = await stored(page)

    # both tabs load with a run-out access token and renew at once: one trades the refresh
    # token, the other takes what it stored (or, when Chromium's localStorage reaches it a
    # moment late, trades the same token within the grace): the session lives on
    await expire_access_token(page)
    await asyncio.gather(page.reload(), other.reload())
    for tab in (page, other):
        await expect(tab.get_by_role("heading", name="Welcome, bea")).to_be_visible()
        await tab.wait_for_function(
            f"() => JSON.parse(localStorage.getItem('{KEY}')).expires_at > 0"
        )
    renewed = await stored(page)
    assert renewed["refresh_token"] != first["refresh_token"]
    for tab in (page, other):
        await expect(tab).to_have_url(re.compile(r"#/lobby$"))
    status, body = await refresh_answer(page, renewed["refresh_token"])
    assert status == 200, body  # the session survived the race

    # the probe above traded the stored token: once the grace is over, the tabs' next renewal
    # is refused as reused (a thief's copy), and a tab whose session ended goes to the login
    # page (both, through the storage event)
    await asyncio.sleep(GRACE + 1)
    await expire_access_token(page)
    await page.reload()
    for tab in (page, other):
        await expect(tab).to_have_url(re.compile(r"#/login$"))
    status, body = await refresh_answer(page, body["refresh_token"])
    assert (status, body["code"]) == (401, "refresh_invalid")  # reuse revoked the session
