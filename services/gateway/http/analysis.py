"""A finished game's review (`GET /api/games/{game_id}/analysis`): asked of the bot tier
(`cmd.bots.analyse`, `engine.review`), never computed on this serving process.

The first request for a game starts the review and answers ``pending``; later ones answer
``pending`` until the tier has answered, then ``ready`` with the review. A game still in
play is refused (409 ``game_not_finished``): a review shows every hand. The reviews are kept
by this gateway process (a bounded number, the oldest dropped first): a review is
deterministic, so another replica or a restart computes the same one again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

import msgspec
import nats.errors
from litestar import Controller, Response, get
from litestar.datastructures import State

from events.contracts.bots import AnalyseTranscript, AnalysisReply
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import gateway_of
from services.gateway.http.games import GAME_ID, load_game

KEPT = 256
"""Reviews (and reviews in progress) one gateway process keeps."""
TIER_WAIT = 900.0
"""How long a review may take in the bot tier (a whole game: about a CPU minute)."""

_reply = msgspec.json.Decoder(AnalysisReply)
_encoder = msgspec.json.Encoder()


class Analysis(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``status``: "pending" (the bot tier is reviewing the game), "ready" (``analysis`` is
    `engine.review.Review`: graded decisions, each with ``at``, the replay step of its
    event; the hands' double-dummy figures; each seat's accuracy) or "failed" (``code`` and
    ``message`` say why; asking again retries)."""

    game_id: str
    status: str
    analysis: Any = None
    code: str = ""
    message: str = ""


_reviews: OrderedDict[str, asyncio.Task[AnalysisReply]] = OrderedDict()


async def _review(state: State, text: str) -> AnalysisReply:
    gateway = gateway_of(state)
    request = _encoder.encode(AnalyseTranscript(text=text))
    try:
        msg = await gateway.nc.request(gateway.subjects.bots_analyse(), request, timeout=TIER_WAIT)
    except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as exc:
        return AnalysisReply(
            ok=False,
            code="unavailable",
            message=f"the bot tier did not answer ({type(exc).__name__})",
        )
    return _reply.decode(msg.data)


class Analyses(Controller):
    """A finished game's review: each decision graded, what every hand could have made."""

    path = "/api/games/{game_id:str}/analysis"
    tags = ["games"]  # noqa: RUF012

    @get("/", responses=ERROR_RESPONSES, summary="A finished game's review")
    async def analysis(self, game_id: GAME_ID, state: State) -> Response[Analysis]:
        """Every bid and card graded from what its seat could see (loss in points against
        the strong search's best choice on the same sampled deals; inaccuracy 10, mistake
        25, blunder 60 points), recognisable errors named, each seat's accuracy, and the
        hands' double-dummy figures. 202 ``pending`` while the bot tier works, 200 ``ready``
        with the review; 409 ``game_not_finished`` for a game in play."""
        game = await load_game(state, game_id)
        if not game.finished:
            raise ApiError(
                409,
                "game_not_finished",
                "the game is still being played: it is reviewed once it is over",
            )
        task = _reviews.get(game_id)
        if task is None:
            task = asyncio.create_task(_review(state, game.transcript()))
            _reviews[game_id] = task
            while len(_reviews) > KEPT:
                _reviews.popitem(last=False)
        if not task.done():
            return Response(Analysis(game_id=game_id, status="pending"), status_code=202)
        reply = task.result()
        if not reply.ok:
            del _reviews[game_id]  # asking again retries
            return Response(
                Analysis(game_id=game_id, status="failed", code=reply.code, message=reply.message)
            )
        return Response(
            Analysis(game_id=game_id, status="ready", analysis=msgspec.json.decode(reply.body))
        )


__all__ = ["Analyses"]
