"""Table ownership under the faults production meets: replicas, a database crash, split brain.

Every test runs real processes (`spades serve ...`) on a PostgreSQL of its own, which it may
crash (`pg_ctl stop -m immediate`) and start again, and on the session's NATS. Players are
`TableClient`s that act only on their own turn from a fresh view, so the only refusal a
correct platform may give them is ``unavailable`` (send again: the slot is changing
hands); any rule refusal (``out_of_turn``, ``wrong_phase`` ...) would be a replica deciding on
a state another replica had already moved on: the split brain these tests exist to catch.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

import events.contracts.game  # noqa: F401  (registers the game events the store decodes)
from events.bus import close_nats, connect
from events.contracts import game as wire
from events.contracts.audience import Frame, frame_decoder
from events.contracts.game import stream_of
from events.envelope import REGISTRY, StoredEvent
from events.migrations import migrate
from events.pgstore import PostgresEventStore, create_pool
from events.subjects import SLOTS, Subjects, slot_of
from services.tools.infra import EmbeddedNats, EmbeddedPostgres
from tests.infra import Processes, eventually, unique_token
from tests.services.tablekit import TableClient, move, my_turn

# Whole games on a loaded machine: more than the suite's default 300 s per test.
pytestmark = pytest.mark.timeout(900)

TARGET = 100  # points: short games, a few hands each
LONGER = 300  # points: games still under way when a fault starts, whatever the machine's speed


@dataclass
class World:
    """A PostgreSQL of the test's own, the session's NATS, and the processes on them."""

    pg: EmbeddedPostgres
    url: str
    processes: Processes
    pool: asyncpg.Pool
    store: PostgresEventStore

    async def restart_database(self) -> None:
        """Crash PostgreSQL, start it again, and give the test fresh connections to it."""
        self.pg.stop("immediate")
        self.pg.start()
        await self.reconnect()

    async def reconnect(self) -> None:
        self.pool.terminate()
        self.pool = await create_pool(self.url, min_size=1, max_size=4)
        self.store = PostgresEventStore(self.pool)

    def start(self, service: str, **env: str) -> subprocess.Popen[bytes]:
        return self.processes.start(
            "-m",
            "services.tools.cli",
            "serve",
            service,
            env={"SPADES_OPS_PORT": "0", "SPADES_LEASE_SECONDS": "4", **env},
        )


@pytest.fixture
def private_pg(scratch: Path) -> Iterator[EmbeddedPostgres]:
    """A PostgreSQL server of this test's own, which the test may crash and start again.

    Durable (fsync, synchronous commit), as production runs: a crash loses no committed
    transaction. (With synchronous commit off, a crash loses the last commits: the table's
    memory is then ahead of the log, and the moves the players saw applied are gone.)
    """
    server = EmbeddedPostgres(scratch / unique_token("pg-"), durable=True)
    server.start()
    try:
        yield server
    finally:
        server.stop("immediate")


@pytest.fixture
async def world(
    private_pg: EmbeddedPostgres, nats_url: str, stream_prefix: str, tmp_path: Path
) -> AsyncIterator[World]:
    url = private_pg.url()
    conn = await asyncpg.connect(url)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    env = {
        "SPADES_DATABASE_URL": url,
        "SPADES_NATS_URL": nats_url,
        "SPADES_NATS_PREFIX": stream_prefix,
        "SPADES_TURN_SECONDS": "120",  # people act in time: no timeout muddles the count
    }
    processes = Processes(env, tmp_path / "logs")
    pool = await create_pool(url, min_size=1, max_size=4)
    world = World(private_pg, url, processes, pool, PostgresEventStore(pool))
    try:
        yield world
    finally:
        processes.stop_all()
        # the world's pool: a database restart replaced the first one (left open, it would
        # try to reconnect to the stopped server for the rest of the session)
        world.pool.terminate()


@dataclass
class Player:
    """One person at one practice table: plays on his turn, records every refusal."""

    client: TableClient
    game_id: str = ""
    refusals: list[str] = field(default_factory=list)
    on_turn: bool = False
    sit_out: bool = False
    """Set by a test: let his next turn run out (then he plays on as before)."""
    sat_out: int = 0
    """The version at which he began to let a turn run out, 0 if he has not."""
    sat_at: tuple[object, ...] = ()
    """Where in the game that turn was: he sits until the timer has acted for him there."""

    async def play(self, within: float = 480) -> None:
        deadline = time.monotonic() + within
        while True:
            assert time.monotonic() < deadline, f"game {self.game_id} did not finish"
            view = await self.client.view(self.game_id)
            if view.phase == "over":
                return
            self.on_turn = my_turn(view)
            if self.sit_out and self.on_turn and not self.sat_out:
                self.sat_out = view.version
                self.sat_at = _position(view)
            # sitting out, through any restarted clock, until the timer has acted for him: a
            # restart changes the version, not the position (he may first see the game just
            # before the pause or just after the restart)
            sitting = self.sat_out > 0 and self.on_turn and _position(view) == self.sat_at
            if not self.on_turn or sitting:
                await asyncio.sleep(0.05)
                continue
            reply = await self.client.send(self.game_id, move(view))
            if not reply.ok:
                self.refusals.append(reply.code)


def _position(view: wire.SeatViewWire) -> tuple[object, ...]:
    """Where a game stands, whatever clock events came in between."""
    return (view.hand_number, view.phase, view.turn, view.hand, view.trick, view.bids)


async def open_games(
    nc: NATS,
    subjects: Subjects,
    count: int,
    *,
    like_the_gateway: bool = False,
    target: int = TARGET,
) -> list[Player]:
    """Open ``count`` practice games, one person each; ``like_the_gateway``: the person's
    client resends an unanswered request after the gateway's OWNER_TIMEOUT, not 10 s."""
    players = [Player(TableClient(nc, subjects, f"p{i}")) for i in range(count)]
    if like_the_gateway:
        from services.gateway.state import OWNER_TIMEOUT

        for player in players:
            player.client.request_timeout = OWNER_TIMEOUT
    for player in players:
        reply = await player.client.open_practice(target=target)
        assert reply.ok, reply
        player.game_id = reply.game_id
    return players


