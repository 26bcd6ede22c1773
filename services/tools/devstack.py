"""`spades dev`: the whole platform on this machine, on embedded PostgreSQL and NATS.

Starts (or reuses) the embedded servers, applies the migrations, runs relay, table,
matchmaking, rating and the gateway as one process each (logs under $SPADES_HOME/logs/), waits
until every service's own process answers /readyz, plays one practice game through the real
services so you see it work (`services.tools.demo`), and keeps everything running until
Ctrl-C. `--no-demo` skips the game.

It refuses to start (exit 2, one line saying why) beside another `spades dev` on the same
SPADES_HOME (an flock on $SPADES_HOME/dev.lock) or when the gateway's port or one of the five
ops ports is taken. A service that exits is reported on the console at once and restarted,
after 1, 2, 4, 8, 16, then 30 s when it keeps crashing. Ctrl-C (or SIGTERM) stops every
service and exits 0, without a traceback; the services run in a process group of their own, so
only `spades dev` hears the terminal's Ctrl-C and stops them. It may start again at once on the
same ports: the port check binds with SO_REUSEADDR, as the servers do, so the stopped
servers' connections left in TIME_WAIT do not count as a port in use.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from events.settings import spades_home
from services.runtime.config import Settings
from services.tools.demo import play_demo, spades_command
from services.tools.infra import run as infra_run

SERVICES = ("relay", "table", "matchmaking", "rating", "gateway", "bots")
OPS_PORT_ENV = "SPADES_DEV_OPS_PORT"
DEFAULT_FIRST_OPS_PORT = 9101
"""The services' ops ports are SPADES_DEV_OPS_PORT (9101) and the next five, in SERVICES order."""

DEV_FAIRPLAY_DAYS = "0"
"""`spades dev`'s default SPADES_FAIRPLAY_DAYS: linking off, as every tab of the one machine
shares 127.0.0.1 (production keeps 7 days; SPADES_FAIRPLAY_DAYS set by hand wins)."""

