"""The caller's place in a ladder's matchmaking queue: join, leave, where he stands."""

from __future__ import annotations

import math
import time
from collections import deque
from typing import Annotated

import msgspec
from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.params import JSONBody

from events.contracts import matchmaking as mm
from events.contracts.game import game_id_of_match
from services.gateway import fairplay, social
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import BEARER, asked_again, gateway_of, refused, sighted
from services.gateway.http.security import Caller, account_required
from services.gateway.state import Gateway

WINDOW_SECONDS = 60.0
MAX_TRACKED = 10_000
"""Accounts whose recent queue changes are remembered before the quiet ones are dropped."""


def recent_changes(
    gateway: Gateway,
    player_id: str,
    now: float,
    *,
    budget: tuple[int, dict[str, deque[float]], str] | None = None,
) -> deque[float]:
    """Return when ``player_id`` joined or left a queue within the last minute; raise 429
    `rate_limited` (with Retry-After) when that is SPADES_QUEUE_CHANGES_PER_MINUTE already.
    Each change is an event of the ladder's stream, kept for good; a refused request reaches
    no service and changes nothing. Counted per gateway replica, like the other budgets.
    Another budget kept the same way (the events' changes) passes ``budget``: its limit, its
    record and what it counts in words."""
    limit, changes, what = budget or (
        gateway.config.queue_changes_per_minute,
        gateway.queue_changes,
        "queue joins and leaves",
    )
    if len(changes) > MAX_TRACKED:
        for quiet in [p for p, times in changes.items() if times[-1] <= now - WINDOW_SECONDS]:
            del changes[quiet]
    recent = changes.setdefault(player_id, deque(maxlen=limit))
    while recent and recent[0] <= now - WINDOW_SECONDS:
        recent.popleft()
    if len(recent) >= limit:
        wait = max(1, math.ceil(recent[0] + WINDOW_SECONDS - now))
        raise ApiError(
            429,
            "rate_limited",
            f"at most {limit} {what} a minute: try again in {wait} s",
            headers={"Retry-After": str(wait)},
        )
    return recent


class QueueJoin(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Which ladder's queue to join."""

    ladder: Annotated[str, msgspec.Meta(min_length=1, max_length=64, examples=["standard"])]


reply_decoder = msgspec.json.Decoder(mm.Reply)


def settled(request: msgspec.Struct, reply: mm.Reply) -> mm.Reply:
    """Return the answer to a join or leave that was sent again after a send went unanswered
    (`asked_again`): matchmaking applies such a request once and refuses the duplicate, so
    `already_queued` on the ladder asked for, or `not_queued` to a leave, says the first send
    did what was asked (or it was so already): the caller stands where he asked to."""
    joined = isinstance(request, mm.JoinQueue) and reply.ladder == request.ladder
    if joined and reply.code == "already_queued":
        return mm.Reply(ok=True, code="queued", ladder=reply.ladder, message=reply.message)
    if isinstance(request, mm.LeaveQueue) and reply.code == "not_queued":
        return mm.Reply(ok=True, code="left", message=reply.message)
    return reply


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
        answer, lost = await asked_again(gateway_of(state), subject, body)
        reply = reply_decoder.decode(answer)
        if lost:
            reply = settled(body, reply)
        if not reply.ok:
            raise refused(reply.code, reply.message, reply.ends_at)
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
        )

    @post(
        "/queue",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Join a ladder's queue",
        security=BEARER,
    )
    async def join(self, data: JSONBody[QueueJoin], request: Caller, state: State) -> QueueAnswer:
        """Queue the caller; the match arrives by `GET /api/queue` (match_id, then game).
        403 `playban` while a queue ban for leaving rated games runs (`ends_at`: its end).
        Joins and leaves together: at most SPADES_QUEUE_CHANGES_PER_MINUTE (10) a minute per
        account, 429 `rate_limited` beyond."""
        player_id = request.user.player_id
        gateway = gateway_of(state)
        changes = recent_changes(gateway, player_id, time.monotonic())
        await sighted(gateway, request, player_id)
        linked = await fairplay.linked_accounts(
            gateway.pool, player_id, fairplay.window_days(gateway.settings)
        )
        subject = gateway.subjects.matchmaking_join()
        linked |= await social.apart_from(gateway.pool, player_id)  # blocks: never seated
        body = mm.JoinQueue(
            player_id=player_id,
            ladder=data.ladder,
            avoid=tuple(sorted(linked)),
            issued_at=time.time(),  # a late copy of a resent join is refused `stale`
        )
        answer = await self._ask(state, subject, body)
        changes.append(time.monotonic())  # a join that happened (a refusal appended nothing)
        return answer

    @delete(
        "/queue",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Leave the queue",
        security=BEARER,
    )
    async def leave(self, request: Caller, state: State) -> QueueAnswer:
        """Take the caller out of whatever queue he is in (counted with the joins: 429
        `rate_limited` beyond SPADES_QUEUE_CHANGES_PER_MINUTE a minute)."""
        player_id = request.user.player_id
        changes = recent_changes(gateway_of(state), player_id, time.monotonic())
        subject = gateway_of(state).subjects.matchmaking_leave()
        body = mm.LeaveQueue(player_id=player_id, issued_at=time.time())
        answer = await self._ask(state, subject, body)
        changes.append(time.monotonic())
        return answer

    @get("/queue", responses=ERROR_RESPONSES, summary="Where the caller stands", security=BEARER)
    async def status(self, request: Caller, state: State) -> QueueAnswer:
        """Queued (and for how long), matched (`match_id`, `game_id`), or idle; queue sizes."""
        gateway = gateway_of(state)
        player_id = request.user.player_id
        days = fairplay.window_days(gateway.settings)
        linked = await fairplay.linked_accounts(gateway.pool, player_id, days)
        body = mm.QueueStatus(player_id=player_id, avoid=tuple(sorted(linked)))
        answer = await self._ask(state, gateway.subjects.matchmaking_status(), body)
        if answer.code == "queued":
            answer = msgspec.structs.replace(answer, fairplay_days=days)
        return answer


__all__ = ["Queue", "QueueAnswer", "QueueJoin", "reply_decoder"]
