"""The real platform for browser tests: every service as a process, and the Chromium to drive.

The browser is Debian's `chromium` (or `$SPADES_CHROMIUM`), driven by Playwright through
`executable_path`: Playwright never downloads a browser here. Without one the tests fail
saying what to install; they never skip.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from services.tools.devstack import ready
from tests.gateway.conftest import GATEWAY_ENV
from tests.infra import REPO, Processes, logged

SERVICES = ("relay", "table", "matchmaking", "rating", "bots")
SCREENSHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NO_BROWSER = (
    "no Chromium to drive: install Debian's package (`apt-get install -y chromium`; "
    "`make test` does it when run as root) or set SPADES_CHROMIUM to a Chromium binary"
)


class NoBrowser(RuntimeError):
    """No Chromium binary was found."""


def find_chromium(
    environ: Mapping[str, str] | None = None, fallback: str = "/usr/bin/chromium"
) -> str:
    """Return the Chromium binary to drive: $SPADES_CHROMIUM, else `chromium` on the PATH.

    Raise NoBrowser (saying what to install) when there is none: a browser test must fail,
    never skip, on a machine without a browser.
    """
    env = os.environ if environ is None else environ
    wanted = env.get("SPADES_CHROMIUM", "")
    if wanted:
        if os.path.isfile(wanted) and os.access(wanted, os.X_OK):
            return wanted
        raise NoBrowser(f"SPADES_CHROMIUM={wanted!r} is not an executable file; {NO_BROWSER}")
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name, path=env.get("PATH"))
        if found:
            return found
    if os.path.isfile(fallback) and os.access(fallback, os.X_OK):
        return fallback
    raise NoBrowser(NO_BROWSER)


@dataclass
class Stack:
    """A running platform: the services' processes and the gateway's URL."""

    procs: dict[str, subprocess.Popen[bytes]]
    url: str
    processes: Processes

    def logs(self) -> str:
        """Return the tail of every service's log (shown when a test fails)."""
        return "\n".join(
            f"--- {name}\n{self.processes.log(proc)[-4000:]}" for name, proc in self.procs.items()
        )


async def start_stack(processes: Processes, **env: str) -> Stack:
    """Start relay, table, matchmaking, rating, bots and the gateway; return once all are ready."""
    procs = {}
    for name in (*SERVICES, "gateway"):
        procs[name] = processes.start(
            "-m",
            "services.tools.cli",
            "serve",
            name,
            # every browser runs on this one machine: fair-play linking off (0 days)
            env={**GATEWAY_ENV, "SPADES_FAIRPLAY_DAYS": "0", **env},
        )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 180
    pending = dict(procs)
    http_port = 0
    while pending:
        for name, proc in list(pending.items()):
            text = processes.log(proc)
            if proc.poll() is not None:
                raise AssertionError(f"{name} exited:\n{text[-4000:]}")
            ops_port = logged(text, "ops_port")
            if name == "gateway":
                http_port = logged(text, "http_port") or 0
                if not http_port:
                    continue
            if ops_port and await asyncio.to_thread(ready, ops_port):
                del pending[name]
        if loop.time() > deadline:
            raise AssertionError(f"not ready after 180 s: {', '.join(pending)}")
        await asyncio.sleep(0.1)
    return Stack(procs, f"http://127.0.0.1:{http_port}", processes)


def screenshot_path(name: str) -> Path:
    """Return where the screenshot `name` goes (artifacts/screenshots/, made if missing)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{name}.png"
