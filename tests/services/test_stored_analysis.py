"""Stored reviews (`analysis-<game>`, `services/bots/analyst.py`) with real processes: a rated
game is analysed when it finishes, reproducibly (the stored review is the bytes a second run
makes); a game finished while the tier was down, or whose worker was killed mid-review, is
analysed when the tier comes back; any other finished game is queued once on request, its
progress shown, served by any gateway from the store, and its players told when it is ready."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
import uuid
from typing import Any

import asyncpg
import httpx
import msgspec
import pytest
import structlog

import engine
from engine.bot import play_game
from events.contracts import game as wire
from events.contracts.analysis import (
    AnalysisFinished,
    AnalysisQueued,
    AnalysisStarted,
    HandAnalysed,
    QueueAnalysis,
    analysis_stream,
    fold,
)
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore, create_pool
from services.bots import analyst as analyst_module
from services.bots.analysis import analyse_transcript
from services.bots.analyst import Analyst, budget_of
from services.records import transcript as transcripts
from services.records.export import stored_analysis
from tests.gateway.conftest import register_and_login, start_gateway
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually
from tests.services.test_bot_tier import serve

pytestmark = pytest.mark.infra

RULES = engine.Ruleset(target=200)
BUDGET = "3,2,1"
"""The tests' review budget (worlds, double-dummy tricks, par runs): small, the flow is
under test, not the grading."""


def game_events(
    game_id: str, *, rated: bool, players: tuple[str, ...], seed: int = 8
) -> list[wire.GameEvent]:
    """Return a whole game's stream as the table records it (a bot game)."""
    played, _ = play_game(RULES, seed)
    events: list[wire.GameEvent] = [
        wire.TableOpened(
            game_id=game_id, ladder="standard" if rated else "casual", rated=rated, players=players
        )
    ]
    for event in played:
        carried = wire.to_wire(event)
        if isinstance(carried, wire.GameFinished):
            carried = msgspec.structs.replace(
                carried, rated=rated, players=players, ladder=events[0].ladder
            )
        events.append(carried)
    return events


