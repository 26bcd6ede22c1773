"""End-to-end bench: concurrent games through the real table service, relay and NATS.

Every seat of every game is a client shaped like the gateway: it folds the game's events as
they arrive on NATS, takes its seat's view with `engine.view`, lets the baseline bot choose, and
sends the command to the table as SubmitCommand. Measured, per concurrency:

- card plays per second over the whole system (bots' thinking is the seat clients' own);
- p50/p99 from sending a command to its reply (appended in PostgreSQL);
- p50/p99 from sending a command to its event arriving on NATS (after the relay published it).

In the same run, a raw baseline: one process doing decide -> PostgreSQL append -> awaited
JetStream publish per command, with no service hop, so the service figure is a ratio.
Run: `make bench` (or `uv run python -m benchmarks e2e`); SPADES_BENCH_SECONDS sets the window.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import msgspec

import engine
import engine.bot
from benchmarks import artifact
from events.bus import close_nats, connect, ensure_streams
from events.contracts import game as wire
from events.envelope import REGISTRY, Metadata, StoredEvent
from events.migrations import migrate
from events.pgstore import PostgresEventStore, create_pool
from events.subjects import Subjects
from services.tools.infra import embedded_stack

WINDOW = float(os.environ.get("SPADES_BENCH_SECONDS", "15"))
CONCURRENCY = (10, 100)
REPO = Path(__file__).resolve().parent.parent
_reply = msgspec.json.Decoder(wire.TableReply)
_stored = msgspec.json.Decoder(StoredEvent)


def pct(values: list[float], q: float) -> float:
    """Return the q-quantile of values in milliseconds (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextlib.contextmanager
def servers() -> Iterator[dict[str, str]]:
    """Yield URLs of PostgreSQL and NATS: from the environment, else an embedded stack (then
    also ``nats_pid``, the NATS server's process id)."""
    if os.environ.get("SPADES_DATABASE_URL") and os.environ.get("SPADES_NATS_URL"):
        yield {k: os.environ[k] for k in ("SPADES_DATABASE_URL", "SPADES_NATS_URL")}
        return
    home = Path(tempfile.mkdtemp(prefix="bench-e2e-", dir=REPO / ".spades"))
    with embedded_stack(home, durable=False) as stack:
        pid = stack.nats.pid()  # the gateway bench reads its memory
        yield stack.env() | ({"nats_pid": str(pid)} if pid is not None else {})


async def fresh_database(url: str) -> str:
    """Create and migrate a database of this run's own; return its URL."""
    name = f"bench_e2e_{os.getpid()}"
    admin = await asyncpg.connect(url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    db_url = url.rsplit("/", 1)[0] + f"/{name}"
    conn = await asyncpg.connect(db_url)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    return db_url


class Seat:
    """One seat's client, shaped like the gateway: folds the game's events from NATS, takes
    its own view with `engine.view`, and sends only commands to the table."""

    def __init__(self, run: Run, game_id: str, player: str, seat: int) -> None:
        self.run, self.game_id, self.player, self.seat = run, game_id, player, seat

    async def play(self) -> None:
        subject = self.run.subjects.table_command(self.game_id)
        rng = random.Random(self.player)
        while not self.run.done.is_set():
            state = self.run.states.get(self.game_id)
            if state is None or state.phase == "over":
                if state is not None:
                    return
            elif state.turn == self.seat:
                command = engine.bot.choose(engine.view(state, self.seat), rng)
                command_id = uuid.uuid4()
                sent = time.perf_counter()
                self.run.sent[command_id] = (sent, isinstance(command, engine.PlayCard))
                body = wire.SubmitCommand(
                    game_id=self.game_id,
                    player_id=self.player,
                    command_id=command_id,
                    command=wire.command_to_wire(command),
                )
                msg = await self.run.nc.request(subject, msgspec.json.encode(body), timeout=30)
                answer = _reply.decode(msg.data)
                if answer.ok and not self.run.done.is_set():
                    self.run.acked.append(time.perf_counter() - sent)
                # wait until our own events are folded before looking again
                while self.run.versions.get(self.game_id, 0) < answer.version:
                    await self._moved()
                continue
            await self._moved()

    async def _moved(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.run.moved(self.game_id).wait(), 1.0)


class Run:
    """One concurrency level: its games' folded states, clients and measurements."""

    def __init__(self, nc: Any, subjects: Subjects) -> None:
        self.nc = nc
        self.subjects = subjects
        self.sent: dict[uuid.UUID, tuple[float, bool]] = {}
        self.acked: list[float] = []
        self.delivered: list[float] = []
        self.plays = 0
        self.done = asyncio.Event()
        self.states: dict[str, engine.GameState] = {}
        self.versions: dict[str, int] = {}
        self._moved: dict[str, asyncio.Event] = {}

    def moved(self, game_id: str) -> asyncio.Event:
        """Return an event set the next time the game moves."""
        return self._moved.setdefault(game_id, asyncio.Event())

    def on_event(self, data: bytes) -> None:
        stored = _stored.decode(data)
        game_id = stored.stream_id.removeprefix("game-")
        if stored.version == self.versions.get(game_id, 0) + 1:
            engine_event = wire.to_engine(REGISTRY.decode(stored))
            if engine_event is not None:
                state = self.states.get(game_id, engine.initial_state())
                self.states[game_id] = engine.apply(state, engine_event)
            self.versions[game_id] = stored.version
        waiting = self._moved.pop(game_id, None)
        if waiting is not None:
            waiting.set()
        command_id = stored.metadata.command_id
        if command_id is None or self.done.is_set() or command_id not in self.sent:
            return
        sent, is_play = self.sent.pop(command_id)
        self.delivered.append(time.perf_counter() - sent)
        if is_play:
            self.plays += 1


async def service_run(nc: object, subjects: Subjects, tables: int) -> dict[str, float]:
    """Play ``tables`` games at once for the window; return the figures."""
    run = Run(nc, subjects)

    async def on_msg(msg: object) -> None:
        run.on_event(msg.data)  # type: ignore[attr-defined]

    sub = await nc.subscribe(subjects.game_events(), cb=on_msg)  # type: ignore[attr-defined]

    async def table_slot() -> None:
        while not run.done.is_set():  # a finished game is followed by a new one
            players = tuple(f"p{uuid.uuid4().hex[:8]}" for _ in range(4))
            body = wire.OpenCasual(players=players, command_id=uuid.uuid4())
            msg = await nc.request(  # type: ignore[attr-defined]
                subjects.table_open(), msgspec.json.encode(body), timeout=30
            )
            game_id = _reply.decode(msg.data).game_id
            await asyncio.gather(*(Seat(run, game_id, p, i).play() for i, p in enumerate(players)))

    tasks = [asyncio.create_task(table_slot()) for _ in range(tables)]
    started = time.perf_counter()
    await asyncio.sleep(WINDOW)
    run.done.set()
    elapsed = time.perf_counter() - started
    results = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        raise RuntimeError(f"{len(errors)} table slots failed") from errors[0]
    await sub.unsubscribe()
    return {
        "plays_per_s": run.plays / elapsed,
        "commands_per_s": len(run.delivered) / elapsed,
        "ack_p50": pct(run.acked, 0.5),
        "ack_p99": pct(run.acked, 0.99),
        "event_p50": pct(run.delivered, 0.5),
        "event_p99": pct(run.delivered, 0.99),
    }


async def raw_baseline(db_url: str, nats_url: str, subjects: Subjects, tables: int) -> float:
    """Return plays/s of decide -> append -> awaited publish in one process, no service hop."""
    pool = await create_pool(db_url, min_size=4, max_size=16)
    store = PostgresEventStore(pool)
    nc = await connect(nats_url, name="bench-raw")
    js = nc.jetstream()
    await ensure_streams(js, subjects)
    plays = 0
    done = asyncio.Event()

    async def game(index: int) -> None:
        nonlocal plays
        rng = random.Random(index)
        while not done.is_set():  # a finished game is followed by a new one at this table
            stream = f"raw-{uuid.uuid4()}"
            state = engine.initial_state()
            version = 0
            seed = rng.randrange(2**32)
            pending = engine.decide(state, engine.StartGame(engine.ranked_default(), seed=seed))
            while not done.is_set():
                new = [REGISTRY.new_event(wire.to_wire(e), Metadata(actor="raw")) for e in pending]
                stored = await store.append(stream, version, new)
                version += len(stored)
                for s in stored:
                    await js.publish(subjects.event(stream, s.type), msgspec.json.encode(s))
                for e in pending:
                    state = engine.apply(state, e)
                    plays += isinstance(e, engine.CardPlayed)
                if state.phase == "over":
                    break
                legal = engine.legal_actions(state, state.turn)
                pending = engine.decide(state, rng.choice(legal))

    tasks = [asyncio.create_task(game(i)) for i in range(tables)]
    started = time.perf_counter()
    await asyncio.sleep(WINDOW)
    done.set()
    elapsed = time.perf_counter() - started
    await asyncio.gather(*tasks)
    await store.aclose()
    await pool.close()
    await close_nats(nc)
    return plays / elapsed


async def bench(urls: dict[str, str]) -> None:
    """Start the services, run every concurrency level, print the table."""
    meta = artifact.run_metadata()
    recorded: dict[str, Any] = {}
    db_url = await fresh_database(urls["SPADES_DATABASE_URL"])
    prefix = f"bench{os.getpid()}"
    subjects = Subjects(prefix)
    env = {
        **os.environ,
        "SPADES_DATABASE_URL": db_url,
        "SPADES_NATS_URL": urls["SPADES_NATS_URL"],
        "SPADES_NATS_PREFIX": prefix,
        "SPADES_OPS_PORT": "0",
        "SPADES_TURN_SECONDS": "120",
        "SPADES_LOG_LEVEL": "warning",
    }
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.tools.cli", "serve", name, cwd=REPO, env=env
        )
        for name in ("relay", "table")
    ]
    nc = await connect(urls["SPADES_NATS_URL"], name="bench-e2e")
    try:
        await ensure_streams(nc.jetstream(), subjects)
        await asyncio.sleep(2.0)  # the table claims its partitions
        print(f"window {WINDOW:.0f} s per level; services: table x1, relay x1")
        for tables in CONCURRENCY:
            raw = await raw_baseline(db_url, urls["SPADES_NATS_URL"], subjects, tables)
            figures = await service_run(nc, subjects, tables)
            print(
                f"{tables:4d} tables ({4 * tables} clients): "
                f"{figures['plays_per_s']:7.0f} plays/s "
                f"({figures['commands_per_s']:.0f} commands/s); "
                f"reply p50 {figures['ack_p50']:.1f} ms p99 {figures['ack_p99']:.1f} ms; "
                f"event p50 {figures['event_p50']:.1f} ms p99 {figures['event_p99']:.1f} ms; "
                f"raw in-process {raw:.0f} plays/s "
                f"(ratio {figures['plays_per_s'] / raw if raw else 0:.2f})"
            )
            recorded[f"e2e.tables_{tables}"] = {
                "plays_per_s": figures["plays_per_s"],
                "commands_per_s": figures["commands_per_s"],
                "reply_p50_ms": figures["ack_p50"],
                "reply_p99_ms": figures["ack_p99"],
                "event_p50_ms": figures["event_p50"],
                "event_p99_ms": figures["event_p99"],
                "raw_plays_per_s": raw,
            }
    finally:
        await close_nats(nc)
        await terminate(procs)
        if recorded:
            print(f"wrote {artifact.record('e2e', recorded, meta)}")


async def terminate(procs: list[Any]) -> None:
    """Stop the bench's service processes and wait for each to exit: SIGTERM, and SIGKILL for
    one still draining after 20 s (a loaded machine once kept a service past that: the bench's
    figures were written, and its cleanup failed the run)."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            await asyncio.wait_for(proc.wait(), 20)
        except TimeoutError:
            print(f"  process {proc.pid} still draining 20 s after SIGTERM: killed")
            proc.kill()
            await proc.wait()


def run_on_servers(bench: Callable[[dict[str, str]], Awaitable[None]]) -> None:
    """Run ``bench`` against fresh embedded PostgreSQL and NATS."""
    (REPO / ".spades").mkdir(exist_ok=True)
    with servers() as urls:
        asyncio.run(bench(urls))


def main() -> None:
    """Run the end-to-end bench (called by `python -m benchmarks`)."""
    run_on_servers(bench)


if __name__ == "__main__":
    main()
