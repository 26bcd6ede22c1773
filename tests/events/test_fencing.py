"""Leases and fenced appends on real PostgreSQL: a stale owner's write is refused by the store."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping

import asyncpg
import pytest
import structlog

from events.envelope import Metadata, NewEvent
from events.leases import LeaseGroup, assign
from events.pgstore import PostgresEventStore, append_with
from events.store import Fence, Fenced

LOG = structlog.get_logger("test")


def new_events(count: int = 1) -> list[NewEvent]:
    return [
        NewEvent(event_id=uuid.uuid4(), type="Tick", data=b"{}", metadata=Metadata())  # type: ignore[arg-type]
        for _ in range(count)
    ]


async def claim(pool: asyncpg.Pool, name: str, owner: str) -> Fence:
    """Take the lease by force (as a new owner would once it expired) and return its fence."""
    epoch = await pool.fetchval(
        "INSERT INTO spades_leases (name, owner, epoch, expires_at) VALUES ($1, $2, 1, now())"
        " ON CONFLICT (name) DO UPDATE SET owner = $2, epoch = spades_leases.epoch + 1"
        " RETURNING epoch",
        name,
        owner,
    )
    return Fence(name, epoch)


async def test_an_append_under_a_stale_epoch_is_refused_and_writes_nothing(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    old = await claim(pg_pool, "table/3", "a")
    await event_store.append("game-x", 0, new_events(2), fence=old)
    new = await claim(pg_pool, "table/3", "b")
    with pytest.raises(Fenced) as refused:
        await event_store.append("game-x", 2, new_events(), fence=old)
    assert refused.value.current_epoch == new.epoch
    assert await event_store.stream_version("game-x") == 2
    await event_store.append("game-x", 2, new_events(), fence=new)
    assert await event_store.stream_version("game-x") == 3
    # a new stream is fenced too, and so is a fence naming no lease at all
    with pytest.raises(Fenced):
        await event_store.append("game-y", 0, new_events(), fence=old)
    with pytest.raises(Fenced):
        await event_store.append("game-y", 0, new_events(), fence=Fence("nowhere", 1))
    assert await event_store.stream_version("game-y") == 0


async def test_in_a_group_commit_only_the_stale_writer_is_refused(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    stale = await claim(pg_pool, "table/1", "a")
    await claim(pg_pool, "table/1", "b")
    current = await claim(pg_pool, "table/2", "a")
    outcomes = await asyncio.gather(
        event_store.append("game-1", 0, new_events(), fence=stale),
        event_store.append("game-2", 0, new_events(), fence=current),
        event_store.append("game-3", 0, new_events()),
        event_store.append("game-4", 0, new_events(), fence=stale),
        return_exceptions=True,
    )
    assert [type(o).__name__ for o in outcomes] == ["Fenced", "list", "list", "Fenced"]
    versions = [await event_store.stream_version(f"game-{i}") for i in range(1, 5)]
    assert versions == [0, 1, 1, 0]


async def test_a_claim_waits_for_an_append_in_flight_and_later_appends_see_it(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    """The race the row lock closes: claim while the old owner's append is uncommitted."""
    old = await claim(pg_pool, "table/5", "a")
    async with pg_pool.acquire() as writer:
        transaction = writer.transaction()
        await transaction.start()
        await append_with(writer, "game-z", 0, new_events(), fence=old)
        claiming = asyncio.create_task(claim(pg_pool, "table/5", "b"))
        # the claim must be waiting on the row lock the append holds (not done, not failed)
        deadline = time.monotonic() + 30
        while not await pg_pool.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query LIKE '%spades_leases%'"
        ):
            assert not claiming.done(), "a claim overtook an append that held the old epoch"
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        assert not claiming.done()
        await transaction.commit()
    new = await asyncio.wait_for(claiming, 10)
    assert new.epoch == old.epoch + 1
    with pytest.raises(Fenced):
        await event_store.append("game-z", 1, new_events(), fence=old)
    assert await event_store.stream_version("game-z") == 1