RESTART_DELAYS = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""Seconds before restarting a service that exited: longer after each crash in a row."""
STABLE_SECONDS = 60.0
"""A service that ran this long before exiting starts again from the first delay."""


class _Stop(KeyboardInterrupt):
    """Ctrl-C or SIGTERM: stop every service and exit 0 (not an error, no traceback).

    A KeyboardInterrupt, not a bare BaseException: the signal can land anywhere, inside
    asyncio's socket write too, and asyncio passes only KeyboardInterrupt and SystemExit on
    (anything else it reports as a "Fatal write error" with a traceback and goes on).
    """


def _stop_on_signal(signum: int, frame: object) -> None:
    # the first signal stops; more Ctrl-Cs while the services stop change nothing
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Stop


class Refused(SystemExit):
    """`spades dev` cannot start here; the message says why and what to change (exit code 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = 2


def first_ops_port(environ: dict[str, str] | None = None) -> int:
    """Return the first of the six ops ports (SPADES_DEV_OPS_PORT, default 9101)."""
    raw = (os.environ if environ is None else environ).get(OPS_PORT_ENV, "").strip()
    return int(raw) if raw else DEFAULT_FIRST_OPS_PORT


def _bindable(port: int, host: str = "0.0.0.0") -> bool:
    """Return whether a server could listen on the port now. SO_REUSEADDR, as the servers set
    it: a stopped instance's connections in TIME_WAIT do not hold the port, a listener does."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def _claim_home(home: Path) -> object:
    """Hold $SPADES_HOME/dev.lock for the life of this process; refuse if another instance does.

    An flock is released by the kernel when its holder dies, so a crashed `spades dev` never
    leaves a stale lock behind.
    """
    home.mkdir(parents=True, exist_ok=True)
    lock = open(home / "dev.lock", "a+")  # noqa: SIM115 - held until the process exits
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.seek(0)
        holder = lock.read().strip() or "?"
        lock.close()
        raise Refused(
            f"spades dev already runs for {home} (pid {holder}): use that one, stop it with "
            "Ctrl-C, or start another beside it with its own SPADES_HOME, SPADES_HTTP_PORT "
            f"and {OPS_PORT_ENV} (README: 'Running two')"
        ) from None
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    return lock


def check_ports(http_port: int, first_ops: int, http_host: str = "0.0.0.0") -> None:
    """Refuse, in one line, when the gateway's port or one of the six ops ports is taken."""
    wanted = [("SPADES_HTTP_PORT", "gateway HTTP", http_port, http_host)] + [
        (OPS_PORT_ENV, f"{name} ops", first_ops + offset, "0.0.0.0")
        for offset, name in enumerate(SERVICES)
    ]
    for variable, what, port, host in wanted:
        if not _bindable(port, host):
            raise Refused(
                f"port {port} ({what}) is already in use, perhaps by another spades dev: "
                f"choose free ones, e.g. SPADES_HTTP_PORT=8010 {OPS_PORT_ENV}=9111 "
                f"(the ops ports are {OPS_PORT_ENV} and the next five; now {variable} "
                f"gives {port if variable == 'SPADES_HTTP_PORT' else first_ops})"
            )


def _listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on ``port`` (any address), from /proc/net/tcp{,6}."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                found.add(cols[9])
    return found


def listens_on(pid: int, port: int) -> bool:
    """Return whether process ``pid`` itself holds the socket listening on ``port``.

    So a readiness answer on that port is this process's, never another instance's. Where
    /proc can't tell (not Linux), the answer is True and the port check before the start
    stands alone.
    """
    if not Path("/proc/net/tcp").exists():
        return True
    inodes = _listening_inodes(port)
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            link = os.readlink(fd)
            if link.startswith("socket:[") and link[8:-1] in inodes:
                return True
    return False


def ready(port: int) -> bool:
    """Return whether the service whose ops server is on ``port`` answers /readyz with 200."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _log_tail(path: Path, lines: int = 3) -> str:
    """The last ``lines`` lines of a service's log, each JSON record shortened to its message."""
    try:
        text = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    shown = []
    for line in text:
        try:
            record = json.loads(line)
        except ValueError:
            shown.append(line[:200])
            continue
        if isinstance(record, dict):
            extra = record.get("exception") or record.get("error") or ""
            extra = str(extra).strip().splitlines()[-1] if extra else ""
            shown.append(f"{record.get('event', '')} {extra}".strip()[:200])
    return " | ".join(s for s in shown if s)


@dataclass
class Service:
    """One supervised service process: how to start it, and its crash history."""

    name: str
    ops_port: int
    env: dict[str, str]
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    crashes: int = 0
    restart_at: float | None = None
    ready: bool = False

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "services.tools.cli", "serve", self.name],
                env={
                    **self.env,
                    "SPADES_OPS_PORT": str(self.ops_port),
                    "SPADES_LOG_FORMAT": "json",
                },
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                # a process group of its own: the terminal's Ctrl-C reaches `spades dev` alone,
                # which stops the services itself (none is seen to crash and restarted)
                process_group=0,
            )
        self.started = time.monotonic()
        self.restart_at = None
        self.ready = False

    def is_ready(self) -> bool:
        """Ready once its own process (not whoever else holds the port) answers /readyz."""
        if self.proc is None or self.proc.poll() is not None:
            return False
        return listens_on(self.proc.pid, self.ops_port) and ready(self.ops_port)


