"""The table's 1,024 hash slots as leases (issue 32): assignment, rows and renewals at size."""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence

import asyncpg
from hypothesis import given
from hypothesis import strategies as st

from events.leases import LeaseGroup
from events.sharing import assign
from events.subjects import SLOTS, slot_of
from tests.events.test_fencing import LOG, Member, claim

NAMES = [f"table/{s}" for s in range(SLOTS)]


def members(count: int, first: int = 0) -> list[str]:
    return [f"table:pod-{i}:{100 + i}:a1b2c3" for i in range(first, first + count)]


def reference(names: Sequence[str], live: Iterable[str]) -> dict[str, str]:
    """The definition, written the slow way: each lease in name order goes to the
    highest-scoring member with room (of equal scores, the first by name)."""
    ordered = sorted(set(live))
    room = math.ceil(len(names) / len(ordered))
    count = dict.fromkeys(ordered, 0)
    owners: dict[str, str] = {}

    def score(name: str, member: str) -> int:
        digest = hashlib.blake2b(f"{name}\0{member}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big")

    for name in sorted(names):
        for member in sorted(ordered, key=lambda m: score(name, m), reverse=True):
            if count[member] < room:
                owners[name] = member
                count[member] += 1
                break
    return owners


@given(
    names=st.lists(st.text("abc/0123456789", min_size=1, max_size=6), unique=True, max_size=40),
    live=st.lists(st.text("xyz:12", min_size=1, max_size=5), min_size=1, max_size=9),
)
def test_the_fast_assignment_is_the_definition(names: list[str], live: list[str]) -> None:
    assert assign(names, live) == reference(names, live)


def test_the_slot_assignment_is_the_definition_at_full_size() -> None:
    for count in (1, 2, 3, 5, 17):
        assert assign(NAMES, members(count)) == reference(NAMES, members(count))


def test_a_slot_is_a_fixed_hash_of_the_game() -> None:
    game = "7a1c2e0e-4b8f-4e57-9a57-0b0f1f7a3c11"
    assert slot_of(game) == slot_of(game)
    assert all(0 <= slot_of(f"{game[:-2]}{i:02d}") < SLOTS for i in range(100))
    assert SLOTS % 16 == 0  # a game's slot modulo 16 is the partition it had before slots


def test_two_to_five_to_three_replicas_moves_little_more_than_it_must() -> None:
    two, five = members(2), members(5)
    three = [five[0], five[2], five[3]]
    before, during, after = assign(NAMES, two), assign(NAMES, five), assign(NAMES, three)
    for owners, live in ((before, two), (during, five), (after, three)):
        counts = Counter(owners.values())
        assert sorted(owners) == sorted(NAMES)
        assert set(counts) == set(live)
        assert max(counts.values()) <= math.ceil(SLOTS / len(live))
        assert min(counts.values()) >= SLOTS // len(live) - len(live)  # no member starves
    # growing: at least what the newcomers take must move; balanced rendezvous moves little more
    taken = sum(1 for n in NAMES if during[n] not in two)
    moved = sum(1 for n in NAMES if during[n] != before[n])
    assert moved <= 1.1 * taken, (moved, taken)
    # shrinking: what the leavers held must move, and little else
    orphaned = sum(1 for n in NAMES if during[n] not in three)
    moved = sum(1 for n in NAMES if after[n] != during[n])
    assert moved <= 1.1 * orphaned, (moved, orphaned)


async def test_new_lease_rows_start_at_the_highest_epoch_of_their_siblings(
    pg_pool: asyncpg.Pool,
) -> None:
    """16 partitions regrouped into 1,024 slots: a game whose partition lease had epoch e moves
    to a new slot row, which must not start below e (its epochs would go back)."""
    for partition in range(16):
        for _ in range(1 + partition % 4):
            await claim(pg_pool, f"table/{partition}", "old")
    before = {
        r["name"]: r["epoch"]
        for r in await pg_pool.fetch("SELECT name, epoch FROM spades_leases ORDER BY name")
    }
    highest = max(before.values())
    assert highest == 4

    async def nothing(*_args: object) -> None:
        return None

    group = LeaseGroup(
        pg_pool, group="t", names=NAMES, member="m", on_gain=nothing, on_lose=nothing, log=LOG
    )
    await group._ensure_rows(asyncio.Event())
    epochs = dict(await pg_pool.fetch("SELECT name, epoch FROM spades_leases"))
    assert len(epochs) == SLOTS
    assert {n: epochs[n] for n in before} == before  # the old rows keep theirs
    assert {epochs[n] for n in NAMES if n not in before} == {highest}


async def test_three_members_share_and_keep_a_thousand_slot_leases(pg_pool: asyncpg.Pool) -> None:
    group = [Member(pg_pool, f"m{i}", NAMES) for i in range(3)]
    try:

        def shared() -> bool:
            held = [m.holding() for m in group]
            return set().union(*held) == set(NAMES) and sum(map(len, held)) == SLOTS

        deadline = time.monotonic() + 60
        while not shared():
            assert time.monotonic() < deadline, [len(m.holding()) for m in group]
            await asyncio.sleep(0.05)
        assert max(len(m.holding()) for m in group) <= math.ceil(SLOTS / 3)
        shares = [m.group._assigned for m in group]
        renewed = [m.group.last_sync for m in group]
        deadline = time.monotonic() + 30  # a few more ticks: every lease renewed, none moved
        while not all(m.group.last_sync > r + 1.0 for m, r in zip(group, renewed, strict=True)):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        assert shared()
        assert all(not m.lost for m in group)
        # the same members: the share was not computed again
        assert [m.group._assigned for m in group] == shares
        assert all(m.group._assigned is s for m, s in zip(group, shares, strict=True))
    finally:
        for m in group:
            await m.close()
