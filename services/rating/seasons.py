"""Seasons of the ladders: closing each one exactly once, and reading a season's leaderboard.

Every `CHECK_SECONDS` each rating replica looks, on the clock of `services.runtime.clock`
(a test moves it with SPADES_CLOCK_FILE), for seasons that are over and not yet closed, and
closes each in one transaction (the rules: `events/contracts/seasons.py`):

    advisory lock season:<ladder> ──▶ SeasonEnded appended to season-<ladder>_s<N> at version 0
    ──▶ `rating_seasons` row, `rating_season_standings` frozen from `rating_history`
    ──▶ a soft reset of the ladder's `ratings` if the ladder says so

A second replica (or a retry) finds the row, or conflicts on the version-0 append, and does
nothing. The frozen leaderboard is computed from `rating_history` (each player's rating after
his last rated game with ``rated_at`` inside the season), so it does not depend on when the
close ran. Matchmaking's own copy of ratings takes the same soft reset when it consumes
SeasonEnded (`services/matchmaking/readmodels.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import msgspec

from events.contracts.ladders import Ladder, UnknownLadder, configured, ladder_of
from events.contracts.rating import LadderEntry, LadderQuery, display_rating
from events.contracts.seasons import (
    SOFT_KEEP,
    SeasonBoard,
    SeasonEnded,
    SeasonQuery,
    season_stream,
)
from events.envelope import REGISTRY, Metadata
from events.pgstore import Conn, append_with
from events.store import ConcurrencyConflict
from services.rating.model import MU0, PROVISIONAL_GAMES, SIGMA0
from services.runtime.clock import Clock

__all__ = ["CHECK_SECONDS", "SOFT_KEEP", "close_due", "run", "season_page"]

CHECK_SECONDS = 2.0
MAX_PAGE = 200

_encoder = msgspec.json.Encoder()
_board = msgspec.json.Decoder(SeasonBoard)


async def close_season(conn: Conn, ladder: Ladder, season: int, now: float) -> bool:
    """Close ``season`` of ``ladder`` in the caller's transaction; False if it was already."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"season:{ladder.name}")
    if await conn.fetchval(
        "SELECT 1 FROM rating_seasons WHERE ladder = $1 AND season = $2", ladder.name, season
    ):
        return False
    starts, ends = ladder.season_bounds(season)
    await conn.execute(
        "INSERT INTO rating_season_standings (ladder, season, rank, player_id, mu, sigma, games)"
        " SELECT $1, $2, row_number() OVER (ORDER BY mu_after - 3 * sigma_after DESC,"
        " player_id), player_id, mu_after, sigma_after, games FROM ("
        "  SELECT DISTINCT ON (player_id) player_id, mu_after, sigma_after, games"
        "  FROM rating_history WHERE ladder = $1 AND rated_at >= $3 AND rated_at < $4"
        "  ORDER BY player_id, rated_at DESC, game_id DESC) AS last",
        ladder.name,
        season,
        starts,
        ends,
    )
    players = await conn.fetchval(
        "SELECT count(*) FROM rating_season_standings WHERE ladder = $1 AND season = $2",
        ladder.name,
        season,
    )
    event = SeasonEnded(
        ladder=ladder.name,
        season=season,
        starts_at=starts,
        ends_at=ends,
        players=players,
        reset=ladder.season_reset,
    )
    try:
        await append_with(
            conn,
            season_stream(ladder.name, season),
            0,
            [REGISTRY.new_event(event, Metadata(actor="rating"))],
        )
    except ConcurrencyConflict:
        return False
    await conn.execute(
        "INSERT INTO rating_seasons (ladder, season, starts_at, ends_at, closed_at, players,"
        " reset) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        ladder.name,
        season,
        starts,
        ends,
        now,
        players,
        ladder.season_reset,
    )
    if ladder.season_reset == "soft":
        # Only ratings still where the season left them: a player rated again since its end
        # (the close came late: the service was down, or a first start closes past seasons)
        # is already in the next season, and resetting now would undo those games.
        await conn.execute(
            "UPDATE ratings r SET mu = $2 + (mu - $2) * $3, sigma = GREATEST(sigma, $4)"
            " WHERE r.ladder = $1 AND NOT EXISTS (SELECT 1 FROM rating_history h"
            "  WHERE h.ladder = r.ladder AND h.player_id = r.player_id AND h.rated_at >= $5)",
            ladder.name,
            MU0,
            SOFT_KEEP,
            SIGMA0 * SOFT_KEEP,
            ends,
        )
    return True


