"""Gateway bench: the whole stack, browser protocol → gateway → table → store → JetStream →
gateway → four seats, measured the way issue #12 states its targets.

Every seat is a WebSocket client of a real `spades serve gateway` process (relay and table are
real processes too): it subscribes to its game and, on `your_turn`, sends a legal command
(`tests.moves`). Three phases, each on freshly started services with a database and NATS prefix
of its own:

1. **idle** (first, while NATS is fresh): SPADES_BENCH_IDLE_TABLES (500) casual tables opened,
   their four seats connected and subscribed, nobody acting; over SPADES_BENCH_IDLE_SECONDS
   (30: longer than uvicorn's 20 s keepalive ping) each process's CPU seconds per second, and
   NATS's resident memory (VmRSS) before the tables opened and at the end of the window.
2. **full stack**, per SPADES_BENCH_TABLES (10,100,200) tables of four seats, over
   SPADES_BENCH_SECONDS (15) counted from when every seat has its view: card plays per second
   that reached all four seats; p50/p99 from a seat sending PlayCard to the last of the four
   receiving the CardPlayed; each process's CPU per play (utime + stime from /proc, before and
   after the window, divided by the plays). Games play to 1000 without a mercy floor so few end
   inside a window; one that does is followed by a new game at the same seats.
3. **raw baseline**, in this process: rules check (`engine.decide`) → PostgreSQL append → awaited
   JetStream publish → the event's bytes sent to four WebSocket connections (a plain
   `websockets` server here, no redaction, no gateway) and received by four clients, one table
   loop per table (SPADES_BENCH_RAW_TABLES, 100). The full stack is printed as a ratio of it.

With both full-stack levels and the raw flow: the **stack's CPU per play** (gateway, table,
relay, PostgreSQL and its backends, NATS) as a multiple of the raw flow's
(``stack_to_raw_cpu``: issue #32 asks at most 2), and, unless SPADES_BENCH_BARE_RELAY=0, the
**bare relay** of `benchmarks.wsrelay` run for the services' own variant in the same run: the
gateway's CPU per play as a multiple of the bare relay's CPU per relayed message
(``gateway_to_bare_relay_cpu``: issue #32 asks at most 2.5). PostgreSQL and NATS are counted
only where the bench started them (embedded; not with SPADES_DATABASE_URL/SPADES_NATS_URL).

Then, unless SPADES_BENCH_COMPARE is empty, **fast parts**: the 100-table level again for each
named variant of the services' event loop and uvicorn's WebSocket/HTTP implementations
(`VARIANTS`), back to back, SPADES_BENCH_ROUNDS (1) times interleaved, so each change is a ratio
measured on the same machine minutes apart. Default: main before the fast parts
(asyncio_websockets) against today's defaults (uvloop_sansio); `wsrelay` compares every
variant of the bare server.

Figures go to the printout and to `artifacts/bench.json` (`benchmarks.artifact`):
``full_stack.tables_N.*``, ``full_stack.raw_baseline_plays_per_s``, ``idle.tables_N.*``,
``fast_parts.<variant>.*``. The services run with the environment's SPADES_EVENT_LOOP /
SPADES_GATEWAY_WS / SPADES_GATEWAY_HTTP, i.e. their defaults, for phases 1-3.

SPADES_BENCH_PYSPY=DIR also records each service with py-spy (on PATH, or SPADES_PYSPY) during
each full-stack level, as collapsed stacks in DIR (`<service>-<tables>.txt`).

Run: `uv run --frozen python -m benchmarks gateway`; e.g. SPADES_BENCH_TABLES=100
SPADES_BENCH_IDLE_TABLES=0 SPADES_BENCH_COMPARE= for one level alone (0 skips a phase).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import random
import shutil
import statistics
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import msgspec
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import serve as ws_serve

import engine
from benchmarks import artifact
from benchmarks.e2e import REPO, pct, servers
from events.bus import close_nats, connect, ensure_streams
from events.contracts import game as wire
from events.envelope import REGISTRY, Metadata
from events.migrations import migrate
from events.pgstore import PostgresEventStore, create_pool
from events.subjects import Subjects
from services.gateway.auth import Tokens
from services.gateway.config import DEFAULT_WS
from services.runtime import loop
from tests.moves import choose_json


def _ints(name: str, default: str) -> tuple[int, ...]:
    return tuple(int(n) for n in os.environ.get(name, default).split(",") if n.strip())


WINDOW = float(os.environ.get("SPADES_BENCH_SECONDS", "15"))
TABLES = _ints("SPADES_BENCH_TABLES", "10,100,200")
IDLE_TABLES = int(os.environ.get("SPADES_BENCH_IDLE_TABLES", "500"))
IDLE_WINDOW = float(os.environ.get("SPADES_BENCH_IDLE_SECONDS", "30"))
RAW_TABLES = int(os.environ.get("SPADES_BENCH_RAW_TABLES", "100"))
COMPARE_TABLES = int(os.environ.get("SPADES_BENCH_COMPARE_TABLES", "100"))
ROUNDS = int(os.environ.get("SPADES_BENCH_ROUNDS", "1"))
SECRET = "bench-secret-" + "b" * 40
RAW_CEILING = 31_000.0  # inbound messages/s, litestar+uvicorn rooms of four (the issue's figure)
PYSPY_DIR = os.environ.get("SPADES_BENCH_PYSPY", "")
SERVICES = ("gateway", "table", "relay")
LONG_GAME = {"target": 1000, "mercy": 0}  # few games end inside a window
BARE_RELAY = os.environ.get("SPADES_BENCH_BARE_RELAY", "1") == "1"
"""Run the bare relay (`benchmarks.wsrelay`) of the services' variant in the same run."""
WS_BATCH = os.environ.get("SPADES_BENCH_WS_BATCH", "1") == "1"
"""Seats connect with ``/ws?batch=1`` (what the browser does): the messages ready at once
reach a seat in one frame. 0 measures one frame per message (the protocol's default)."""

