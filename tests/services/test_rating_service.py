"""The rating service as a real process against real PostgreSQL and NATS JetStream.

GameFinished reaches it the way it does in production (appended to a game stream, published by
a relay process), or, where a test needs to deliver the same event twice or out of order, as
the relay would publish it (StoredEvent JSON on the event's subject).
"""

from __future__ import annotations

import signal
import subprocess
import uuid
from datetime import datetime
from typing import Any

import asyncpg
import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from events.bus import ensure_streams
from events.contracts.game import GameFinished
from events.contracts.rating import RatingsUpdated, display_rating
from events.envelope import REGISTRY, StoredEvent
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.rating.model import MU0, SIGMA0, Rating, rate_game
from tests.infra import Processes, eventually

pytestmark = pytest.mark.infra

SERVICE = ("-m", "services.tools.cli", "serve")
OPS = {"SPADES_OPS_PORT": "0"}


def players(n: int = 4) -> tuple[str, ...]:
    """Return fresh player ids, one per seat."""
    return tuple(f"p{seat}-{uuid.uuid4().hex[:6]}" for seat in range(n))


async def finish_game(
    store: PostgresEventStore,
    seats: tuple[str, ...],
    winner: int,
    *,
    rated: bool = True,
    ladder: str = "standard",
    abandoned: tuple[int, ...] = (),
) -> StoredEvent:
    """Append a game stream holding one GameFinished; return the stored event."""
    finished = GameFinished(
        winner=winner,
        reason="target",
        scores=(510, 230) if winner == 0 else (230, 510),
        ladder=ladder,
        rated=rated,
        players=seats,
        abandoned=abandoned,
    )
    (stored,) = await store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(finished)])
    return stored


async def publish(js: JetStreamContext, subjects: Subjects, event: StoredEvent) -> None:
    """Publish `event` as the relay does, but without its dedup id: a true second delivery."""
    await ensure_streams(js, subjects)
    await js.publish(subjects.event(event.stream_id, event.type), msgspec.json.encode(event))


def game_id(event: StoredEvent) -> str:
    return event.stream_id.removeprefix("game-")


async def history_rows(pool: asyncpg.Pool, event: StoredEvent) -> int:
    return int(
        await pool.fetchval(
            "SELECT count(*) FROM rating_history WHERE game_id = $1", game_id(event)
        )
    )


async def rated(pool: asyncpg.Pool, event: StoredEvent) -> bool:
    return await history_rows(pool, event) > 0


async def ratings_of(pool: asyncpg.Pool, ladder: str = "standard") -> dict[str, asyncpg.Record]:
    rows = await pool.fetch("SELECT * FROM ratings WHERE ladder = $1", ladder)
    return {r["player_id"]: r for r in rows}


async def request(nc: NATS, subject: str, body: dict[str, Any] | bytes) -> dict[str, Any]:
    data = body if isinstance(body, bytes) else msgspec.json.encode(body)
    reply = await nc.request(subject, data, timeout=10)
    answer: dict[str, Any] = msgspec.json.decode(reply.data)
    return answer


async def answering(nc: NATS, subjects: Subjects) -> bool:
    """Return whether a rating service answers reads yet (it subscribes once started)."""
    try:
        await request(nc, subjects.rating_player(), {"player_id": "nobody"})
    except Exception:
        return False
    return True


def start_rating(processes: Processes, **env: str) -> subprocess.Popen[bytes]:
    return processes.start(*SERVICE, "rating", env={**OPS, **env})


def expected_after(
    games: list[tuple[StoredEvent, tuple[str, ...], int]],
) -> dict[str, Rating]:
    """Return the ratings the model gives after rating `games` once each, in order."""
    ratings: dict[str, Rating] = {}
    for event, seats, winner in games:
        teams = ([seats[0], seats[2]], [seats[1], seats[3]])
        ratings.update(rate_game(teams, ratings, winner, event.recorded_at.timestamp()))
    return ratings