def test_the_assignment_is_balanced_shared_by_everyone_and_moves_little() -> None:
    names = [f"table/{p}" for p in range(16)]
    three = assign(names, ["r1", "r2", "r3"])
    assert sorted(three) == sorted(names)
    counts = sorted(list(three.values()).count(m) for m in ("r1", "r2", "r3"))
    assert counts in ([5, 5, 6], [4, 6, 6])  # at most ceil(16/3) = 6 each
    assert assign(names, ["r3", "r1", "r2"]) == three  # order of discovery does not matter
    two = assign(names, ["r1", "r2"])
    assert sorted(list(two.values()).count(m) for m in ("r1", "r2")) == [8, 8]
    moved = sum(1 for n in names if two[n] != three[n] and three[n] != "r3")
    assert moved <= 4  # losing r3 mostly moves r3's leases, not the others'


class Member:
    """A LeaseGroup member that records when it gained and lost each lease."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        name: str,
        names: list[str],
        *,
        ttl: float = 2.0,
        tick_timeout: float | None = None,
    ) -> None:
        self.gained: dict[str, float] = {}
        self.lost: dict[str, float] = {}
        self.stop = asyncio.Event()
        self.group = LeaseGroup(
            pool,
            group="test",
            names=names,
            member=name,
            on_gain=self.on_gain,
            on_lose=self.on_lose,
            log=LOG,
            ttl=ttl,
            interval=0.4,
            tick_timeout=tick_timeout,
        )
        self.task = asyncio.create_task(self.group.run(self.stop))

    async def on_gain(self, fences: Mapping[str, Fence]) -> None:
        for name in fences:
            self.gained[name] = time.monotonic()

    async def on_lose(self, names: set[str], why: str) -> None:
        for name in names:
            self.lost[name] = time.monotonic()

    def holding(self) -> set[str]:
        return {n for n in self.group.names if self.group.fence(n) is not None}

    async def close(self) -> None:
        self.stop.set()
        await self.task


async def test_members_share_leases_and_a_leaving_one_hands_them_over(
    pg_pool: asyncpg.Pool,
) -> None:
    names = [f"table/{p}" for p in range(16)]
    members = [Member(pg_pool, f"m{i}", names) for i in range(3)]
    try:

        def shared() -> bool:
            held = [m.holding() for m in members]
            union = set().union(*held)
            return union == set(names) and sum(map(len, held)) == 16 and min(map(len, held)) >= 4

        deadline = time.monotonic() + 30
        while not shared():
            assert time.monotonic() < deadline, [sorted(m.holding()) for m in members]
            await asyncio.sleep(0.05)
        leaving = members.pop()
        theirs = leaving.holding()
        await leaving.close()  # a graceful stop releases at once
        deadline = time.monotonic() + 30
        while {n for m in members for n in m.holding()} != set(names):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        for name in theirs:
            taker = next(m for m in members if name in m.gained)
            assert taker.gained[name] >= leaving.lost[name]
    finally:
        for m in members:
            await m.close()


async def test_a_member_cut_off_from_the_database_stops_before_another_claims(
    database_url: str, pg_pool: asyncpg.Pool
) -> None:
    names = ["matchmaking"]
    own_pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    assert own_pool is not None
    first = Member(own_pool, "first", names)
    second: Member | None = None
    try:
        deadline = time.monotonic() + 30
        while first.holding() != {"matchmaking"}:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        second = Member(pg_pool, "second", names)
        # cut the first member off from the database: every renewal it tries now fails
        await own_pool.close()
        deadline = time.monotonic() + 30
        while "matchmaking" not in second.gained:
            assert time.monotonic() < deadline, "the lease never moved"
            await asyncio.sleep(0.05)
        assert first.lost["matchmaking"] < second.gained["matchmaking"]
        assert first.group.fence("matchmaking") is None
    finally:
        first.stop.set()
        first.task.cancel()
        if second is not None:
            await second.close()


async def test_a_busy_node_whose_every_renewal_is_slow_keeps_its_lease(
    database_url: str,
) -> None:
    """Every connection the member takes from its pool arrives 1.2 s late (a busy node: the
    pool contended, the process starved), longer than two renewal intervals but well inside a
    lease's validity. The member must still claim the lease and keep it: were a slow renewal
    counted as failed, it would never renew, and on a loaded machine partitions would lapse
    and move between live replicas with games stopping each time."""

    async def late(conn: asyncpg.Connection) -> None:
        await asyncio.sleep(1.2)

    slow_pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2, setup=late)
    assert slow_pool is not None
    names = [f"busy/{uuid.uuid4().hex[:8]}"]
    member = Member(slow_pool, "busy", names, ttl=4.0)
    assert member.group.interval * 2 < 1.2 < member.group.tick_timeout
    try:
        deadline = time.monotonic() + 30
        while member.holding() != set(names):
            assert time.monotonic() < deadline, "a slow node never claimed the lease"
            await asyncio.sleep(0.05)
        held_since = time.monotonic()
        while time.monotonic() - held_since < 2 * member.group.ttl:  # two validities
            assert member.holding() == set(names), "the lease lapsed on a live, slow member"
            await asyncio.sleep(0.05)
        assert member.lost == {}
    finally:
        await member.close()
        await slow_pool.close()


class SlowMember(Member):
    """A member whose take-over outlasts a renewal's timeout (a busy machine loading games)."""

    def __init__(self, pool: asyncpg.Pool, name: str, names: list[str], slow: float) -> None:
        self.slow = slow
        self.taken_on: set[str] = set()
        # the lease outlives the take-over, which outlasts a renewal's timeout
        super().__init__(pool, name, names, ttl=6.0, tick_timeout=1.0)

    async def on_gain(self, fences: Mapping[str, Fence]) -> None:
        await super().on_gain(fences)
        await asyncio.sleep(self.slow)
        self.taken_on |= set(fences)


