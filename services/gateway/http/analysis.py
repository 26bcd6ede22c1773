"""A finished game's review (`GET /api/games/{game_id}/analysis`), served from the store.

The review is computed by the bot tier and stored as its own events in stream
``analysis-<game>`` (`events.contracts.analysis`): a rated game's is queued automatically when
it finishes; any other finished game's is queued by the first request for it (`QueueAnalysis`
to the bot tier, which appends the queue event once however often and by however many
gateways it is asked). Every answer is read from the store, so any replica answers the same,
after restarts too: 202 ``pending`` with the progress (``done`` of ``of`` steps: each hand
graded, and each hand's par for a rated game), 200 ``ready`` with the review, 200 ``failed``
when the tier could not make it, with ``retry_at``: from then a POST queues it anew (at most
three rounds a game, the same budget and seed). A game still in play is refused (409
``game_not_finished``): a review shows every hand.

When a review is stored, one gateway replica (queue group) tells the game's players and the
account that asked for it, on every replica (`analysis_ready`, PROTOCOL.md): `told_when_ready`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import State
from nats.aio.msg import Msg

from events.contracts.analysis import (
    AnalysisFinished,
    QueueAnalysis,
    QueueReply,
    analysis_stream,
    fold,
)
from events.envelope import REGISTRY, StoredEvent
from services.gateway import auth, eventrun
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import asked, gateway_of, refused
from services.gateway.http.games import GAME_ID, load_game
from services.gateway.http.ladders import PLAYER_ID
from services.gateway.notices import AnalysisReady, publish
from services.gateway.state import Gateway

_queued = msgspec.json.Decoder(QueueReply)
_stored = msgspec.json.Decoder(StoredEvent)


class Analysis(msgspec.Struct, frozen=True, kw_only=True):
    """``status``: "pending" (queued or under way: ``done`` of ``of`` steps, each hand graded
    and, for a rated game, each hand's par), "ready" (``analysis`` is `engine.review.Review`:
    graded decisions, each with ``at``, the replay step of its event; the hands' double-dummy
    figures; each seat's accuracy; for a rated game ``par`` per hand and ``luck`` per side)
    or "failed" (``code`` and ``message`` say why; ``retry_at``, epoch seconds: asking again
    from then queues it anew, 0 when it is not tried again)."""

    game_id: str
    status: str
    analysis: Any = None
    done: int = 0
    of: int = 0
    code: str = ""
    message: str = ""
    retry_at: float = 0.0


class Analyses(Controller):
    """A finished game's review: each decision graded, what every hand could have made."""

    path = "/api/games/{game_id:str}/analysis"
    tags = ["games"]  # noqa: RUF012

    @get("/", responses=ERROR_RESPONSES, summary="A finished game's review")
    async def analysis(
        self, game_id: GAME_ID, state: State, request: Request[Any, Any, Any]
    ) -> Response[Analysis]:
        """Every bid and card graded from what its seat could see (loss in points against
        the strong search's best choice on the same sampled deals; inaccuracy 10, mistake
        25, blunder 60 points), recognisable errors named, each seat's accuracy, the hands'
        double-dummy figures and, for a rated game, each hand's par and the game's margin
        split into the cards and the play. Stored once made: 202 ``pending`` (with the
        progress) while the bot tier works, 200 ``ready``; the first request for an unrated
        game queues it; 200 ``failed`` with ``retry_at`` when it could not be made (POST asks
        for it again). 409 ``game_not_finished`` for a game in play; a WebSocket
        ``analysis_ready`` tells the game's players (and the asker) when it is stored."""
        return await _asked(state, request, game_id, again=False)

    @post(
        "/",
        responses=ERROR_RESPONSES,
        summary="Ask again for a review that failed",
        status_code=202,
    )
    async def again(
        self, game_id: GAME_ID, state: State, request: Request[Any, Any, Any]
    ) -> Response[Analysis]:
        """A review that failed is queued anew (202 ``pending``), from its ``retry_at`` on
        and three times in all per game, with the budget and seed it was first queued with:
        409 ``retry_later`` before then, 409 ``retries_spent`` after the third. A review
        pending or ready is answered as GET answers it; a game never reviewed is queued."""
        return await _asked(state, request, game_id, again=True)


async def _asked(
    state: State, request: Request[Any, Any, Any], game_id: str, *, again: bool
) -> Response[Analysis]:
    game = await load_game(state, game_id)
    if not game.finished:
        raise ApiError(
            409,
            "game_not_finished",
            "the game is still being played: it is reviewed once it is over",
        )
    gateway = gateway_of(state)
    found = await _stored_state(gateway, game_id)
    retry_at = 0.0
    if found is None or found.status == "failed":  # queue it, or see if it may be again
        caller = request.user if isinstance(request.user, auth.Claims) else None
        ask = QueueAnalysis(
            game_id=game_id, asked_by=caller.player_id if caller else "", again=again
        )
        try:
            answer = await asked(gateway, gateway.subjects.bots_queue_analysis(), ask)
            reply = _queued.decode(answer)
        except ApiError:
            if found is None or again:
                raise  # 503: nothing stored to show, or the ask itself went unanswered
            reply = QueueReply(ok=True)  # the stored failure is shown without its retry_at
        if not reply.ok:
            raise refused(reply.code, reply.message)
        retry_at = reply.retry_at
        found = await _stored_state(gateway, game_id)
    if found is None or found.status == "pending":
        done, of = (found.done, found.of) if found is not None else (0, 0)
        return Response(
            Analysis(game_id=game_id, status="pending", done=done, of=of), status_code=202
        )
    if found.status == "failed":
        failed = Analysis(
            game_id=game_id,
            status="failed",
            code=found.code,
            message=found.message,
            retry_at=retry_at,
        )
        return Response(failed, status_code=200)
    review = msgspec.json.decode(found.review) if found.review is not None else None
    ready = Analysis(game_id=game_id, status="ready", analysis=review, done=found.of, of=found.of)
    return Response(ready, status_code=200)


LUCK_GAMES = 200
"""A player's most recent games (finished or not) the luck figure looks through."""

_finished = msgspec.json.Decoder(AnalysisFinished)


class PlayerLuck(msgspec.Struct, frozen=True, kw_only=True):
    """Over ``games`` analysed rated games of the player's most recent `LUCK_GAMES`: his side's
    margin per game (``result``), what the cards were worth to it (``cards``: the same
    margin between the hands' pars, strong bots in every seat) and what the play made of
    them (``play`` = result - cards), each a mean per game. ``play`` is the luck-adjusted
    figure: the result with the cards taken out. Shown, never used to rate."""

    player_id: str
    games: int
    result: float
    cards: float
    play: float


class Luck(Controller):
    """A player's results with the luck of the cards taken out."""

    path = "/api/players/{player_id:str}/luck"
    tags = ["ladders"]  # noqa: RUF012

    @get("/", responses=ERROR_RESPONSES, summary="A player's luck-adjusted figure")
    async def luck(self, player_id: PLAYER_ID, state: State) -> PlayerLuck:
        """Over the player's analysed rated games (the stored reviews' ``luck``, one per
        game): his side's mean margin a game, what the cards were worth, and the play's
        share (result minus the cards). All zero with ``games`` 0 when none is analysed."""
        gateway = gateway_of(state)
        openings = await gateway.store.openings(
            "TableOpened",
            "GameFinished",
            limit=LUCK_GAMES,
            player=player_id,
            related=("analysis", "AnalysisFinished"),
        )
        # a duplicate event's board still played at other tables tells nothing of its cards
        reviewed = [o for o in openings if o.related is not None]
        sealed = await eventrun.sealed_among(
            gateway.pool, [o.event.stream_id.removeprefix("game-") for o in reviewed]
        )
        sums = [0.0, 0.0, 0.0]
        games = 0
        for opening in reviewed:
            if opening.related is None or opening.event.stream_id.removeprefix("game-") in sealed:
                continue
            finished = _finished.decode(opening.related)
            if not finished.ok:
                continue
            review = msgspec.json.decode(finished.review)
            luck = review.get("luck") if isinstance(review, dict) else None
            players = msgspec.json.decode(opening.event.data).get("players", [])
            if not luck or player_id not in players:
                continue
            mine = luck[players.index(player_id) % len(luck)]
            for i, key in enumerate(("result", "cards", "play")):
                sums[i] += float(mine[key])
            games += 1
        mean = [round(x / games, 1) if games else 0.0 for x in sums]
        return PlayerLuck(
            player_id=player_id, games=games, result=mean[0], cards=mean[1], play=mean[2]
        )


async def _stored_state(gateway: Gateway, game_id: str) -> Any:
    stored = await gateway.store.read(analysis_stream(game_id))
    return fold(REGISTRY.decode(s) for s in stored) if stored else None


@contextlib.asynccontextmanager
async def told_when_ready(gateway: Gateway) -> AsyncIterator[None]:
    """While the app runs, turn each stored review into an `analysis_ready` notice for the
    game's players and its asker (one replica of the queue group publishes it)."""

    async def tell(msg: Msg) -> None:
        try:
            finished = REGISTRY.decode(_stored.decode(msg.data))
        except Exception as exc:
            gateway.log.warning("undecodable analysis event", error=type(exc).__name__)
            return
        if not isinstance(finished, AnalysisFinished):
            return
        players = tuple(dict.fromkeys(p for p in (*finished.players, finished.asked_by) if p))
        status = "ready" if finished.ok else "failed"
        await publish(gateway, players, AnalysisReady(game_id=finished.game_id, status=status))

    group = f"{gateway.subjects.prefix}gateway-analysis"
    sub = None
    try:
        sub = await gateway.nc.subscribe(gateway.subjects.analysis_finished(), queue=group, cb=tell)
    except Exception as exc:  # NATS away at start: readers still poll the endpoint
        gateway.log.warning("analysis notices not subscribed", error=type(exc).__name__)
    try:
        yield
    finally:
        if sub is not None:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        await asyncio.sleep(0)


__all__ = ["Analyses", "Luck", "told_when_ready"]