async def test_winners_go_up_losers_down_and_the_update_is_recorded(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    nc: NATS,
    subjects: Subjects,
) -> None:
    processes.start(*SERVICE, "relay", env=OPS)
    start_rating(processes)
    seats = players()
    event = await finish_game(event_store, seats, winner=0)  # seats 0 and 2 win

    await eventually(lambda: rated(pg_pool, event), within=60, what="ratings updated")

    now = await ratings_of(pg_pool)
    winners, losers = (seats[0], seats[2]), (seats[1], seats[3])
    assert all(now[p]["mu"] > MU0 for p in winners)
    assert all(now[p]["mu"] < MU0 for p in losers)
    assert all(now[p]["sigma"] < SIGMA0 for p in seats)
    assert all(now[p]["games"] == 1 for p in seats)
    (stored,) = await event_store.read(f"rating-{game_id(event)}")
    update = REGISTRY.decode(stored)
    assert isinstance(update, RatingsUpdated)
    assert update.ladder == "standard"
    assert {c.player_id for c in update.changes} == set(seats)
    for change in update.changes:
        assert (change.mu_before, change.sigma_before) == (MU0, SIGMA0)
        assert (change.mu_after, change.sigma_after) == (
            now[change.player_id]["mu"],
            now[change.player_id]["sigma"],
        )
        assert change.ordinal_after == pytest.approx(change.mu_after - 3 * change.sigma_after)
    assert stored.metadata.causation_id == event.event_id

    ladder = await request(nc, subjects.rating_ladder(), {"ladder": "standard", "limit": 10})
    assert ladder["ok"], ladder
    ranked = [row["player_id"] for row in ladder["players"]]
    assert set(ranked[:2]) == set(winners)
    assert set(ranked[2:]) == set(losers)
    assert all(row["provisional"] for row in ladder["players"])
    # the shown rating: everyone started at 1500; the winners are above it, the losers below,
    # and it follows the model's mu, which stays in the answer beside it
    shown = {row["player_id"]: row["display"] for row in ladder["players"]}
    assert all(shown[p] > 1500 for p in winners)
    assert all(shown[p] < 1500 for p in losers)
    assert all(row["display"] == display_rating(row["mu"]) for row in ladder["players"])
    me = await request(nc, subjects.rating_player(), {"player_id": seats[0]})
    assert me["ok"], me
    assert me["ratings"]["standard"]["games"] == 1
    assert [h["game_id"] for h in me["history"]] == [game_id(event)]
    (entry,) = me["history"]
    assert entry["display_before"] == 1500
    assert entry["display_after"] == me["ratings"]["standard"]["display"] == shown[seats[0]]


