"""The rating handler inside a real PostgreSQL transaction, without the bus in front of it.

The consumer's positions already drop a redelivered GameFinished before the handler sees it
(tests/services/test_rating_service.py). These tests reach the handler a second time anyway, as
a GameFinished arriving by any other route would, to prove the second lock: the version-0
RatingsUpdated append.
"""

from __future__ import annotations

import asyncio
import math
import uuid

import asyncpg
import msgspec
import pytest
import structlog

from events.consumer import Received
from events.contracts.game import GameFinished
from events.contracts.rating import LadderQuery
from events.envelope import REGISTRY, StoredEvent
from events.pgstore import PostgresEventStore
from services.rating.app import ladder_page, rate_finished_game
from services.rating.model import INACTIVITY_C, MU0

pytestmark = pytest.mark.infra

log = structlog.get_logger("test")


async def finished_game(
    store: PostgresEventStore, seats: tuple[str, ...], winner: int, abandoned: tuple[int, ...] = ()
) -> Received:
    event = GameFinished(
        winner=winner,
        reason="target",
        scores=(500, 200),
        ladder="standard",
        rated=True,
        players=seats,
        abandoned=abandoned,
    )
    (stored,) = await store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(event)])
    return received(stored)


def received(stored: StoredEvent) -> Received:
    return Received(stored, REGISTRY.decode(stored), "ev.game.x.GameFinished", 1)


async def rate(pool: asyncpg.Pool, game: Received) -> str:
    async with pool.acquire() as conn, conn.transaction():
        return await rate_finished_game(conn, game, log)


async def ratings(pool: asyncpg.Pool) -> dict[str, tuple[float, float, int]]:
    rows = await pool.fetch("SELECT player_id, mu, sigma, games FROM ratings")
    return {r["player_id"]: (r["mu"], r["sigma"], r["games"]) for r in rows}


async def test_a_second_attempt_at_one_game_conflicts_and_changes_nothing(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    seats = ("a", "b", "c", "d")
    game = await finished_game(event_store, seats, winner=0)

    first = await rate(pg_pool, game)
    after_first = await ratings(pg_pool)
    second = await rate(pg_pool, game)

    assert (first, second) == ("applied", "duplicate")
    assert await ratings(pg_pool) == after_first
    assert await pg_pool.fetchval("SELECT count(*) FROM rating_history") == 4
    game_id = game.event.stream_id.removeprefix("game-")
    assert await event_store.stream_version(f"rating-{game_id}") == 1


async def test_an_abandoner_is_charged_and_his_partner_does_not_move(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    seats = ("quitter", "opp1", "partner", "opp2")  # team 0: seats 0 and 2
    game = await finished_game(event_store, seats, winner=1, abandoned=(0,))

    assert await rate(pg_pool, game) == "applied"

    now = await ratings(pg_pool)
    assert set(now) == {"quitter", "opp1", "opp2"}
    assert now["quitter"][0] < MU0
    assert now["opp1"][0] > MU0
    assert now["opp2"][0] > MU0


async def test_a_rated_game_on_the_heads_up_ladder_rates_two_sides(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    event = GameFinished(
        winner=1,
        reason="target",
        scores=(120, 250),
        ladder="heads-up",
        rated=True,
        players=("left", "right"),
    )
    (stored,) = await event_store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(event)])

    assert await rate(pg_pool, received(stored)) == "applied"

    rows = await pg_pool.fetch("SELECT player_id, mu FROM ratings WHERE ladder = 'heads-up'")
    mu = {r["player_id"]: r["mu"] for r in rows}
    assert mu["right"] > MU0 > mu["left"]


async def test_the_ladder_orders_by_ordinal_with_inactivity_decay_applied_at_read(
    pg_pool: asyncpg.Pool,
) -> None:
    now = 1_800_000_000.0
    rows = [  # (player, mu, sigma, games, last played)
        ("idle-star", 30.0, 2.0, 40, now - 400 * 86_400.0),  # 24.0 when played, ~8.2 now
        ("steady", 25.0, 3.0, 12, now - 3_600.0),  # 16.0, barely decayed
        ("newcomer", 26.0, 5.0, 3, now),  # 11.0, provisional
    ]
    await pg_pool.executemany(
        "INSERT INTO ratings (ladder, player_id, mu, sigma, games, last_played)"
        " VALUES ('standard', $1, $2, $3, $4, $5)",
        rows,
    )

    page = msgspec.json.decode(await ladder_page(pg_pool, LadderQuery(ladder="standard"), now))
    second = msgspec.json.decode(
        await ladder_page(pg_pool, LadderQuery(ladder="standard", offset=1, limit=1), now)
    )

    assert [p["player_id"] for p in page["players"]] == ["steady", "newcomer", "idle-star"]
    star = page["players"][2]
    assert star["sigma"] == pytest.approx(math.sqrt(2.0**2 + INACTIVITY_C**2 * 400))
    assert star["ordinal"] == pytest.approx(30.0 - 3 * star["sigma"])
    assert [p["provisional"] for p in page["players"]] == [False, True, False]
    assert page["total"] == 3
    assert [(p["rank"], p["player_id"]) for p in second["players"]] == [(2, "newcomer")]


async def test_a_ladder_page_read_while_games_are_rated_agrees_with_its_total(
    pg_pool: asyncpg.Pool,
) -> None:
    """The page and its total come from one snapshot: read while players are being rated, a
    page never says "n players" and shows fewer than it should."""
    now, players = 1_800_000_000.0, 120
    written = asyncio.Event()

    async def rate_players() -> None:
        for i in range(players):
            await pg_pool.execute(
                "INSERT INTO ratings (ladder, player_id, mu, sigma, games, last_played)"
                " VALUES ('standard', $1, 25.0, 8.0, 1, $2)",
                f"p{i:03}",
                now,
            )
        written.set()

    writer = asyncio.create_task(rate_players())
    pages = []
    while not written.is_set():
        pages.append(
            msgspec.json.decode(
                await ladder_page(pg_pool, LadderQuery(ladder="standard", limit=200), now)
            )
        )
    await writer

    assert len(pages) > 1
    torn = [(len(p["players"]), p["total"]) for p in pages if len(p["players"]) != p["total"]]
    assert not torn, f"(shown, total) of pages that disagree: {torn}"
