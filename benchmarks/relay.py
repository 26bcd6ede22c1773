"""The relay alone: CPU per event published, by turns between ways of publishing.

    uv run --frozen python -m benchmarks relay

Each measurement runs the relay as it is deployed, a `spades serve relay` process (uvloop,
the collector settled, its ops server: what `python -m benchmarks gateway` measures in the
stack), on a fresh database and subject prefix, and reads its CPU (utime + stime from /proc)
around the work. The ways, SPADES_BENCH_OUTBOX_WAYS (``awaited,pipelined``):

- ``pipelined``: this tree's relay as configured by default;
- ``awaited``: the same with SPADES_RELAY_PIPELINE=0 (each event after its predecessor's
  acknowledgement, the relay before issue 32);
- ``baseline``: the default relay of another checkout, SPADES_BENCH_OUTBOX_BASELINE (a path,
  e.g. a `git worktree` of the commit before a change): old and new code by turns in one run.

The loads:

- **steady**, per rate in SPADES_BENCH_OUTBOX_RATES (``200,1000`` commits/s): writers commit one
  event per transaction (a play's shape) over 400 game streams at that rate for
  SPADES_BENCH_OUTBOX_SECONDS (5) seconds; the relay's CPU from the first commit until
  JetStream holds every event, divided by the events. 200/s is about what the 2-core gateway
  bench plays at load; a quiet machine plays about 1,300/s (the writers may fall short of a
  rate on a loaded machine: the achieved rate is printed and recorded).
- **backlog**: one transaction commits SPADES_BENCH_OUTBOX_EVENTS (5,000) events over 200
  streams; events per second from the commit to the last acknowledgement, and CPU per event.

Each figure also says how many events a read of the log carried (``events_per_read``, from the
relay's last log line): a read's round trips and wake-ups cost about as much as a dozen events,
so it explains most of the difference between rates. (Not SPADES_BENCH_RELAY_*: those are
`wsrelay`'s, the WebSocket relay bench.) The ways alternate, SPADES_BENCH_OUTBOX_ROUNDS (2)
times, each round in the opposite order, so all meet the same machine load; each figure is the
median over the rounds. Figures go to ``relay.<way>.*`` in ``artifacts/bench.json``, with each
way's CPU per event as a ratio to the first way's (``cpu_ratio_to_<first>``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

import asyncpg
import msgspec

from benchmarks import artifact
from benchmarks.e2e import REPO, servers
from benchmarks.gateway import fresh_database
from events.bus import close_nats, connect, ensure_streams
from events.envelope import Metadata, NewEvent
from events.pgstore import PostgresEventStore, append_with, create_pool
from events.subjects import Subjects

WAYS = ("awaited", "pipelined", "baseline")
TICKS = os.sysconf("SC_CLK_TCK")
STEADY_STREAMS = 400
BACKLOG_STREAMS = 200
_DATA = msgspec.Raw(b'{"seat":1,"card":"QS","trick":5}')


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) the process has used: the scheduler's nanoseconds where
    the kernel keeps them (`schedstat`), else `stat`'s clock ticks. A tick is 10 ms, which is
    25 µs an event over a 400-event backlog: the pipelined relay's whole backlog fit in less
    than one, and the bench reported it at 0 µs an event."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    ticks = (int(fields[11]) + int(fields[12])) / TICKS
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/schedstat") as schedstat:
            nanoseconds = int(schedstat.read().split()[0])
        if nanoseconds > 0:  # a kernel (or sandbox) that keeps none says 0
            return nanoseconds / 1e9
    return ticks


def _event() -> NewEvent:
    return NewEvent(event_id=uuid.uuid4(), type="CardPlayed", data=_DATA, metadata=Metadata())


async def _on_bus(js: object, subjects: Subjects, total: int, within: float = 120.0) -> float:
    """Wait until the EVENTS stream holds `total` messages; return when (monotonic)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        info = await js.stream_info(subjects.events_stream)  # type: ignore[attr-defined]
        if info.state.messages >= total:
            return time.monotonic()
        await asyncio.sleep(0.005)
    raise TimeoutError(f"the relay did not publish {total} events in {within} s")


