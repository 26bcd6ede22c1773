"""Ladders and player profiles, and the directory of games (public: no account needed)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, get
from litestar.datastructures import State
from litestar.params import Parameter

from events.contracts import game as wire
from events.contracts import matchmaking as mm
from events.contracts import rating
from events.contracts.ladders import Ladder, configured
from events.contracts.skill import PROVISIONAL_GAMES
from events.pgstore import Opening
from services.gateway import auth, eventrun
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import asked, gateway_of, refused
from services.gateway.http.queue import reply_decoder
from services.gateway.state import Unavailable, ask
from services.runtime.clock import clock_of

PLAYER_ID = Annotated[
    str,
    Parameter(
        pattern=r"^(bot:)?[A-Za-z0-9_-]{1,24}$",
        description="a player id: an account name in lower case, `bot:<name>` for a bot",
    ),
]
LADDER = Annotated[
    str,
    Parameter(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="a ladder's name, e.g. `standard`"),
]


class LadderPage(msgspec.Struct, frozen=True, kw_only=True):
    """One page of a ladder, best ordinal first."""

    ladder: str
    total: int
    offset: int
    limit: int
    players: list[rating.LadderEntry]


class PlayerProfile(msgspec.Struct, frozen=True, kw_only=True):
    """A player's account facts, ratings per ladder and rating history (newest first)."""

    player_id: str
    name: str | None
    bot: bool
    ratings: dict[str, rating.PlayerRating]
    history: list[rating.RatingHistory]


class RatingMove(msgspec.Struct, frozen=True, kw_only=True):
    """How a rated game moved one player's rating: shown (1500 scale) and the model's numbers."""

    display_before: int
    display_after: int
    provisional: bool
    """Fewer than 10 rated games after this one: the rating is shown with a "?"."""
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    ordinal_before: float
    ordinal_after: float


class GameListed(msgspec.Struct, frozen=True, kw_only=True):
    """One game a player sat at; a finished one with its result, and the player's rating move."""

    game_id: str
    ladder: str
    rated: bool
    players: tuple[str, ...]
    finished: bool
    started_at: datetime
    winner: int | None = None
    """The winning side once finished (0: seats 0 and 2, 1: seats 1 and 3; -1: a draw)."""
    scores: tuple[int, ...] = ()
    """Final score per side once finished."""
    reason: str | None = None
    abandoned: tuple[int, ...] = ()
    """Seats a bot took over after their player's timeouts (each charged a loss if rated)."""
    rating: RatingMove | None = None
    """In a player's list: how this game moved his rating (null: unrated or not yet rated)."""


class LadderInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A ladder of the operator's ladders file: its rules (options and words), clock, rating,
    season, and how many wait in its queue now."""

    ladder: str
    players: int
    """Seats at its tables."""
    rules: dict[str, Any]
    queue_size: int | None
    """Players waiting now; null when matchmaking did not answer."""
    title: str = ""
    description: str = ""
    variant: str = "standard"
    """The rule book variant its rules start from (`GET /api/practice/rules` presets)."""
    rules_in_words: list[str] = []
    """The rules, one sentence each."""
    rated: bool = True
    """Whether its games move ratings."""
    turn_seconds: float = 25.0
    """Seconds a person has for one action."""
    season: int = 1
    """The season running now (1 on a ladder without seasons)."""
    season_ends_at: float | None = None
    """When the running season ends (unix seconds); null: it never does."""
    season_reset: str = "continue"
    """At a season's end ratings "continue", or take a "soft" reset toward the start."""


def _listed(openings: list[Opening], player_id: str | None = None) -> list[GameListed]:
    """Return the directory entries of games from their openings in the log, newest first
    (with ``player_id``, how each rated game moved his rating)."""
    listed = []
    for opening in openings:
        opened = msgspec.json.decode(opening.event.data, type=wire.TableOpened)
        end = (
            None
            if opening.final is None
            else msgspec.json.decode(opening.final, type=wire.GameFinished)
        )
        move = None
        if player_id is not None and opening.related is not None:
            rated = msgspec.json.decode(opening.related, type=rating.RatingsUpdated)
            mine = next((c for c in rated.changes if c.player_id == player_id), None)
            if mine is not None:
                move = RatingMove(
                    display_before=rating.display_rating(mine.mu_before),
                    display_after=rating.display_rating(mine.mu_after),
                    provisional=mine.games < PROVISIONAL_GAMES,
                    mu_before=mine.mu_before,
                    sigma_before=mine.sigma_before,
                    mu_after=mine.mu_after,
                    sigma_after=mine.sigma_after,
                    ordinal_before=mine.ordinal_before,
                    ordinal_after=mine.ordinal_after,
                )
        listed.append(
            GameListed(
                game_id=opened.game_id,
                ladder=opened.ladder,
                rated=opened.rated,
                players=opened.players,
                finished=end is not None,
                started_at=opening.event.recorded_at,
                winner=None if end is None else end.winner,
                scores=() if end is None else end.scores,
                reason=None if end is None else end.reason,
                abandoned=() if end is None else end.abandoned,
                rating=move,
            )
        )
    return listed


_rating_answer = msgspec.json.Decoder(rating.Reply)


