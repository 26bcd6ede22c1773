"""Competition reads (public: no account needed): a player's statistics per ladder, and a
ladder's leaderboard of a season, kept frozen once the season ended.

Both are the rating service's (`events/contracts/stats.py`, `services/rating/seasons.py`):
the gateway asks and forwards.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.datastructures import State
from litestar.params import Parameter

from events.contracts import rating, seasons, stats
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import asked, gateway_of, refused
from services.gateway.http.ladders import LADDER, PLAYER_ID

_stats_answer = msgspec.json.Decoder(stats.StatsReply)
_season_answer = msgspec.json.Decoder(seasons.SeasonBoard)


class Leaderboard(msgspec.Struct, frozen=True, kw_only=True):
    """One page of a ladder's leaderboard in one season, best ordinal first."""

    ladder: str
    season: int
    current: int
    """The season running now."""
    frozen: bool
    """The season ended: its leaderboard is kept as it stood then (each player's rating
    after his last game of the season); the running season's is live."""
    starts_at: float
    ends_at: float | None
    """When the season ends or ended (unix seconds); null: the ladder has no seasons."""
    total: int
    offset: int
    limit: int
    players: list[rating.LadderEntry]


class PlayerStats(msgspec.Struct, frozen=True, kw_only=True):
    """A player's statistics on each ladder he played (definitions: the fields' notes)."""

    player_id: str
    ladders: list[stats.LadderStats]
    """Per ladder: games, wins, hands; bids (numbers, not nil) and his side's contracts made
    or set, made contracts by overtricks (`over_by`, "0" = exact); nil and blind nil bids and
    those made; bags his side took and bag penalties, per hand; his side's points, per hand;
    the partners and opponents met most (games together); the shown rating after each rated
    game, oldest first."""


class Compete(Controller):
    """Statistics and seasons (public)."""

    path = "/api"
    tags = ["ladders"]  # noqa: RUF012

    @get(
        "/players/{player_id:str}/stats",
        responses=ERROR_RESPONSES,
        summary="A player's statistics per ladder",
    )
    async def stats(
        self,
        player_id: PLAYER_ID,
        state: State,
        ladder: Annotated[
            str,
            Parameter(pattern=r"^[A-Za-z0-9_-]{0,64}$", description="one ladder only (empty: all)"),
        ] = "",
        top: Annotated[int, Parameter(ge=1, le=50)] = 5,
    ) -> PlayerStats:
        """Games, wins, bid accuracy, nil and blind nil success, bags and penalties, points per
        hand, rating history, partners and opponents met most: per ladder, from his finished
        ladder games (404 `not_found` for a player without any)."""
        gateway = gateway_of(state)
        query = stats.StatsQuery(player_id=player_id, ladder=ladder, top=top)
        answer = _stats_answer.decode(await asked(gateway, gateway.subjects.rating_stats(), query))
        if not answer.ok:
            raise refused(answer.code, answer.message)
        if not answer.ladders and not ladder:
            raise ApiError(404, "not_found", f"no finished ladder game of {player_id!r}")
        return PlayerStats(player_id=player_id, ladders=answer.ladders)

    @get(
        "/ladders/{ladder:str}/leaderboard",
        responses=ERROR_RESPONSES,
        summary="A ladder's leaderboard in one season",
    )
    async def leaderboard(
        self,
        ladder: LADDER,
        state: State,
        season: Annotated[int, Parameter(ge=0, le=100_000, description="0: the running one")] = 0,
        offset: Annotated[int, Parameter(ge=0, le=1_000_000)] = 0,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 50,
    ) -> Leaderboard:
        """The running season's leaderboard (live), or an ended season's, frozen at its end
        (404 `unknown_season` for one not begun)."""
        gateway = gateway_of(state)
        query = seasons.SeasonQuery(ladder=ladder, season=season, offset=offset, limit=limit)
        answer = _season_answer.decode(
            await asked(gateway, gateway.subjects.rating_season(), query)
        )
        if not answer.ok:
            raise refused(answer.code, answer.message)
        return Leaderboard(
            ladder=answer.ladder,
            season=answer.season,
            current=answer.current,
            frozen=answer.frozen,
            starts_at=answer.starts_at,
            ends_at=answer.ends_at,
            total=answer.total,
            offset=offset,
            limit=limit,
            players=answer.players,
        )


__all__ = ["Compete", "Leaderboard", "PlayerStats"]