# name -> (SPADES_EVENT_LOOP of every service, SPADES_GATEWAY_WS, SPADES_GATEWAY_HTTP)
VARIANTS: dict[str, tuple[str, str, str]] = {
    "asyncio_websockets": ("asyncio", "websockets", "h11"),  # main before this branch
    "uvloop_websockets": ("uvloop", "websockets", "httptools"),
    "uvloop_sansio": ("uvloop", "websockets-sansio", "httptools"),
    "uvloop_wsproto": ("uvloop", "wsproto", "httptools"),
    "asyncio_sansio": ("asyncio", "websockets-sansio", "h11"),
}
# by default main before this branch against the services' defaults now (uvloop_sansio);
# benchmarks/wsrelay.py compares every variant of the server alone
COMPARE = tuple(
    name
    for name in os.environ.get("SPADES_BENCH_COMPARE", "asyncio_websockets,uvloop_sansio").split(
        ","
    )
    if name.strip()
)

_json = msgspec.json.Encoder()
_decode = msgspec.json.Decoder()


# -- /proc -------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) a process has used so far; 0 where /proc is not."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int | None) -> float | None:
    """Return a process's resident memory (VmRSS) in MB, None when it cannot be read."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def machine_busy() -> tuple[float, float]:
    """Return (busy, total) CPU time of the whole machine so far (zeros where /proc is not)."""
    try:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return 0.0, 0.0
    idle = values[3] + values[4]  # idle + iowait
    return float(sum(values) - idle), float(sum(values))


class CpuWindow:
    """CPU seconds of named processes and the machine's busy share, over one window."""

    def __init__(self, pids: Mapping[str, int]) -> None:
        self.pids = dict(pids)
        self.start = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        self.busy = machine_busy()
        self.started = time.perf_counter()

    def close(self) -> tuple[float, dict[str, float], float]:
        """Return (elapsed s, CPU seconds per process, machine busy share 0..1)."""
        elapsed = time.perf_counter() - self.started
        used = {name: cpu_seconds(pid) - self.start[name] for name, pid in self.pids.items()}
        busy = machine_busy()
        share = (busy[0] - self.busy[0]) / max(busy[1] - self.busy[1], 1.0)
        return elapsed, used, share


def load1() -> float:
    """Return the one-minute load average (0 where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


# -- the services ------------------------------------------------------------------------------


@dataclass
class Stack:
    """One set of service processes on a database and NATS prefix of their own."""

    procs: dict[str, asyncio.subprocess.Process]
    url: str
    subjects: Subjects
    settings: tuple[str, str, str]
    db_url: str = ""
    nats_pid: int | None = None
    """The NATS server's process when the bench started it (embedded), else None."""

    def pids(self) -> dict[str, int]:
        """Return the services' pids by name, and this process's as ``bench``."""
        return {name: proc.pid for name, proc in self.procs.items()} | {"bench": os.getpid()}


async def fresh_database(admin_url: str, name: str) -> str:
    """Create and migrate database ``name``; return its URL."""
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    db_url = admin_url.rsplit("/", 1)[0] + f"/{name}"
    conn = await asyncpg.connect(db_url)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    return db_url


def service_settings(overrides: Mapping[str, str]) -> tuple[str, str, str]:
    """Return (event loop, WebSocket, HTTP) the services run with, from the environment."""
    env = {**os.environ, **overrides}
    http = env.get("SPADES_GATEWAY_HTTP") or "auto"
    if http == "auto":
        http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return (
        loop.loop_factory(env.get("SPADES_EVENT_LOOP") or "auto")[0],
        env.get("SPADES_GATEWAY_WS") or DEFAULT_WS,
        http,
    )