class Supervisor:
    """Starts the services, reports on the console at once when one exits, restarts it.

    A service that exits is restarted after RESTART_DELAYS[crashes in a row] seconds; each
    exit and each restart is one console line with the exit code and the log's last lines.
    """

    def __init__(self, env: dict[str, str], logs: Path, first_ops: int, out: TextIO) -> None:
        self.out = out
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self.services = [
            Service(name, first_ops + offset, env, logs / f"{name}.log")
            for offset, name in enumerate(SERVICES)
        ]

    def say(self, line: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {line}", file=self.out, flush=True)

    def start(self) -> None:
        for service in self.services:
            service.start()

    def tick(self) -> None:
        """Notice exits, schedule and perform restarts, report readiness; call it often."""
        now = time.monotonic()
        for service in self.services:
            proc = service.proc
            if proc is not None and service.restart_at is None and proc.poll() is not None:
                if now - service.started >= STABLE_SECONDS:
                    service.crashes = 0
                delay = RESTART_DELAYS[min(service.crashes, len(RESTART_DELAYS) - 1)]
                service.crashes += 1
                service.restart_at = now + delay
                tail = _log_tail(service.log_path)
                self.say(
                    f"{service.name} exited with code {proc.returncode} "
                    f"(crash {service.crashes} in a row); restarting in {delay:.0f}s; "
                    f"log {service.log_path}" + (f": {tail}" if tail else "")
                )
            elif service.restart_at is not None and now >= service.restart_at:
                self.say(f"{service.name} restarting (attempt {service.crashes})")
                service.start()
            elif proc is not None and not service.ready and service.is_ready():
                service.ready = True
                was = " again" if service.crashes else ""
                self.say(
                    f"{service.name:12s} ready{was}   http://127.0.0.1:{service.ops_port}/metrics"
                )

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not all(s.ready for s in self.services):
            self.tick()
            if time.monotonic() > deadline:
                late = ", ".join(s.name for s in self.services if not s.ready)
                raise SystemExit(f"not ready after {timeout:.0f}s: {late}; see the logs above")
            time.sleep(0.2)

    def watch(self) -> None:
        """Tick until `stop()`: the console hears of an exit within 0.2 s."""
        while not self._stopping.wait(0.2):
            with self._lock:
                self.tick()

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            self._stop_all()

    def _stop_all(self) -> None:
        for service in self.services:
            if service.proc is not None and service.proc.poll() is None:
                service.proc.send_signal(signal.SIGTERM)
        for service in self.services:
            if service.proc is None:
                continue
            try:
                service.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                service.proc.kill()
                service.proc.wait()


async def _demo_until_signal(settings: Settings) -> bool:
    """Play the demo game until it ends or Ctrl-C/SIGTERM arrives; return whether a signal
    stopped it.

    While the loop runs, a signal cancels the demo's task (which closes its NATS connection in
    good order) instead of raising wherever Python happens to be, asyncio's own socket writes
    included.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    signalled = False

    def stop() -> None:
        nonlocal signalled
        signalled = True
        task.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop)
    try:
        await play_demo(settings)
    except asyncio.CancelledError:
        if not signalled:
            raise
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        # remove_signal_handler leaves the default handler: ours again, unless we are stopping
        handler = signal.SIG_IGN if signalled else _stop_on_signal
        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)
    return signalled


def run(args: argparse.Namespace) -> int:
    """Run the platform until Ctrl-C or SIGTERM; return the exit code (0 after a clean stop,
    2: refused to start)."""
    home = spades_home()
    settings = Settings.from_env()
    first_ops = first_ops_port()
    try:
        lock = _claim_home(home)
        check_ports(settings.http_port, first_ops, os.environ.get("SPADES_HTTP_HOST", "0.0.0.0"))
    except Refused as refused:
        print(f"spades dev: {refused}", file=sys.stderr)
        return 2
    # Ctrl-C and SIGTERM (a supervisor, `timeout`) both stop the services, then exit 0
    signal.signal(signal.SIGINT, _stop_on_signal)
    signal.signal(signal.SIGTERM, _stop_on_signal)
    supervisor: Supervisor | None = None
    try:
        print("starting embedded PostgreSQL and NATS ...")
        infra_run(argparse.Namespace(action="up"))
        settings = Settings.from_env()
        env = {
            "SPADES_GATEWAY_DEV": "1",  # a throwaway signing key unless SPADES_JWT_SECRET is set
            # every account of a dev stack plays from this one machine (127.0.0.1): fair-play
            # separation by address would never seat them together; set it to try it out
            "SPADES_FAIRPLAY_DAYS": DEV_FAIRPLAY_DAYS,
            **os.environ,
            "SPADES_DATABASE_URL": settings.database_url,
            "SPADES_NATS_URL": settings.nats_url,
        }
        subprocess.run([sys.executable, "-m", "services.tools.cli", "migrate"], env=env, check=True)
        if env["SPADES_FAIRPLAY_DAYS"] == DEV_FAIRPLAY_DAYS:
            print(
                "fair play: off on this dev stack (SPADES_FAIRPLAY_DAYS=0), so accounts in"
                " several tabs of this machine can meet in a ranked game"
            )
        supervisor = Supervisor(env, home / "logs", first_ops, sys.stdout)
        supervisor.start()
        supervisor.wait_ready()
        url = f"http://127.0.0.1:{settings.http_port}/"
        print(f"\nplay in the browser: {url}  (sign up, then 'Shuffle and play')")
        print(
            f"API: {url}api (OpenAPI at {url}schema), WebSocket: ws://127.0.0.1:{settings.http_port}/ws"
        )
        watching = threading.Thread(target=supervisor.watch, name="supervisor", daemon=True)
        watching.start()
        if not getattr(args, "no_demo", False):
            try:
                if asyncio.run(_demo_until_signal(settings)):
                    raise _Stop
            except Exception as error:
                print(f"the demo game stopped: {error!r}; the platform keeps running")
        print(f"\nthe platform is running at {url}; Ctrl-C stops it")
        print(f"(`{spades_command('infra down')}` then stops PostgreSQL and NATS)")
        while watching.is_alive():
            watching.join(0.5)
    except KeyboardInterrupt:  # _Stop, or a Ctrl-C in the instant the demo hands signals back
        print("\nstopping the services ...", flush=True)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if supervisor is not None:
            supervisor.stop()
        del lock
    print(
        f"stopped; PostgreSQL and NATS keep running (`{spades_command('infra down')}` stops them)"
    )
    return 0
