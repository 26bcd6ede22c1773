"""An arena event's rows as its page shows them: its games, its standings, its clock.

The rows are migration 43's (`tourney_arena_games`, the ``minutes`` and ``ends_at`` of
``tourneys``, the ``paused`` flag of ``tourney_pairs``); the pure rules are
`services.gateway.arena`'s, the driver `services.gateway.arenarun`'s.
"""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

from events.pgstore import Conn
from services.gateway import arena
from services.gateway.arena import ArenaStanding


class ArenaGame(msgspec.Struct, frozen=True, kw_only=True):
    """An arena game: its number (the order it opened), the pair North-South and East-West,
    its game, and once over the final scores, the pair that won (0 a draw, -1 no result: the
    table closed it unplayed) and the points each pair took from it."""

    number: int
    ns_pair: int
    ew_pair: int
    game_id: str
    winner: int | None = None
    ns_score: int | None = None
    ew_score: int | None = None
    ns_points: int | None = None
    ew_points: int | None = None


class ArenaView(msgspec.Struct, frozen=True, kw_only=True):
    """An arena's part of its page: its length, its end (once it runs), the pairs paused,
    its games and its standings (see `services.gateway.arena` for the points)."""

    minutes: int
    ends_at: float | None
    paused: list[int]
    games: list[ArenaGame]
    standings: list[ArenaStanding]
    scoring: str = (
        "a win 2, a draw 1, a loss 0; after two wins in a row a pair is on fire and scores"
        " double until a game it does not win"
    )


async def games_of(conn: Conn | asyncpg.Pool, tourney_id: uuid.UUID) -> list[arena.Game]:
    """Return the arena's games in the order they opened (``winner`` None while played)."""
    rows = await conn.fetch(
        "SELECT game_no, ns_pair, ew_pair, winner_pair FROM tourney_arena_games"
        " WHERE tourney_id = $1 ORDER BY game_no",
        tourney_id,
    )
    return [arena.Game(r["game_no"], r["ns_pair"], r["ew_pair"], r["winner_pair"]) for r in rows]


async def view(
    conn: Conn | asyncpg.Pool, row: asyncpg.Record, pairs: list[int]
) -> tuple[ArenaView, list[ArenaStanding]]:
    """Return an arena event's view and its standings."""
    tourney_id = row["tourney_id"]
    rows = await conn.fetch(
        "SELECT game_no, ns_pair, ew_pair, game_id, winner_pair, ns_score, ew_score"
        " FROM tourney_arena_games WHERE tourney_id = $1 ORDER BY game_no",
        tourney_id,
    )
    games = [arena.Game(r["game_no"], r["ns_pair"], r["ew_pair"], r["winner_pair"]) for r in rows]
    got = arena.awards(games)
    paused = await conn.fetch(
        "SELECT pair FROM tourney_pairs WHERE tourney_id = $1 AND paused ORDER BY pair",
        tourney_id,
    )
    standings = arena.standings(pairs, games)
    shown = ArenaView(
        minutes=row["minutes"] or 0,
        ends_at=None if row["ends_at"] is None else row["ends_at"].timestamp(),
        paused=[r["pair"] for r in paused],
        games=[
            ArenaGame(
                number=r["game_no"],
                ns_pair=r["ns_pair"],
                ew_pair=r["ew_pair"],
                game_id=str(r["game_id"]),
                winner=r["winner_pair"],
                ns_score=r["ns_score"],
                ew_score=r["ew_score"],
                ns_points=got.get((r["game_no"], r["ns_pair"])),
                ew_points=got.get((r["game_no"], r["ew_pair"])),
            )
            for r in rows
        ],
        standings=standings,
    )
    return shown, standings


__all__ = ["ArenaGame", "ArenaView", "games_of", "view"]
