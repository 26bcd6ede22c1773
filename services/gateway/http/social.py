"""Follows, blocks, mutes and reports (`services.gateway.social`): `/api/social/...`."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from litestar import Controller, delete, get, post, put
from litestar.datastructures import State
from litestar.params import JSONBody, Parameter

from events.contracts import game as wire
from events.contracts.talk import Talked
from services.gateway import social
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import BEARER, gateway_of
from services.gateway.http.games import GAME_ID, load_game
from services.gateway.http.security import Caller, account_required

PLAYER_ID = Annotated[
    str, Parameter(pattern=r"^[a-z0-9_.-]{1,40}$", description="a player id (a name, lower case)")
]


class Followed(msgspec.Struct, frozen=True, kw_only=True):
    """A player the caller follows: ``online`` (connected within 90 s) and ``game_id``, the
    live public table he sits at (null: none, or offline)."""

    player_id: str
    name: str
    online: bool
    game_id: str | None = None


class Following(msgspec.Struct, frozen=True, kw_only=True):
    """Whom the caller follows, the online ones first."""

    players: list[Followed]


class Players(msgspec.Struct, frozen=True, kw_only=True):
    """Player ids (the caller's blocks, or his mutes at one game)."""

    players: list[str]


class ReportRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Report ``player_id`` for ``reason`` (abuse, cheating, spam, other); a message is named
    by its ``game_id`` and ``seq`` (the `Talked` event's number in the game)."""

    player_id: str
    reason: Literal["abuse", "cheating", "spam", "other"]
    note: Annotated[str, msgspec.Meta(max_length=social.NOTE_CHARS)] = ""
    game_id: str | None = None
    seq: int | None = None


class Reported(msgspec.Struct, frozen=True, kw_only=True):
    """The report is queued for an operator."""

    report_id: int


def _refused(exc: social.SocialRefused) -> ApiError:
    return ApiError(exc.status, exc.code, exc.message)


class Social(Controller):
    """The people the caller follows, blocks, mutes and reports."""

    path = "/api/social"
    tags = ["social"]  # noqa: RUF012
    guards = [account_required]  # noqa: RUF012

    @get("/following", responses=ERROR_RESPONSES, summary="Whom you follow", security=BEARER)
    async def following(self, request: Caller, state: State) -> Following:
        """The players the caller follows, whether each is online and at which table."""
        found = await social.following(gateway_of(state).pool, request.user.player_id)
        return Following(
            players=[msgspec.convert(f, Followed, from_attributes=True) for f in found]
        )

    @put(
        "/following/{player_id:str}",
        responses=ERROR_RESPONSES,
        status_code=204,
        summary="Follow a player",
        security=BEARER,
    )
    async def follow(self, player_id: PLAYER_ID, request: Caller, state: State) -> None:
        """Follow (idempotent): 404 `not_found` for no such person, 409 `not_yourself`,
        `not_available` when one of you blocked the other, `too_many` past 500."""
        try:
            await social.follow(gateway_of(state).pool, request.user.player_id, player_id)
        except social.SocialRefused as exc:
            raise _refused(exc) from None

    @delete(
        "/following/{player_id:str}",
        responses=ERROR_RESPONSES,
        status_code=204,
        summary="Stop following a player",
        security=BEARER,
    )
    async def unfollow(self, player_id: PLAYER_ID, request: Caller, state: State) -> None:
        """Stop following (idempotent)."""
        await social.unfollow(gateway_of(state).pool, request.user.player_id, player_id)

    @get("/blocks", responses=ERROR_RESPONSES, summary="Whom you blocked", security=BEARER)
    async def blocks(self, request: Caller, state: State) -> Players:
        """The accounts the caller blocked (nobody learns who blocked him)."""
        found = await social.blocked_by_me(gateway_of(state).pool, request.user.player_id)
        return Players(players=found)

    @put(
        "/blocks/{player_id:str}",
        responses=ERROR_RESPONSES,
        status_code=204,
        summary="Block a player",
        security=BEARER,
    )
    async def block(self, player_id: PLAYER_ID, request: Caller, state: State) -> None:
        """Block (idempotent): never seated together in a ranked game from your next join
        (his too), no talk between you at any table, no follow either way, and his invitations
        to friends' tables are refused. He is told nothing but "not available"."""
        try:
            await social.block(gateway_of(state).pool, request.user.player_id, player_id)
        except social.SocialRefused as exc:
            raise _refused(exc) from None

    @delete(
        "/blocks/{player_id:str}",
        responses=ERROR_RESPONSES,
        status_code=204,
        summary="Unblock a player",
        security=BEARER,
    )
    async def unblock(self, player_id: PLAYER_ID, request: Caller, state: State) -> None:
        """Lift a block (idempotent)."""
        await social.unblock(gateway_of(state).pool, request.user.player_id, player_id)

    @get(
        "/mutes/{game_id:str}",
        responses=ERROR_RESPONSES,
        summary="Whom you muted at a game",
        security=BEARER,
    )
    async def mutes(self, game_id: GAME_ID, request: Caller, state: State) -> Players:
        """The players the caller muted at this game."""
        found = await social.muted_by_me(gateway_of(state).pool, game_id, request.user.player_id)
        return Players(players=found)

    @put(
        "/mutes/{game_id:str}/{player_id:str}",
        responses=ERROR_RESPONSES,
        status_code=204,
        summary="Mute a player at a game",
        security=BEARER,
    )
    async def mute(
        self, game_id: GAME_ID, player_id: PLAYER_ID, request: Caller, state: State
    ) -> None:
        """From now on the caller hears nothing the player says at this game; he is not told.
        404 `unknown_game`, `not_found` (he has no seat there); 409 `not_yourself`."""
        game = await load_game(state, game_id)
        if player_id not in game.opened.players:
            raise ApiError(404, "not_found", "that player has no seat at this game")
        try:
            await social.mute(gateway_of(state).pool, game_id, request.user.player_id, player_id)
        except social.SocialRefused as exc:
            raise _refused(exc) from None

    @delete(
        "/mutes/{game_id:str}/{player_id:str}",
        responses=ERROR_RESPONSES,
        status_code=204,
        summary="Unmute a player at a game",
        security=BEARER,
    )
    async def unmute(
        self, game_id: GAME_ID, player_id: PLAYER_ID, request: Caller, state: State
    ) -> None:
        """Hear him again (idempotent)."""
        await social.unmute(gateway_of(state).pool, game_id, request.user.player_id, player_id)

    @post(
        "/reports",
        responses=ERROR_RESPONSES,
        status_code=201,
        summary="Report a player or a message",
        security=BEARER,
    )
    async def report(
        self, data: JSONBody[ReportRequest], request: Caller, state: State
    ) -> Reported:
        """Queue a report for an operator (`spades reports`, with the game's talk around it).
        404 `not_a_message` (the ``seq`` is not something the player said at that game),
        `not_found`, `unknown_game`; 409 `not_yourself`; 429 `report_flood` (over 20 a day).
        A reason outside the four, or a note over 500 characters, is 400 `malformed`."""
        if data.game_id is not None:
            game = await load_game(state, data.game_id)
            if data.seq is not None and not _said_by(game.decoded, game.opened, data):
                raise ApiError(404, "not_a_message", "that event is not something he said")
        try:
            report_id = await social.report(
                gateway_of(state).pool,
                request.user.player_id,
                data.player_id,
                data.reason,
                note=data.note,
                game_id=data.game_id,
                seq=data.seq,
            )
        except social.SocialRefused as exc:
            raise _refused(exc) from None
        return Reported(report_id=report_id)


def _said_by(events: list[wire.GameEvent], opened: wire.TableOpened, data: ReportRequest) -> bool:
    """Return whether event ``data.seq`` of a game is talk of ``data.player_id``."""
    seq = data.seq or 0
    if not 1 <= seq <= len(events):
        return False
    event = events[seq - 1]
    if not isinstance(event, Talked):
        return False
    return opened.players[event.seat] == data.player_id


__all__ = ["Social"]
