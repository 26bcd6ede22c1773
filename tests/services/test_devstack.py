"""`spades dev` (what `make dev` runs) on a machine of its own: it starts the embedded servers,
every service, prints the address of the browser client, and a person can play a whole game
against bots there. Run as a real process with its own SPADES_HOME and ports."""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

from services.infra import free_port
from tests.gateway.conftest import register_and_login
from tests.gateway.wsclient import WsClient
from tests.infra import REPO


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (what bind(0) and connect() draw from)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _free_ports(count: int) -> int:
    """A first port with the next ``count - 1`` free too, below the ephemeral range.

    `spades dev` binds these only after it has opened dozens of connections (pools, probes);
    a port inside the ephemeral range could be handed to one of them as its local port
    meanwhile, and the bind would fail. Below that range the kernel hands out none.
    """
    low = _ephemeral_low()
    if low - count > 10_000:
        rng = random.Random()
        for _ in range(200):
            base = rng.randrange(10_000, low - count)
            if all(_free(base + i) for i in range(count)):
                return base
    for _ in range(50):  # no room below the range: a free run inside it
        base = free_port()
        if base < 65000 and all(_free(base + i) for i in range(count)):
            return base
    raise AssertionError(f"no {count} free ports in a row")


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


async def test_spades_dev_prints_an_address_where_a_whole_game_is_played_against_bots(
    tmp_path: Path,
) -> None:
    base = _free_ports(6)  # the gateway's HTTP port, then the services' five ops ports
    http_port = base
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPADES_")}
    env |= {
        "SPADES_HOME": str(tmp_path / "spades"),
        "SPADES_HTTP_PORT": str(http_port),
        "SPADES_DEV_OPS_PORT": str(base + 1),
        "PYTHONUNBUFFERED": "1",
    }
    out = tmp_path / "dev.out"
    with out.open("wb") as sink:
        dev = subprocess.Popen(  # noqa: ASYNC220 - started once, not awaited
            [sys.executable, "-m", "services.cli", "dev"],
            cwd=REPO,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    services: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 180
        url = None
        while url is None:
            assert dev.poll() is None, out.read_text()
            assert time.monotonic() < deadline, out.read_text()
            found = re.search(r"play in the browser: (http://\S+)", out.read_text())
            url = found.group(1) if found else None
            await asyncio.sleep(0.3)
        assert url == f"http://127.0.0.1:{http_port}/"
        services = [
            c for c in psutil.Process(dev.pid).children(recursive=True) if "serve" in c.cmdline()
        ]
        assert len(services) == 5  # relay, table, matchmaking, rating, gateway

        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            page = await http.get("/")
            assert page.status_code == 200
            assert "text/html" in page.headers["content-type"]
            assert "script-src 'self'" in page.headers["content-security-policy"]
            script = re.search(r'src="(/static/[^"]+\.js)"', page.text)
            assert script, page.text
            assert (await http.get(script.group(1))).status_code == 200
            token = await register_and_login(http, "visitor")
            opened = await http.post(
                "/api/practice",
                json={"rules": {"target": 150}},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert opened.status_code == 201, opened.text
            game_id = opened.json()["game_id"]
            client = WsClient(f"ws://127.0.0.1:{http_port}/ws", token)
            await client.connect()
            await asyncio.wait_for(client.play(game_id), 300)  # to GameFinished
            await client.close()
            summary = (await http.get(f"/api/games/{game_id}")).json()
        assert summary["finished"] is True
        assert summary["players"][0] == "visitor"
        assert max(summary["scores"]) >= 150 or summary["reason"] != "target"

        # the demo game `make dev` plays to show the services work ends too
        while "game over" not in out.read_text():
            assert dev.poll() is None, out.read_text()
            assert time.monotonic() < deadline + 300, out.read_text()
            await asyncio.sleep(0.5)
    finally:
        dev.send_signal(signal.SIGTERM)
        try:
            dev.wait(30)
        finally:
            if dev.poll() is None:
                os.killpg(dev.pid, signal.SIGKILL)
        subprocess.run(  # noqa: ASYNC221 - teardown, nothing else runs on the loop
            [sys.executable, "-m", "services.cli", "infra", "down"],
            cwd=REPO,
            env=env,
            check=False,
            capture_output=True,
        )
    # SIGTERM stopped every service it started (the servers stop with `infra down`)
    gone, alive = psutil.wait_procs(services, timeout=30)
    assert not alive, [c.pid for c in alive]
    assert len(gone) == 5