async def start_stack(
    urls: Mapping[str, str], tag: str, nc: Any, overrides: Mapping[str, str] | None = None
) -> Stack:
    """Start relay, table and gateway on a fresh database and prefix; return once the table
    answers and the gateway listens."""
    overrides = dict(overrides or {})
    name = f"bench_gw_{tag}_{os.getpid()}"
    db_url = await fresh_database(urls["SPADES_DATABASE_URL"], name)
    prefix = f"benchgw{tag}{os.getpid()}"
    subjects = Subjects(prefix)
    env = {
        **os.environ,
        "SPADES_DATABASE_URL": db_url,
        "SPADES_NATS_URL": urls["SPADES_NATS_URL"],
        "SPADES_NATS_PREFIX": prefix,
        "SPADES_OPS_PORT": "0",
        "SPADES_TURN_SECONDS": "3600",  # no timeout bot acts while a bench holds still
        "SPADES_CONTRIBUTION_SECONDS": "0",  # deal at once: the bench's seats contribute nothing
        "SPADES_LOG_LEVEL": "warning",
        "SPADES_JWT_SECRET": SECRET,
        "SPADES_HTTP_HOST": "127.0.0.1",
        # every seat connects from this one address
        "SPADES_WS_PER_ADDRESS": "1000000",
        "SPADES_WS_ANONYMOUS_PER_ADDRESS": "1000000",
        # a bench seat plays as fast as the stack answers (100+ cards a second on one table):
        # the per-connection pace that guards against a person's client is not what it measures
        "SPADES_WS_MESSAGES_PER_SECOND": "1000000",
        **overrides,
    }
    await ensure_streams(nc.jetstream(), subjects)
    procs = {
        service: await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.tools.cli", "serve", service, cwd=REPO, env=env
        )
        for service in ("relay", "table")
    }
    gateway, port = await start_gateway(env)
    procs["gateway"] = gateway
    stack = Stack(
        procs,
        f"ws://127.0.0.1:{port}/ws",
        subjects,
        service_settings(overrides),
        db_url=db_url,
        nats_pid=_nats_pid(urls),
    )
    # the table answers once it has claimed its partitions: open (and keep) one probe table
    await open_table(nc, subjects, ("probe0", "probe1", "probe2", "probe3"), within=120)
    return stack


def _nats_pid(urls: Mapping[str, str]) -> int | None:
    return int(urls["nats_pid"]) if urls.get("nats_pid") else None


async def stop_stack(stack: Stack) -> None:
    """Stop the stack's processes and wait for them; say which one did not exit in time."""
    for proc in stack.procs.values():
        proc.terminate()
    for name, proc in stack.procs.items():
        try:
            await asyncio.wait_for(proc.wait(), 20)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise RuntimeError(f"the {name} process did not exit within 20 s of SIGTERM") from None


