"""Event store and relay throughput, each next to the raw limit measured in the same run.

    uv run --frozen python -m benchmarks store

Uses $SPADES_DATABASE_URL / $SPADES_NATS_URL when set, else starts the embedded stack under
`.spades/bench-<pid>/` (durability off there: the figures compare code paths, not disks) and
stops it at the end. Works in a throwaway database and a throwaway subject prefix.

Raw baselines: a plain asyncpg single-row INSERT loop (one transaction per event), a plain
unnest INSERT of BATCH rows per statement, and a plain `js.publish` loop (one ack per message).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import asyncpg
import msgspec

from benchmarks import artifact
from events.bus import close_nats, connect, ensure_streams
from events.envelope import Metadata, NewEvent
from events.migrations import migrate
from events.pgstore import PostgresEventStore, create_pool, save_checkpoint
from events.relay import RelayStats, run_relay
from events.store import Checkpoint
from events.subjects import Subjects

BATCH = 13  # events per append in the batched runs (the reference batch size)
STREAMS = 64
SECONDS = 1.5  # each append measurement runs about this long
ROUNDS = 3  # best of

_PAYLOAD = msgspec.Raw(b'{"seat":2,"card":37,"trick":5,"led":"spades"}')
_META = Metadata(actor="bench", correlation_id=uuid.uuid4())


def _events(n: int) -> list[NewEvent]:
    return [
        NewEvent(event_id=uuid.uuid4(), type="CardPlayed", data=_PAYLOAD, metadata=_META)
        for _ in range(n)
    ]


@contextlib.contextmanager
def _servers() -> Iterator[tuple[str, str]]:
    db, nats_url = os.environ.get("SPADES_DATABASE_URL"), os.environ.get("SPADES_NATS_URL")
    if db and nats_url:
        yield db, nats_url
        return
    from services.tools.infra import embedded_stack

    home = Path(".spades") / f"bench-{os.getpid()}"
    try:
        with embedded_stack(home.resolve(), durable=False) as stack:
            yield db or stack.database_url, nats_url or stack.nats_url
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def _rate(run: Callable[[], Awaitable[int]]) -> float:
    """Events per second of `run` (which returns how many events it wrote)."""
    start = time.perf_counter()
    count = await run()
    return count / (time.perf_counter() - start)


async def _until(seconds: float, step: Callable[[], Awaitable[int]]) -> int:
    deadline = time.perf_counter() + seconds
    done = 0
    while time.perf_counter() < deadline:
        done += await step()
    return done


def _sid() -> str:
    return f"bench-{uuid.uuid4()}"


async def _store_runs(store: PostgresEventStore) -> dict[str, float]:
    out: dict[str, float] = {}

    def one_stream(size: int) -> Callable[[], Awaitable[int]]:
        async def run() -> int:
            sid, version = _sid(), 0

            async def step() -> int:
                nonlocal version
                stored = await store.append(sid, version, _events(size))
                version += len(stored)
                return len(stored)

            return await _until(SECONDS, step)

        return run

    def many_streams(size: int) -> Callable[[], Awaitable[int]]:
        async def run() -> int:
            async def writer() -> int:
                return await one_stream(size)()

            return sum(await asyncio.gather(*(writer() for _ in range(STREAMS))))

        return run

    out["append 1 stream, 1 event/append"] = await _rate(one_stream(1))
    out[f"append 1 stream, {BATCH} events/append"] = await _rate(one_stream(BATCH))
    out[f"append {STREAMS} streams, 1 event/append"] = await _rate(many_streams(1))
    out[f"append {STREAMS} streams, {BATCH} events/append"] = await _rate(many_streams(BATCH))
    return out


async def _raw_runs(pool: asyncpg.Pool) -> dict[str, float]:
    out: dict[str, float] = {}
    data = bytes(_PAYLOAD).decode()
    meta = msgspec.json.encode(_META).decode()

    async def single_rows() -> int:
        sid, version = _sid(), 0
        async with pool.acquire() as conn:
            stmt = await conn.prepare(
                "INSERT INTO spades_events (event_id, stream_id, version, type, data, metadata)"
                " VALUES ($1, $2, $3, $4, $5::json, $6::jsonb)"
            )

            async def step() -> int:
                nonlocal version
                version += 1
                await stmt.fetch(uuid.uuid4(), sid, version, "CardPlayed", data, meta)
                return 1

            return await _until(SECONDS, step)

    async def unnest_batches() -> int:
        sid, version = _sid(), 0
        async with pool.acquire() as conn:
            stmt = await conn.prepare(
                "INSERT INTO spades_events (event_id, stream_id, version, type, data, metadata)"
                " SELECT e, $2, v, 'CardPlayed', d::json, m::jsonb"
                " FROM unnest($1::uuid[], $3::int8[], $4::text[], $5::text[]) AS t(e, v, d, m)"
            )

            async def step() -> int:
                nonlocal version
                versions = list(range(version + 1, version + BATCH + 1))
                version += BATCH
                ids = [uuid.uuid4() for _ in range(BATCH)]
                await stmt.fetch(ids, sid, versions, [data] * BATCH, [meta] * BATCH)
                return BATCH

            return await _until(SECONDS, step)

    out["raw asyncpg single-row INSERT loop"] = await _rate(single_rows)
    out[f"raw asyncpg unnest INSERT, {BATCH} rows"] = await _rate(unnest_batches)
    return out


async def _bus_runs(
    pool: asyncpg.Pool, store: PostgresEventStore, db: str, nats_url: str
) -> dict[str, float]:
    out: dict[str, float] = {}
    subjects = Subjects(f"bench{uuid.uuid4().hex[:8]}")
    nc = await connect(nats_url, name="bench")
    js = nc.jetstream()
    await ensure_streams(js, subjects)
    try:
        payload = b'{"x":' + b"1" * 300 + b"}"

        async def raw_publish() -> int:
            subject = subjects.event("bench-raw", "CardPlayed")

            async def step() -> int:
                await js.publish(subject, payload, headers={"Nats-Msg-Id": uuid.uuid4().hex})
                return 1

            return await _until(SECONDS, step)

        out["raw js.publish loop (await each ack)"] = await _rate(raw_publish)

        # The relay drains a backlog: 64 streams, in order per stream. Its checkpoint starts
        # at the current head, so the events of the runs above are not part of it.
        relay_name = f"bench-{uuid.uuid4().hex[:6]}"
        head = await pool.fetchrow(
            "SELECT transaction_id, position FROM spades_events"
            " ORDER BY transaction_id DESC, position DESC LIMIT 1"
        )
        if head is not None:
            await save_checkpoint(pool, relay_name, Checkpoint(*head))
        backlog = 0
        for _ in range(40):
            results = await asyncio.gather(
                *(store.append(_sid(), 0, _events(4)) for _ in range(STREAMS))
            )
            backlog += sum(len(r) for r in results)
        base = (await js.stream_info(subjects.events_stream)).state.messages
        stop, stats = asyncio.Event(), RelayStats()

        async def relay() -> int:
            task = asyncio.create_task(
                run_relay(
                    database_url=db,
                    nats_url=nats_url,
                    subjects=subjects,
                    stop=stop,
                    name=relay_name,
                    stats=stats,
                )
            )
            while stats.published < backlog:  # noqa: ASYNC110 - polling a counter
                await asyncio.sleep(0.01)
            stop.set()
            await task
            return stats.published

        out[f"relay publishes ({STREAMS} streams backlog)"] = await _rate(relay)
        stream = (await js.stream_info(subjects.events_stream)).state.messages - base
        assert stream == backlog, f"relay published {stream} of {backlog}"
        for name in (subjects.events_stream, subjects.parked_stream):
            await js.delete_stream(name)
    finally:
        await close_nats(nc)
    return out


async def _main() -> None:
    meta = artifact.run_metadata()
    with _servers() as (admin_url, nats_url):
        name = f"spades_bench_{uuid.uuid4().hex[:8]}"
        admin = await asyncpg.connect(admin_url)
        await admin.execute(f'CREATE DATABASE "{name}"')
        db = admin_url.rsplit("/", 1)[0] + f"/{name}"
        try:
            conn = await asyncpg.connect(db)
            await migrate(conn)
            await conn.close()
            pool = await create_pool(db, min_size=4, max_size=8)
            store = PostgresEventStore(pool)
            try:
                # Rounds interleave the raw and the store runs and each figure keeps its best
                # round, so a burst of load from elsewhere on the machine skews less.
                figures: dict[str, float] = {}
                for _ in range(ROUNDS):
                    this = await _raw_runs(pool)
                    this |= await _store_runs(store)
                    this |= await _bus_runs(pool, store, db, nats_url)
                    figures = {k: max(v, figures.get(k, 0.0)) for k, v in this.items()}
            finally:
                await pool.close()
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await admin.close()
    single = figures["raw asyncpg single-row INSERT loop"]
    unnest = figures[f"raw asyncpg unnest INSERT, {BATCH} rows"]
    publish = figures["raw js.publish loop (await each ack)"]
    print(f"best of {ROUNDS} rounds; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"{'measurement':<48} {'events/s':>10}  ratio")
    for label, rate in figures.items():
        if label.startswith("relay"):
            ref, ref_name = publish, "raw js.publish"
        elif f"{BATCH} events" in label or "unnest" in label:
            ref, ref_name = unnest, "raw unnest"
        elif label.startswith("raw js"):
            ref, ref_name = publish, "raw js.publish"
        else:
            ref, ref_name = single, "raw single-row"
        print(f"{label:<48} {rate:>10,.0f}  {rate / ref:5.2f}x {ref_name}")
    worst = min(figures[k] for k in figures if f"{BATCH} events/append" in k)
    verdict = "met" if worst * 2 >= unnest else "NOT met"
    print(
        f"goal: batched appends within 2x of raw unnest: {verdict} ({unnest / worst:.2f}x slower)"
    )
    named = {f"store.{_slug(label)}_events_per_s": rate for label, rate in figures.items()}
    print(f"wrote {artifact.record('store', named, meta | {'rounds': ROUNDS})}")


def _slug(label: str) -> str:
    """Return a figure name for a printed label ("raw js.publish loop" -> raw_js_publish_loop)."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def main() -> None:
    """Run the store benchmarks and print events/s with ratios to the raw baselines."""
    asyncio.run(_main())


if __name__ == "__main__":
    main()
