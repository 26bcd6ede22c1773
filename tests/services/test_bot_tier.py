"""The bot tier (`services/bots`) as real processes: it plays every strong bot seat and makes
every hint, a table never searches, and no request a client can send makes it search more than
once a turn; a worker killed mid-turn costs one bounded wait, never the game."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
import uuid

import httpx
import msgspec
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

import engine
from events.bus import ensure_streams
from events.contracts import game as wire
from events.contracts import matchmaking as mm
from events.contracts.bots import ANSWER_MARGIN
from events.contracts.game import game_id_of_match, stream_of
from events.envelope import REGISTRY, Metadata
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.conftest import register_and_login, start_gateway
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually
from tests.services.opskit import ops_port, sample, scrape
from tests.services.tablekit import TableClient, my_turn, play_together

BOT_SECONDS = "0.02"
"""The strong bot's budget in these tests: its search, not its strength, is under test."""


def serve(processes: Processes, name: str, **env: str) -> subprocess.Popen[bytes]:
    return processes.start(
        "-m",
        "services.tools.cli",
        "serve",
        name,
        env={"SPADES_OPS_PORT": "0", "SPADES_BOT_SECONDS": BOT_SECONDS, **env},
    )


def counted(port: int, series: str) -> float:
    return sample(scrape(port), series) or 0.0


TIER = 'spades_table_bot_moves_total{source="tier"}'
FALLBACK = 'spades_table_bot_moves_total{source="fallback"}'
STRONG = 'spades_bot_decisions_total{kind="decide",level="strong",outcome="ok"}'
HINTS = 'spades_bot_decisions_total{kind="hint",level="strong",outcome="ok"}'


async def finished(store: PostgresEventStore, game_id: str) -> wire.GameFinished | None:
    for stored in reversed(await store.read(stream_of(game_id))):
        event = REGISTRY.decode(stored)
        if isinstance(event, wire.GameFinished):
            return event
    return None


async def test_a_rated_seat_left_by_its_player_gets_the_strong_bot_and_the_game_ends(
    processes: Processes,
    js: JetStreamContext,
    nc: NATS,
    subjects: Subjects,
    event_store: PostgresEventStore,
) -> None:
    # a turn long enough for ann on a loaded machine (3 s was not, at load 20: her seat was
    # abandoned); "gone" misses his first and is out
    table = serve(processes, "table", SPADES_TURN_SECONDS="10", SPADES_ABANDON_STREAK="1")
    bots = serve(processes, "bots")
    table_port, bots_port = await ops_port(processes, table), await ops_port(processes, bots)
    found = mm.MatchFound(
        match_id=str(uuid.uuid4()),
        ladder="heads-up",
        rules=engine.two_player_default().to_dict(),
        seats=("ann", "gone"),
        win_probability=0.5,
    )
    stored = await event_store.append(
        "queue-heads-up", 0, [REGISTRY.new_event(found, Metadata(actor="test"))]
    )
    await ensure_streams(js, subjects)
    await js.publish(
        subjects.event(stored[0].stream_id, stored[0].type), msgspec.json.encode(stored[0])
    )
    game_id = game_id_of_match(found.match_id)
    ann = TableClient(nc, subjects, "ann")
    await ann.wait_for_game(game_id)

    async def ann_plays() -> None:
        while (await finished(event_store, game_id)) is None:
            view = await ann.view(game_id)
            if my_turn(view):
                await ann.play_turn(game_id)
            else:
                await asyncio.sleep(0.02)

    await asyncio.wait_for(ann_plays(), 300)
    end = await finished(event_store, game_id)
    assert end is not None
    assert end.rated
    assert end.abandoned == (1,)  # "gone" left; the strong bot played his seat to the end
    assert end.reason != "abandoned"
    assert counted(bots_port, STRONG) > 0
    assert counted(table_port, TIER) > 0