async def start_gateway(env: dict[str, str]) -> tuple[asyncio.subprocess.Process, int]:
    """Start the gateway and return it with its HTTP port."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.tools.cli",
        "serve",
        "gateway",
        cwd=REPO,
        env={**env, "SPADES_HTTP_PORT": "0", "SPADES_LOG_LEVEL": "info"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    while True:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        if not line:
            raise SystemExit("the gateway exited")
        try:
            record = _decode.decode(line)
        except msgspec.DecodeError:
            continue
        if isinstance(record, dict) and "http_port" in record:
            asyncio.create_task(_drain(proc.stdout))  # noqa: RUF006 - lives as long as the pipe
            return proc, int(record["http_port"])


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.readline():
        pass


async def open_table(
    nc: Any, subjects: Subjects, players: tuple[str, ...], within: float = 60
) -> str:
    """Open a casual table for ``players``; return its game id (retrying until the table
    service answers, up to ``within`` seconds)."""
    body = wire.OpenCasual(players=players, command_id=uuid.uuid4(), rules=dict(LONG_GAME))
    deadline = time.monotonic() + within
    while True:
        try:
            msg = await nc.request(subjects.table_open(), _json.encode(body), timeout=30)
            break
        except Exception:  # no responder yet, or a timeout while it starts
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    reply = msgspec.json.decode(msg.data, type=wire.TableReply)
    if not reply.ok:
        raise RuntimeError(f"the table refused to open a bench table: {reply}")
    return reply.game_id


async def profile(pids: Mapping[str, int], label: str) -> list[asyncio.subprocess.Process]:
    """Start py-spy on every service for one window (when SPADES_BENCH_PYSPY asks for it)."""
    if not PYSPY_DIR:
        return []
    pyspy = os.environ.get("SPADES_PYSPY") or shutil.which("py-spy")
    if pyspy is None:
        raise SystemExit("SPADES_BENCH_PYSPY needs py-spy on PATH (or SPADES_PYSPY)")
    os.makedirs(PYSPY_DIR, exist_ok=True)
    spies = []
    for name, pid in pids.items():
        if name == "bench":
            continue
        out = os.path.join(PYSPY_DIR, f"{name}-{label}.txt")
        spies.append(
            await asyncio.create_subprocess_exec(
                pyspy,
                *("record", "--pid", str(pid), "--duration", str(int(WINDOW)), "--rate", "200"),
                *("--format", "raw", "--nonblocking", "--output", out),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
        )
    return spies


# -- seats -------------------------------------------------------------------------------------

Key = tuple[str, str, int]
"""(game id, card, how many times that card was played before in the game)."""


@dataclass
class Run:
    """What every seat of one level records."""

    sent: dict[Key, float] = field(default_factory=dict)
    seen: dict[Key, list[float]] = field(default_factory=dict)
    inbound: int = 0
    frames: int = 0
    """WebSocket frames the seats received (with batching, one holds what was ready at once)."""
    viewed: int = 0
    seats: int = 0
    all_viewed: asyncio.Event = field(default_factory=asyncio.Event)
    games_finished: int = 0


async def connect_seat(url: str, player: str) -> ClientConnection:
    """Return a WebSocket of the gateway, authenticated as ``player``; no client pings (a
    browser sends none: the server's keepalive is the one measured)."""
    ws = await ws_connect(
        url + ("?batch=1" if WS_BATCH else ""),
        max_size=2**20,
        ping_interval=None,
        compression=None,
        open_timeout=120,
    )
    token, _ = Tokens(SECRET, 3600).issue(player, False)
    await ws.send(_json.encode({"type": "auth", "token": token}).decode())
    return ws


async def play_seat(ws: ClientConnection, game_id: str, run: Run, act: bool) -> None:
    """Subscribe to ``game_id`` and play (or, with ``act`` false, only read) until it ends."""
    played: dict[str, int] = {}
    await ws.send(_json.encode({"type": "subscribe", "game_id": game_id}).decode())
    run.inbound += 1
    viewed = False
    async for text in ws:
        run.frames += 1
        decoded = _decode.decode(text)
        for body in decoded if isinstance(decoded, list) else (decoded,):
            kind = body.get("type")
            if kind == "view" and body.get("game_id", game_id) == game_id and not viewed:
                viewed = True
                run.viewed += 1
                if run.viewed == run.seats:
                    run.all_viewed.set()
            elif kind == "your_turn" and act and body.get("game_id", game_id) == game_id:
                command = choose_json(body["legal"])
                if command["type"] == "PlayCard":
                    card = command["card"]
                    run.sent[(game_id, card, played.get(card, 0))] = time.perf_counter()
                message = {
                    "type": "command",
                    "game_id": game_id,
                    "command_id": str(uuid.uuid4()),
                    "command": command,
                }
                await ws.send(_json.encode(message).decode())
                run.inbound += 1
            elif kind == "event" and body.get("game_id", game_id) == game_id:
                event = body["event"]
                if event["type"] == "CardPlayed":
                    card = event["card"]
                    key = (game_id, card, played.get(card, 0))
                    played[card] = key[2] + 1
                    run.seen.setdefault(key, []).append(time.perf_counter())
                elif event["type"] == "GameFinished":
                    run.games_finished += 1
                    await ws.send(
                        _json.encode({"type": "unsubscribe", "game_id": game_id}).decode()
                    )
                    return
            elif kind == "error":
                raise RuntimeError(f"the gateway refused a bench message: {body}")


async def table_slot(
    nc: Any, stack: Stack, run: Run, slot: str, act: bool, gate: asyncio.Semaphore
) -> None:
    """Keep one table of four connected seats playing (a finished game gets a successor)."""
    players = tuple(f"{slot}s{s}" for s in range(4))
    sockets: list[ClientConnection] = []
    try:
        async with gate:  # the connection storm in bounded gulps
            for player in players:
                sockets.append(await connect_seat(stack.url, player))
            game_id = await open_table(nc, stack.subjects, players)
        while True:
            await asyncio.gather(*(play_seat(ws, game_id, run, act) for ws in sockets))
            if not act:
                return
            game_id = await open_table(nc, stack.subjects, players)
    finally:
        for ws in sockets:
            with contextlib.suppress(Exception):
                await ws.close()


async def open_tables(
    nc: Any, stack: Stack, tables: int, label: str, act: bool
) -> tuple[Run, list[asyncio.Task[None]], float]:
    """Start ``tables`` table slots (their connections opened a few dozen at a time); return
    once every seat has its view, with the seconds that took."""
    run = Run(seats=4 * tables)
    gate = asyncio.Semaphore(16)
    opening = time.perf_counter()
    tasks = [
        asyncio.create_task(table_slot(nc, stack, run, f"b{label}x{i}", act, gate))
        for i in range(tables)
    ]
    waiter = asyncio.create_task(run.all_viewed.wait())
    done, _ = await asyncio.wait({waiter, *tasks}, timeout=600, return_when="FIRST_COMPLETED")
    while waiter not in done:
        failed = [t for t in done if t is not waiter and t.exception() is not None]
        if failed or not done:
            waiter.cancel()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if failed:
                raise RuntimeError("a bench table failed while opening") from failed[0].exception()
            raise RuntimeError(f"{run.viewed}/{run.seats} seats had their view after 600 s")
        pending = {waiter, *(t for t in tasks if not t.done())}
        done, _ = await asyncio.wait(pending, timeout=600, return_when="FIRST_COMPLETED")
    return run, tasks, time.perf_counter() - opening


async def stop_tasks(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel the seats' tasks (their sockets close) and wait for them."""
    for task in tasks:
        task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [r for r in results if isinstance(r, Exception)]
    if errors:
        raise RuntimeError(f"{len(errors)} bench tables failed") from errors[0]


# -- phase 2: the full stack under load --------------------------------------------------------


async def infra_pids(db_url: str, nats_pid: int | None) -> dict[str, list[int]]:
    """Return the processes of PostgreSQL (server and backends, as they are now) and NATS
    when this bench started them (embedded), by name; none when it was given servers."""
    from benchmarks.scale import family, postgres_pid  # (scale imports this module)

    if nats_pid is None:
        return {}
    found = {"nats": [nats_pid]}
    pg = await postgres_pid(db_url)
    if pg is not None:
        found["postgres"] = family(pg)
    return found


async def load_level(nc: Any, stack: Stack, tables: int, label: str) -> dict[str, Any]:
    """Play ``tables`` tables for the window; return the level's figures."""
    run, tasks, setup = await open_tables(nc, stack, tables, label, act=True)
    pids = stack.pids()
    spies = await profile(pids, label)
    load_start = load1()
    inbound_start, frames_start = run.inbound, run.frames
    servers = await infra_pids(stack.db_url, stack.nats_pid)
    infra = {f"{name}/{pid}": pid for name, group in servers.items() for pid in group}
    window = CpuWindow({**pids, **infra})
    await asyncio.sleep(WINDOW)
    elapsed, used, busy = window.close()
    for name in servers:  # a server's processes, summed
        used[name] = sum(v for k, v in used.items() if k.startswith(f"{name}/"))
        pids[name] = 0
    inbound, frames = run.inbound - inbound_start, run.frames - frames_start
    await stop_tasks(tasks)
    for spy in spies:
        await spy.wait()
    played = [
        (key, times)
        for key, times in run.seen.items()
        if len(times) >= 4 and run.sent.get(key, 0.0) >= window.started
    ]
    plays = len(played)
    latencies = [sorted(times)[3] - run.sent[key] for key, times in played]
    cpu = {name: 1e6 * used[name] / max(plays, 1) for name in pids}
    stack_kinds = (*SERVICES, *servers)
    return {
        "plays_per_s": plays / elapsed,
        "p50_ms_all_four": pct(latencies, 0.50),
        "p99_ms_all_four": pct(latencies, 0.99),
        "cpu_us_per_play": cpu,
        "stack_cpu_us_per_play": sum(cpu[k] for k in stack_kinds),
        "stack_counts": list(stack_kinds),
        "cpu_s_per_s": {name: used[name] / elapsed for name in pids},
        "machine_busy_pct": 100 * busy,
        "inbound_msgs_per_s": inbound / elapsed,
        # what the gateway writes to its sockets per play: 4 when each seat gets one frame
        "ws_frames_per_play": frames / max(plays, 1),
        "setup_s": setup,
        "window_s": elapsed,
        "plays": plays,
        "games_finished": run.games_finished,
        "load_average_start": load_start,
    }


def print_level(tables: int, f: Mapping[str, Any]) -> None:
    """Print one full-stack level's figures."""
    cpu = f["cpu_us_per_play"]
    print(
        f"{tables:4d} tables ({4 * tables} seats, all subscribed in {f['setup_s']:.1f} s): "
        f"{f['plays_per_s']:6.0f} plays/s to all four seats; send -> all four "
        f"p50 {f['p50_ms_all_four']:.1f} ms p99 {f['p99_ms_all_four']:.1f} ms\n"
        f"{'':11}CPU per play: gateway {cpu['gateway']:.0f} µs, table {cpu['table']:.0f} µs, "
        f"relay {cpu['relay']:.0f} µs, "
        + "".join(f"{k} {cpu[k]:.0f} µs, " for k in ("postgres", "nats") if k in cpu)
        + f"stack {f['stack_cpu_us_per_play']:.0f} µs, bench clients {cpu['bench']:.0f} µs; "
        f"{f['ws_frames_per_play']:.2f} WebSocket frames per play to the seats; "
        f"{f['inbound_msgs_per_s']:.0f} inbound msgs/s "
        f"({f['inbound_msgs_per_s'] / RAW_CEILING:.3f} of the {RAW_CEILING:.0f}/s relay); "
        f"cores busy {f['machine_busy_pct']:.0f}% of {os.cpu_count()}; "
        f"load {f['load_average_start']:.2f}",
        flush=True,
    )


# -- phase 1: idle tables ----------------------------------------------------------------------


async def idle_phase(nc: Any, stack: Stack, tables: int, nats_pid: int | None) -> dict[str, Any]:
    """Hold ``tables`` tables with four subscribed seats each, nobody acting; return figures."""
    nats_before = rss_mb(nats_pid)
    gateway_before = rss_mb(stack.procs["gateway"].pid)
    _, tasks, setup = await open_tables(nc, stack, tables, "idle", act=False)
    pids = stack.pids() | ({"nats": nats_pid} if nats_pid else {})
    load_start = load1()
    window = CpuWindow(pids)
    await asyncio.sleep(IDLE_WINDOW)
    elapsed, used, busy = window.close()
    nats_after = rss_mb(nats_pid)
    gateway_after = rss_mb(stack.procs["gateway"].pid)
    await stop_tasks(tasks)
    figures: dict[str, Any] = {
        "gateway_cpu_s_per_s": used["gateway"] / elapsed,
        "cpu_s_per_s": {name: used[name] / elapsed for name in pids},
        "gateway_rss_mb": gateway_after,
        "gateway_rss_mb_before": gateway_before,
        "nats_rss_mb": nats_after,
        "nats_rss_mb_before": nats_before,
        "setup_s": setup,
        "window_s": elapsed,
        "machine_busy_pct": 100 * busy,
        "load_average_start": load_start,
    }
    if nats_after is not None and nats_before is not None:
        figures["nats_kb_per_table"] = 1024 * (nats_after - nats_before) / tables
    if gateway_after is not None and gateway_before is not None:
        figures["gateway_kb_per_table"] = 1024 * (gateway_after - gateway_before) / tables
    return figures


def print_idle(tables: int, f: Mapping[str, Any]) -> None:
    """Print the idle phase's figures."""

    def mb(value: float | None) -> str:
        return "n/a (NATS not started by the bench)" if value is None else f"{value:.1f} MB"

    cpu = ", ".join(f"{name} {share:.4f}" for name, share in f["cpu_s_per_s"].items())
    print(
        f"{tables:4d} idle tables ({4 * tables} seats subscribed in {f['setup_s']:.1f} s), "
        f"{f['window_s']:.0f} s: gateway {f['gateway_cpu_s_per_s']:.4f} CPU-s per s "
        f"(all: {cpu}); NATS RSS {mb(f['nats_rss_mb'])} (before the tables: "
        f"{mb(f['nats_rss_mb_before'])}); gateway RSS {mb(f['gateway_rss_mb'])}; "
        f"load {f['load_average_start']:.2f}",
        flush=True,
    )


# -- phase 3: the raw in-process flow ----------------------------------------------------------


async def raw_baseline(urls: Mapping[str, str], nc: Any, tables: int) -> dict[str, Any]:
    """Return the figures of decide → append → awaited publish → fan-out to four WebSockets
    (received by four clients) in this one process, one loop per table."""
    db_url = await fresh_database(urls["SPADES_DATABASE_URL"], f"bench_raw_{os.getpid()}")
    subjects = Subjects(f"benchraw{os.getpid()}")
    js = nc.jetstream()
    await ensure_streams(js, subjects)
    pool = await create_pool(db_url, min_size=4, max_size=16)
    store = PostgresEventStore(pool)
    servers = await infra_pids(db_url, _nats_pid(urls))
    server_side: dict[tuple[int, int], ServerConnection] = {}
    received = [0] * tables
    wanted = [0] * tables
    arrived = [asyncio.Event() for _ in range(tables)]

    all_connected = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        assert ws.request is not None
        table, seat = (int(part) for part in ws.request.path.strip("/").split("/"))
        server_side[(table, seat)] = ws
        if len(server_side) == 4 * tables:
            all_connected.set()
        await ws.wait_closed()

    async def reader(ws: ClientConnection, table: int) -> None:
        async for _ in ws:
            received[table] += 1
            if received[table] >= wanted[table]:
                arrived[table].set()

    plays = 0
    latencies: list[float] = []
    stop = asyncio.Event()

    async def game_loop(table: int) -> None:
        nonlocal plays
        rng = random.Random(table)
        seats = [server_side[(table, s)] for s in range(4)]
        while not stop.is_set():  # a finished game is followed by a new one at this table
            stream = f"raw-{uuid.uuid4()}"
            state = engine.initial_state()
            version = 0
            rules = engine.Ruleset.from_options(dict(LONG_GAME))
            pending = engine.decide(state, engine.StartGame(rules, seed=rng.randrange(2**32)))
            began = time.perf_counter()
            while not stop.is_set():
                new = [REGISTRY.new_event(wire.to_wire(e), Metadata(actor="raw")) for e in pending]
                stored = await store.append(stream, version, new)
                version += len(stored)
                for s in stored:
                    await js.publish(subjects.event(stream, s.type), _json.encode(s))
                for e in pending:
                    state = engine.apply(state, e)
                wanted[table] += 4 * len(stored)
                arrived[table].clear()
                for s in stored:
                    text = _json.encode(s).decode()
                    for ws in seats:
                        await ws.send(text)
                while received[table] < wanted[table]:
                    await arrived[table].wait()
                    arrived[table].clear()
                if any(isinstance(e, engine.CardPlayed) for e in pending):
                    plays += 1
                    if window_started is not None and began >= window_started:
                        latencies.append(time.perf_counter() - began)
                if state.phase == "over":
                    break
                began = time.perf_counter()
                legal = engine.legal_actions(state, state.turn)
                pending = engine.decide(state, rng.choice(legal))

    window_started: float | None = None
    async with ws_serve(handler, "127.0.0.1", 0, compression=None, ping_interval=None) as server:
        port = server.sockets[0].getsockname()[1]
        clients = []
        for table in range(tables):
            for seat in range(4):
                ws = await ws_connect(
                    f"ws://127.0.0.1:{port}/{table}/{seat}", compression=None, ping_interval=None
                )
                clients.append((ws, asyncio.create_task(reader(ws, table))))
        await asyncio.wait_for(all_connected.wait(), 60)
        loops = [asyncio.create_task(game_loop(t)) for t in range(tables)]
        await asyncio.sleep(1.0)  # past the first appends of every table
        load_start = load1()
        plays_start = plays
        infra = {f"{name}/{pid}": pid for name, group in servers.items() for pid in group}
        window = CpuWindow({"bench": os.getpid(), **infra})
        window_started = window.started
        await asyncio.sleep(WINDOW)
        elapsed, used, busy = window.close()
        counted = plays - plays_start
        stop.set()
        for table in range(tables):
            arrived[table].set()
        await asyncio.gather(*loops)
        for ws, task in clients:
            await ws.close()
            task.cancel()
    await store.aclose()
    await pool.close()
    return {
        "tables": tables,
        "plays_per_s": counted / elapsed,
        "p50_ms_all_four": pct(latencies, 0.50),
        "p99_ms_all_four": pct(latencies, 0.99),
        "cpu_us_per_play": 1e6 * used["bench"] / max(counted, 1),
        # with the PostgreSQL and NATS it used (when the bench started them): "in all"
        "cpu_us_per_play_with_servers": 1e6 * sum(used.values()) / max(counted, 1),
        "servers_counted": sorted(servers),
        "machine_busy_pct": 100 * busy,
        "load_average_start": load_start,
    }


async def bare_relay(figures: dict[str, Any], settings: tuple[str, str, str]) -> None:
    """Run the bare relay (`benchmarks.wsrelay`) of the services' variant and set each
    level's ``gateway_to_bare_relay_cpu``: the gateway's CPU per play over the bare relay's
    CPU per relayed message (one message in, four out: a card play's fan-out)."""
    from benchmarks import wsrelay  # (wsrelay imports this module)

    name = next((n for n, v in VARIANTS.items() if v == settings), None)
    if name is None:
        print(f"  no bare relay variant runs the services' settings {settings}: skipped")
        return
    bare = await wsrelay.measure(name)
    figures["full_stack.bare_relay"] = {"variant": name, **bare}
    print(
        f"bare relay ({name}, {wsrelay.ROOMS} rooms of four): {bare['msgs_per_s']:.0f} msgs/s,"
        f" server {bare['server_cpu_us_per_msg']:.0f} µs CPU per msg",
        flush=True,
    )
    for tables in TABLES:
        level = figures[f"full_stack.tables_{tables}"]
        ratio = level["cpu_us_per_play"]["gateway"] / max(bare["server_cpu_us_per_msg"], 1e-9)
        level["gateway_to_bare_relay_cpu"] = ratio
        print(
            f"  {tables} tables: the gateway's CPU per play is {ratio:.2f}x the bare relay's"
            " per message (goal <= 2.5)"
        )


# -- phase 4: the fast parts, variant by variant -----------------------------------------------


def variant_env(name: str) -> dict[str, str]:
    """Return the services' environment of a named variant."""
    event_loop, ws, http = VARIANTS[name]
    return {"SPADES_EVENT_LOOP": event_loop, "SPADES_GATEWAY_WS": ws, "SPADES_GATEWAY_HTTP": http}


async def compare(urls: Mapping[str, str], nc: Any) -> dict[str, Any]:
    """Run the compare level for every variant, ROUNDS times interleaved; return figures."""
    unknown = [name for name in COMPARE if name not in VARIANTS]
    if unknown:
        raise SystemExit(f"SPADES_BENCH_COMPARE: unknown variant(s) {unknown}: {list(VARIANTS)}")
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in COMPARE}
    for round_ in range(ROUNDS):
        for name in COMPARE:
            stack = await start_stack(urls, f"{name[:12]}{round_}", nc, variant_env(name))
            try:
                f = await load_level(nc, stack, COMPARE_TABLES, f"{name}-{round_}")
            finally:
                await stop_stack(stack)
            runs[name].append(f)
            cpu = f["cpu_us_per_play"]
            print(
                f"  {name:20s} round {round_ + 1}: {f['plays_per_s']:6.0f} plays/s, "
                f"p99 {f['p99_ms_all_four']:6.1f} ms; CPU per play gateway {cpu['gateway']:.0f}"
                f" table {cpu['table']:.0f} relay {cpu['relay']:.0f} µs; "
                f"load {f['load_average_start']:.2f}",
                flush=True,
            )
    out: dict[str, Any] = {"tables": COMPARE_TABLES, "rounds": ROUNDS}
    for name, levels in runs.items():
        out[name] = {
            "settings": dict(zip(("event_loop", "ws", "http"), VARIANTS[name], strict=True)),
            "plays_per_s": statistics.median(f["plays_per_s"] for f in levels),
            "p99_ms_all_four": statistics.median(f["p99_ms_all_four"] for f in levels),
            "cpu_us_per_play": {
                service: statistics.median(f["cpu_us_per_play"][service] for f in levels)
                for service in (*SERVICES, "bench")
            },
            "load_average_start": [f["load_average_start"] for f in levels],
        }
    base = COMPARE[0]
    for name in COMPARE[1:]:
        out[name]["ratio_to_" + base] = {
            "plays_per_s": out[name]["plays_per_s"] / max(out[base]["plays_per_s"], 1e-9),
            "cpu_us_per_play": {
                service: out[name]["cpu_us_per_play"][service]
                / max(out[base]["cpu_us_per_play"][service], 1e-9)
                for service in SERVICES
            },
        }
        r = out[name]["ratio_to_" + base]
        print(
            f"  {name} / {base}: plays/s x{r['plays_per_s']:.2f}; CPU per play gateway "
            f"x{r['cpu_us_per_play']['gateway']:.2f}, table x{r['cpu_us_per_play']['table']:.2f},"
            f" relay x{r['cpu_us_per_play']['relay']:.2f}"
        )
    return out


# -- the whole bench ---------------------------------------------------------------------------


async def bench(urls: dict[str, str]) -> None:
    """Run the phases; print the figures and merge them into artifacts/bench.json."""
    meta = artifact.run_metadata()
    nats_pid = int(urls["nats_pid"]) if urls.get("nats_pid") else None
    figures: dict[str, Any] = {}
    nc = await connect(urls["SPADES_NATS_URL"], name="bench-gateway")
    try:
        settings = service_settings({})
        meta["services"] = dict(zip(("event_loop", "ws", "http"), settings, strict=True))
        meta["bench_loop"] = type(asyncio.get_running_loop()).__module__.split(".")[0]
        print(
            f"services: event loop {settings[0]}, uvicorn ws {settings[1]}, http {settings[2]};"
            f" window {WINDOW:.0f} s per level, idle window {IDLE_WINDOW:.0f} s;"
            f" load average {load1():.2f} on {os.cpu_count()} cores",
            flush=True,
        )
        if IDLE_TABLES:
            stack = await start_stack(urls, "idle", nc)
            try:
                idle = await idle_phase(nc, stack, IDLE_TABLES, nats_pid)
            finally:
                await stop_stack(stack)
            print_idle(IDLE_TABLES, idle)
            figures[f"idle.tables_{IDLE_TABLES}"] = idle
        if TABLES:
            stack = await start_stack(urls, "load", nc)
            try:
                for tables in TABLES:
                    level = await load_level(nc, stack, tables, str(tables))
                    print_level(tables, level)
                    figures[f"full_stack.tables_{tables}"] = level
            finally:
                await stop_stack(stack)
        if RAW_TABLES:
            raw = await raw_baseline(urls, nc, RAW_TABLES)
            figures["full_stack.raw_baseline_plays_per_s"] = raw["plays_per_s"]
            figures["full_stack.raw_baseline"] = raw
            print(
                f"raw in-process flow, {RAW_TABLES} tables (decide -> append -> publish -> four"
                f" sockets): {raw['plays_per_s']:.0f} plays/s, {raw['cpu_us_per_play']:.0f} µs"
                f" CPU per play ({raw['cpu_us_per_play_with_servers']:.0f} µs with"
                f" {' and '.join(raw['servers_counted']) or 'no server counted'}),"
                f" p99 {raw['p99_ms_all_four']:.1f} ms",
                flush=True,
            )
            for tables in TABLES:
                level = figures[f"full_stack.tables_{tables}"]
                ratio = level["plays_per_s"] / max(raw["plays_per_s"], 1e-9)
                level["ratio_to_raw_baseline"] = ratio
                stack = level["stack_cpu_us_per_play"]
                level["stack_to_raw_cpu"] = stack / max(raw["cpu_us_per_play"], 1e-9)
                level["stack_to_raw_cpu_with_servers"] = stack / max(
                    raw["cpu_us_per_play_with_servers"], 1e-9
                )
                print(
                    f"  {tables} tables through the gateway: {ratio:.3f} of the raw flow's"
                    f" plays/s; the stack's CPU per play ({' + '.join(level['stack_counts'])})"
                    f" is {level['stack_to_raw_cpu']:.2f}x the raw flow's process (goal <= 2),"
                    f" {level['stack_to_raw_cpu_with_servers']:.2f}x the raw flow's with its"
                    " servers"
                )
        if TABLES and BARE_RELAY:
            await bare_relay(figures, settings)
        if COMPARE and COMPARE_TABLES:
            print(f"fast parts, {COMPARE_TABLES} tables per variant:", flush=True)
            figures["fast_parts"] = await compare(urls, nc)
    finally:
        await close_nats(nc)
        if figures:
            print(f"wrote {artifact.record('gateway', figures, meta)}")


def main() -> None:
    """Run the gateway bench (called by `python -m benchmarks`) on fresh embedded servers; its
    own clients and the raw flow run on the services' event loop (uvloop where installed)."""
    (REPO / ".spades").mkdir(exist_ok=True)
    with servers() as urls:
        loop.run(bench(urls))


if __name__ == "__main__":
    main()