def ladder_info(lad: Ladder, queue_size: int | None, gateway: Any) -> LadderInfo:
    """Return what `GET /api/ladders` says of one ladder."""
    season = lad.season_at(clock_of(gateway).now())
    ends = lad.season_bounds(season)[1]
    return LadderInfo(
        ladder=lad.name,
        players=lad.rules.players,
        rules=lad.rules.to_dict(),
        queue_size=queue_size,
        title=lad.title,
        description=lad.description,
        variant=lad.variant,
        rules_in_words=lad.words(),
        rated=lad.rated,
        turn_seconds=lad.turn_seconds or gateway.settings.turn_seconds,
        season=season,
        season_ends_at=None if ends == float("inf") else ends,
        season_reset=lad.season_reset,
    )


class Ladders(Controller):
    """Ladders and player profiles (public)."""

    path = "/api"
    tags = ["ladders"]  # noqa: RUF012

    @get("/ladders/{ladder:str}", responses=ERROR_RESPONSES, summary="One page of a ladder")
    async def ladder(
        self,
        ladder: LADDER,
        state: State,
        offset: Annotated[int, Parameter(ge=0, le=1_000_000)] = 0,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 50,
    ) -> LadderPage:
        """Players by conservative ordinal (mu - 3 sigma, decayed for inactivity), best first."""
        gateway = gateway_of(state)
        query = rating.LadderQuery(ladder=ladder, offset=offset, limit=limit)
        answer = _rating_answer.decode(
            await asked(gateway, gateway.subjects.rating_ladder(), query)
        )
        if not answer.ok:
            raise refused(answer.code, answer.message)
        return LadderPage(
            ladder=ladder, total=answer.total, offset=offset, limit=limit, players=answer.players
        )

    @get(
        "/players/{player_id:str}",
        responses=ERROR_RESPONSES,
        summary="A player's profile and rating history",
    )
    async def player(
        self,
        player_id: PLAYER_ID,
        state: State,
        history: Annotated[int, Parameter(ge=1, le=1000)] = 100,
    ) -> PlayerProfile:
        """Ratings per ladder and the rating history, newest first (404 for nobody)."""
        gateway = gateway_of(state)
        query = rating.PlayerQuery(player_id=player_id, history_limit=history)
        answer = _rating_answer.decode(
            await asked(gateway, gateway.subjects.rating_player(), query)
        )
        if not answer.ok:
            raise refused(answer.code, answer.message)
        account = await auth.find_account(gateway.pool, player_id)
        if account is None and not answer.ratings:
            raise ApiError(404, "not_found", f"no player {player_id!r}")
        return PlayerProfile(
            player_id=player_id,
            name=account.name if account else None,
            bot=account.bot if account else player_id.startswith(auth.BOT_PREFIX),
            ratings=answer.ratings,
            history=answer.history,
        )

    @get(
        "/players/{player_id:str}/games",
        responses=ERROR_RESPONSES,
        summary="A player's live and past games",
    )
    async def games(
        self,
        player_id: PLAYER_ID,
        state: State,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 50,
    ) -> list[GameListed]:
        """The games the player sat at, newest first (his unlisted friends' tables once
        finished; a duplicate event's board once no other table has it to play)."""
        gateway = gateway_of(state)
        openings = await gateway.store.openings(
            "TableOpened",
            "GameFinished",
            limit=limit,
            player=player_id,
            related=("rating", "RatingsUpdated"),
            hidden="unlisted",
        )
        listed = _listed(openings, player_id)
        sealed = await eventrun.sealed_among(
            gateway.pool, [g.game_id for g in listed if g.finished]
        )
        return [g for g in listed if g.game_id not in sealed]

    @get("/ladders", responses=ERROR_RESPONSES, summary="The ladders and their queues")
    async def ladders(self, state: State) -> list[LadderInfo]:
        """Every ladder of the ladders file, in its order: rules in options and in words,
        turn clock, rated or not, season, and the size of its queue now."""
        gateway = gateway_of(state)
        sizes: dict[str, int] | None
        try:  # nobody's status: the answer for a player who is not queued carries the sizes
            reply = reply_decoder.decode(
                await ask(
                    gateway, gateway.subjects.matchmaking_status(), mm.QueueStatus(player_id="")
                )
            )
            sizes = reply.queue_sizes or {}
        except Unavailable:
            sizes = None
        return [
            ladder_info(lad, None if sizes is None else sizes.get(name, 0), gateway)
            for name, lad in configured().items()
        ]

    @get("/games", responses=ERROR_RESPONSES, summary="Live games to watch")
    async def live_games(
        self,
        state: State,
        limit: Annotated[int, Parameter(ge=1, le=100)] = 20,
    ) -> list[GameListed]:
        """Games in progress, newest first: anyone may watch them as a spectator (an unlisted
        friends' table only by its game id, and is listed once finished)."""
        store = gateway_of(state).store
        return _listed(
            await store.openings(
                "TableOpened", "GameFinished", limit=limit, unfinished=True, hidden="unlisted"
            )
        )


__all__ = ["GameListed", "LadderInfo", "LadderPage", "Ladders", "PlayerProfile", "RatingMove"]
