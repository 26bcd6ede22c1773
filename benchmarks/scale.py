"""How the platform grows: G gateways x T table replicas (1 relay) as real processes, the seats'
clients in processes of their own, per shape the table of issue #32.

For each shape in SPADES_BENCH_SHAPES (``GxT``, comma-separated; default ``1x1,2x2`` on a
machine under 16 cores, ``1x1,2x2,4x4,6x6`` on a bigger one) the bench starts a relay, T table
replicas and G gateways on a fresh database and NATS prefix, waits until every table replica
holds slots, and opens SPADES_BENCH_SCALE_TABLES (default 8) casual tables per table
replica, each of four WebSocket seats that play as fast as the stack answers. The seats run in
SPADES_BENCH_CLIENTS (default 1 on a small machine, a quarter of the cores on a big one)
client processes; on a machine of 8 cores or more they are pinned to the last quarter of the
cores and the services to the rest (said in the printout). Over SPADES_BENCH_SCALE_SECONDS
(default 10) it records:

- plays per second reaching all four seats, and the p50/p99 of send -> all four;
- CPU microseconds per play of each kind of process (gateway, table, relay, PostgreSQL, NATS,
  clients), and the busiest single process (cores it used);
- efficiency: plays/s over T times the 1 x 1 figure of the same run;
- for the largest shape a second run with each table's seats spread over the gateways (seat s
  of table i on gateway (i + s) mod G, as a load balancer does) against the default (a table's
  four seats on one gateway): what spreading costs;
- the raw in-process flow of the same run (`benchmarks.gateway.raw_baseline`) and the stack's
  CPU per play (services + PostgreSQL + NATS) as a multiple of it.

The figures go to ``scale.*`` in artifacts/bench.json. Two cores cannot show scaling (clients,
PostgreSQL, NATS and the services share them): the printout says so, and the figures are then
the shape's cost, not its ceiling.

Run: `.venv/bin/python -m benchmarks scale`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from benchmarks import artifact
from benchmarks import gateway as gw
from benchmarks.e2e import REPO, pct, servers, terminate
from events.bus import close_nats, connect, ensure_streams
from events.subjects import Subjects
from services.runtime import loop

CORES = os.cpu_count() or 1
BIG = CORES >= 16
SHAPES = tuple(
    tuple(int(n) for n in shape.lower().split("x"))
    for shape in os.environ.get(
        "SPADES_BENCH_SHAPES", "1x1,2x2,4x4,6x6" if BIG else "1x1,2x2"
    ).split(",")
    if shape.strip()
)
TABLES_PER_REPLICA = int(os.environ.get("SPADES_BENCH_SCALE_TABLES", "80" if BIG else "8"))
WINDOW = float(os.environ.get("SPADES_BENCH_SCALE_SECONDS", "10"))
REPORT_LIMIT = 256 * 2**20  # the longest line a client's report may be (bytes)
CLIENTS = int(os.environ.get("SPADES_BENCH_CLIENTS", str(max(1, CORES // 4))))
PIN = CORES >= 8
CLIENT_CORES = set(range(CORES - max(1, CORES // 4), CORES)) if PIN else set()
SERVICE_CORES = set(range(CORES)) - CLIENT_CORES if PIN else set()


# -- the client processes ----------------------------------------------------------------------


async def client(config: dict[str, Any]) -> None:
    """One client process: play its tables, say ``ready`` once every seat has its view, wait
    for ``go`` on stdin, then report the plays of the window as one JSON line."""
    nc = await connect(config["nats_url"], name="bench-scale-client")
    subjects = Subjects(config["prefix"])
    run = gw.Run(seats=4 * len(config["tables"]))

    async def slot(name: str, urls: Sequence[str]) -> None:
        players = tuple(f"{name}s{s}" for s in range(4))
        sockets = [await gw.connect_seat(url, p) for url, p in zip(urls, players, strict=True)]
        try:
            while True:
                game_id = await gw.open_table(nc, subjects, players)
                await asyncio.gather(*(gw.play_seat(ws, game_id, run, True) for ws in sockets))
        finally:
            for ws in sockets:
                with contextlib.suppress(Exception):
                    await ws.close()

    tasks = [asyncio.create_task(slot(name, urls)) for name, urls in config["tables"]]
    waiter = asyncio.create_task(run.all_viewed.wait())
    done, _ = await asyncio.wait({waiter, *tasks}, timeout=600, return_when="FIRST_COMPLETED")
    if waiter not in done:
        failed = next((t for t in done if t.exception() is not None), None)
        raise RuntimeError("a table failed while opening") from (
            failed.exception() if failed else None
        )
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    started = time.perf_counter()
    await asyncio.sleep(float(config["window"]))
    ended = time.perf_counter()
    latencies = [
        sorted(times)[3] - run.sent[key]
        for key, times in run.seen.items()
        if len(times) >= 4 and started <= run.sent.get(key, 0.0) and sorted(times)[3] <= ended
    ]
    print(json.dumps({"plays": len(latencies), "latencies": latencies}), flush=True)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await close_nats(nc)


# -- the shape's services ----------------------------------------------------------------------


@dataclass
class Shape:
    gateways: int
    tables: int
    procs: dict[str, asyncio.subprocess.Process]
    urls: list[str]
    subjects: Subjects
    db_url: str


async def start_shape(urls: Mapping[str, str], nc: Any, gateways: int, tables: int) -> Shape:
    tag = f"{gateways}x{tables}"
    db_url = await gw.fresh_database(urls["SPADES_DATABASE_URL"], f"bench_scale_{tag}")
    prefix = f"benchscale{gateways}x{tables}{os.getpid()}"
    subjects = Subjects(prefix)
    env = {
        **os.environ,
        "SPADES_DATABASE_URL": db_url,
        "SPADES_NATS_URL": urls["SPADES_NATS_URL"],
        "SPADES_NATS_PREFIX": prefix,
        "SPADES_OPS_PORT": "0",
        "SPADES_TURN_SECONDS": "3600",
        "SPADES_CONTRIBUTION_SECONDS": "0",
        "SPADES_LOG_LEVEL": "warning",
        "SPADES_JWT_SECRET": gw.SECRET,
        "SPADES_HTTP_HOST": "127.0.0.1",
        "SPADES_WS_PER_ADDRESS": "1000000",
        "SPADES_WS_ANONYMOUS_PER_ADDRESS": "1000000",
        "SPADES_WS_MESSAGES_PER_SECOND": "1000000",
    }
    await ensure_streams(nc.jetstream(), subjects)
    procs: dict[str, asyncio.subprocess.Process] = {}
    for name, service in [("relay0", "relay"), *((f"table{i}", "table") for i in range(tables))]:
        procs[name] = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.tools.cli", "serve", service, cwd=REPO, env=env
        )
    ws_urls = []
    for i in range(gateways):
        proc, port = await gw.start_gateway(env)
        procs[f"gateway{i}"] = proc
        ws_urls.append(f"ws://127.0.0.1:{port}/ws")
    if SERVICE_CORES:
        for proc in procs.values():
            os.sched_setaffinity(proc.pid, SERVICE_CORES)
    await gw.open_table(nc, subjects, ("probe0", "probe1", "probe2", "probe3"), within=120)
    await holders(db_url, tables)
    return Shape(gateways, tables, procs, ws_urls, subjects, db_url)


async def holders(db_url: str, tables: int, within: float = 120) -> None:
    """Wait until ``tables`` replicas hold slots (leases are shared out as they join)."""
    conn = await asyncpg.connect(db_url)
    try:
        deadline = time.monotonic() + within
        while True:
            held = await conn.fetchval(
                "SELECT count(DISTINCT owner) FROM spades_leases"
                " WHERE owner IS NOT NULL AND expires_at > now()"
            )
            if held >= tables or time.monotonic() > deadline:
                return
            await asyncio.sleep(0.2)
    finally:
        await conn.close()


def parent_of(pid: int) -> int | None:
    """Return a process's parent id (None when /proc cannot say)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def family(pid: int) -> list[int]:
    """Return ``pid`` and its children (a PostgreSQL server's backends)."""
    found = [pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
    return found


async def postgres_pid(db_url: str) -> int | None:
    """Return the PostgreSQL server's main process id (the parent of a backend)."""
    conn = await asyncpg.connect(db_url)
    try:  # read while the backend lives: it exits with the connection
        return parent_of(int(await conn.fetchval("SELECT pg_backend_pid()")))
    finally:
        await conn.close()


async def measure(
    urls: Mapping[str, str], shape: Shape, spread: bool, label: str
) -> dict[str, Any]:
    """Play the shape's tables over the window; return its figures."""
    count = TABLES_PER_REPLICA * shape.tables
    tables = []
    for i in range(count):
        seats = [
            shape.urls[(i + s) % shape.gateways if spread else i % shape.gateways] for s in range(4)
        ]
        tables.append((f"sc{label}x{i}", seats))
    clients = []
    for c in range(min(CLIENTS, count)):
        config = {
            "nats_url": urls["SPADES_NATS_URL"],
            "prefix": shape.subjects.prefix,
            "tables": tables[c::CLIENTS],
            "window": WINDOW,
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "benchmarks.scale",
            "client",
            json.dumps(config),
            cwd=REPO,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            # its report is one line with every play's latency: ~20 bytes a play, past the
            # reader's default 64 KiB limit from ~3,000 plays a window (2x2, 8 tables each)
            limit=REPORT_LIMIT,
        )
        if CLIENT_CORES:
            os.sched_setaffinity(proc.pid, CLIENT_CORES)
        clients.append(proc)
    try:
        for proc in clients:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), 900)
            if line.strip() != b"ready":
                raise RuntimeError(f"a client process failed before the window: {line!r}")
        pg = await postgres_pid(shape.db_url)
        pids: dict[str, list[int]] = {name: [p.pid] for name, p in shape.procs.items()}
        pids |= {f"client{i}": [p.pid] for i, p in enumerate(clients)}
        if pg is not None:
            pids["postgres"] = family(pg)
        if urls.get("nats_pid"):
            pids["nats"] = [int(urls["nats_pid"])]
        flat = {f"{name}/{pid}": pid for name, group in pids.items() for pid in group}
        window = gw.CpuWindow(flat)
        for proc in clients:
            assert proc.stdin is not None
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()
        reports = []
        for proc in clients:
            assert proc.stdout is not None
            reports.append(json.loads(await asyncio.wait_for(proc.stdout.readline(), 900)))
        elapsed, used, busy = window.close()
    finally:
        for proc in clients:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        await asyncio.gather(*(p.wait() for p in clients), return_exceptions=True)
    per_process = {
        name: sum(used[f"{name}/{pid}"] for pid in group) for name, group in pids.items()
    }
    kinds: dict[str, float] = {}
    for name, seconds in per_process.items():
        kind = name.rstrip("0123456789")
        kinds[kind] = kinds.get(kind, 0.0) + seconds
    plays = sum(r["plays"] for r in reports)
    latencies = [x for r in reports for x in r["latencies"]]
    busiest = max(
        (n for n in per_process if not n.startswith("client")), key=lambda n: per_process[n]
    )
    stack_kinds = ("gateway", "table", "relay", "postgres", "nats")
    return {
        "gateways": shape.gateways,
        "tables": shape.tables,
        "seats_spread": spread,
        "game_tables": count,
        "plays_per_s": plays / WINDOW,
        "p50_ms_all_four": pct(latencies, 0.50),
        "p99_ms_all_four": pct(latencies, 0.99),
        "cpu_us_per_play": {k: 1e6 * s / max(plays, 1) for k, s in kinds.items()},
        "stack_cpu_us_per_play": 1e6 * sum(kinds.get(k, 0.0) for k in stack_kinds) / max(plays, 1),
        "busiest_process": busiest,
        "busiest_cores": per_process[busiest] / elapsed,
        "machine_busy_pct": 100 * busy,
        "load_average_start": gw.load1(),
    }