async def finished(store: PostgresEventStore, game_ids: list[str]) -> bool:
    for game_id in game_ids:
        stored = await store.read(stream_of(game_id))
        if not stored or stored[-1].type != "GameFinished":
            return False
    return True


async def owners(pool: asyncpg.Pool) -> dict[int, str]:
    """Return slot -> owner of the table leases held right now."""
    rows = await pool.fetch(
        "SELECT name, owner FROM spades_leases WHERE name LIKE 'table/%'"
        " AND owner IS NOT NULL AND expires_at > now()"
    )
    return {int(r["name"].split("/")[1]): r["owner"] for r in rows}


async def assert_epochs_never_go_back(store: PostgresEventStore, game_ids: list[str]) -> None:
    """In commit order, a slot's events carry non-decreasing lease epochs: once a new
    owner has written, no older owner ever wrote again (the fencing guarantee)."""
    by_slot: dict[int, list[tuple[int, int]]] = {}
    for game_id in game_ids:
        for stored in await store.read(stream_of(game_id)):
            assert stored.metadata.epoch is not None, "an unfenced append"
            by_slot.setdefault(slot_of(game_id), []).append(
                (stored.position, stored.metadata.epoch)
            )
    for slot, writes in by_slot.items():
        epochs = [epoch for _, epoch in sorted(writes)]
        assert epochs == sorted(epochs), f"slot {slot} was written by a stale owner"


def ops_port(processes: Processes, proc: subprocess.Popen[bytes]) -> int:
    found = re.search(r'"ops_port": ?(\d+)', processes.log(proc))
    assert found, "the service never said where its ops server listens"
    return int(found.group(1))


