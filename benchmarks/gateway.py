"""Gateway bench: games played by WebSocket clients through gateway, table, relay and NATS.

Every seat is a WebSocket client of a real `spades serve gateway` process: it subscribes with
hints and, on `your_turn`, sends the suggested command. Measured per number of clients (four a
table), over SPADES_BENCH_SECONDS (default 15) counted from when every client has subscribed
(the connection storm before it is timed apart):

- card plays per second that reached all four seats of their table;
- p50/p99 from a seat sending PlayCard to the last of the four seats receiving its CardPlayed;
- inbound WebSocket messages per second at the gateway, beside the ~31k/s the issue measured
  for litestar+uvicorn relaying to rooms of four on this machine (the ratio is printed);
- the gateway's CPU time per play (a cost that holds still when other work shares the machine,
  unlike the rates).

Beside the figures, the CPU seconds each process spent in the window (gateway, table, relay and
the bench's own clients, from /proc) and how busy the machine's cores were: a process near one
core per second is the bottleneck; cores near 100% busy mean the machine is.
SPADES_BENCH_PYSPY=DIR also records each service with py-spy (on PATH, or
SPADES_PYSPY=/path/to/py-spy) during each level, as collapsed stacks in DIR
(`<service>-<clients>.txt`), for flame graphs or a quick `sort | uniq -c`.

Run: `uv run python -m benchmarks gateway`; SPADES_BENCH_CLIENTS="100,1000" sets the levels.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import msgspec
import websockets

from benchmarks.e2e import REPO, pct, run_on_servers, terminate
from events import game as wire
from events.bus import close_nats, connect, ensure_streams
from events.migrations import migrate
from events.subjects import Subjects
from services.gateway.auth import Tokens
from tests.moves import choose_json

WINDOW = float(os.environ.get("SPADES_BENCH_SECONDS", "15"))
CLIENTS = tuple(int(n) for n in os.environ.get("SPADES_BENCH_CLIENTS", "100").split(","))
SECRET = "bench-secret-" + "b" * 40
RAW_CEILING = 31_000.0  # inbound messages/s, litestar+uvicorn rooms of four (the issue's figure)
PYSPY_DIR = os.environ.get("SPADES_BENCH_PYSPY", "")


Key = tuple[str, str, int]
"""(game id, card, how many times that card was played before in the game)."""


@dataclass
class Run:
    """What every client of one level records."""

    sent: dict[Key, float] = field(default_factory=dict)
    seen: dict[Key, list[float]] = field(default_factory=dict)
    inbound: int = 0
    stop: bool = False
    subscribed: int = 0
    all_subscribed: asyncio.Event = field(default_factory=asyncio.Event)
    clients: int = 0


async def seat(url: str, token: str, game_id: str, run: Run) -> None:
    """Play one seat (`tests.moves`) until the game ends or the run stops."""
    played: dict[str, int] = {}
    async with websockets.connect(url, max_size=2**20) as ws:
        await ws.send(json.dumps({"type": "auth", "token": token}))
        await ws.send(json.dumps({"type": "subscribe", "game_id": game_id, "hints": True}))
        run.inbound += 2
        while not run.stop:
            try:
                text = await asyncio.wait_for(ws.recv(), 1.0)
            except TimeoutError:
                continue
            body = json.loads(text)
            kind = body["type"]
            if kind == "view":
                run.subscribed += 1
                if run.subscribed == run.clients:
                    run.all_subscribed.set()
            elif kind == "your_turn":
                # casual tables get no suggestion: the test players' own choice of move
                command = body.get("suggestion") or choose_json(body["legal"])
                if command["type"] == "PlayCard":
                    card = command["card"]
                    run.sent[(game_id, card, played.get(card, 0))] = time.perf_counter()
                message = {
                    "type": "command",
                    "game_id": game_id,
                    "command_id": str(uuid.uuid4()),
                    "command": command,
                }
                await ws.send(json.dumps(message))
                run.inbound += 1
            elif kind == "event":
                event = body["event"]
                if event["type"] == "CardPlayed":
                    card = event["card"]
                    key = (game_id, card, played.get(card, 0))
                    played[card] = key[2] + 1
                    run.seen.setdefault(key, []).append(time.perf_counter())
                elif event["type"] == "GameFinished":
                    return


async def start_gateway(env: dict[str, str]) -> tuple[asyncio.subprocess.Process, int]:
    """Start the gateway and return it with its HTTP port."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.cli",
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
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "http_port" in record:
            asyncio.create_task(_drain(proc.stdout))  # noqa: RUF006 - lives as long as the pipe
            return proc, int(record["http_port"])


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.readline():
        pass


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) a process has used so far; 0 where /proc is not."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy() -> tuple[float, float]:
    """Return (busy, total) CPU time of the whole machine so far (zeros where /proc is not)."""
    try:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return 0.0, 0.0
    idle = values[3] + values[4]  # idle + iowait
    return float(sum(values) - idle), float(sum(values))


