"""Matchmaking's read models: who waits in which queue and who is seated in a live match,
in its own tables, and the status any replica answers from them.

`keep_members` runs inside the append of a queue stream (so a player is in one queue across
replicas: the table's primary key holds); `game_finished` and `ratings_updated` are the
exactly-once consumers of the table's and the rating service's events; `status` answers
`QueueStatus` from the database, so any replica can.
"""

from __future__ import annotations

import asyncpg

from events.consumer import Received, Unprocessable
from events.contracts.game import GameFinished
from events.contracts.ladders import configured
from events.contracts.matchmaking import (
    MatchFound,
    MatchmakingEvent,
    PlayerLeftQueue,
    PlayerQueued,
    QueueStatus,
    Reply,
)
from events.contracts.rating import RatingsUpdated
from events.contracts.seasons import SOFT_KEEP, SeasonEnded
from events.contracts.skill import MU0, SIGMA0
from events.pgstore import Conn
from services.matchmaking.pairing import window


class AlreadyQueued(Exception):
    """The player waits in another ladder's queue (served by another replica, maybe)."""

    def __init__(self, ladder: str) -> None:
        super().__init__(ladder)
        self.ladder = ladder


QUEUED_SQL = "SELECT ladder, joined_at FROM matchmaking_queued_players WHERE player_id = $1"
LIVE_SQL = "SELECT match_id, ladder FROM matchmaking_live_players WHERE player_id = $1"


async def keep_members(conn: Conn, ladder: str, new: list[MatchmakingEvent]) -> None:
    """Keep the queued and live players of a ladder's appended events, in its transaction."""
    for event in new:
        if isinstance(event, PlayerQueued):
            taken = await conn.fetchval(
                "INSERT INTO matchmaking_queued_players (player_id, ladder, joined_at)"
                " VALUES ($1, $2, $3) ON CONFLICT (player_id) DO NOTHING RETURNING ladder",
                event.player_id,
                ladder,
                event.joined_at,
            )
            if taken is None:
                other = await conn.fetchval(
                    "SELECT ladder FROM matchmaking_queued_players WHERE player_id = $1",
                    event.player_id,
                )
                raise AlreadyQueued(other or ladder)  # rolls the append back
        elif isinstance(event, PlayerLeftQueue):
            await conn.execute(
                "DELETE FROM matchmaking_queued_players WHERE player_id = $1 AND ladder = $2",
                event.player_id,
                ladder,
            )
        elif isinstance(event, MatchFound):
            await conn.execute(
                "DELETE FROM matchmaking_queued_players"
                " WHERE player_id = ANY($1::text[]) AND ladder = $2",
                list(event.seats),
                ladder,
            )
            await conn.executemany(
                "INSERT INTO matchmaking_live_players (player_id, match_id, ladder)"
                " VALUES ($1, $2, $3) ON CONFLICT (player_id) DO UPDATE SET"
                " match_id = EXCLUDED.match_id, ladder = EXCLUDED.ladder, since = now()",
                [(player, event.match_id, ladder) for player in event.seats],
            )


async def status(pool: asyncpg.Pool, request: QueueStatus, now: float) -> Reply:
    """Say where a player stands (his queue, wait and window, how many of the others waiting
    fair play keeps from his table; or his live match), and the size of every queue: from
    the database, so any replica answers."""
    player = request.player_id
    rows = await pool.fetch(
        "SELECT ladder, count(*) AS n FROM matchmaking_queued_players GROUP BY ladder"
    )
    sizes = dict.fromkeys(configured(), 0) | {r["ladder"]: r["n"] for r in rows}
    queued = await pool.fetchrow(QUEUED_SQL, player)
    if queued is not None:
        ladder = queued["ladder"]
        waited = max(0.0, now - queued["joined_at"])
        others = {
            r["player_id"]
            for r in await pool.fetch(
                "SELECT player_id FROM matchmaking_queued_players"
                " WHERE ladder = $1 AND player_id <> $2",
                ladder,
                player,
            )
        }
        linked = others & set(request.avoid)
        return Reply(
            ok=True,
            code="queued",
            ladder=ladder,
            waited=waited,
            window=window(waited),
            queue_sizes=sizes,
            linked_waiting=len(linked),
            message=f"{player} has waited {waited:.0f}s in {ladder}"
            + (
                f"; fair play keeps {len(linked)} of the {len(others)} others waiting from"
                " his table (seen at one address or device)"
                if linked
                else ""
            ),
        )
    live = await pool.fetchrow(LIVE_SQL, player)
    if live is not None:
        return Reply(
            ok=True,
            code="in_game",
            ladder=live["ladder"],
            match_id=live["match_id"],
            queue_sizes=sizes,
            message=f"{player} is seated in match {live['match_id']}",
        )
    return Reply(ok=True, code="idle", queue_sizes=sizes, message=f"{player} is not queued")


async def game_finished(conn: Conn, received: Received) -> None:
    """A game ended: its players may queue again on that ladder."""
    finished = received.payload
    if not isinstance(finished, GameFinished):
        raise Unprocessable(f"expected GameFinished, got {received.event.type}")
    await conn.execute(
        "DELETE FROM matchmaking_live_players WHERE player_id = ANY($1::text[]) AND ladder = $2",
        list(finished.players),
        finished.ladder,
    )


async def ratings_updated(conn: Conn, received: Received) -> None:
    """Keep matchmaking's projection of ratings; an older update never overwrites a newer one."""
    update = received.payload
    if not isinstance(update, RatingsUpdated):
        raise Unprocessable(f"expected RatingsUpdated, got {received.event.type}")
    await conn.executemany(
        "INSERT INTO matchmaking_ratings AS r (ladder, player_id, mu, sigma, games, last_played)"
        " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (ladder, player_id) DO UPDATE SET"
        " mu = EXCLUDED.mu, sigma = EXCLUDED.sigma, games = EXCLUDED.games,"
        " last_played = EXCLUDED.last_played WHERE r.games < EXCLUDED.games",
        [
            (
                update.ladder,
                c.player_id,
                c.mu_after,
                c.sigma_after,
                c.games,
                update.rated_at or None,
            )
            for c in update.changes
        ],
    )


async def season_ended(conn: Conn, received: Received) -> None:
    """A season ended: a soft reset applies to matchmaking's copy of the ladder's ratings
    as to the rating service's (`events.contracts.seasons.soft_reset`)."""
    ended = received.payload
    if not isinstance(ended, SeasonEnded):
        raise Unprocessable(f"expected SeasonEnded, got {received.event.type}")
    if ended.reset != "soft":
        return
    await conn.execute(
        "UPDATE matchmaking_ratings SET mu = $2 + (mu - $2) * $3, sigma = GREATEST(sigma, $4)"
        " WHERE ladder = $1",
        ended.ladder,
        MU0,
        SOFT_KEEP,
        SIGMA0 * SOFT_KEEP,
    )


# -- requests ---------------------------------------------------------------------------------