async def test_bad_reads_are_answered_with_a_code(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    service = start_rating(processes)
    await eventually(lambda: answering(nc, subjects), within=60, what="rating answers")

    unknown = await request(nc, subjects.rating_ladder(), {"ladder": "no-such-ladder"})
    garbage = await request(nc, subjects.rating_ladder(), b"{not json")
    wrong = await request(nc, subjects.rating_player(), {"player": "x"})
    too_big = await request(nc, subjects.rating_ladder(), {"ladder": "standard", "limit": 10**6})

    assert (unknown["ok"], unknown["code"]) == (False, "unknown_ladder")
    assert (garbage["ok"], garbage["code"]) == (False, "malformed")
    assert (wrong["ok"], wrong["code"]) == (False, "malformed")
    assert (too_big["ok"], too_big["code"]) == (False, "malformed")
    assert all(a["message"] for a in (unknown, garbage, wrong, too_big))

    service.send_signal(signal.SIGTERM)  # graceful: stops, drains, exits cleanly
    assert service.wait(timeout=60) == 0, processes.log(service)
    assert '"service stopped"' in processes.log(service)


async def test_duplicate_and_out_of_order_deliveries_have_no_second_effect(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    start_rating(processes)
    seats = players()
    first = await finish_game(event_store, seats, winner=0)
    second = await finish_game(event_store, seats, winner=1)
    last = await finish_game(event_store, seats, winner=0)

    await publish(js, subjects, first)
    await publish(js, subjects, second)
    await publish(js, subjects, first)  # again, after a later game
    await publish(js, subjects, second)
    await publish(js, subjects, first)
    await publish(js, subjects, last)  # the deliveries before it are handled once this is
    await eventually(lambda: rated(pg_pool, last), within=60, what="last game rated")

    now = await ratings_of(pg_pool)
    want = expected_after([(first, seats, 0), (second, seats, 1), (last, seats, 0)])
    assert {p: now[p]["games"] for p in seats} == dict.fromkeys(seats, 3)
    for player in seats:
        assert now[player]["mu"] == pytest.approx(want[player].mu)
        assert now[player]["sigma"] == pytest.approx(want[player].sigma)
    for event in (first, second, last):
        assert await history_rows(pg_pool, event) == 4
        assert await event_store.stream_version(f"rating-{game_id(event)}") == 1


async def test_kill_mid_update_then_restart_rates_the_game_exactly_once(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    crashing = start_rating(processes, SPADES_CRASH_POINT="rating-after-append")
    seats = players()
    event = await finish_game(event_store, seats, winner=1)
    await publish(js, subjects, event)

    await eventually(lambda: crashing.poll() is not None, within=60, what="crash point reached")
    assert crashing.returncode == -signal.SIGKILL, processes.log(crashing)
    assert await ratings_of(pg_pool) == {}  # the append and the upserts rolled back together
    assert await event_store.stream_version(f"rating-{game_id(event)}") == 0

    start_rating(processes)  # JetStream redelivers the unacknowledged GameFinished
    await eventually(lambda: rated(pg_pool, event), within=90, what="rated after restart")
    marker = await finish_game(event_store, seats, winner=0)
    await publish(js, subjects, marker)
    await eventually(lambda: rated(pg_pool, marker), within=60, what="marker game rated")

    assert await history_rows(pg_pool, event) == 4
    assert await event_store.stream_version(f"rating-{game_id(event)}") == 1
    now = await ratings_of(pg_pool)
    want = expected_after([(event, seats, 1), (marker, seats, 0)])
    for player in seats:
        assert now[player]["games"] == 2
        assert now[player]["mu"] == pytest.approx(want[player].mu)


async def test_unrated_game_and_draw_move_nothing(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    start_rating(processes)
    practice_seats, draw_seats = players(), players()
    practice = await finish_game(event_store, practice_seats, winner=0, rated=False)
    draw = await finish_game(event_store, draw_seats, winner=-1)
    marker = await finish_game(event_store, players(), winner=0)
    for event in (practice, draw, marker):
        await publish(js, subjects, event)

    await eventually(lambda: rated(pg_pool, marker), within=60, what="marker game rated")

    now = await ratings_of(pg_pool)
    assert not set(now) & {*practice_seats, *draw_seats}
    assert await history_rows(pg_pool, practice) == 0
    assert await event_store.stream_version(f"rating-{game_id(practice)}") == 0
    assert await event_store.stream_version(f"rating-{game_id(draw)}") == 0


async def test_malformed_and_unratable_payloads_are_parked(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    start_rating(processes)
    await ensure_streams(js, subjects)
    bad_game = f"game-{uuid.uuid4()}"
    await js.publish(subjects.event(bad_game, "GameFinished"), b"{not json at all")
    wrong_shape = StoredEvent(
        event_id=uuid.uuid4(),
        stream_id=f"game-{uuid.uuid4()}",
        version=1,
        type="GameFinished",
        data=msgspec.Raw(b'{"type":"GameFinished","winner":"nobody"}'),
        recorded_at=datetime.now().astimezone(),
        position=1,
        transaction_id=1,
    )
    await js.publish(
        subjects.event(wrong_shape.stream_id, "GameFinished"), msgspec.json.encode(wrong_shape)
    )
    three = players(3)
    unknown_ladder = await finish_game(event_store, (*three, "x"), winner=0, ladder="nope")
    await publish(js, subjects, unknown_ladder)
    marker = await finish_game(event_store, players(), winner=0)
    await publish(js, subjects, marker)

    await eventually(lambda: rated(pg_pool, marker), within=60, what="marker game rated")

    parked = await pg_pool.fetch(
        "SELECT subject, reason FROM spades_parked WHERE consumer = 'rating' ORDER BY id"
    )
    reasons = [r["reason"] for r in parked]
    assert len(parked) == 3, reasons
    assert reasons[0].startswith("undecodable")
    assert reasons[1].startswith("undecodable")
    assert reasons[2].startswith("unprocessable")
    assert "nope" in reasons[2]
    assert not set(await ratings_of(pg_pool, "nope"))
    assert not set(await ratings_of(pg_pool)) & set(three)