async def store_game(
    store: PostgresEventStore,
    *,
    rated: bool,
    players: tuple[str, ...] = ("a", "b", "c", "d"),
    seed: int = 8,
    finished: bool = True,
) -> tuple[str, list[wire.GameEvent]]:
    game_id = str(uuid.uuid4())
    events = game_events(game_id, rated=rated, players=players, seed=seed)
    if not finished:
        events = events[: len(events) // 2]
    await store.append(wire.stream_of(game_id), 0, [REGISTRY.new_event(e) for e in events])
    return game_id, events


async def analysis_of(store: PostgresEventStore, game_id: str) -> list[Any]:
    return [REGISTRY.decode(s) for s in await store.read(analysis_stream(game_id))]


async def stored_review(store: PostgresEventStore, game_id: str) -> AnalysisFinished | None:
    events = await analysis_of(store, game_id)
    return next((e for e in events if isinstance(e, AnalysisFinished)), None)


def tier(processes: Processes, **env: str) -> subprocess.Popen[bytes]:
    return serve(processes, "bots", SPADES_ANALYSIS_BUDGET=BUDGET, **env)


async def test_a_rated_game_is_analysed_when_it_finishes_reproducibly(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    serve(processes, "relay")
    tier(processes)
    unrated, _ = await store_game(event_store, rated=False)
    game_id, events = await store_game(event_store, rated=True)

    finished = await eventually(
        lambda: stored_review(event_store, game_id), within=600, what="the rated game analysed"
    )
    assert finished.ok, finished
    stream = await analysis_of(event_store, game_id)
    queued, started = stream[0], stream[1]
    assert isinstance(queued, AnalysisQueued)
    assert queued.rated
    assert queued.budget == budget_of(True, BUDGET)
    assert queued.budget.par_runs == 1
    assert queued.players == ("a", "b", "c", "d")
    assert isinstance(started, AnalysisStarted)
    assert started.attempt == 1
    hands = [e.hand for e in events if isinstance(e, wire.HandScored)]
    assert started.hands == len(hands)
    progress = [e for e in stream if isinstance(e, HandAnalysed)]
    assert [(p.stage, p.hand) for p in progress] == [("graded", h) for h in hands] + [
        ("par", h) for h in hands
    ]
    assert [p.done for p in progress] == list(range(1, 2 * len(hands) + 1))
    assert all(p.of == 2 * len(hands) for p in progress)
    assert isinstance(stream[-1], AnalysisFinished)
    assert len(stream) == 3 + len(progress)

    # the same inputs and seed, analysed again: the stored review, byte for byte
    again = analyse_transcript(
        transcripts.export(events), seed=game_id, worlds=3, dd_tricks=2, par_runs=1
    )
    assert bytes(again.body) == bytes(finished.review)
    review = msgspec.json.decode(finished.review)
    assert [p["hand"] for p in review["par"]] == hands
    luck = review["luck"]
    assert [side["play"] for side in luck] == [
        round(side["result"] - side["cards"], 2) for side in luck
    ]
    # the unrated game finished first and was not queued by the consumer
    assert await event_store.stream_version(analysis_stream(unrated)) == 0


async def test_a_review_killed_midway_and_a_game_finished_while_down_are_analysed_on_return(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    serve(processes, "relay")
    # a budget large enough that the kill lands while the first hand is graded
    worker = serve(processes, "bots", SPADES_ANALYSIS_BUDGET="24,4,1")
    first, _ = await store_game(event_store, rated=True)

    async def started() -> bool:
        return any(isinstance(e, AnalysisStarted) for e in await analysis_of(event_store, first))

    await eventually(started, within=300, what="the first review under way")
    worker.send_signal(signal.SIGKILL)
    worker.wait(30)
    assert await stored_review(event_store, first) is None  # killed before it was done
    second, _ = await store_game(event_store, rated=True, seed=9)  # finished while down

    tier(processes)
    for game_id in (first, second):
        done = await eventually(
            lambda g=game_id: stored_review(event_store, g), within=900, what="analysed"
        )
        assert done.ok, done
    attempts = [
        e.attempt for e in await analysis_of(event_store, first) if isinstance(e, AnalysisStarted)
    ]
    assert attempts == [1, 2]  # taken up again after the kill, finished once
    finals = [e for e in await analysis_of(event_store, first) if isinstance(e, AnalysisFinished)]
    assert len(finals) == 1


async def test_an_unrated_game_is_queued_once_on_request_and_served_by_any_gateway(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    serve(processes, "relay")
    tier(processes)
    one = await start_gateway(processes)
    two = await start_gateway(processes)
    async with (
        httpx.AsyncClient(base_url=one.url, timeout=60) as first,
        httpx.AsyncClient(base_url=two.url, timeout=60) as second,
    ):
        token = await register_and_login(first, f"rev{uuid.uuid4().hex[:8]}")
        watcher = WsClient(one.ws_url, token)
        welcome = await watcher.connect()
        assert welcome is not None
        me = welcome["player_id"]
        game_id, _ = await store_game(event_store, rated=False, players=(me, "b", "c", "d"))
        live, _ = await store_game(event_store, rated=False, finished=False)

        refused = await first.get(f"/api/games/{live}/analysis")
        assert refused.status_code == 409, refused.text
        assert refused.json()["code"] == "game_not_finished"
        assert await event_store.stream_version(analysis_stream(live)) == 0

        asked = await first.get(f"/api/games/{game_id}/analysis")
        assert asked.status_code in (200, 202), asked.text
        again = await second.get(f"/api/games/{game_id}/analysis")
        assert again.status_code in (200, 202), again.text
        if again.status_code == 202:
            assert again.json()["status"] == "pending"
            assert again.json()["done"] <= again.json()["of"]

        told = await watcher.expect("analysis_ready", within=600)
        assert told == {"type": "analysis_ready", "game_id": game_id, "status": "ready"}
        await watcher.close()

        ready = [(await c.get(f"/api/games/{game_id}/analysis")) for c in (first, second)]
        assert [r.status_code for r in ready] == [200, 200]
        assert ready[0].json() == ready[1].json()
        assert ready[0].json()["analysis"]["decisions"]
        assert "par" not in ready[0].json()["analysis"]  # an asked review has no par
    stream = await analysis_of(event_store, game_id)
    assert sum(isinstance(e, AnalysisQueued) for e in stream) == 1  # asked twice, queued once
    assert sum(isinstance(e, AnalysisFinished) for e in stream) == 1


async def test_a_players_luck_figure_averages_his_sides_split_over_analysed_games(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    gateway = await start_gateway(processes)
    me = f"lucky-{uuid.uuid4().hex[:6]}"
    # his side's (result, cards) in each game: seat 0 (side 0), then seat 1 (side 1)
    splits = {0: (120.0, 80.0), 1: (-40.0, -100.0)}
    for seat, (result, cards) in splits.items():
        players = tuple(me if s == seat else f"o{s}-{uuid.uuid4().hex[:4]}" for s in range(4))
        game_id, _ = await store_game(event_store, rated=True, players=players)
        luck = [
            {"side": side, "result": r, "cards": c, "play": r - c}
            for side, (r, c) in (
                ((seat % 2), (result, cards)),
                ((seat + 1) % 2, (-result, -cards)),
            )
        ]
        luck.sort(key=lambda x: x["side"])
        stream = [
            AnalysisQueued(game_id=game_id, rated=True, budget=budget_of(True), seed=game_id),
            AnalysisFinished(
                game_id=game_id, ok=True, review=msgspec.Raw(msgspec.json.encode({"luck": luck}))
            ),
        ]
        await event_store.append(
            analysis_stream(game_id), 0, [REGISTRY.new_event(e) for e in stream]
        )
    # a game of his without a stored review counts for nothing
    await store_game(event_store, rated=True, players=(me, "x", "y", "z"))
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        got = await http.get(f"/api/players/{me}/luck")
        assert got.status_code == 200, got.text
        assert got.json() == {
            "player_id": me,
            "games": 2,
            "result": 40.0,  # (120 - 40) / 2
            "cards": -10.0,  # (80 - 100) / 2
            "play": 50.0,  # (40 + 60) / 2: the margin with the cards taken out
        }
        nobody = await http.get("/api/players/nobody-here/luck")
        assert nobody.json()["games"] == 0


async def test_two_workers_share_the_queue_one_review_each_at_a_time(
    database_url: str, event_store: PostgresEventStore
) -> None:
    """Two analysts (two replicas' worth) on one database, one review at a time each: every
    queued game is reviewed exactly once, and never more than two at once."""
    pools = [await create_pool(database_url, min_size=1, max_size=4) for _ in range(2)]
    stores = [PostgresEventStore(pool) for pool in pools]
    log = structlog.get_logger("test")
    workers = [
        Analyst(s, p, log, concurrency=1, spec=BUDGET) for s, p in zip(stores, pools, strict=True)
    ]
    games = []
    for seed in range(4):
        game_id, _ = await store_game(event_store, rated=False, seed=seed)
        await workers[seed % 2].queue(QueueAnalysis(game_id=game_id))
        games.append(game_id)
    stop = asyncio.Event()
    running = [asyncio.create_task(w.run(stop)) for w in workers]
    most = 0

    async def all_done() -> bool:
        nonlocal most
        under_way = 0
        finished = 0
        for game_id in games:
            stream = await analysis_of(event_store, game_id)
            started = any(isinstance(e, AnalysisStarted) for e in stream)
            ended = any(isinstance(e, AnalysisFinished) for e in stream)
            under_way += started and not ended
            finished += ended
        most = max(most, under_way)
        return finished == len(games)

    try:
        await eventually(all_done, within=900, interval=0.2, what="every queued game reviewed")
    finally:
        stop.set()
        await asyncio.gather(*running)
        for store in stores:
            await store.aclose()
        for pool in pools:
            await pool.close()
    assert most <= 2  # one review at a time per worker
    for game_id in games:
        stream = await analysis_of(event_store, game_id)
        assert sum(isinstance(e, AnalysisStarted) for e in stream) == 1
        assert sum(isinstance(e, AnalysisFinished) for e in stream) == 1


async def test_a_review_whose_workers_kept_dying_is_given_up_and_says_so(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    game_id, _ = await store_game(event_store, rated=False)
    died = [
        AnalysisQueued(game_id=game_id, rated=False, budget=budget_of(False, BUDGET), seed=game_id),
        *(AnalysisStarted(game_id=game_id, attempt=n, hands=3) for n in range(1, 4)),
    ]
    await event_store.append(analysis_stream(game_id), 0, [REGISTRY.new_event(e) for e in died])
    await pg_pool.execute(
        "INSERT INTO bots_analysis_queue (game_id, queued) VALUES ($1, 1)", game_id
    )
    worker = Analyst(event_store, pg_pool, structlog.get_logger("test"), spec=BUDGET)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        finished = await eventually(
            lambda: stored_review(event_store, game_id), within=120, what="given up"
        )
    finally:
        stop.set()
        await running
    assert not finished.ok
    assert finished.code == "given_up"
    assert bytes(finished.review) == b"null"
    # never started a fourth time
    stream = await analysis_of(event_store, game_id)
    assert sum(isinstance(e, AnalysisStarted) for e in stream) == 3
    assert (
        await pg_pool.fetchval(
            "SELECT count(*) FROM bots_analysis_queue WHERE game_id = $1", game_id
        )
        == 0
    )  # off the queue with its AnalysisFinished


async def given_up_review(
    store: PostgresEventStore, rounds: int
) -> tuple[str, list[wire.GameEvent]]:
    """Store a finished game whose review was queued ``rounds`` times and given up each time."""
    game_id, played = await store_game(store, rated=False)
    queued = AnalysisQueued(
        game_id=game_id, rated=False, budget=budget_of(False, BUDGET), seed=game_id
    )
    given_up = AnalysisFinished(game_id=game_id, ok=False, code="given_up", message="died")
    events = [queued, given_up] * rounds
    await store.append(analysis_stream(game_id), 0, [REGISTRY.new_event(e) for e in events])
    return game_id, played


async def test_a_failed_review_asked_for_again_is_queued_anew_after_its_cool_down(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    """Asked again within the cool-down: refused with when to ask, nothing written. After it:
    a second round with the first's budget and seed, worked like any queued review, and its
    review is the game's (fold, export). After the last round: never again."""
    log = structlog.get_logger("test")
    game_id, played = await given_up_review(event_store, rounds=1)
    before = await analysis_of(event_store, game_id)
    patient = Analyst(event_store, pg_pool, log, spec=BUDGET, retry_after=3600)
    looked = await patient.queue(QueueAnalysis(game_id=game_id, asked_by="eve"))
    assert (looked.ok, looked.code) == (True, "")
    assert looked.retry_at > time.time() + 3000
    early = await patient.queue(QueueAnalysis(game_id=game_id, asked_by="eve", again=True))
    assert (early.ok, early.code, early.retry_at) == (False, "retry_later", looked.retry_at)
    assert await analysis_of(event_store, game_id) == before

    worker = Analyst(event_store, pg_pool, log, spec=BUDGET, retry_after=0)
    assert (await worker.queue(QueueAnalysis(game_id=game_id))).ok  # only looked: unchanged
    assert await analysis_of(event_store, game_id) == before
    again = await worker.queue(QueueAnalysis(game_id=game_id, asked_by="eve", again=True))
    assert (again.ok, again.code) == (True, "")
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await eventually(
            lambda: _ready(event_store, game_id), within=300, what="the second round's review"
        )
    finally:
        stop.set()
        await running
    stream = await analysis_of(event_store, game_id)
    rounds = [e for e in stream if isinstance(e, AnalysisQueued)]
    assert len(rounds) == 2
    assert rounds[1] == msgspec.structs.replace(rounds[0], asked_by="eve")
    review = await stored_analysis(event_store, game_id)  # what the export carries
    expected = analyse_transcript(
        transcripts.export(played), seed=game_id, worlds=3, dd_tricks=2, par_runs=0
    )
    assert review is not None
    assert bytes(review) == bytes(expected.body)  # the review the first round would have made
    ready = await worker.queue(QueueAnalysis(game_id=game_id, again=True))
    assert (ready.ok, ready.code) == (True, "")  # nothing to do
    assert len(await analysis_of(event_store, game_id)) == len(stream)

    spent, _ = await given_up_review(event_store, rounds=3)
    last = await worker.queue(QueueAnalysis(game_id=spent, asked_by="eve", again=True))
    assert (last.ok, last.code, last.retry_at) == (False, "retries_spent", 0.0)
    assert "3 times" in last.message
    looked = await worker.queue(QueueAnalysis(game_id=spent))
    assert (looked.ok, looked.code, looked.retry_at) == (True, "retries_spent", 0.0)
    assert len(await analysis_of(event_store, spent)) == 6


async def _ready(store: PostgresEventStore, game_id: str) -> bool:
    state = fold(await analysis_of(store, game_id))
    return state is not None and state.status == "ready"


async def test_taking_a_finished_round_off_the_queue_never_takes_a_newer_one(
    pg_pool: asyncpg.Pool,
) -> None:
    """A worker that read a finished round takes it off the queue; a round queued anew in
    the meantime (a later AnalysisQueued) stays queued, and an older round never replaces it."""
    game_id = str(uuid.uuid4())

    async def queued() -> list[int]:
        rows = await pg_pool.fetch(
            "SELECT queued FROM bots_analysis_queue WHERE game_id = $1", game_id
        )
        return [r["queued"] for r in rows]

    async with pg_pool.acquire() as conn:
        await analyst_module._enqueue(conn, game_id, 6)  # round 2, queued at version 6
        await analyst_module._enqueue(conn, game_id, 1)  # round 1's row, late: no effect
    assert await queued() == [6]
    await analyst_module._dequeue(pg_pool, game_id, 5)  # round 1 was read finished at 5
    assert await queued() == [6]
    await analyst_module._dequeue(pg_pool, game_id, 8)  # round 2 finished at 8
    assert await queued() == []


async def test_a_failed_review_is_shown_with_the_bot_tier_down_and_asking_again_says_503(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    """GET of a failed review asks the tier only for its retry_at: with no tier it still shows
    the stored failure (retry_at 0); POST, which needs the tier, answers 503 and writes
    nothing."""
    gateway = await start_gateway(processes)  # and no bot tier
    game_id, _ = await given_up_review(event_store, rounds=1)
    before = await analysis_of(event_store, game_id)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        shown = await http.get(f"/api/games/{game_id}/analysis")
        assert shown.status_code == 200, shown.text
        assert shown.json()["status"] == "failed"
        assert shown.json()["code"] == "given_up"
        assert shown.json()["retry_at"] == 0
        again = await http.post(f"/api/games/{game_id}/analysis")
        assert again.status_code == 503, again.text
        assert again.json()["code"] == "unavailable"
    assert await analysis_of(event_store, game_id) == before