def readyz(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


async def last_version_change(store: PostgresEventStore, game_ids: list[str]) -> int:
    return sum([await store.stream_version(stream_of(g)) for g in game_ids])


async def test_three_replicas_share_the_slots_and_every_game_opened_anywhere_finishes(
    world: World, nc: NATS, subjects: Subjects
) -> None:
    """(a) Opens reach any replica through the queue group; every game is driven to its end.

    The people here never act: each seat times out three times and a bot takes it over, so
    the games move only if the replica that owns each game's slot runs its timers.
    """
    replicas = [world.start("table", SPADES_TURN_SECONDS="0.2") for _ in range(3)]
    await eventually(
        lambda: owners(world.pool),
        within=60,
        what="slots to be claimed",
    )

    async def shared() -> bool:
        held = await owners(world.pool)
        counts = sorted(list(held.values()).count(o) for o in set(held.values()))
        return len(held) == SLOTS and len(counts) == 3 and counts[-1] <= -(-SLOTS // 3)

    await eventually(shared, within=60, what="the three replicas to share the slots")
    players = [TableClient(nc, subjects, f"p{i}") for i in range(30)]
    replies = await asyncio.gather(*(p.open_practice(target=TARGET) for p in players))
    assert all(r.ok for r in replies), [r for r in replies if not r.ok]
    game_ids = [r.game_id for r in replies]
    assert len({slot_of(g) for g in game_ids}) > 8  # spread over replicas
    await eventually(
        lambda: finished(world.store, game_ids), within=420, interval=0.5, what="every game"
    )
    assert all(r.poll() is None for r in replicas)
    await assert_epochs_never_go_back(world.store, game_ids)


async def test_a_database_crash_under_two_replicas_leaves_every_game_finishing(
    world: World, nc: NATS, subjects: Subjects
) -> None:
    """(b) PostgreSQL crashes (immediate stop) for 8 s while 18 games are played."""
    tables = [world.start("table") for _ in range(2)]
    relay = world.start("relay")
    matchmaking = world.start("matchmaking")
    players = await open_games(nc, subjects, 18, like_the_gateway=True)
    game_ids = [p.game_id for p in players]
    playing = asyncio.gather(*(p.play() for p in players))

    await eventually(  # every game under way before the crash
        lambda: all_beyond(world.store, game_ids, 12), within=300, what="games under way"
    )
    port = ops_port(world.processes, tables[0])
    assert readyz(port) == 200
    world.pg.stop("immediate")
    down_at, fault_at = time.monotonic(), time.time()
    await eventually(
        lambda: readyz(port) == 503, within=30, what="/readyz to say the table is not ready"
    )
    await asyncio.sleep(max(0.0, 8 - (time.monotonic() - down_at)))  # the fault: 8 s down
    world.pg.start()
    up_at, fault_end = time.monotonic(), time.time()
    await world.reconnect()
    before = await last_version_change(world.store, game_ids)
    await eventually(
        lambda: moved(world.store, game_ids, before),
        within=120,
        interval=0.1,
        what="the games to move again",
    )
    recovered = time.monotonic() - up_at
    await finish(world, playing, game_ids)
    assert await finished(world.store, game_ids)
    assert [r for p in players for r in p.refusals] == []
    for proc in (*tables, relay, matchmaking):
        assert proc.poll() is None, world.processes.log(proc)[-2000:]
    await eventually(lambda: readyz(port) == 200, within=60, what="/readyz to recover")
    await assert_epochs_never_go_back(world.store, game_ids)
    # the relay came back by itself: every game's end reached JetStream
    await eventually(
        lambda: published_finishes(nc, subjects, set(game_ids)),
        within=120,
        interval=0.5,
        what="the relay to publish every GameFinished",
    )
    print(f"\nrecovery after the database came back: {recovered:.1f} s")
    await report(
        world, "postgres_restart_8s", players, fault_at, fault_end, recovery_after_up_s=recovered
    )


async def test_a_replica_cut_off_by_a_database_restart_never_serves_beside_its_successor(
    world: World, nc: NATS, subjects: Subjects
) -> None:
    """(c) Item 4's sequence: one replica owns all; the database restarts; a second starts.

    Before leases, the first replica kept serving its 16 partitions with no lock after the
    restart, the second claimed all 16 too, and both answered commands.
    """
    first = world.start("table")
    players = await open_games(nc, subjects, 10)
    game_ids = [p.game_id for p in players]
    await eventually(lambda: len_owned_by_one(world.pool), within=60, what="one replica owning all")
    playing = asyncio.gather(*(p.play() for p in players))
    await eventually(lambda: all_beyond(world.store, game_ids, 8), within=300, what="under way")
    await world.restart_database()
    second = world.start("table")

    async def two_owners() -> bool:
        return len(set((await owners(world.pool)).values())) == 2

    await eventually(two_owners, within=90, what="the slots to be shared by two replicas")
    await finish(world, playing, game_ids)
    assert [r for p in players for r in p.refusals] == []
    await assert_epochs_never_go_back(world.store, game_ids)
    assert first.poll() is None
    assert second.poll() is None


async def test_a_killed_replica_s_games_resume_on_the_other_two(
    world: World, nc: NATS, subjects: Subjects
) -> None:
    """(d) kill -9 of one of three replicas mid-game: its slots move, its games finish."""
    replicas = [world.start("table") for _ in range(3)]

    async def three_owners() -> dict[int, str] | None:
        held = await owners(world.pool)
        return held if len(held) == SLOTS and len(set(held.values())) == 3 else None

    held = await eventually(three_owners, within=60, what="three replicas sharing slots")
    players = await open_games(nc, subjects, 12, like_the_gateway=True)
    game_ids = [p.game_id for p in players]
    playing = asyncio.gather(*(p.play() for p in players))
    await eventually(lambda: all_beyond(world.store, game_ids, 8), within=300, what="under way")
    held = await owners(world.pool)
    # The victim is the replica holding the most games still under way (short games on a
    # loaded machine may already have finished): the games it orphans must have moves left.
    unfinished = [g for g in game_ids if not await finished(world.store, [g])]
    by_owner = collections.Counter(held[slot_of(g)] for g in unfinished)
    assert by_owner, "every game finished before the kill: nothing left to orphan"
    victim_member = by_owner.most_common(1)[0][0]
    pid = int(victim_member.split(":")[2])
    victim = next(r for r in replicas if r.pid == pid)
    orphaned = [g for g in unfinished if held[slot_of(g)] == victim_member]
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    killed_at, fault_at = time.monotonic(), time.time()
    before = await last_version_change(world.store, orphaned)
    try:
        await eventually(
            lambda: moved(world.store, orphaned, before),
            within=60,
            interval=0.1,
            what="the killed replica's games to move again",
        )
    except AssertionError as exc:
        raise AssertionError(await explain(world, orphaned, exc)) from exc
    recovered, fault_end = time.monotonic() - killed_at, time.time()
    await finish(world, playing, game_ids)
    assert await finished(world.store, game_ids)
    assert [r for p in players for r in p.refusals] == []
    after = await owners(world.pool)
    assert len(after) == SLOTS
    assert victim_member not in after.values()
    await assert_epochs_never_go_back(world.store, game_ids)
    print(f"\nthe killed replica's games moved again after {recovered:.1f} s")
    await report(world, "kill_9_replica", players, fault_at, fault_end, takeover_s=recovered)


# -- small probes -------------------------------------------------------------------------------


async def finish(world: World, playing: asyncio.Future[object], game_ids: list[str]) -> None:
    """Wait for the players; if one fails, say where every unfinished game stands and why."""
    try:
        await asyncio.wait_for(playing, 540)
    except (AssertionError, TimeoutError) as exc:
        raise AssertionError(await explain(world, game_ids, exc)) from exc


async def explain(world: World, game_ids: list[str], exc: BaseException) -> str:
    """Say where every unfinished game stands, who holds which lease, and what each replica
    said about leases, those games, or in warnings: what a failure under load needs to be
    understood from the CI log alone."""
    lines = [f"{type(exc).__name__}: {exc}"]
    with contextlib.suppress(Exception):
        lines.append(f"leases now: {sorted((await owners(world.pool)).items())}")
    for game_id in game_ids:
        stored = await world.store.read(stream_of(game_id))
        if stored and stored[-1].type != "GameFinished":
            tail = [(s.version, s.type, s.metadata.actor, s.metadata.epoch) for s in stored[-3:]]
            lines.append(f"game {game_id} (slot {slot_of(game_id)}) stands at {tail}")
            for proc, _ in world.processes._procs:
                lines += [
                    f"  {line[:300]}"
                    for line in world.processes.log(proc).splitlines()
                    if game_id in line and '"debug"' not in line
                ][-5:]
    for proc, _ in world.processes._procs:
        lines.append(f"process {proc.pid} (exit {proc.poll()}):")
        lines += [
            f"  {line[:300]}"
            for line in world.processes.log(proc).splitlines()
            if '"warning"' in line or '"error"' in line or "leases" in line
        ][-15:]
    return "\n".join(lines)


async def all_beyond(store: PostgresEventStore, game_ids: list[str], version: int) -> bool:
    return all([await store.stream_version(stream_of(g)) > version for g in game_ids])


async def moved(store: PostgresEventStore, game_ids: list[str], before: int) -> bool:
    with contextlib.suppress(Exception):  # the pool may still hold connections of the old server
        return await last_version_change(store, game_ids) > before
    return False


async def len_owned_by_one(pool: asyncpg.Pool) -> bool:
    held = await owners(pool)
    return len(held) == SLOTS and len(set(held.values())) == 1


async def published_finishes(nc: NATS, subjects: Subjects, game_ids: set[str]) -> bool:
    js = nc.jetstream()
    seen: set[str] = set()
    sub = await js.subscribe(subjects.game_finished(), ordered_consumer=True)
    try:
        while True:
            try:
                msg = await sub.next_msg(timeout=1)
            except Exception:
                break
            event = msgspec.json.decode(msg.data)
            seen.add(event["stream_id"].removeprefix("game-"))
    finally:
        await sub.unsubscribe()
    return game_ids <= seen


async def test_a_nats_restart_under_two_replicas_leaves_every_game_finishing(
    world: World, private_nats: EmbeddedNats, stream_prefix: str
) -> None:
    """NATS goes away for 3 s mid-game: every service reconnects by itself, games finish."""
    env = {"SPADES_NATS_URL": private_nats.url}
    tables = [world.start("table", **env) for _ in range(2)]
    relay = world.start("relay", **env)
    nc = await connect(private_nats.url, name="test")
    subjects = Subjects(stream_prefix)
    try:
        players = await open_games(nc, subjects, 6, like_the_gateway=True)
        game_ids = [p.game_id for p in players]
        playing = asyncio.gather(*(p.play() for p in players))
        await eventually(lambda: all_beyond(world.store, game_ids, 12), within=300, what="play")
        fault_at = time.time()
        await asyncio.to_thread(private_nats.stop)
        await asyncio.sleep(3)  # the fault itself: NATS away for 3 s
        await asyncio.to_thread(private_nats.start)
        up_at, fault_end = time.monotonic(), time.time()
        before = await last_version_change(world.store, game_ids)
        await eventually(
            lambda: moved(world.store, game_ids, before),
            within=60,
            interval=0.1,
            what="the games to move again after NATS came back",
        )
        recovered = time.monotonic() - up_at
        await finish(world, playing, game_ids)
        assert await finished(world.store, game_ids)
        assert [r for p in players for r in p.refusals] == []
        for proc in (*tables, relay):
            assert proc.poll() is None, world.processes.log(proc)[-2000:]
        await eventually(
            lambda: published_finishes(nc, subjects, set(game_ids)),
            within=120,
            interval=0.5,
            what="the relay to publish every GameFinished after the restart",
        )
        await report(
            world, "nats_restart_3s", players, fault_at, fault_end, recovery_after_up_s=recovered
        )
    finally:
        await close_nats(nc)


# -- network faults (issue 25): liveness, not only safety ---------------------------------------


async def ready_statuses(ports: list[int]) -> list[int]:
    """Ask every port's /readyz at once (each answers within its own 2 s)."""
    return list(await asyncio.gather(*(asyncio.to_thread(readyz, port) for port in ports)))


async def all_ready(ports: list[int]) -> bool:
    return set(await ready_statuses(ports)) == {200}


async def test_a_paused_nats_server_leaves_no_service_deaf_and_readyz_says_so(
    world: World, private_nats: EmbeddedNats, stream_prefix: str
) -> None:
    """The NATS server is paused for 3 s (SIGSTOP/SIGCONT) under live games.

    While it is paused every service's /readyz answers 503 (within its own deadline); within
    10 s of SIGCONT every service answers again (its /readyz is a request through its own
    connection) and the games move. Before, a readiness check's flush() timed out during the
    pause, its late PONG killed nats-py's read loop, and the services stayed deaf for minutes
    while /readyz said 200 (docs/nats-py-pong.md).
    """
    env = {"SPADES_NATS_URL": private_nats.url}
    services = [
        *(world.start("table", **env) for _ in range(2)),
        world.start("relay", **env),
        world.start("matchmaking", **env),
    ]
    nc = await connect(private_nats.url, name="test")
    subjects = Subjects(stream_prefix)
    try:
        players = await open_games(nc, subjects, 4, like_the_gateway=True, target=LONGER)
        game_ids = [p.game_id for p in players]
        playing = asyncio.gather(*(p.play() for p in players))
        await eventually(lambda: all_beyond(world.store, game_ids, 8), within=300, what="play")
        ports = [await eventually(lambda p=p: ops_port_of(world, p), within=60) for p in services]
        await eventually(
            lambda: all_ready(ports),
            within=60,
            what="every service ready before the fault",
        )
        pid = private_nats.pid()
        assert pid is not None
        seen: dict[int, set[int]] = {port: set() for port in ports}
        os.kill(pid, signal.SIGSTOP)
        fault_at = time.time()
        try:
            paused_at = time.monotonic()
            while time.monotonic() - paused_at < 3.0:  # the fault: 3 s, /readyz asked meanwhile
                for port, status in zip(ports, await ready_statuses(ports), strict=True):
                    seen[port].add(status)
        finally:
            os.kill(pid, signal.SIGCONT)
        resumed_at, fault_end = time.monotonic(), time.time()
        assert all(503 in statuses for statuses in seen.values()), seen
        before = await last_version_change(world.store, game_ids)
        answered: dict[int, float] = {}

        async def every_service_answers() -> bool:
            for port, status in zip(ports, await ready_statuses(ports), strict=True):
                if status == 200 and port not in answered:
                    answered[port] = time.monotonic() - resumed_at
            return len(answered) == len(ports)

        await eventually(every_service_answers, within=10, what="every service to answer again")
        await eventually(
            lambda: moved(world.store, game_ids, before),
            within=max(0.5, 10 - (time.monotonic() - resumed_at)),
            interval=0.1,
            what="the games to move again within 10 s of SIGCONT",
        )
        moved_after = time.monotonic() - resumed_at
        await finish(world, playing, game_ids)
        assert await finished(world.store, game_ids)
        refusals = [r for p in players for r in p.refusals]
        assert refusals == []
        for proc in services:
            assert proc.poll() is None, world.processes.log(proc)[-2000:]
        print(
            f"\nNATS paused 3 s: games finished {len(game_ids)}, abandoned"
            f" {await abandoned(world.store, game_ids)}, refusals {len(refusals)},"
            f" every service answered {max(answered.values()):.1f} s after SIGCONT,"
            f" games moved {moved_after:.1f} s after, longest stall of a game"
            f" {await stall(world.store, game_ids, fault_at, fault_end):.1f} s"
        )
        await report(
            world,
            "nats_paused_3s",
            players,
            fault_at,
            fault_end,
            answered_after_sigcont_s=max(answered.values()),
            moved_after_sigcont_s=moved_after,
        )
    finally:
        await close_nats(nc)


async def stall(
    store: PostgresEventStore, game_ids: list[str], fault_at: float, fault_end: float
) -> float:
    """Return the longest time one of these games went without an event during the fault
    (``fault_at`` .. ``fault_end``, wall-clock seconds): how long its players waited."""
    longest = 0.0
    for game_id in game_ids:
        times = [  # a restarted clock moves nobody's game on: not the end of a wait
            s.recorded_at.timestamp()
            for s in await store.read(stream_of(game_id))
            if s.type != "TurnClockRestarted"
        ]
        for before, after in itertools.pairwise(times):
            if after > fault_at and before < fault_end:
                longest = max(longest, after - before)
    return longest


async def report(
    world: World,
    fault: str,
    players: list[Player],
    fault_at: float,
    fault_end: float,
    **seconds: float,
) -> None:
    """Print one line of a fault's figures, ``FAULT {json}``, which `python -m benchmarks
    faults` collects: games finished, seats abandoned, refusals, the longest stall of a game
    across the fault (wall-clock ``fault_at`` .. ``fault_end``) and the test's own times."""
    game_ids = [p.game_id for p in players]
    figures = {
        "fault": fault,
        "games": len(game_ids),
        "finished": sum([await finished(world.store, [g]) for g in game_ids]),
        "abandoned": await abandoned(world.store, game_ids),
        "refusals": sum(len(p.refusals) for p in players),
        "timeouts": await timeouts(world.store, game_ids),
        "stall_s": round(await stall(world.store, game_ids, fault_at, fault_end), 1),
        **{name: round(value, 1) for name, value in seconds.items()},
    }
    print("\nFAULT " + json.dumps(figures), flush=True)


def ops_port_of(world: World, proc: subprocess.Popen[bytes]) -> int | None:
    found = re.search(r'"ops_port": ?(\d+)', world.processes.log(proc))
    return int(found.group(1)) if found else None


async def abandoned(store: PostgresEventStore, game_ids: list[str]) -> int:
    """Return how many seats of these games were handed to a bot for timing out."""
    return sum(
        [
            sum(1 for s in await store.read(stream_of(g)) if s.type == "SeatAbandoned")
            for g in game_ids
        ]
    )


async def timeouts(store: PostgresEventStore, game_ids: list[str]) -> int:
    """Return how many turns of these games were timed out."""
    return sum(
        [
            sum(1 for s in await store.read(stream_of(g)) if s.type == "TurnTimedOut")
            for g in game_ids
        ]
    )


async def test_a_replica_cut_off_from_nats_only_hands_its_games_over_and_none_is_abandoned(
    world: World, nats_url: str, nc: NATS, subjects: Subjects
) -> None:
    """One of two replicas reaches NATS through a proxy the test freezes for 30 s (its
    PostgreSQL stays reachable). Before, its leases depended on PostgreSQL alone: it kept its
    partitions and ran its turn timers against players whose commands could not reach it,
    and every one of its games lost seats to bots within 30 s. Now it gives its leases up
    after SPADES_NATS_GRACE_SECONDS (3 s), the other replica takes its games over, and no
    seat is abandoned."""
    from tests.netproxy import FreezableProxy

    proxy = FreezableProxy.to_url(nats_url)
    await proxy.start()
    turn = {"SPADES_TURN_SECONDS": "8"}  # three timeouts (an abandoned seat) fit in 30 s
    try:
        steady = world.start("table", **turn)
        victim = world.start("table", SPADES_NATS_URL=proxy.url, **turn)

        async def two_owners() -> dict[int, str] | None:
            held = await owners(world.pool)
            return held if len(held) == SLOTS and len(set(held.values())) == 2 else None

        held = await eventually(two_owners, within=60, what="two replicas sharing slots")
        victim_member = next(m for m in set(held.values()) if int(m.split(":")[2]) == victim.pid)
        players = await open_games(nc, subjects, 8, like_the_gateway=True, target=LONGER)
        game_ids = [p.game_id for p in players]
        cut = [g for g in game_ids if held[slot_of(g)] == victim_member]
        assert cut, "no game on the replica to cut off"
        playing = asyncio.gather(*(p.play() for p in players))
        await eventually(lambda: all_beyond(world.store, game_ids, 8), within=300, what="play")
        unfinished = [g for g in cut if not await finished(world.store, [g])]
        assert unfinished, "the cut-off replica's games finished before the fault"
        proxy.freeze()
        frozen_at, fault_at = time.monotonic(), time.time()
        try:

            async def given_up() -> bool:
                held = await owners(world.pool)
                return len(held) == SLOTS and victim_member not in held.values()

            await eventually(
                given_up, within=20, interval=0.1, what="the other replica to hold every lease"
            )
            released = time.monotonic() - frozen_at
            before = await last_version_change(world.store, unfinished)
            await eventually(
                lambda: moved(world.store, unfinished, before),
                within=20,
                interval=0.1,
                what="the cut-off replica's games to move on the other replica",
            )
            taken_over = time.monotonic() - frozen_at
            await asyncio.sleep(max(0.0, 30 - (time.monotonic() - frozen_at)))  # the fault: 30 s
        finally:
            proxy.thaw()
        fault_end = time.time()
        await finish(world, playing, game_ids)
        assert await finished(world.store, game_ids)
        lost_seats = await abandoned(world.store, game_ids)
        assert lost_seats == 0
        # a refusal here would be a turn timed out at the take-over (the deadline passed while
        # nobody served the game): the new owner restarts the clock (TurnClockRestarted)
        refusals = [r for p in players for r in p.refusals]
        assert refusals == []
        await assert_epochs_never_go_back(world.store, game_ids)
        assert steady.poll() is None
        assert victim.poll() is None, world.processes.log(victim)[-2000:]
        # healthy again, the replica rejoins and gets its share back
        await eventually(
            lambda: victim_member_owns(world.pool, victim.pid),
            within=60,
            what="the replica to claim its share again once NATS answers",
        )
        print(
            f"\nreplica cut off from NATS 30 s: games finished {len(game_ids)}, abandoned"
            f" {lost_seats}, refusals {len(refusals)}, turns timed out"
            f" {await timeouts(world.store, game_ids)}, leases given up {released:.1f} s,"
            f" games moving on the other replica {taken_over:.1f} s after the cut, longest"
            f" stall of a game {await stall(world.store, unfinished, fault_at, fault_end):.1f} s"
        )
        await report(
            world,
            "replica_cut_off_from_nats_30s",
            players,
            fault_at,
            fault_end,
            leases_given_up_s=released,
            takeover_s=taken_over,
        )
    finally:
        proxy.thaw()
        await proxy.close()


async def victim_member_owns(pool: asyncpg.Pool, pid: int) -> bool:
    return any(int(owner.split(":")[2]) == pid for owner in (await owners(pool)).values())


async def test_a_replica_paused_past_its_lease_costs_no_player_a_turn(
    world: World, nc: NATS, subjects: Subjects
) -> None:
    """A table replica is paused (SIGSTOP) for 12 s under live games, past its lease (4 s),
    with 10 s turns: every game on it waits for its person when the pause starts.

    The other replica takes the games over; before, it ran each person's timer to the
    deadline recorded before the pause, which had passed: every one of them was timed out
    the moment the game was served again, and the command he resent was refused. Now a game
    served again gives the person on turn his turn again, recorded (`TurnClockRestarted`):
    no turn is timed out, no command is refused, and the deadline every watcher is told is
    the one the timer runs to: one person lets that turn run out, and his timer fires at the
    deadline shown, not before."""
    turn = {"SPADES_TURN_SECONDS": "10"}
    replicas = [world.start("table", **turn) for _ in range(2)]

    async def two_owners() -> dict[int, str] | None:
        held = await owners(world.pool)
        return held if len(held) == SLOTS and len(set(held.values())) == 2 else None

    await eventually(two_owners, within=60, what="two replicas sharing slots")
    players = await open_games(nc, subjects, 8, like_the_gateway=True, target=LONGER)
    game_ids = [p.game_id for p in players]
    playing = asyncio.gather(*(p.play() for p in players))
    await eventually(lambda: all_beyond(world.store, game_ids, 8), within=300, what="under way")
    held = await owners(world.pool)
    unfinished = [g for g in game_ids if not await finished(world.store, [g])]
    by_owner = collections.Counter(held[slot_of(g)] for g in unfinished)
    assert by_owner, "every game finished before the pause"
    victim_member = by_owner.most_common(1)[0][0]
    victim = next(r for r in replicas if r.pid == int(victim_member.split(":")[2]))
    paused_games = [g for g in unfinished if held[slot_of(g)] == victim_member]
    frames: list[Frame] = []  # what every watcher of those games is told, as the gateway is

    async def heard(msg: Msg) -> None:
        frames.append(frame_decoder.decode(msg.data))

    watching = [await nc.subscribe(subjects.audiences(g), cb=heard) for g in paused_games]
    sitters = [p for p in players if p.game_id in paused_games]
    sitter = next((p for p in sitters if p.on_turn), sitters[0])
    sitter.sit_out = True  # he lets his turn run out across the pause
    os.kill(victim.pid, signal.SIGSTOP)
    paused_at, fault_at = time.monotonic(), time.time()
    try:

        async def taken_over() -> bool:
            held = await owners(world.pool)
            return len(held) == SLOTS and victim_member not in held.values()

        await eventually(taken_over, within=30, interval=0.1, what="the leases to move")
        moved_leases = time.monotonic() - paused_at
        await asyncio.sleep(max(0.0, 12 - (time.monotonic() - paused_at)))  # the fault: 12 s
    finally:
        os.kill(victim.pid, signal.SIGCONT)
    fault_end = time.time()
    await finish(world, playing, game_ids)
    for sub in watching:
        await sub.unsubscribe()
    assert await finished(world.store, game_ids)
    refusals = [r for p in players for r in p.refusals]
    logs = {g: await world.store.read(stream_of(g)) for g in paused_games}
    timed_out = [
        (g, s)
        for g, stored in logs.items()
        for s in stored
        if s.type == "TurnTimedOut" and s.recorded_at.timestamp() > fault_at
    ]
    lost_turns = len([g for g, _ in timed_out if g != sitter.game_id])
    restarts = [
        (g, s) for g, stored in logs.items() for s in stored if s.type == "TurnClockRestarted"
    ]
    print(
        f"\nreplica paused 12 s: games finished {len(game_ids)}, abandoned"
        f" {await abandoned(world.store, game_ids)}, refusals {len(refusals)}, turns timed"
        f" out on its games {lost_turns}, leases moved {moved_leases:.1f} s after SIGSTOP,"
        f" longest stall of a game"
        f" {await stall(world.store, paused_games, fault_at, fault_end):.1f} s, turn clocks"
        f" restarted {len(restarts)}"
    )
    # the figures of those who played on (the sitter's wait is his own doing)
    playing_on = [p for p in players if p is not sitter]
    await report(
        world, "replica_paused_12s", playing_on, fault_at, fault_end, takeover_s=moved_leases
    )
    assert lost_turns == 0
    assert refusals == []
    # the turns waiting for a person when the replica stopped were given again, recorded, and
    # each watcher was told the recorded deadline (the clock and the seat's your_turn)
    assert restarts, "no turn clock was restarted after the take-over"
    for game_id, s in restarts:
        assert s.metadata.deadline > s.recorded_at.timestamp() + 10 - 1  # a full turn again
        told = [f for f in frames if f.game_id == game_id and f.last == s.version]
        assert told, f"the restart of {game_id} at {s.version} was never published"
        seat = msgspec.json.decode(s.data)["seat"]
        assert msgspec.json.decode(told[0].clock)["deadline"] == s.metadata.deadline
        assert msgspec.json.decode(told[0].turns[seat])["deadline"] == s.metadata.deadline
    # the turn the sitter let run out ran to the deadline he was told, no earlier
    [(_, timeout)] = [(g, s) for g, s in timed_out if g == sitter.game_id]
    shown = next(s for s in logs[sitter.game_id] if s.version == timeout.version - 1)
    assert shown.metadata.deadline - 0.05 <= timeout.recorded_at.timestamp()
    assert timeout.recorded_at.timestamp() < shown.metadata.deadline + 15
    await assert_epochs_never_go_back(world.store, game_ids)
    for proc in replicas:
        assert proc.poll() is None, world.processes.log(proc)[-2000:]


async def test_a_service_that_cannot_hear_nats_exits_to_be_restarted(
    world: World, nats_url: str
) -> None:
    """A service whose NATS connection has not answered its own probe for
    SPADES_NATS_DEAD_SECONDS exits non-zero (70) so its supervisor restarts it, instead of
    staying up deaf. Before, nothing noticed: it stayed up, unheard, for as long as it took."""
    from tests.netproxy import FreezableProxy

    proxy = FreezableProxy.to_url(nats_url)
    await proxy.start()
    try:
        relay = world.start("relay", SPADES_NATS_URL=proxy.url, SPADES_NATS_DEAD_SECONDS="4")
        port = await eventually(lambda: ops_port_of(world, relay), within=60, what="ops port")
        await eventually(
            lambda: asyncio.to_thread(lambda: readyz(port) == 200), within=60, what="ready"
        )
        proxy.freeze()
        frozen_at = time.monotonic()
        try:
            await eventually(lambda: relay.poll() is not None, within=60, what="the relay to exit")
        except AssertionError as exc:  # say where it hung: a fresh clone once saw it stay up
            lines = world.processes.log(relay).splitlines()
            told = [line for line in lines if "nats connection error" not in line]
            raise AssertionError(
                f"{exc}\n{len(lines) - len(told)} lines of nats connection errors left out;"
                f" the rest:\n" + "\n".join(told)[-6000:]
            ) from None
        gave_up = time.monotonic() - frozen_at
        assert relay.returncode == 70, world.processes.log(relay)[-2000:]
        assert "giving up the NATS connection" in world.processes.log(relay)
        print(f"\nrelay unheard on NATS exited (70) {gave_up:.1f} s after the cut")
    finally:
        proxy.thaw()
        await proxy.close()


async def test_a_service_that_gave_nats_up_exits_even_if_its_shutdown_never_ends(
    world: World, nats_url: str
) -> None:
    """Giving the connection up starts the way out, and the way out is bounded: a service
    whose work ignores its stop (`tests/services/stalled_service.py`) still exits 70 within
    `EXIT_STALL_SECONDS`. Before, the process stayed up, deaf, for good."""
    from services.runtime.service import EXIT_STALL_SECONDS
    from tests.netproxy import FreezableProxy

    proxy = FreezableProxy.to_url(nats_url)
    await proxy.start()
    try:
        stalled = world.processes.start(
            "-m",
            "tests.services.stalled_service",
            env={
                "SPADES_OPS_PORT": "0",
                "SPADES_NATS_URL": proxy.url,
                "SPADES_NATS_DEAD_SECONDS": "2",
            },
        )
        port = await eventually(lambda: ops_port_of(world, stalled), within=60, what="ops port")
        await eventually(
            lambda: asyncio.to_thread(lambda: readyz(port) == 200), within=60, what="ready"
        )
        proxy.freeze()
        await eventually(
            lambda: stalled.poll() is not None,
            within=EXIT_STALL_SECONDS + 60,
            what="the stalled service to exit",
        )
        log = world.processes.log(stalled)
        assert stalled.returncode == 70, log[-2000:]
        assert "stop asked; not stopping" in log, log[-2000:]
        assert "shutdown stalled after giving NATS up: exiting now" in log, log[-2000:]
    finally:
        proxy.thaw()
        await proxy.close()


async def published_events(
    nc: NATS, subjects: Subjects, game_id: str
) -> dict[int, list[StoredEvent]]:
    """Return every JetStream message of a game's events, by version (copies included)."""
    found: dict[int, list[StoredEvent]] = collections.defaultdict(list)
    sub = await nc.jetstream().subscribe(subjects.game_events(game_id), ordered_consumer=True)
    try:
        while True:
            try:
                msg = await sub.next_msg(timeout=1)
            except Exception:
                break
            event = msgspec.json.decode(msg.data, type=StoredEvent)
            found[event.version].append(event)
    finally:
        await sub.unsubscribe()
    return found


def same_event(a: StoredEvent, b: StoredEvent) -> bool:
    """Return whether two copies of an event say the same: id, type, content, metadata."""
    return (a.event_id, a.type, bytes(a.data), a.metadata) == (
        b.event_id,
        b.type,
        bytes(b.data),
        b.metadata,
    )


def late_append_answered(log: str) -> bool:
    """Whether a replica's log says the store answered an append it sent with a stale fence:
    refused (``Fenced``: another owner wrote something else at that version), or taken for
    a retry (the other owner's bot or the person's resent command wrote the same events)."""
    return (
        "append fenced off" in log
        or "late append: the slot's new owner had written the same events" in log
    )


async def test_a_replica_paused_with_appends_in_flight_publishes_nothing_the_store_lacks(
    world: World, nc: NATS, subjects: Subjects
) -> None:
    """The late-append race: a table replica is paused (SIGSTOP) while appends are in flight
    (each of its appends waits 0.3 s after taking its fence, SPADES_TABLE_APPEND_DELAY), past
    its lease; another replica takes its games over and plays on; then it resumes. Its late
    appends are refused by the store (fenced) or, where the new owner wrote the very same
    events (the bots' moves and a resent command are the same at the same version), taken
    for a retry; either way nothing anyone published differs from the store: every frame any
    replica sent the games' watchers (each seat's event, the clock) is what the store's events
    say at that seq, and every JetStream message of those games equals the stored event of
    its version. Before issue 25 a resumed replica re-published
    frames for events another replica had written (the store had refused its own)."""
    turn = {"SPADES_TURN_SECONDS": "10"}
    steady = world.start("table", **turn)
    victim = world.start("table", SPADES_TABLE_APPEND_DELAY="0.3", **turn)
    relay = world.start("relay")

    async def two_owners() -> dict[int, str] | None:
        held = await owners(world.pool)
        return held if len(held) == SLOTS and len(set(held.values())) == 2 else None

    held = await eventually(two_owners, within=60, what="two replicas sharing slots")
    victim_member = next(m for m in set(held.values()) if int(m.split(":")[2]) == victim.pid)
    frames: list[Frame] = []

    async def heard(msg: Msg) -> None:
        frames.append(frame_decoder.decode(msg.data))

    watching = await nc.subscribe(subjects.all_audiences(), cb=heard)
    # Games to 100, not LONGER: the games paused are the victim's, whose every append waits
    # 0.3 s, so a game of its is in its first hand when the pause starts (at version 8) on
    # any machine, and nobody else can write it before the takeover the test waits for.
    # Played on to the end afterwards, the games to 300 cost this test two minutes of a
    # loaded machine for nothing it checks.
    players = await open_games(nc, subjects, 8, like_the_gateway=True, target=TARGET)
    game_ids = [p.game_id for p in players]
    paused_games = [g for g in game_ids if held[slot_of(g)] == victim_member]
    assert paused_games, "no game on the replica to pause"
    playing = asyncio.gather(*(p.play() for p in players))
    await eventually(lambda: all_beyond(world.store, game_ids, 8), within=300, what="under way")
    os.kill(victim.pid, signal.SIGSTOP)
    try:

        async def taken_over() -> bool:
            held = await owners(world.pool)
            return len(held) == SLOTS and victim_member not in held.values()

        await eventually(taken_over, within=30, interval=0.1, what="the leases to move")
        before = await last_version_change(world.store, paused_games)
        await eventually(  # the new owner plays on: the old one's next version is taken
            lambda: moved(world.store, paused_games, before),
            within=30,
            interval=0.1,
            what="the paused replica's games to move on the other replica",
        )
    finally:
        os.kill(victim.pid, signal.SIGCONT)
    await eventually(  # refused, or taken for a retry when the new owner wrote the same
        lambda: late_append_answered(world.processes.log(victim)),
        within=180,  # a resumed process on a loaded machine (a whole suite) is slow to get going
        what="the resumed replica's appends in flight to be answered by the store",
    )
    await finish(world, playing, game_ids)
    await watching.unsubscribe()
    assert [r for p in players for r in p.refusals] == []
    await assert_epochs_never_go_back(world.store, game_ids)

    logs = {g: await world.store.read(stream_of(g)) for g in paused_games}
    checked = 0
    for frame in (f for f in frames if f.game_id in logs):
        stored = logs[frame.game_id]
        assert frame.last <= len(stored), f"a frame of {frame.game_id} past its log"
        for seat, messages in enumerate(frame.seats):
            for seq, data in zip(range(frame.first, frame.last + 1), messages, strict=True):
                told = msgspec.json.decode(data)
                event = REGISTRY.decode(stored[seq - 1])
                expected = msgspec.json.decode(msgspec.json.encode(wire.redact(event, seat)))
                assert (told["seq"], told["event"]) == (seq, expected), (frame.game_id, seq)
                checked += 1
        if frame.clock:
            clock = msgspec.json.decode(frame.clock)
            deadline = stored[frame.last - 1].metadata.deadline
            assert (clock["seq"], clock["deadline"]) == (frame.last, deadline)
    assert checked > 0

    async def all_published() -> bool:
        for game_id, stored in logs.items():
            if set(await published_events(nc, subjects, game_id)) != {s.version for s in stored}:
                return False
        return True

    await eventually(all_published, within=120, interval=1, what="the relay to publish them all")
    for game_id, stored in logs.items():
        for version, copies in (await published_events(nc, subjects, game_id)).items():
            assert all(same_event(c, stored[version - 1]) for c in copies), (game_id, version)
    for proc in (steady, victim, relay):
        assert proc.poll() is None, world.processes.log(proc)[-2000:]
    print(
        f"\nreplica paused with appends in flight: {len(paused_games)} games, frames checked"
        f" {checked} messages, fenced appends"
        f" {world.processes.log(victim).count('append fenced off')}"
    )
