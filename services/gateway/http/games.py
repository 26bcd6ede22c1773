"""Games and replays: public summaries, events, states and transcripts of any game (a game
in progress only as a spectator sees it), a seat's own view, and transcripts replayed."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from litestar import Controller, MediaType, Request, get, post
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.handlers.base import BaseRouteHandler
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import JSONBody, Parameter

from events.contracts import game as wire
from events.contracts.bots import ReplayTranscript, TranscriptReply
from events.contracts.game import stream_of
from services.gateway import eventrun
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import BEARER, asked, gateway_of, refused
from services.gateway.http.security import Caller, account_required
from services.gateway.protocol import misspelt_game_id
from services.gateway.state import Unavailable, ask_table
from services.records.public import (
    Game,
    GameEventOut,
    GameSummary,
    StateAt,
    TranscriptReplay,
)

GAME_ID = Annotated[
    str,
    Parameter(
        pattern=r"^[0-9A-Fa-f-]{1,64}$",
        description="a game id (a UUID, as `game_id` everywhere else)",
    ),
]


async def load_game(state: State, game_id: str, *, public: bool = True) -> Game:
    """Return a game's log, or 404; a ``public`` read of an event's board still played at
    other tables, 403 `board_in_play` (`services.gateway.eventrun.sealed`)."""
    try:
        uuid.UUID(game_id)
    except ValueError:
        raise ApiError(404, "unknown_game", f"no game {game_id!r}") from None
    if (why := misspelt_game_id(game_id)) is not None:
        raise ApiError(400, "malformed", why)
    gateway = gateway_of(state)
    stored = await gateway.store.read(stream_of(game_id))
    if not stored:
        raise ApiError(404, "unknown_game", f"no game {game_id!r}")
    if public and await eventrun.sealed(gateway.pool, game_id):
        raise ApiError(403, "board_in_play", "this board is still being played at other tables")
    return Game(game_id, stored)


def canonical_game_id(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Guard: refuse a game id that is a UUID spelt otherwise than canonically (400
    `malformed`) before anything else, a body that is not JSON included."""
    game_id = connection.path_params.get("game_id")
    if isinstance(game_id, str) and (why := misspelt_game_id(game_id)) is not None:
        raise ApiError(400, "malformed", why)


_ndjson = msgspec.json.Encoder()
MAX_AT = 1_000_000


class LeaveRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``command_id`` makes a retry safe (the same answer, nothing appended twice)."""

    command_id: uuid.UUID | None = None


class Left(msgspec.Struct, frozen=True, kw_only=True):
    """What leaving did: ``outcome`` "closed" (nobody is left: the table closed, reason
    "abandoned"), "bot_seated" (a bot plays the seat at a casual table) or "resigned" (a
    rated game: the bot plays the seat out; counted as an abandonment, a loss)."""

    game_id: str
    outcome: str
    message: str


_LEFT_WORDS = {
    wire.LEFT_CLOSED: "you left; nobody else plays at the table, so it closed",
    wire.LEFT_BOT: "you left; a bot plays your seat for the rest of the game",
    wire.LEFT_RESIGNED: (
        "you resigned; a bot plays your seat out, and the game counts as a loss for you"
    ),
}


class Games(Controller):
    """Games: public summaries, replays of finished games, a seat's own view."""

    path = "/api/games/{game_id:str}"
    tags = ["games"]  # noqa: RUF012
    guards = [canonical_game_id]  # noqa: RUF012

    @get("/", responses=ERROR_RESPONSES, summary="A game's public summary")
    async def summary(self, game_id: GAME_ID, state: State) -> GameSummary:
        """Players, rules, phase and scores; a game in progress as of its last whole trick."""
        return (await load_game(state, game_id)).summary()

    @get("/events", responses=ERROR_RESPONSES, summary="A game's events")
    async def events(self, game_id: GAME_ID, state: State) -> list[GameEventOut]:
        """Every event of a finished game, hands included (the deck seed never); a game in
        progress only as a spectator sees it, up to its last completed trick."""
        return list((await load_game(state, game_id)).events())

    @get(
        "/events.ndjson",
        responses=ERROR_RESPONSES,
        summary="A game's events, one JSON object a line",
        media_type="application/x-ndjson",
    )
    async def events_ndjson(self, game_id: GAME_ID, state: State) -> bytes:
        """The same events as `/events`, as NDJSON (one event a line)."""
        events = (await load_game(state, game_id)).events()
        return b"".join(_ndjson.encode(e) + b"\n" for e in events)

    @get("/state", responses=ERROR_RESPONSES, summary="The state after event `at`")
    async def state_at(
        self,
        game_id: GAME_ID,
        state: State,
        at: Annotated[int, Parameter(ge=0, le=MAX_AT)] = MAX_AT,
    ) -> StateAt:
        """Face up once the game is over; during play only public facts, no later than the
        last completed trick. Without ``at``: the latest state."""
        return (await load_game(state, game_id)).state_at(at)

    @get(
        "/transcript",
        responses=ERROR_RESPONSES,
        summary="A plain-text transcript",
        media_type=MediaType.TEXT,
    )
    async def transcript(self, game_id: GAME_ID, state: State) -> str:
        """Every hand, bid and trick of a finished game; during play, the public part only."""
        return (await load_game(state, game_id)).transcript()

    @post(
        "/leave",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Leave your seat (resign a ranked game)",
        security=BEARER,
        guards=[account_required],
    )
    async def leave(
        self, game_id: GAME_ID, data: JSONBody[LeaveRequest], request: Caller, state: State
    ) -> Left:
        """Leave a seat for good, recorded in the game's log (`SeatAbandoned`, ``left``):
        at a practice or casual table a bot takes the seat, and the table closes once no
        person is left at it; a ranked game is resigned, the bot plays the seat out, and it
        counts as the abandonment it is (a loss). 403 `not_your_seat`, 409 `game_over` or
        `seat_abandoned` otherwise."""
        player = request.user
        game = await load_game(state, game_id, public=False)
        if player.player_id not in game.opened.players:
            raise ApiError(403, "not_your_seat", "you have no seat at this game")
        command_id = uuid.uuid5(
            uuid.NAMESPACE_URL, f"leave:{game_id}:{player.player_id}:{data.command_id}"
        )
        try:
            reply = await ask_table(
                gateway_of(state),
                game_id,
                wire.LeaveTable(game_id=game_id, player_id=player.player_id, command_id=command_id),
            )
        except Unavailable:
            raise ApiError(503, "unavailable", "the table did not answer: try again") from None
        if not reply.ok:
            raise refused(reply.code or "unavailable", reply.message or "not left")
        return Left(game_id=game_id, outcome=reply.code, message=_LEFT_WORDS[reply.code])

    @get(
        "/view",
        responses=ERROR_RESPONSES,
        summary="The caller's own seat view",
        security=BEARER,
        guards=[account_required],
    )
    async def view(self, game_id: GAME_ID, request: Caller, state: State) -> wire.SeatViewWire:
        """The caller's view of a game he sits at (403 `not_your_seat` otherwise)."""
        player = request.user
        game = await load_game(state, game_id, public=False)
        if player.player_id not in game.opened.players:
            raise ApiError(403, "not_your_seat", "you have no seat at this game")
        try:
            reply = await ask_table(
                gateway_of(state),
                game_id,
                wire.GetView(game_id=game_id, player_id=player.player_id),
            )
        except Unavailable:
            raise ApiError(503, "unavailable", "the table did not answer: try again") from None
        if not reply.ok or reply.view is None:
            raise refused(reply.code or "unavailable", reply.message or "no view")
        return reply.view


