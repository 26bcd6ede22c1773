"""`spades dev` (what `make dev` runs) on a machine of its own: it starts the embedded servers,
every service, prints the address of the browser client, and a person can play a whole game
against bots there; a service that dies is reported and restarted. Beside a running instance
or on a taken port it refuses at once. Run as real processes with their own SPADES_HOME and
ports."""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

from services.tools.devstack import _bindable, _claim_home, listens_on
from services.tools.infra import free_port
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


def _dev_env(home: Path, base: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPADES_")}
    return env | {
        "SPADES_HOME": str(home),
        "SPADES_HTTP_PORT": str(base),
        "SPADES_DEV_OPS_PORT": str(base + 1),
        "PYTHONUNBUFFERED": "1",
    }


def _refused(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.tools.cli", "dev", "--no-demo"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_second_spades_dev_on_the_same_home_refuses_and_starts_nothing(tmp_path: Path) -> None:
    home = tmp_path / "spades"
    held = _claim_home(home)  # what the first, running instance holds
    try:
        done = _refused(_dev_env(home, _free_ports(7)))
    finally:
        held.close()  # type: ignore[attr-defined]
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "already runs" in lines[0]
    assert str(os.getpid()) in lines[0]
    assert "SPADES_HOME" in lines[0]
    assert "SPADES_HTTP_PORT" in lines[0]
    assert "SPADES_DEV_OPS_PORT" in lines[0]
    assert "ready" not in done.stdout
    assert "play in the browser" not in done.stdout
    assert not (home / "logs").exists()
    assert not (home / "infra.env").exists()


def test_spades_dev_refuses_a_taken_port_naming_it_and_the_variables(tmp_path: Path) -> None:
    base = _free_ports(7)
    for taken, variable in ((base, "SPADES_HTTP_PORT"), (base + 3, "SPADES_DEV_OPS_PORT")):
        home = tmp_path / f"spades-{taken}"
        with socket.socket() as squatter:
            squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            squatter.bind(("0.0.0.0", taken))
            squatter.listen()
            done = _refused(_dev_env(home, base))
        assert done.returncode == 2, done.stdout + done.stderr
        line = done.stderr.strip()
        assert "\n" not in line, line
        assert f"port {taken}" in line
        assert "already in use" in line
        assert variable in line
        assert "SPADES_HTTP_PORT" in line
        assert "SPADES_DEV_OPS_PORT" in line
        assert "play in the browser" not in done.stdout
        assert not (home / "logs").exists()


def test_readiness_counts_only_a_socket_the_process_itself_listens_on() -> None:
    with socket.socket() as mine:
        mine.bind(("127.0.0.1", 0))
        mine.listen()
        port = mine.getsockname()[1]
        assert listens_on(os.getpid(), port)
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            assert not listens_on(other.pid, port)  # alive, but the port is not its own
        finally:
            other.kill()
            other.wait()
    assert not listens_on(os.getpid(), port)  # closed


async def test_spades_dev_prints_an_address_where_a_whole_game_is_played_against_bots(
    tmp_path: Path,
) -> None:
    base = _free_ports(7)  # the gateway's HTTP port, then the services' six ops ports
    http_port = base
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPADES_")}
    env |= {
        # short: PostgreSQL's socket path (home + postgres/data/.s.PGSQL.N) must stay under 108
        # bytes, and an xdist worker's tmp_path is long
        "SPADES_HOME": tempfile.mkdtemp(prefix="spd-"),
        "SPADES_HTTP_PORT": str(http_port),
        "SPADES_DEV_OPS_PORT": str(base + 1),
        "PYTHONUNBUFFERED": "1",
    }
    out = tmp_path / "dev.out"
    with out.open("wb") as sink:
        dev = subprocess.Popen(  # noqa: ASYNC220 - started once, not awaited
            [sys.executable, "-m", "services.tools.cli", "dev"],
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
        assert len(services) == 6  # relay, table, matchmaking, rating, gateway, bots

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

        # a service that dies is said on the console at once, restarted, and ready again
        rating = next(s for s in services if "rating" in s.cmdline())
        rating.kill()
        rating.wait(10)
        said = re.compile(r"rating exited with code -9 \(crash 1 in a row\); restarting in 1s")
        again = re.compile(r"rating +ready again +http://127\.0\.0\.1:\d+/metrics")
        while not (said.search(out.read_text()) and again.search(out.read_text())):
            assert dev.poll() is None, out.read_text()
            assert time.monotonic() < deadline + 420, out.read_text()
            await asyncio.sleep(0.3)
        assert "rating restarting (attempt 1)" in out.read_text()
        services = [
            c for c in psutil.Process(dev.pid).children(recursive=True) if "serve" in c.cmdline()
        ]
        assert len(services) == 6
        assert rating.pid not in {c.pid for c in services}
    finally:
        dev.send_signal(signal.SIGTERM)
        try:
            dev.wait(30)
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
    # SIGTERM stopped every service it started (the servers stop with `infra down`)
    gone, alive = psutil.wait_procs(services, timeout=30)
    assert not alive, [c.pid for c in alive]
    assert len(gone) == 6


def _wait_for(out: Path, text: str, proc: subprocess.Popen[bytes], timeout: float) -> str:
    """Wait until the console shows ``text``; return the console."""
    deadline = time.monotonic() + timeout
    while text not in (seen := out.read_text(errors="replace")):
        assert proc.poll() is None, seen
        assert time.monotonic() < deadline, seen
        time.sleep(0.2)
    return seen


def test_ctrl_c_stops_make_dev_silently_and_it_starts_again_at_once_on_the_same_ports(
    tmp_path: Path,
) -> None:
    """Ctrl-C in the terminal (SIGINT to make, uv and spades dev: the whole foreground process
    group) stops every service without a traceback or make's `Error 130`; a new `make dev`
    on the same ports starts at once, though the stopped servers' connections are in
    TIME_WAIT."""
    base = _free_ports(7)
    env = _dev_env(Path(tempfile.mkdtemp(prefix="spd-")), base)
    ports = [base, *range(base + 1, base + 7)]
    try:
        for run in (1, 2):
            out = tmp_path / f"dev-{run}.out"
            with out.open("wb") as sink:
                dev = subprocess.Popen(
                    ["make", "--no-print-directory", "dev"],
                    cwd=REPO,
                    env=env,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # its own group, as a terminal's foreground job
                )
            try:
                _wait_for(out, "play in the browser: http", dev, 240)
                services = [
                    c
                    for c in psutil.Process(dev.pid).children(recursive=True)
                    if "serve" in c.cmdline()
                ]
                assert len(services) == 6
                # connections the servers close when they stop: left in TIME_WAIT on their ports
                held = [httpx.Client(base_url=f"http://127.0.0.1:{port}") for port in ports]
                for port, client in zip(ports, held, strict=True):
                    path = "/api/ladders" if port == base else "/livez"
                    assert client.get(path).status_code == 200
                os.killpg(dev.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
                _wait_for(out, "stopped", dev, 60)
                dev.wait(60)
                for client in held:
                    client.close()
            finally:
                if dev.poll() is None:
                    os.killpg(dev.pid, signal.SIGKILL)
                    dev.wait()
            console = out.read_text(errors="replace")
            for noise in ("Traceback", "KeyboardInterrupt", "Error 130", "***", "exited with"):
                assert noise not in console, console
            assert "stopping the services" in console, console
            # make dies of the SIGINT it got, as it must; what it ran stopped cleanly
            # (make says "*** ... Error N" when spades dev exits with N != 0: it exited 0)
            assert dev.returncode in (0, -signal.SIGINT), console
            _, alive = psutil.wait_procs(services, timeout=30)
            assert not alive, [c.pid for c in alive]
        assert "already in use" not in console
    finally:
        subprocess.run(
            [sys.executable, "-m", "services.tools.cli", "infra", "down"],
            cwd=REPO,
            env=env,
            check=False,
            capture_output=True,
        )
        shutil.rmtree(env["SPADES_HOME"], ignore_errors=True)


def test_a_port_whose_last_connections_are_in_time_wait_is_free_to_listen_on() -> None:
    """A stopped server that closed its connections first leaves them in TIME_WAIT on its
    port for a minute; a new server (SO_REUSEADDR) can listen there, so the check says so."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("0.0.0.0", 0))
        listener.listen()
        port = listener.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        accepted.close()  # the server closes first: its side goes to TIME_WAIT
        client.recv(1)
        client.close()
        assert not _bindable(port)  # still listening
    assert _bindable(port)