async def profile(pids: dict[str, int], clients: int) -> list[asyncio.subprocess.Process]:
    """Start py-spy on every service for one window (when SPADES_BENCH_PYSPY asks for it)."""
    if not PYSPY_DIR:
        return []
    pyspy = os.environ.get("SPADES_PYSPY") or shutil.which("py-spy")
    if pyspy is None:
        raise SystemExit("SPADES_BENCH_PYSPY needs py-spy on PATH (or SPADES_PYSPY)")
    os.makedirs(PYSPY_DIR, exist_ok=True)
    return [
        await asyncio.create_subprocess_exec(
            pyspy,
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(int(WINDOW)),
            "--rate",
            "200",
            "--format",
            "raw",
            "--nonblocking",
            "--output",
            os.path.join(PYSPY_DIR, f"{name}-{clients}.txt"),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for name, pid in pids.items()
        if name != "bench"
    ]


async def level(
    nc: Any, subjects: Subjects, url: str, clients: int, pids: dict[str, int]
) -> dict[str, float]:
    """Open clients/4 casual tables, play them for the window, return the figures."""
    tokens = Tokens(SECRET, 3600)
    run = Run(clients=clients // 4 * 4)
    tasks = []
    for t in range(clients // 4):
        players = tuple(f"b{clients}x{t}s{s}" for s in range(4))
        body = wire.OpenCasual(players=players, command_id=uuid.uuid4())
        msg = await nc.request(subjects.table_open(), msgspec.json.encode(body), timeout=30)
        reply = msgspec.json.decode(msg.data, type=wire.TableReply)
        assert reply.ok, reply
        for player in players:
            token, _ = tokens.issue(player, False)
            tasks.append(asyncio.create_task(seat(url, token, reply.game_id, run)))
    opening = time.perf_counter()
    await asyncio.wait_for(run.all_subscribed.wait(), 300)
    setup = time.perf_counter() - opening
    spies = await profile(pids, clients)
    started = time.perf_counter()
    inbound_start = run.inbound
    cpu_start = {name: cpu_seconds(pid) for name, pid in pids.items()}
    busy_start = machine_busy()
    await asyncio.wait(tasks, timeout=WINDOW)
    elapsed = time.perf_counter() - started
    cpu = {name: (cpu_seconds(pid) - cpu_start[name]) / elapsed for name, pid in pids.items()}
    busy_end = machine_busy()
    busy = (busy_end[0] - busy_start[0]) / max(busy_end[1] - busy_start[1], 1.0)
    run.stop = True
    await asyncio.gather(*tasks, return_exceptions=True)
    played = [
        (key, times)
        for key, times in run.seen.items()
        if len(times) >= 4 and key in run.sent and run.sent[key] >= started
    ]
    latencies = [max(times) - run.sent[key] for key, times in played]
    complete = len(played)
    for spy in spies:
        await spy.wait()
    return {
        **{f"cpu_{name}": share for name, share in cpu.items()},
        "gateway_ms_per_play": 1000 * cpu["gateway"] * elapsed / max(complete, 1),
        "machine_busy": busy,
        "setup": setup,
        "plays_per_s": complete / elapsed,
        "p50": pct(latencies, 0.50),
        "p99": pct(latencies, 0.99),
        "inbound_per_s": (run.inbound - inbound_start) / elapsed,
    }


async def bench(urls: dict[str, str]) -> None:
    """Start relay, table and gateway; run each level; print the figures."""
    name = f"bench_gw_{os.getpid()}"
    admin = await asyncpg.connect(urls["SPADES_DATABASE_URL"])
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    db_url = urls["SPADES_DATABASE_URL"].rsplit("/", 1)[0] + f"/{name}"
    conn = await asyncpg.connect(db_url)
    await migrate(conn)
    await conn.close()
    prefix = f"benchgw{os.getpid()}"
    subjects = Subjects(prefix)
    env = {
        **os.environ,
        "SPADES_DATABASE_URL": db_url,
        "SPADES_NATS_URL": urls["SPADES_NATS_URL"],
        "SPADES_NATS_PREFIX": prefix,
        "SPADES_OPS_PORT": "0",
        "SPADES_TURN_SECONDS": "120",
        "SPADES_LOG_LEVEL": "warning",
        "SPADES_JWT_SECRET": SECRET,
        "SPADES_HTTP_HOST": "127.0.0.1",
    }
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.cli", "serve", service, cwd=REPO, env=env
        )
        for service in ("relay", "table")
    ]
    gateway, port = await start_gateway(env)
    procs.append(gateway)
    pids = {
        "gateway": gateway.pid,
        "table": procs[1].pid,
        "relay": procs[0].pid,
        "bench": os.getpid(),
    }
    nc = await connect(urls["SPADES_NATS_URL"], name="bench-gateway")
    try:
        await ensure_streams(nc.jetstream(), subjects)
        await asyncio.sleep(2.0)  # the table claims its partitions
        print(f"window {WINDOW:.0f} s per level; gateway x1, table x1, relay x1")
        for clients in CLIENTS:
            f = await level(nc, subjects, f"ws://127.0.0.1:{port}/ws", clients, pids)
            print(
                f"{clients:5d} clients (all subscribed in {f['setup']:.1f} s): "
                f"{f['plays_per_s']:7.0f} plays/s to all four seats; "
                f"send -> all four received p50 {f['p50']:.1f} ms p99 {f['p99']:.1f} ms; "
                f"{f['inbound_per_s']:.0f} inbound msgs/s "
                f"(ratio to the {RAW_CEILING:.0f}/s relay ceiling "
                f"{f['inbound_per_s'] / RAW_CEILING:.3f})\n"
                f"{'':14}gateway CPU per play {f['gateway_ms_per_play']:.2f} ms; "
                f"CPU per second of the window: "
                + ", ".join(f"{name} {f['cpu_' + name]:.2f}" for name in pids)
                + f"; all cores busy {100 * f['machine_busy']:.0f}% of {os.cpu_count()}"
                + f"; load average {os.getloadavg()[0]:.2f}"
            )
    finally:
        await close_nats(nc)
        await terminate(procs)


def main() -> None:
    """Run the gateway bench (called by `python -m benchmarks`)."""
    run_on_servers(bench)


if __name__ == "__main__":
    main()
