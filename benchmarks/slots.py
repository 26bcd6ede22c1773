"""What 1,024 table hash slots cost a replica per lease tick, and when replicas join or leave.

    uv run --frozen python -m benchmarks slots

Uses $SPADES_DATABASE_URL / $SPADES_NATS_URL when set, else starts the embedded stack (as
`benchmarks.store` does), in a throwaway database and subject prefix. Measures, with the
table's real lease names (`table/0` .. `table/1023`) and `events.leases.LeaseGroup`:

- ``assign_ms``: the balanced rendezvous over 1,024 slots for 1, 5, 50 and 200 members, cold
  (every member new to the process: its 1,024 scores hashed) and warm (the members known; what
  a replica pays when one joins or leaves). A tick with the same members pays neither: the
  share is cached per member set.
- ``tick_ms`` / ``tick_cpu_ms``: one lease tick of a replica holding every slot (renew 1,024
  rows in one statement, read the live members, claim nothing), and of one of five members
  holding its fifth: the steady cost, five ticks a second with the default lease. Wall time
  (the database's work included) and the replica's own CPU; median of ``TICKS``.
- ``subscribe_ms``: subscribing (and unsubscribing) the 1,024 slot command subjects on one NATS
  connection, as a replica taking over every slot does, with a flush (the server has them all).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
import uuid
from collections.abc import Mapping

import asyncpg

from benchmarks import artifact
from benchmarks.store import _servers
from events.bus import close_nats, connect
from events.leases import LeaseGroup
from events.logs import get_logger
from events.migrations import migrate
from events.pgstore import create_pool
from events.sharing import _scores, assign
from events.subjects import SLOTS, Subjects

TICKS = 40
NAMES = [f"table/{s}" for s in range(SLOTS)]
LOG = get_logger("bench")


def _members(count: int) -> list[str]:
    return [f"table:pod-{uuid.uuid4().hex[:8]}:{i}:{uuid.uuid4().hex[:6]}" for i in range(count)]


def _assign_figures() -> dict[str, float]:
    out: dict[str, float] = {}
    for count in (1, 5, 50, 200):
        live = _members(count)
        _scores.cache_clear()
        started = time.perf_counter()
        assign(NAMES, live)
        out[f"assign_ms.members_{count}.cold"] = (time.perf_counter() - started) * 1e3
        warm = []
        for _ in range(5):
            started = time.perf_counter()
            assign(NAMES, live)
            warm.append(time.perf_counter() - started)
        out[f"assign_ms.members_{count}.warm"] = min(warm) * 1e3
    return out


async def _nothing(*_args: object) -> None:
    return None


async def _tick_ms(pool: asyncpg.Pool, group: str, others: int) -> tuple[float, float]:
    """Median ms of one steady tick of a member holding its share beside ``others`` members:
    wall time (the database's part included) and this process's CPU."""
    member = f"bench:{uuid.uuid4().hex[:6]}"
    leases = LeaseGroup(
        pool,
        group=group,
        names=NAMES,
        member=member,
        on_gain=_nothing,
        on_lose=_nothing,
        log=LOG,
    )
    await leases._ensure_rows(asyncio.Event())
    if others:  # the other members: alive (heartbeating) and holding the rest
        await pool.executemany(
            "INSERT INTO spades_lease_members (grp, member, seen_at) VALUES ($1, $2, now()"
            " + interval '1 hour')",
            [(group, m) for m in _members(others)],
        )
    await leases._tick(claim=True)  # claims its share
    times, cpu = [], []
    for _ in range(TICKS):
        started, used = time.perf_counter(), time.process_time()
        gained = await leases._tick(claim=True)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
        assert not gained
    assert len(leases.held) == (SLOTS if not others else len(leases._assigned[1]))
    await leases._release_all()
    return statistics.median(times) * 1e3, statistics.median(cpu) * 1e3


async def _subscribe_ms(nats_url: str) -> dict[str, float]:
    subjects = Subjects(f"bench{uuid.uuid4().hex[:8]}")
    nc = await connect(nats_url, name="bench-slots")
    try:

        async def on_command(_msg: object) -> None:
            return None

        started = time.perf_counter()
        subs = [
            await nc.subscribe(subjects.table_slot_commands(s), cb=on_command) for s in range(SLOTS)
        ]
        await nc.flush()
        subscribed = time.perf_counter() - started
        started = time.perf_counter()
        for sub in subs:
            await sub.unsubscribe()
        await nc.flush()
        unsubscribed = time.perf_counter() - started
    finally:
        await close_nats(nc)
    return {
        "subscribe_ms.all_slots": subscribed * 1e3,
        "unsubscribe_ms.all_slots": unsubscribed * 1e3,
    }


async def _main() -> Mapping[str, float]:
    figures = _assign_figures()
    with _servers() as (admin_url, nats_url):
        name = f"spades_bench_{uuid.uuid4().hex[:8]}"
        admin = await asyncpg.connect(admin_url)
        await admin.execute(f'CREATE DATABASE "{name}"')
        db = admin_url.rsplit("/", 1)[0] + f"/{name}"
        try:
            conn = await asyncpg.connect(db)
            await migrate(conn)
            await conn.close()
            pool = await create_pool(db, min_size=1, max_size=2)
            try:
                for shape, group, others in (
                    ("one_replica_all_slots", "b1", 0),
                    ("one_of_five_replicas", "b5", 4),
                ):
                    wall, cpu = await _tick_ms(pool, group, others)
                    figures[f"tick_ms.{shape}"] = wall
                    figures[f"tick_cpu_ms.{shape}"] = cpu
            finally:
                await pool.close()
            figures |= await _subscribe_ms(nats_url)
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await admin.close()
    return figures


def main() -> None:
    """Measure and print the slot figures; record them under ``slots`` in the artifact."""
    meta = artifact.run_metadata()
    figures = asyncio.run(_main())
    print(f"{SLOTS} slots; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    for label, value in figures.items():
        print(f"  {label:<40} {value:8.2f}")
    named = {f"slots.{label}": value for label, value in figures.items()}
    print(f"wrote {artifact.record('slots', named, meta | {'slots': SLOTS, 'ticks': TICKS})}")