# -- transcripts -----------------------------------------------------------------------------------

_transcript_reply = msgspec.json.Decoder(TranscriptReply)
_replay = msgspec.json.Decoder(TranscriptReplay)

MAX_TRANSCRIPT_BYTES = 512 * 1024
"""Largest transcript accepted (413 beyond): a whole game is 25 to 50 KiB, one that reaches
the 50-hand cap about 250 KiB."""


@dataclass
class _TranscriptBody(Operation):
    """The operation of `POST /api/transcripts`: its body is plain text, which litestar cannot
    declare from a handler's signature (the handler reads the raw body)."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            required=True,
            description="a transcript as `GET /api/games/{game_id}/transcript` writes it",
            content={
                "text/plain": OpenAPIMediaType(
                    schema=Schema(type=OpenAPIType.STRING, max_length=MAX_TRANSCRIPT_BYTES)
                )
            },
        )


class Transcripts(Controller):
    """Replays of transcripts: what a text says, checked by the rules engine."""

    path = "/api/transcripts"
    tags = ["games"]  # noqa: RUF012

    @post(
        "/",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Replay a transcript",
        operation_class=_TranscriptBody,
        request_max_body_size=MAX_TRANSCRIPT_BYTES,
    )
    async def replay(self, request: Request[Any, Any, Any], state: State) -> TranscriptReplay:
        """Read a finished game's plain-text transcript back and replay it with the rules
        engine: the game's events (as `/api/games/{game_id}/events` shows them) and its final
        state. Only the text is replayed: no game is looked up, nothing is stored. A line
        that is not a legal continuation is refused with a code (`malformed_line`,
        `truncated`, `face_down`, `unknown_rule`, `invalid_ruleset`, `invalid_deal`,
        `mismatch`, `bad_step`, or the rule broken: `must_follow_suit`, `card_not_in_hand`
        ...) and a message naming the line."""
        body = await request.body()
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise ApiError(400, "malformed", "a transcript is UTF-8 text") from None
        # The replay costs up to a fifth of a second of CPU: it runs in the bot tier, never
        # on this serving process (a busy or absent tier answers 503 `unavailable`).
        gateway = gateway_of(state)
        answer = _transcript_reply.decode(
            await asked(gateway, gateway.subjects.bots_transcript(), ReplayTranscript(text=text))
        )
        if not answer.ok:
            raise ApiError(400, answer.code or "malformed", answer.message)
        return _replay.decode(answer.body)


__all__ = ["MAX_TRANSCRIPT_BYTES", "Games", "Transcripts", "load_game"]
