"""The HTTP API: thin handlers that decode, ask a service over NATS or read the log, answer.

Every path is under `/api`; the OpenAPI document is at `/schema` (`/schema/openapi.json`).
Handlers hold no game state: games live in the table service, queues in matchmaking, ratings
in the rating service, and the gateway reads finished games from the event log.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, MediaType, Request, delete, get, post
from litestar.datastructures import ResponseHeader, State
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import Parameter

from events import game as wire
from events import matchmaking as mm
from events import rating
from events import transcript as transcripts
from events.game import game_id_of_match, stream_of
from events.pgstore import Opening, count_unfinished_openings, stream_exists
from services import fairplay
from services.gateway import auth
from services.gateway.errors import ERROR_RESPONSES, ApiError, ErrorBody
from services.gateway.games import (
    Game,
    GameEventOut,
    GameSummary,
    StateAt,
    TranscriptReplay,
    replay_of,
)
from services.gateway.state import Gateway, Unavailable, ask, ask_table
from services.ladders import LADDERS
from services.skill import PROVISIONAL_GAMES

BEARER: list[dict[str, list[str]]] = [{"BearerToken": []}]


# -- bodies ---------------------------------------------------------------------------------------


class Register(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A new account: its name, password, and whether a program (a bot) plays it."""

    name: auth.Name
    password: auth.Password
    bot: bool = False


class Login(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An account's name (any case) and password."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    password: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


RefreshToken = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=256,
        description="the refresh_token of the last login or renewal: `<session_id>.<secret>`",
        examples=[
            "0b6c7a52-5d0e-4b8e-9d1f-2f4c3a1b9e70.Xq3v8VbJr2yH1kP0nA7sLd9fG4hT6uW5eZcMxQ_b-Io"
        ],
    ),
]


