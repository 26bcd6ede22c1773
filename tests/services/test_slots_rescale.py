"""Replicas come and go over the fixed hash slots (issue 32): 2 -> 5 -> 3 table replicas.

Games hash into `events.subjects.SLOTS` (1,024) slots, each a fenced lease shared out among the
live table replicas. Changing the replica count moves whole slots between replicas and never
changes a game's slot. Here practice games are under way while the count goes from 2 to 5
(three replicas join) and then to 3 (one leaves gracefully, one is killed with SIGKILL), and:

- no game is lost: every game opened reaches `GameFinished`;
- no game is forked: every game's versions run 1..n with no gap or repeat, and in commit order
  each slot's events carry non-decreasing lease epochs (no stale owner wrote after a new one);
- no game is stuck: after each change every game still under way moves again, and the people
  are never refused anything but ``unavailable`` (resent, as the gateway does);
- the slots are shared by exactly the live replicas after each change, within the balanced
  share (ceil(1024 / replicas) each), and every replica that stayed is still up.

Every service is a real process (`spades serve table`) on the test's own database and NATS
prefix; the people are `TableClient`s acting on their own turn from a fresh view.
"""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import subprocess

import asyncpg
import pytest
from nats.aio.client import Client as NATS

from events.contracts.game import stream_of
from events.pgstore import PostgresEventStore
from events.subjects import SLOTS, Subjects, slot_of
from tests.infra import Processes, eventually
from tests.services.test_failover import (
    LONGER,
    Player,
    all_beyond,
    assert_epochs_never_go_back,
    finished,
    last_version_change,
    open_games,
    owners,
)

# Whole games through five replicas on a shared two-core machine.
pytestmark = pytest.mark.timeout(900)

GAMES = 16


def start_table(processes: Processes) -> subprocess.Popen[bytes]:
    return processes.start(
        "-m",
        "services.tools.cli",
        "serve",
        "table",
        env={"SPADES_OPS_PORT": "0", "SPADES_LEASE_SECONDS": "4", "SPADES_TURN_SECONDS": "120"},
    )


def member_pid(member: str) -> int:
    """Return the process id in a lease member's name (`table:host:pid:tag`)."""
    return int(member.split(":")[2])


async def shared_by(pool: asyncpg.Pool, pids: set[int]) -> dict[int, str] | None:
    """Return slot -> owner once every slot is held, by exactly the replicas ``pids``, each
    within its balanced share; None before."""
    held = await owners(pool)
    if len(held) != SLOTS:
        return None
    counts = collections.Counter(held.values())
    if {member_pid(m) for m in counts} != pids:
        return None
    return held if max(counts.values()) <= -(-SLOTS // len(pids)) else None


async def unfinished(store: PostgresEventStore, game_ids: list[str]) -> list[str]:
    return [g for g in game_ids if not await finished(store, [g])]


async def moves_again(store: PostgresEventStore, game_ids: list[str], what: str) -> None:
    """Wait until the games still under way have all moved past where they stand now."""
    live = await unfinished(store, game_ids)
    before = {g: await store.stream_version(stream_of(g)) for g in live}

    async def all_moved() -> bool:
        for game_id, version in before.items():
            now = await store.stream_version(stream_of(game_id))
            if now <= version and not await finished(store, [game_id]):
                return False
        return True

    await eventually(all_moved, within=120, interval=0.2, what=what)


async def assert_whole(store: PostgresEventStore, game_ids: list[str]) -> None:
    """Every game's log is one line: versions 1..n, each once, ending in GameFinished."""
    for game_id in game_ids:
        stored = await store.read(stream_of(game_id))
        assert [s.version for s in stored] == list(range(1, len(stored) + 1)), game_id
        assert stored[-1].type == "GameFinished", game_id
        assert len({s.event_id for s in stored}) == len(stored), game_id


async def test_two_then_five_then_three_replicas_move_slots_and_lose_fork_or_stall_no_game(
    processes: Processes,
    nc: NATS,
    subjects: Subjects,
    pg_pool: asyncpg.Pool,
    event_store: PostgresEventStore,
) -> None:
    first = [start_table(processes) for _ in range(2)]
    held2 = await eventually(
        lambda: shared_by(pg_pool, {p.pid for p in first}),
        within=90,
        what="two replicas to share the slots",
    )
    players: list[Player] = await open_games(
        nc, subjects, GAMES, like_the_gateway=True, target=LONGER
    )
    game_ids = [p.game_id for p in players]
    assert len({slot_of(g) for g in game_ids}) > GAMES // 2  # the games spread over slots
    playing = asyncio.gather(*(p.play(within=840) for p in players))
    await eventually(
        lambda: all_beyond(event_store, game_ids, 8), within=300, what="every game under way"
    )

    # 2 -> 5: three replicas join; each takes its share from the two, game by whole slot
    joined = [start_table(processes) for _ in range(3)]
    five = {p.pid for p in (*first, *joined)}
    held5 = await eventually(
        lambda: shared_by(pg_pool, five), within=120, what="five replicas to share the slots"
    )
    live = await unfinished(event_store, game_ids)
    assert live, "every game finished before the replicas joined: nothing was moved"
    movers = {held5[slot_of(g)] for g in live}
    moved_up = sum(1 for g in live if held5[slot_of(g)] != held2[slot_of(g)])
    await moves_again(event_store, game_ids, "the games to move again under five replicas")

    # 5 -> 3: one replica stops gracefully (SIGTERM, as a scale-down does), one is killed
    leaving, killed = first[0], joined[0]
    leaving.send_signal(signal.SIGTERM)
    os.kill(killed.pid, signal.SIGKILL)
    assert leaving.wait(60) == 0, processes.log(leaving)[-2000:]
    killed.wait()
    three = five - {leaving.pid, killed.pid}
    held3 = await eventually(
        lambda: shared_by(pg_pool, three), within=120, what="three replicas to share the slots"
    )
    live = await unfinished(event_store, game_ids)
    assert live, "every game finished before the scale-down"
    moved_down = sum(1 for g in live if held3[slot_of(g)] != held5[slot_of(g)])
    await moves_again(event_store, game_ids, "the games to move again under three replicas")

    await asyncio.wait_for(playing, 840)
    assert await finished(event_store, game_ids)
    assert [r for p in players for r in p.refusals] == []
    await assert_whole(event_store, game_ids)
    await assert_epochs_never_go_back(event_store, game_ids)
    for proc in (first[1], *joined[1:]):
        assert proc.poll() is None, processes.log(proc)[-2000:]
    print(
        f"\n{GAMES} games over {len({slot_of(g) for g in game_ids})} slots; live games that"
        f" changed owner: {moved_up} at 2 -> 5, {moved_down} at 5 -> 3; under five replicas"
        f" they were served by {len(movers)}; last version sum"
        f" {await last_version_change(event_store, game_ids)}"
    )