async def close_due(pool: Any, now: float, log: Any) -> list[tuple[str, int]]:
    """Close every season that is over at ``now`` and not closed yet; return which."""
    closed = []
    for ladder in configured().values():
        current = ladder.season_at(now)
        if ladder.season_days <= 0 or current <= 1:
            continue
        done = {
            r["season"]
            for r in await pool.fetch(
                "SELECT season FROM rating_seasons WHERE ladder = $1", ladder.name
            )
        }
        for season in range(1, current):
            if season in done:
                continue
            async with pool.acquire() as conn, conn.transaction():
                if await close_season(conn, ladder, season, now):
                    closed.append((ladder.name, season))
                    log.info("season closed", ladder=ladder.name, season=season)
    return closed


async def run(pool: Any, clock: Clock, stop: asyncio.Event, log: Any) -> None:
    """Close seasons as they end, until ``stop``."""
    while not stop.is_set():
        try:
            await close_due(pool, clock.now(), log)
        except Exception as exc:  # PostgreSQL away: the next round tries again
            log.warning("season check failed", error=type(exc).__name__)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=CHECK_SECONDS)


async def season_page(pool: Any, query: SeasonQuery, now: float, live: Any) -> bytes:
    """Answer one page of a season's leaderboard: the running season's is the live ladder
    (``live``: `ladder_page`), an ended one's its frozen standings."""

    def refuse(code: str, message: str) -> bytes:
        return _encoder.encode(SeasonBoard(ok=False, code=code, message=message))

    try:
        ladder = ladder_of(query.ladder)
    except UnknownLadder as exc:
        return refuse(exc.code, str(exc))
    if query.offset < 0 or not 1 <= query.limit <= MAX_PAGE or query.season < 0:
        return refuse("malformed", f"season >= 0, offset >= 0 and limit 1..{MAX_PAGE}")
    current = ladder.season_at(now)
    season = query.season or current
    if season > current:
        return refuse("unknown_season", f"{ladder.name} is in season {current}: no {season} yet")
    starts, ends = ladder.season_bounds(season)
    shown: dict[str, Any] = {
        "ladder": ladder.name,
        "season": season,
        "current": current,
        "starts_at": starts,
        "ends_at": None if ends == float("inf") else ends,
    }
    if season == current:
        page = msgspec.json.decode(
            await live(
                pool, LadderQuery(ladder=ladder.name, offset=query.offset, limit=query.limit), now
            )
        )
        return _encoder.encode(
            SeasonBoard(
                ok=True,
                code="season",
                message=f"season {season}, running",
                total=page["total"],
                players=msgspec.convert(page["players"], list[LadderEntry]),
                **shown,
            )
        )
    closed = await pool.fetchval(
        "SELECT players FROM rating_seasons WHERE ladder = $1 AND season = $2",
        ladder.name,
        season,
    )
    if closed is None:
        return refuse("season_closing", f"season {season} of {ladder.name} is being closed")
    rows = await pool.fetch(
        "SELECT rank, player_id, mu, sigma, games FROM rating_season_standings"
        " WHERE ladder = $1 AND season = $2 ORDER BY rank OFFSET $3 LIMIT $4",
        ladder.name,
        season,
        query.offset,
        query.limit,
    )
    return _encoder.encode(
        SeasonBoard(
            ok=True,
            code="season",
            message=f"season {season}, frozen at its end",
            frozen=True,
            total=closed,
            players=[
                LadderEntry(
                    rank=r["rank"],
                    player_id=r["player_id"],
                    mu=r["mu"],
                    sigma=r["sigma"],
                    ordinal=r["mu"] - 3 * r["sigma"],
                    games=r["games"],
                    provisional=r["games"] < PROVISIONAL_GAMES,
                    display=display_rating(r["mu"]),
                )
                for r in rows
            ],
            **shown,
        )
    )