class Refresh(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A session's refresh token: to renew the session (`POST /api/tokens/refresh`) or to end
    it (`DELETE /api/tokens`)."""

    refresh_token: RefreshToken


class Token(msgspec.Struct, frozen=True, kw_only=True):
    """A short-lived access token: send it as `Authorization: Bearer <token>`, or in the
    WebSocket `auth` message. With it the session's refresh token: trade it at
    `POST /api/tokens/refresh` for the next access token and refresh token (each refresh
    token works once) before `refresh_expires_in` seconds pass."""

    access_token: str
    token_type: str
    expires_in: int
    player_id: str
    bot: bool
    refresh_token: str
    refresh_expires_in: int


# -- dependencies ---------------------------------------------------------------------------------


def gateway_of(state: State) -> Gateway:
    """Return the gateway's resources (set on the app at start)."""
    gateway: Gateway = state.gateway
    return gateway


def bearer_token(request: Request[Any, Any, Any]) -> str:
    """Return the bearer token of the request; raise `unauthenticated` when there is none."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthenticated", "send Authorization: Bearer <access token>")
    return token.strip()


def current_player(request: Request[Any, Any, Any], state: State) -> auth.Claims:
    """Return the verified claims of the request's access token (401 with the reason if not)."""
    try:
        return gateway_of(state).tokens.verify(bearer_token(request))
    except auth.TokenError as exc:
        raise ApiError(401, exc.code, str(exc)) from None


NO_STORE = [
    ResponseHeader(name="Cache-Control", value="no-store"),
    ResponseHeader(name="Pragma", value="no-cache"),
]
"""Headers of every answer that carries a token (RFC 6749 5.1): no cache may keep a copy."""

PLAYER_ID = Annotated[
    str,
    Parameter(
        pattern=r"^(bot:)?[A-Za-z0-9_-]{1,24}$",
        description="a player id: an account name in lower case, `bot:<name>` for a bot",
    ),
]


async def sighted(gateway: Gateway, request: Request[Any, Any, Any], player_id: str) -> None:
    """Record where ``player_id`` is (his address, his client's device token): accounts seen
    at one never share a ranked table (`services.fairplay`)."""
    address = request.client.host if request.client else None
    device = request.headers.get(fairplay.DEVICE_HEADER)
    await fairplay.record_sighting(gateway.pool, player_id, address, device)


GAME_ID = Annotated[
    str,
    Parameter(
        pattern=r"^[0-9A-Fa-f-]{1,64}$",
        description="a game id (a UUID, as `game_id` everywhere else)",
    ),
]
LADDER = Annotated[
    str,
    Parameter(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="a ladder's name, e.g. `standard`"),
]


REFRESH_RESPONSES = {
    **ERROR_RESPONSES,
    401: ResponseSpec(
        data_container=ErrorBody,
        description="refresh_invalid (unknown, garbled, ended or already used: the session"
        " is over, log in again) or refresh_expired",
    ),
}


def session_seconds(gateway: Gateway) -> int:
    """Return how long a session lasts unused (SPADES_SESSION_DAYS), in seconds."""
    return gateway.config.session_days * 86_400


def token_of(gateway: Gateway, session: auth.Session) -> Token:
    """Return the answer of a login or renewal: a new access token and the refresh token."""
    access, _ = gateway.tokens.issue(session.player_id, session.bot)
    return Token(
        access_token=access,
        token_type="bearer",
        expires_in=gateway.tokens.seconds,
        player_id=session.player_id,
        bot=session.bot,
        refresh_token=session.refresh_token,
        refresh_expires_in=session.seconds,
    )


class Accounts(Controller):
    """Accounts, access tokens and sessions."""

    path = "/api"
    tags = ["accounts"]  # noqa: RUF012 - litestar reads a class attribute

    @post("/accounts", responses=ERROR_RESPONSES, status_code=201, summary="Register an account")
    async def register(self, data: Register, state: State) -> auth.Account:
        """Create an account (409 `name_taken` when the name is in use, ignoring case)."""
        if not auth.valid_name(data.name):  # the schema's `$` lets a final newline through
            raise ApiError(400, "malformed", f"{data.name!r} is not a name: {auth.NAME_RULE}")
        password_hash = await auth.hash_password(data.password)
        try:
            return await auth.create_account(
                gateway_of(state).pool, data.name, password_hash, data.bot
            )
        except auth.NameTaken:
            raise ApiError(409, "name_taken", f"the name {data.name!r} is taken") from None

    @post(
        "/tokens",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Log in: get an access token",
        response_headers=NO_STORE,
    )
    async def login(self, data: Login, request: Request[Any, Any, Any], state: State) -> Token:
        """Return an access token for a name and password (401 `invalid_credentials`), and
        the refresh token of a new session."""
        gateway = gateway_of(state)
        # a name no account can have is not looked up (PostgreSQL text refuses NUL, for one)
        found = (
            await auth.find_login(gateway.pool, data.name) if auth.valid_name(data.name) else None
        )
        ok = await auth.verify_password(found[1] if found else None, data.password)
        if found is None or not ok:
            raise ApiError(401, "invalid_credentials", "unknown name or wrong password")
        session = await auth.open_session(gateway.pool, found[0], session_seconds(gateway))
        await sighted(gateway, request, found[0].player_id)
        return token_of(gateway, session)

    @post(
        "/tokens/refresh",
        responses=REFRESH_RESPONSES,
        status_code=200,
        summary="Renew a session: a new access token and refresh token",
        response_headers=NO_STORE,
    )
    async def refresh(self, data: Refresh, state: State) -> Token:
        """Trade a refresh token for a new access token and the session's next refresh token.
        Each refresh token works once (the one a renewal replaced is still taken for
        `SPADES_SESSION_REUSE_SECONDS`, 30, for two tabs or a retry): 401 `refresh_invalid` for
        one that is unknown, garbled, of a session that ended, or already used (which also ends
        its session: log in again), 401 `refresh_expired` once the session went unused for
        `SPADES_SESSION_DAYS`."""
        gateway = gateway_of(state)
        try:
            session = await auth.rotate_session(
                gateway.pool,
                data.refresh_token,
                session_seconds(gateway),
                gateway.config.session_reuse_seconds,
            )
        except auth.SessionError as exc:
            raise ApiError(401, exc.code, str(exc)) from None
        return token_of(gateway, session)

    @delete("/tokens", responses=ERROR_RESPONSES, status_code=204, summary="Log out")
    async def logout(self, data: Refresh, state: State) -> None:
        """End the session of a refresh token: none of its refresh tokens works any more.
        Idempotent: a session already ended, or a token that is no session's, is answered
        204 too. Access tokens already issued stay valid until they expire."""
        await auth.revoke_session(gateway_of(state).pool, data.refresh_token)

    @get(
        "/me", responses=ERROR_RESPONSES, summary="The account of the access token", security=BEARER
    )
    async def me(self, request: Request[Any, Any, Any], state: State) -> auth.Account:
        """Return the caller's account."""
        claims = current_player(request, state)
        account = await auth.find_account(gateway_of(state).pool, claims.player_id)
        if account is None:
            raise ApiError(401, "token_invalid", "the token's account does not exist")
        return account


# -- services' answers -> HTTP ----------------------------------------------------------------

# HTTP status of each refusal code the services answer with
_STATUS = {
    "malformed": 400,
    "invalid_ruleset": 400,
    "wrong_player_count": 400,
    "bot_not_allowed": 403,
    "not_your_seat": 403,
    "unknown_ladder": 404,
    "unknown_game": 404,
    "already_queued": 409,
    "in_game": 409,
    "not_queued": 409,
    "unavailable": 503,
}


def refused(code: str, message: str) -> ApiError:
    """Return the HTTP error for a service's refusal code."""
    return ApiError(_STATUS.get(code, 400), code, message)


async def asked(gateway: Gateway, subject: str, body: msgspec.Struct) -> bytes:
    """Return a service's answer; 503 `unavailable` when it does not answer."""
    try:
        return await ask(gateway, subject, body)
    except Unavailable:
        raise ApiError(503, "unavailable", "the service did not answer: try again") from None


class QueueJoin(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Which ladder's queue to join."""

    ladder: Annotated[str, msgspec.Meta(min_length=1, max_length=64, examples=["standard"])]


_reply = msgspec.json.Decoder(mm.Reply)


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


class Queue(Controller):
    """The matchmaking queue of the caller."""

    path = "/api"
    tags = ["queue"]  # noqa: RUF012

    async def _ask(self, state: State, subject: str, body: msgspec.Struct) -> QueueAnswer:
        reply = _reply.decode(await asked(gateway_of(state), subject, body))
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
        )

    @post(
        "/queue",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Join a ladder's queue",
        security=BEARER,
    )
    async def join(
        self, data: QueueJoin, request: Request[Any, Any, Any], state: State
    ) -> QueueAnswer:
        """Queue the caller; the match arrives by `GET /api/queue` (match_id, then game)."""
        player = current_player(request, state)
        await sighted(gateway_of(state), request, player.player_id)
        subject = gateway_of(state).subjects.matchmaking_join()
        return await self._ask(
            state, subject, mm.JoinQueue(player_id=player.player_id, ladder=data.ladder)
        )

    @delete(
        "/queue",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Leave the queue",
        security=BEARER,
    )
    async def leave(self, request: Request[Any, Any, Any], state: State) -> QueueAnswer:
        """Take the caller out of whatever queue he is in."""
        player = current_player(request, state)
        subject = gateway_of(state).subjects.matchmaking_leave()
        return await self._ask(state, subject, mm.LeaveQueue(player_id=player.player_id))

    @get("/queue", responses=ERROR_RESPONSES, summary="Where the caller stands", security=BEARER)
    async def status(self, request: Request[Any, Any, Any], state: State) -> QueueAnswer:
        """Queued (and for how long), matched (`match_id`, `game_id`), or idle; queue sizes."""
        player = current_player(request, state)
        subject = gateway_of(state).subjects.matchmaking_status()
        return await self._ask(state, subject, mm.QueueStatus(player_id=player.player_id))


class PracticeRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Rule options of a practice table (empty: the ladder's); ``command_id`` makes a retry
    open the same table."""

    rules: dict[str, wire.RuleValue] = {}
    command_id: uuid.UUID | None = None
    bots: str = "baseline"
    """The bots' level: "baseline" (quick, sound) or "strong" (searches each card)."""
    untimed: bool = False
    """No turn timer: the bots wait for you (a practice game only; ranked games are timed)."""


class Opened(msgspec.Struct, frozen=True, kw_only=True):
    """A table was opened: play it over the WebSocket with this game id."""

    game_id: str


class Practice(Controller):
    """Practice tables: the caller and bots."""

    path = "/api/practice"
    tags = ["games"]  # noqa: RUF012

    @post(
        "/",
        responses=ERROR_RESPONSES,
        status_code=201,
        summary="Open a practice table with bots",
        security=BEARER,
    )
    async def open(
        self, data: PracticeRequest, request: Request[Any, Any, Any], state: State
    ) -> Opened:
        """Open an unrated table: the caller at seat 0, bots at the others, these rules.
        An account has at most `SPADES_LIVE_TABLES_PER_ACCOUNT` (3) unfinished practice or
        casual tables: 409 `too_many_tables` beyond (a retry of one already opened, same
        ``command_id``, is answered with its game)."""
        gateway = gateway_of(state)
        player = current_player(request, state)
        # litestar converts bodies laxly (0 would pass as false): a flag must be a JSON boolean
        raw = await request.json()
        if isinstance(raw, dict) and not isinstance(raw.get("untimed", False), bool):
            raise ApiError(400, "malformed", "untimed must be true or false")
        body = wire.OpenPractice(
            player_id=player.player_id,
            command_id=scoped_id(player.player_id, data.command_id or uuid.uuid4()),
            rules=data.rules,
            bots=data.bots,
            untimed=data.untimed,
        )
        # One opening at a time per account (a transaction-scoped advisory lock): the count
        # and the table's append are serialised, so parallel requests cannot pass the cap.
        async with gateway.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                LIVE_TABLES_LOCK,
                player.player_id,
            )
            retry = await stream_exists(conn, stream_of(practice_game_id(body.command_id)))
            live = (
                0
                if retry
                else await count_unfinished_openings(
                    conn, "TableOpened", "GameFinished", player=player.player_id, unless="rated"
                )
            )
            cap = gateway.config.live_tables_per_account
            if live >= cap:
                raise ApiError(
                    409,
                    "too_many_tables",
                    f"you have {live} unfinished practice or casual tables (at most {cap}):"
                    " finish or leave one first (an idle table closes after three missed turns)",
                )
            reply = _table_reply.decode(await asked(gateway, gateway.subjects.table_open(), body))
        if not reply.ok:
            raise refused(reply.code, reply.message)
        return Opened(game_id=reply.game_id)


_table_reply = msgspec.json.Decoder(wire.TableReply)
LIVE_TABLES_LOCK = 0x5ADE7
"""First key of the two-key advisory lock serialising one account's table openings."""


def practice_game_id(command_id: uuid.UUID) -> str:
    """Return the game id the table gives a practice table opened with ``command_id``."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"practice:{command_id}"))


_PRACTICE_NAMESPACE = uuid.UUID("5ade5000-0000-4000-8000-0000000097ac")


def scoped_id(player_id: str, command_id: uuid.UUID) -> uuid.UUID:
    """Return a client's command id scoped to its player (ids of others cannot collide)."""
    return uuid.uuid5(_PRACTICE_NAMESPACE, f"{player_id}\n{command_id}")


# -- ladders and players ------------------------------------------------------------------------


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
    """A ranked ladder: its rules and how many wait in its queue now."""

    ladder: str
    players: int
    """Seats at its tables."""
    rules: dict[str, Any]
    queue_size: int | None
    """Players waiting now; null when matchmaking did not answer."""


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
        """The games the player sat at, newest first."""
        store = gateway_of(state).store
        openings = await store.openings(
            "TableOpened",
            "GameFinished",
            limit=limit,
            player=player_id,
            related=("rating", "RatingsUpdated"),
        )
        return _listed(openings, player_id)

    @get("/ladders", responses=ERROR_RESPONSES, summary="The ranked ladders and their queues")
    async def ladders(self, state: State) -> list[LadderInfo]:
        """Every ranked ladder with its rules and the size of its queue now."""
        gateway = gateway_of(state)
        sizes: dict[str, int] | None
        try:  # nobody's status: the answer for a player who is not queued carries the sizes
            reply = _reply.decode(
                await ask(
                    gateway, gateway.subjects.matchmaking_status(), mm.QueueStatus(player_id="")
                )
            )
            sizes = reply.queue_sizes or {}
        except Unavailable:
            sizes = None
        return [
            LadderInfo(
                ladder=name,
                players=rules.players,
                rules=rules.to_dict(),
                queue_size=None if sizes is None else sizes.get(name, 0),
            )
            for name, rules in LADDERS.items()
        ]

    @get("/games", responses=ERROR_RESPONSES, summary="Live games to watch")
    async def live_games(
        self,
        state: State,
        limit: Annotated[int, Parameter(ge=1, le=100)] = 20,
    ) -> list[GameListed]:
        """Games in progress, newest first: anyone may watch them as a spectator."""
        store = gateway_of(state).store
        return _listed(
            await store.openings("TableOpened", "GameFinished", limit=limit, unfinished=True)
        )


# -- games and replays --------------------------------------------------------------------------


async def load_game(state: State, game_id: str) -> Game:
    """Return a game's log, or 404."""
    try:
        uuid.UUID(game_id)
    except ValueError:
        raise ApiError(404, "unknown_game", f"no game {game_id!r}") from None
    stored = await gateway_of(state).store.read(stream_of(game_id))
    if not stored:
        raise ApiError(404, "unknown_game", f"no game {game_id!r}")
    return Game(game_id, stored)


_ndjson = msgspec.json.Encoder()
MAX_AT = 1_000_000


class Games(Controller):
    """Games: public summaries, replays of finished games, a seat's own view."""

    path = "/api/games/{game_id:str}"
    tags = ["games"]  # noqa: RUF012

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

    @get("/view", responses=ERROR_RESPONSES, summary="The caller's own seat view", security=BEARER)
    async def view(
        self, game_id: GAME_ID, request: Request[Any, Any, Any], state: State
    ) -> wire.SeatViewWire:
        """The caller's view of a game he sits at (403 `not_your_seat` otherwise)."""
        player = current_player(request, state)
        game = await load_game(state, game_id)
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


# -- transcripts --------------------------------------------------------------------------------

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
    async def replay(self, request: Request[Any, Any, Any]) -> TranscriptReplay:
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
        try:
            read = await asyncio.to_thread(transcripts.parse, text)
        except transcripts.TranscriptError as exc:
            raise ApiError(400, exc.code, str(exc)) from None
        return replay_of(read)


__all__ = [
    "Accounts",
    "ErrorBody",
    "Games",
    "Ladders",
    "Practice",
    "Queue",
    "Transcripts",
    "current_player",
]
