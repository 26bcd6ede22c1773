"""The ranked queue explains itself: how many wait, the rating window, and when fair-play
separation (accounts seen at one address never share a ranked table) is what holds a match
back. On `spades dev` (what `make dev` runs) that separation is off by default, so four
accounts in four browser contexts of one machine meet in a ranked game."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.async_api import expect

from tests.browser.conftest import NewPage, StartStack
from tests.browser.stack import Stack
from tests.browser.test_practice import sign_up
from tests.infra import REPO, Processes
from tests.services.test_devstack import _dev_env, _free_ports, _wait_for

TABLE = re.compile(r"#/table/([0-9a-f-]{36})$")


async def test_the_lobby_says_when_fair_play_holds_a_match_back(
    start: StartStack, new_page: NewPage
) -> None:
    stack = await start(SPADES_FAIRPLAY_DAYS="7")  # production's separation, one machine
    ann, bob = await new_page(stack), await new_page(stack)
    await sign_up(ann, "ann")
    await sign_up(bob, "bob")
    await ann.get_by_test_id("join-standard").click()
    await bob.get_by_test_id("join-standard").click()
    status = ann.get_by_test_id("queue-status")
    await expect(status.get_by_test_id("queue-waiting")).to_have_text(
        "2 waiting (you and 1 other); a table needs 4."
    )
    await expect(status).to_contain_text(re.compile(r"Rating window ±\d+ —"))
    hold = status.get_by_test_id("fairplay-hold")
    await expect(hold).to_contain_text("Fair play is holding your match back")
    await expect(hold).to_contain_text("1 of the 1 other waiting was seen at your address")
    await expect(hold).to_contain_text("in the last 7 days")


async def test_four_accounts_of_one_machine_meet_in_a_ranked_game_on_spades_dev(
    processes: Processes, new_page: NewPage, tmp_path: Path
) -> None:
    base = _free_ports(6)
    env = _dev_env(Path(tempfile.mkdtemp(prefix="spd-")), base)
    out = tmp_path / "dev.out"
    with out.open("wb") as sink:
        dev = subprocess.Popen(  # noqa: ASYNC220 - started once, not awaited
            [sys.executable, "-m", "services.tools.cli", "dev", "--no-demo"],
            cwd=REPO,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        console = await asyncio.to_thread(_wait_for, out, "play in the browser: http", dev, 240)
        assert "fair play: off on this dev stack (SPADES_FAIRPLAY_DAYS=0)" in console
        stack = Stack({}, f"http://127.0.0.1:{base}", processes)
        names = ("ann", "bob", "cyd", "dee")
        pages = [await new_page(stack) for _ in names]
        for page, name in zip(pages, names, strict=True):
            await sign_up(page, name)
        for page in pages[:3]:
            await page.get_by_test_id("join-standard").click()
        status = pages[0].get_by_test_id("queue-status")
        await expect(status.get_by_test_id("fairplay-off")).to_contain_text(
            "Fair-play separation is off on this server"
        )
        await expect(status.get_by_test_id("fairplay-hold")).to_have_count(0)
        await pages[3].get_by_test_id("join-standard").click()
        for page in pages:
            await expect(page).to_have_url(TABLE, timeout=60_000)
        games = {page.url.rsplit("/", 1)[1] for page in pages}
        assert len(games) == 1, games
        for page in pages:
            await expect(page.locator(".table-head")).to_contain_text("Ranked · standard")
    finally:
        if dev.poll() is None:
            os.killpg(dev.pid, signal.SIGINT)
            try:
                dev.wait(60)
            finally:
                if dev.poll() is None:
                    os.killpg(dev.pid, signal.SIGKILL)
        subprocess.run(  # noqa: ASYNC221 - teardown, nothing else runs on the loop
            [sys.executable, "-m", "services.tools.cli", "infra", "down"],
            cwd=REPO,
            env=env,
            check=False,
            capture_output=True,
        )
        shutil.rmtree(env["SPADES_HOME"], ignore_errors=True)