async def _steady(db: str, rate: float, seconds: float) -> int:
    """Commit one event per transaction at `rate` per second for `seconds`; return how many."""
    pool = await create_pool(db, min_size=4, max_size=8)
    store = PostgresEventStore(pool)
    ids = [f"game-{uuid.uuid4()}" for _ in range(STEADY_STREAMS)]
    versions = dict.fromkeys(ids, 0)
    writers = 8
    done = 0

    async def writer(mine: list[str]) -> None:
        nonlocal done
        start = time.monotonic()
        sent = 0
        while time.monotonic() - start < seconds:
            sid = mine[sent % len(mine)]
            await store.append(sid, versions[sid], [_event()])
            versions[sid] += 1
            sent += 1
            done += 1
            wait = start + sent * writers / rate - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)

    try:
        await asyncio.gather(*(writer(ids[i::writers]) for i in range(writers)))
    finally:
        await store.aclose()
        await pool.close()
    return done


async def _backlog(db: str, events: int) -> int:
    per = max(1, events // BACKLOG_STREAMS)
    conn = await asyncpg.connect(db)
    try:
        async with conn.transaction():
            for _ in range(BACKLOG_STREAMS):
                await append_with(conn, f"game-{uuid.uuid4()}", 0, [_event() for _ in range(per)])
    finally:
        await conn.close()
    return per * BACKLOG_STREAMS


def _baseline() -> Path:
    """The checkout whose relay the ``baseline`` way runs (SPADES_BENCH_OUTBOX_BASELINE)."""
    path = os.environ.get("SPADES_BENCH_OUTBOX_BASELINE", "")
    if not path or not (Path(path) / "events" / "relay.py").is_file():
        raise SystemExit(
            "the baseline way needs SPADES_BENCH_OUTBOX_BASELINE: a checkout to compare with"
        )
    return Path(path).resolve()


async def _lines(proc: asyncio.subprocess.Process) -> list[str]:
    """Every line the relay writes, kept until it ends (a few: it logs at start and stop)."""
    assert proc.stdout is not None
    return [line.decode(errors="replace") async for line in proc.stdout]


def _reads(lines: list[str]) -> int:
    """The reads of the log the relay made, from its "relay stopped" line (0 if none says)."""
    for line in reversed(lines):
        if "relay stopped" in line:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                return int(json.loads(line)["reads"])
    return 0


async def one(urls: dict[str, str], way: str, work: str, rate: float) -> dict[str, float]:
    """Run the relay one way on one load; return its figures."""
    tag = f"{way[0]}{work[0]}{int(rate)}{os.getpid()}"
    db = await fresh_database(urls["SPADES_DATABASE_URL"], f"bench_relay_{tag}")
    subjects = Subjects(f"benchrelay{tag}")
    nc = await connect(urls["SPADES_NATS_URL"], name="bench-relay")
    js = nc.jetstream()
    await ensure_streams(js, subjects)
    env = {
        **os.environ,
        "SPADES_DATABASE_URL": db,
        "SPADES_NATS_URL": urls["SPADES_NATS_URL"],
        "SPADES_NATS_PREFIX": subjects.prefix,
        "SPADES_OPS_PORT": "0",
        "SPADES_LOG_LEVEL": "info",  # its last line says how many reads it made
        "SPADES_LOG_FORMAT": "json",
        "SPADES_RELAY_PIPELINE": "0" if way == "awaited" else "1",
    }
    cwd = _baseline() if way == "baseline" else REPO
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.tools.cli",
        "serve",
        "relay",
        cwd=cwd,
        env={**env, "PYTHONPATH": str(cwd)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    lines = asyncio.create_task(_lines(proc))
    try:
        # the relay is up and idle once it published a first event
        conn = await asyncpg.connect(db)
        try:
            await append_with(conn, f"game-{uuid.uuid4()}", 0, [_event()])
        finally:
            await conn.close()
        await _on_bus(js, subjects, 1, within=60)
        await asyncio.sleep(1.0)  # its start-up work is done
        cpu0, started = _cpu(proc.pid), time.monotonic()
        if work == "steady":
            seconds = float(os.environ.get("SPADES_BENCH_OUTBOX_SECONDS", "5"))
            total = await _steady(db, rate, seconds)
        else:
            total = await _backlog(db, int(os.environ.get("SPADES_BENCH_OUTBOX_EVENTS", "5000")))
        writing = time.monotonic() - started
        ended = await _on_bus(js, subjects, total + 1)
        cpu = _cpu(proc.pid) - cpu0
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 30)
        reads = _reads(await lines)
        await js.delete_stream(subjects.events_stream)
        await js.delete_stream(subjects.parked_stream)
        await close_nats(nc)
    figures = {"relay_cpu_us_per_event": cpu / total * 1e6, "events": float(total)}
    if reads:
        figures["events_per_read"] = total / reads
    if work == "steady":
        figures["commits_per_s"] = total / writing
    else:
        figures["events_per_s"] = total / (ended - started)
    return figures


async def bench(urls: dict[str, str]) -> None:
    rates = [float(r) for r in os.environ.get("SPADES_BENCH_OUTBOX_RATES", "200,1000").split(",")]
    rounds = int(os.environ.get("SPADES_BENCH_OUTBOX_ROUNDS", "2"))
    ways = [w for w in os.environ.get("SPADES_BENCH_OUTBOX_WAYS", "awaited,pipelined").split(",")]
    unknown = [w for w in ways if w not in WAYS]
    if unknown or not ways:
        raise SystemExit(f"SPADES_BENCH_OUTBOX_WAYS: {unknown or ways} not among {WAYS}")
    if "baseline" in ways:
        print(f"baseline: the relay of {_baseline()}")
    loads = [("steady", rate) for rate in rates] + [("backlog", 0.0)]
    seen: dict[str, list[dict[str, float]]] = {}
    for round_ in range(rounds):
        for work, rate in loads:
            for way in ways if round_ % 2 == 0 else reversed(ways):
                got = await one(urls, way, work, rate)
                load = f"steady_{int(rate)}" if work == "steady" else "backlog"
                seen.setdefault(f"{way}.{load}", []).append(got)
                speed = (
                    f"{got['commits_per_s']:.0f} commits/s"
                    if work == "steady"
                    else f"{got['events_per_s']:.0f} events/s"
                )
                cpu = got["relay_cpu_us_per_event"]
                per_read = got.get("events_per_read", 0.0)
                print(
                    f"round {round_ + 1} {way:9} {load:11}: relay {cpu:.1f} µs/event"
                    f" ({speed}, {got['events']:.0f} events, {per_read:.1f} a read); "
                    f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores",
                    flush=True,
                )
    figures: dict[str, float] = {}
    for name, runs in seen.items():
        for key in runs[0]:
            figures[f"relay.{name}.{key}"] = statistics.median(run.get(key, 0.0) for run in runs)
    first = ways[0]
    for load in sorted({name.split(".", 1)[1] for name in seen}):
        old = figures[f"relay.{first}.{load}.relay_cpu_us_per_event"]
        for way in ways[1:]:
            new = figures[f"relay.{way}.{load}.relay_cpu_us_per_event"]
            figures[f"relay.{way}.{load}.cpu_ratio_to_{first}"] = new / old
            print(f"{load}: {way} {new:.1f} µs/event against {first} {old:.1f} (x{new / old:.2f})")
    print(f"wrote {artifact.record('relay', figures, artifact.run_metadata())}")


def main() -> None:
    """Run the relay bench on the environment's servers, or an embedded stack."""
    (REPO / ".spades").mkdir(exist_ok=True)
    with servers() as urls:
        asyncio.run(bench(urls))
