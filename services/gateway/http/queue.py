"""The caller's place in a ladder's matchmaking queue: join, leave, where he stands."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.params import JSONBody

from events import matchmaking as mm
from events.game import game_id_of_match
from services.gateway.errors import ERROR_RESPONSES
from services.gateway.http.common import BEARER, asked, gateway_of, refused, sighted
from services.gateway.http.security import Caller, account_required


class QueueJoin(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Which ladder's queue to join."""

    ladder: Annotated[str, msgspec.Meta(min_length=1, max_length=64, examples=["standard"])]


reply_decoder = msgspec.json.Decoder(mm.Reply)
"""Matchmaking's answers (the ladders' directory reads its queue sizes from one too)."""


class QueueAnswer(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Where the caller stands: ``code`` is queued, left, in_game or idle. Once matched,
    ``game_id`` is the game to subscribe to over the WebSocket."""

    code: str
    message: str
    ladder: str | None = None
    waited: float | None = None
    window: float | None = None
    queue_sizes: dict[str, int] | None = None
    match_id: str | None = None
    game_id: str | None = None
    linked_waiting: int | None = None
    """Queued: how many of the others waiting fair play keeps from your table (accounts seen
    at one of your addresses or devices within ``fairplay_days``; 0 when linking is off)."""
    fairplay_days: float | None = None
    """Queued: the fair-play window in days (0: linking is off, as on a `spades dev` stack)."""


class Queue(Controller):
    """The matchmaking queue of the caller."""

    path = "/api"
    tags = ["queue"]  # noqa: RUF012
    guards = [account_required]  # noqa: RUF012

    async def _ask(self, state: State, subject: str, body: msgspec.Struct) -> QueueAnswer:
        reply = reply_decoder.decode(await asked(gateway_of(state), subject, body))
        if not reply.ok:
            raise refused(reply.code, reply.message)
        return QueueAnswer(
            code=reply.code,
            message=reply.message,
            ladder=reply.ladder,
            waited=reply.waited,
            window=reply.window,
            queue_sizes=reply.queue_sizes,
            match_id=reply.match_id,
            game_id=game_id_of_match(reply.match_id) if reply.match_id else None,
            linked_waiting=reply.linked_waiting,
            fairplay_days=reply.fairplay_days,
        )

    @post(
        "/queue",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Join a ladder's queue",
        security=BEARER,
    )
    async def join(self, data: JSONBody[QueueJoin], request: Caller, state: State) -> QueueAnswer:
        """Queue the caller; the match arrives by `GET /api/queue` (match_id, then game)."""
        player_id = request.user.player_id
        await sighted(gateway_of(state), request, player_id)
        subject = gateway_of(state).subjects.matchmaking_join()
        body = mm.JoinQueue(player_id=player_id, ladder=data.ladder)
        return await self._ask(state, subject, body)

    @delete(
        "/queue",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Leave the queue",
        security=BEARER,
    )
    async def leave(self, request: Caller, state: State) -> QueueAnswer:
        """Take the caller out of whatever queue he is in."""
        subject = gateway_of(state).subjects.matchmaking_leave()
        return await self._ask(state, subject, mm.LeaveQueue(player_id=request.user.player_id))

    @get("/queue", responses=ERROR_RESPONSES, summary="Where the caller stands", security=BEARER)
    async def status(self, request: Caller, state: State) -> QueueAnswer:
        """Queued (and for how long), matched (`match_id`, `game_id`), or idle; queue sizes."""
        subject = gateway_of(state).subjects.matchmaking_status()
        return await self._ask(state, subject, mm.QueueStatus(player_id=request.user.player_id))


__all__ = ["Queue", "QueueAnswer", "QueueJoin", "reply_decoder"]
