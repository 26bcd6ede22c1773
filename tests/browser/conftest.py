"""Fixtures of the browser tests: one Chromium per session, a fresh platform per test.

- `browser`  session: Playwright's Chromium from the system (`stack.find_chromium`).
- `start`    starts the services and gateway as processes in this test's database and NATS
             prefix: `stack = await start(**env)`; a test marked `shared_platform` gets the
             session's platform instead (`await start()`, see tests/shared.py).
- `new_page` opens a page on a stack in a fresh browser context (one person each),
             failing the test on any uncaught script error in it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from playwright.async_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    async_playwright,
    expect,
)

from tests.browser.stack import CHROMIUM_ARGS, NoBrowser, Stack, find_chromium, start_stack
from tests.infra import Processes

PACE_MS = "30"  # the client's pause after each card the others play (people get 350 ms)

# How long an `expect` waits for its condition (Playwright's default is 5 s). Only a failing
# test waits it out; a fresh clone at load 20 once missed a card that was on its way.
expect.set_options(timeout=20_000)

NewPage = Callable[..., Awaitable[Page]]


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    """Chromium from the system, headless; the tests fail when there is none."""
    try:
        path = find_chromium()
    except NoBrowser as exc:
        pytest.fail(str(exc), pytrace=False)
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=path, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


StartStack = Callable[..., Awaitable[Stack]]


@pytest.fixture
async def start(processes: Processes, request: pytest.FixtureRequest) -> AsyncIterator[StartStack]:
    """Start the whole platform (`await start(SPADES_TURN_SECONDS="2")`); logs shown on failure."""
    started: list[Stack] = []

    async def run(**env: str) -> Stack:
        if processes.shared is not None:  # a `shared_platform` test: the session's platform
            processes.shared.check_settings(env)  # of the marker's settings, which are `env`
            stack: Stack = await processes.shared.stack()
        else:
            stack = await start_stack(processes, **env)
        started.append(stack)
        return stack

    yield run
    rep = getattr(request.node, "rep_call", None)
    if rep is None or rep.failed:
        for stack in started:
            print(stack.logs())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture
async def new_page(browser: Browser) -> AsyncIterator[NewPage]:
    """Open pages, each in a browser context of its own; fail on uncaught script errors."""
    contexts: list[BrowserContext] = []
    errors: list[str] = []

    async def open_page(stack: Stack, *, width: int = 1280, height: int = 900) -> Page:
        context = await browser.new_context(
            viewport={"width": width, "height": height}, base_url=stack.url
        )
        await context.add_init_script(
            f"try {{ localStorage.setItem('spades.pace', '{PACE_MS}') }} catch {{}}"
        )
        contexts.append(context)
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))

        def refused(message: ConsoleMessage) -> None:  # the page's CSP blocked something
            if "Content Security Policy" in message.text:
                errors.append(f"{page.url}: {message.text}")

        page.on("console", refused)
        page.set_default_timeout(30_000)
        return page

    yield open_page
    for context in contexts:
        await context.close()
    assert not errors, f"uncaught script errors or CSP refusals in the client: {errors}"