async def test_a_bot_worker_killed_mid_turn_costs_one_bounded_wait_never_the_game(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    table = serve(processes, "table")
    worker = serve(processes, "bots")
    table_port, _ = await ops_port(processes, table), await ops_port(processes, worker)
    ann = TableClient(nc, subjects, "ann")
    reply = await ann.open_practice(bots="strong", untimed=True)
    assert reply.ok, reply
    game_id = reply.game_id
    stream = stream_of(game_id)

    async def the_tier_played() -> bool:
        await ann.play_turn(game_id)
        return counted(table_port, TIER) > 0

    await eventually(the_tier_played, within=60, what="a bot's move from the tier")

    async def ann_on_turn() -> bool:
        return my_turn(await ann.view(game_id))

    await eventually(ann_on_turn, within=60, what="ann's turn")
    # The worker takes the next request and never answers: stopped, then killed.
    os.kill(worker.pid, signal.SIGSTOP)
    before = counted(table_port, FALLBACK)
    version = len(await event_store.read(stream))
    sent = time.monotonic()
    assert await ann.play_turn(game_id) is not None

    async def a_bot_moved() -> bool:
        stored = await event_store.read(stream)
        return any(s.metadata.actor == "bot" for s in stored[version + 1 :])

    await eventually(a_bot_moved, within=60, what="the bot seat after ann to move")
    waited = time.monotonic() - sent
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    assert counted(table_port, FALLBACK) > before  # the table played the baseline's move
    # The stated bound: the budget plus the margin (and this loaded machine's slack).
    assert waited < float(BOT_SECONDS) + ANSWER_MARGIN + 30
    stored = await event_store.read(stream)
    assert [s.version for s in stored] == list(range(1, len(stored) + 1))
    assert len({s.event_id for s in stored}) == len(stored)  # nothing applied twice
    # A new worker takes over the next bot turn.
    fresh = serve(processes, "bots")
    await ops_port(processes, fresh)
    tier = counted(table_port, TIER)

    async def the_tier_answers_again() -> bool:
        await ann.play_turn(game_id)
        return counted(table_port, TIER) > tier

    await eventually(the_tier_answers_again, within=120, what="the new worker to answer")


async def test_two_bot_workers_share_the_bot_seats_of_thirty_practice_games(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    table = serve(processes, "table")
    workers = [serve(processes, "bots") for _ in range(2)]
    table_port = await ops_port(processes, table)
    ports = [await ops_port(processes, w) for w in workers]
    games = []
    for n in range(30):
        client = TableClient(nc, subjects, f"p{n}")
        reply = await client.open_practice(bots="strong", untimed=True, players=2, target=100)
        assert reply.ok, reply
        games.append((client, reply.game_id))
    await asyncio.wait_for(asyncio.gather(*(play_together([c], g) for c, g in games)), timeout=900)
    for _, game_id in games:
        end = await finished(event_store, game_id)
        assert end is not None, game_id
        assert end.reason != "abandoned"
    shares = [counted(port, STRONG) for port in ports]
    assert all(share > 0 for share in shares), shares  # the queue group shared the work
    # the table played the workers' moves (an answer later than its wait, on a loaded
    # machine, is replaced by the baseline's: counted as a fallback, never played twice)
    assert counted(table_port, TIER) + counted(table_port, FALLBACK) >= sum(shares) - 2
    assert counted(table_port, TIER) > 0


async def test_spamming_views_subscribes_and_hints_makes_no_search_and_starves_no_lease(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    table = serve(processes, "table")
    bots = serve(processes, "bots")
    gateway = await start_gateway(processes)
    bots_port = await ops_port(processes, bots)
    # four accounts, three untimed practice tables each with strong bots, a socket per table
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = [await register_and_login(http, f"spam{n}") for n in range(4)]
        tables: list[tuple[str, str]] = []
        for token in tokens:
            for _ in range(3):
                opened = await http.post(
                    "/api/practice",
                    json={"bots": "strong", "untimed": True},
                    headers={"authorization": f"Bearer {token}"},
                )
                assert opened.status_code == 201, opened.text
                tables.append((token, opened.json()["game_id"]))
    sockets = [WsClient(gateway.ws_url, token) for token, _ in tables]
    for socket, (_, game_id) in zip(sockets, tables, strict=True):
        await socket.connect()
        await socket.send({"type": "subscribe", "game_id": game_id, "hints": True})
        await socket.expect("your_turn", 60)  # the bots have moved; the person is on turn
    hints_before = counted(bots_port, HINTS)
    assert hints_before <= len(tables)  # at most one search for each seat's turn
    # another game, played meanwhile by four people over the table's own API
    players = [TableClient(nc, subjects, name) for name in ("on", "oe", "os", "ow")]
    other = await players[0].open_casual(tuple(p.player_id for p in players))
    assert other.ok, other
    sent = 0
    stop = time.monotonic() + 12

    async def spam(socket: WsClient, game_id: str) -> None:
        nonlocal sent
        while time.monotonic() < stop:
            for message in (
                {"type": "view", "game_id": game_id},
                {"type": "subscribe", "game_id": game_id, "hints": True},
            ):
                await socket.send(message)
                sent += 1
            await asyncio.sleep(0.01)

    async def drain(socket: WsClient) -> None:
        while time.monotonic() < stop + 2:
            try:
                await socket.recv(1)
            except TimeoutError:
                continue

    async def play_other() -> int:
        moves = 0
        while time.monotonic() < stop:
            for player in players:
                view = await player.view(other.game_id)
                if my_turn(view):
                    assert (await player.play_turn(other.game_id)) is not None
                    moves += 1
        return moves

    tasks = [spam(s, g) for s, (_, g) in zip(sockets, tables, strict=True)]
    results = await asyncio.gather(play_other(), *tasks, *(drain(s) for s in sockets))
    assert results[0] > 0  # the other game moved on, every command answered
    assert sent > 200
    assert counted(bots_port, HINTS) == hints_before  # no turn changed: no search again
    log = processes.log(table)
    assert "leases given up" not in log  # the replica kept every partition throughout
    assert "lease renewal failed" not in log
    for socket in sockets:
        await socket.close()


async def test_a_bot_that_raises_costs_one_decision_never_the_worker(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    """The strong bot raising on every decision (the test hook SPADES_BOTS_CRASH_LEVEL) costs
    each of those decisions the baseline's move, decided by the worker itself and counted as a
    fallback: the worker stays up and the games end."""
    serve(processes, "table")
    worker = serve(processes, "bots", SPADES_BOTS_CRASH_LEVEL="strong")
    port = await ops_port(processes, worker)
    games = []
    for n in range(2):
        client = TableClient(nc, subjects, f"p{n}")
        reply = await client.open_practice(bots="strong", untimed=True, players=2, target=100)
        assert reply.ok, reply
        games.append((client, reply.game_id))
    await asyncio.wait_for(asyncio.gather(*(play_together([c], g) for c, g in games)), timeout=600)
    for _, game_id in games:
        end = await finished(event_store, game_id)
        assert end is not None, game_id
        assert end.reason != "abandoned"
    fallbacks = 'spades_bot_decisions_total{kind="decide",level="strong",outcome="fallback"}'
    assert counted(port, fallbacks) > 0
    assert counted(port, STRONG) == 0  # every strong decision failed, and each was answered
    assert worker.poll() is None, "the worker died of a bot's exception"


BASELINE = 'spades_bot_decisions_total{kind="decide",level="baseline",outcome="ok"}'
TABLE = 'spades_table_bot_moves_total{source="table"}'


async def test_a_baseline_seat_whose_move_is_a_search_is_decided_by_the_tier(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    """Suicide's nil side searches its last tricks (`engine.botnil`, up to tenths of a second a
    card): the table asks the tier for those baseline moves and plays the rest itself."""
    table = serve(processes, "table")
    worker = serve(processes, "bots")
    table_port, worker_port = await ops_port(processes, table), await ops_port(processes, worker)
    client = TableClient(nc, subjects, "sue")
    # A game searches only where a bot's side keeps its nil into the last four tricks, which
    # a short game's deals may never give (a fresh clone's run had none): up to four games.
    for _ in range(4):
        reply = await client.open_practice(untimed=True, suicide=True, target=100)
        assert reply.ok, reply
        await asyncio.wait_for(play_together([client], reply.game_id), timeout=600)
        assert await finished(event_store, reply.game_id) is not None
        if counted(worker_port, BASELINE) > 0:
            break
    assert counted(worker_port, BASELINE) > 0  # the searched moves, decided by the tier
    assert counted(table_port, TABLE) > counted(worker_port, BASELINE)  # the rest, at the table