async def test_a_slow_take_over_is_finished_not_cut_off_by_the_renewal_timeout(
    pg_pool: asyncpg.Pool,
) -> None:
    """Were on_gain cancelled half-way while the lease stays held, the partition's work
    (a table's games and timers) would never be picked up: games stopped for good."""
    names = [f"slow/{uuid.uuid4().hex[:8]}"]
    member = SlowMember(pg_pool, "slow", names, slow=2.5)
    assert member.group.tick_timeout < member.slow
    try:
        deadline = time.monotonic() + 30
        while member.taken_on != set(names):
            assert time.monotonic() < deadline, "the take-over never finished"
            await asyncio.sleep(0.05)
        assert member.holding() == set(names)
        assert member.lost == {}
    finally:
        await member.close()


class HangingMember(Member):
    """A member whose first take-over never returns (a database that stopped answering)."""

    def __init__(self, pool: asyncpg.Pool, name: str, names: list[str]) -> None:
        self.calls = 0
        self.taken_on: set[str] = set()
        super().__init__(pool, name, names)

    async def on_gain(self, fences: Mapping[str, Fence]) -> None:
        await super().on_gain(fences)
        self.calls += 1
        if self.calls == 1:
            await asyncio.Event().wait()  # hangs until cancelled
        self.taken_on |= set(fences)


async def test_a_hung_take_over_is_cut_off_undone_and_tried_again(pg_pool: asyncpg.Pool) -> None:
    """Were a hung on_gain awaited for ever, renewals would stop for good; it is cut off
    after a lease's time to live, on_lose undoes it, and the next claim takes over."""
    names = [f"hung/{uuid.uuid4().hex[:8]}"]
    member = HangingMember(pg_pool, "hung", names)
    try:
        deadline = time.monotonic() + 30
        while member.taken_on != set(names):
            assert time.monotonic() < deadline, "the lease was never taken on again"
            await asyncio.sleep(0.05)
        assert member.calls == 2
        assert set(member.lost) == set(names)  # the hung take-over was undone first
        assert member.lost[names[0]] < member.gained[names[0]]  # then claimed again
        assert member.holding() == set(names)
    finally:
        await member.close()