def show(f: Mapping[str, Any]) -> None:
    cpu = f["cpu_us_per_play"]
    parts = " / ".join(
        f"{cpu.get(k, 0):.0f}" for k in ("gateway", "table", "relay", "postgres", "nats")
    )
    spread = ", seats spread over the gateways" if f["seats_spread"] else ""
    print(
        f"  {f['gateways']} x {f['tables']}{spread} ({f['game_tables']} tables): "
        f"{f['plays_per_s']:7.0f} plays/s, p50 {f['p50_ms_all_four']:.0f} ms p99 "
        f"{f['p99_ms_all_four']:.0f} ms; CPU µs per play gateway/table/relay/PostgreSQL/NATS "
        f"{parts} (stack {f['stack_cpu_us_per_play']:.0f}); busiest {f['busiest_process']} "
        f"{f['busiest_cores']:.2f} core; efficiency {f.get('efficiency', 1.0):.2f}",
        flush=True,
    )


async def bench(urls: dict[str, str]) -> None:
    meta = artifact.run_metadata()
    meta |= {"shapes": [f"{g}x{t}" for g, t in SHAPES], "clients": CLIENTS, "pinned": PIN}
    print(
        f"{CORES} cores; shapes {', '.join(meta['shapes'])}; {TABLES_PER_REPLICA} tables per"
        f" table replica; {CLIENTS} client process(es); window {WINDOW:.0f} s; "
        + (
            f"clients pinned to cores {min(CLIENT_CORES)}-{max(CLIENT_CORES)}, services to the rest"
            if PIN
            else "nothing pinned"
        ),
        flush=True,
    )
    if not BIG:
        print(
            "  scale figures need more cores: here the clients, PostgreSQL, NATS and every"
            " service share the machine's cores, so these are each shape's costs, not its"
            " ceiling",
            flush=True,
        )
    figures: dict[str, Any] = {}
    nc = await connect(urls["SPADES_NATS_URL"], name="bench-scale")
    try:
        one: float | None = None
        for g, t in SHAPES:
            shape = await start_shape(urls, nc, g, t)
            try:
                f = await measure(urls, shape, spread=False, label=f"{g}x{t}")
                if one is None and (g, t) == (1, 1):
                    one = f["plays_per_s"]
                f["efficiency"] = f["plays_per_s"] / (t * one) if one else 1.0
                show(f)
                figures[f"scale.shape_{g}x{t}"] = f
                if (g, t) == SHAPES[-1] and g > 1:
                    s = await measure(urls, shape, spread=True, label=f"{g}x{t}s")
                    s["efficiency"] = s["plays_per_s"] / (t * one) if one else 1.0
                    s["cost_of_spreading_pct"] = 100 * (1 - s["plays_per_s"] / f["plays_per_s"])
                    show(s)
                    print(f"  spreading seats costs {s['cost_of_spreading_pct']:.1f}% of plays/s")
                    figures[f"scale.shape_{g}x{t}_spread"] = s
            finally:
                await terminate(list(shape.procs.values()))
        raw = await gw.raw_baseline(urls, nc, TABLES_PER_REPLICA)
        figures["scale.raw_baseline"] = raw
        print(
            f"  raw in-process flow ({TABLES_PER_REPLICA} tables): {raw['plays_per_s']:.0f}"
            f" plays/s, {raw['cpu_us_per_play']:.0f} µs CPU per play",
            flush=True,
        )
        for key, f in list(figures.items()):
            if key.startswith("scale.shape_"):
                f["stack_to_raw_cpu"] = f["stack_cpu_us_per_play"] / max(
                    raw["cpu_us_per_play"], 1e-9
                )
                print(f"  {key[12:]}: the stack's CPU per play is {f['stack_to_raw_cpu']:.2f}x raw")
    finally:
        await close_nats(nc)
        if figures:
            print(f"wrote {artifact.record('scale', figures, meta)}")


def main() -> None:
    """Run the scale bench (called by `python -m benchmarks`) on fresh embedded servers."""
    (REPO / ".spades").mkdir(exist_ok=True)
    with servers() as urls:
        loop.run(bench(urls))


if __name__ == "__main__":
    if sys.argv[1:2] == ["client"]:
        loop.run(client(json.loads(sys.argv[2])))
    else:
        main()
