"""Events (duplicate, Swiss, arena): create a private one, list, show (commitments,
standings, boards or an arena's games), enter as a pair, withdraw (an arena: pause), come
back (an arena), start.

The event's rows are the gateway's (`services.gateway.tourneys` says why); its board games are
opened by the table service like a friends' table's. Every refusal has its own code and
changes nothing (each change is one transaction on the event's locked row). An operator
creates public events with `spades events create` (the same rules, no host).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

import asyncpg
import msgspec
from litestar import Controller, get, post
from litestar.datastructures import State
from litestar.params import JSONBody, Parameter

from events.contracts import game as wire
from events.contracts import ladders
from events.pgstore import Conn
from services.gateway import arena, auth, eventrun, eventsignup, social, tourneys
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import BEARER, gateway_of, strict_bools
from services.gateway.http.queue import recent_changes
from services.gateway.http.security import Caller, account_required
from services.gateway.state import Gateway, Unavailable
from services.gateway.tourneys import EventPage, EventRefusal, EventSummary, LogEntry
from services.runtime.clock import clock_of

EVENT_ID = Annotated[
    str,
    Parameter(pattern=r"^[0-9A-Fa-f-]{1,64}$", description="an event's id (a UUID)"),
]
MAX_DAYS_AHEAD = 60
EVENT_CHANGES: dict[str, deque[float]] = {}
"""When each account created, entered, left or came back to an event in the last minute (per
replica, as the queue's budget is)."""


def spend_change(gateway: Gateway, player_id: str) -> deque[float]:
    """Return the caller's recent event changes; 429 `rate_limited` (with Retry-After) when
    that is SPADES_EVENT_CHANGES_PER_MINUTE already: the request reaches nothing. The caller
    appends the time once its change happened."""
    limit = gateway.config.event_changes_per_minute
    words = "event creations, entries, withdrawals and returns"
    return recent_changes(
        gateway, player_id, time.monotonic(), budget=(limit, EVENT_CHANGES, words)
    )


class CreateEvent(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A private event, ``format`` ``duplicate`` (a fixed movement), ``swiss`` (each round
    paired from the standings after the one before) or ``arena`` (for ``minutes``, any two
    free pairs meet; a game's rules are the event's, so short games suit it: a low
    ``target`` or a ``hand_cap``): its rules (a ``ladder``'s, or ``rules`` options over the
    ranked default; partnership Spades, four players), boards per round and rounds (not an
    arena; Swiss: at most ``max_pairs`` less one), how many pairs may enter, when it starts
    (unix seconds; its host may start it sooner) and how long before that sign-up opens (0:
    from now)."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=80)]
    format: str = "duplicate"
    ladder: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    rules: dict[str, wire.RuleValue] = {}
    boards_per_round: Annotated[int, msgspec.Meta(ge=1, le=12)] = 2
    rounds: Annotated[int, msgspec.Meta(ge=1, le=15)] = 1
    max_pairs: Annotated[int, msgspec.Meta(ge=2, le=32)] = 8
    starts_at: float | None = None
    signup_minutes: Annotated[int, msgspec.Meta(ge=0, le=60 * 24 * 30)] = 0
    minutes: int | None = None
    """An arena's length (1 to 600); only an arena has one."""
    command_id: uuid.UUID | None = None


class JoinEvent(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Enter with ``partner``: another player's id, or "bot" (private events only)."""

    partner: Annotated[str, msgspec.Meta(pattern=auth.NAME_PATTERN, description=auth.NAME_RULE)]


class StartEvent(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Start now; ``fill_with_bots`` adds a bot pair when the pairs are odd."""

    fill_with_bots: bool = False


async def _page(gateway: Gateway, event_id: str) -> EventPage:
    try:
        return await tourneys.page(gateway.pool, event_id)
    except EventRefusal as exc:
        raise ApiError(exc.status, exc.code, exc.message) from None


@contextlib.asynccontextmanager
async def _locked(gateway: Gateway) -> AsyncIterator[Conn]:
    """A transaction; an event refusal inside it rolls back and becomes its HTTP answer."""
    try:
        async with gateway.pool.acquire() as conn, conn.transaction():
            yield conn
    except EventRefusal as exc:
        raise ApiError(exc.status, exc.code, exc.message, ends_at=exc.ends_at) from None
    except Unavailable:
        raise ApiError(503, "unavailable", "the table service did not answer: try again") from None


async def _pair_change(
    gateway: Gateway,
    player_id: str,
    event_id: str,
    change: Callable[[Conn, asyncpg.Record], Awaitable[object]],
) -> EventPage:
    """Make a pair's change to an event (within the caller's budget of changes, the event's
    row locked), tell everyone in it, and answer with its page."""
    changes = spend_change(gateway, player_id)
    async with _locked(gateway) as conn:
        await change(conn, await tourneys.by_id(conn, event_id, lock=True))
    changes.append(time.monotonic())
    await eventrun.tell(gateway, event_id)
    return await _page(gateway, event_id)


def rules_of(data: CreateEvent) -> dict[str, Any]:
    """Return an event's rules (one hand a board; an arena's games as its rules say); refuse
    rules that are no partnership game, an unknown format, a Swiss event with more rounds
    than it has opponents to meet, an arena without a length in range (or a length for
    another format)."""
    if data.format not in tourneys.FORMATS:
        raise ApiError(400, "unknown_format", "the formats are: " + ", ".join(tourneys.FORMATS))
    arena_event = data.format == tourneys.ARENA
    if arena_event != (data.minutes is not None) or (
        data.minutes is not None and not arena.MIN_MINUTES <= data.minutes <= arena.MAX_MINUTES
    ):
        raise ApiError(
            400,
            "bad_duration",
            f"an arena runs {arena.MIN_MINUTES} to {arena.MAX_MINUTES} minutes (`minutes`);"
            " other formats have rounds, no length",
        )
    if data.format == tourneys.SWISS and data.rounds > data.max_pairs - 1:
        raise ApiError(
            400,
            "bad_rounds",
            f"a Swiss event of {data.max_pairs} pairs plays 1 to {data.max_pairs - 1} rounds"
            " (each against a new opponent)",
        )
    if data.ladder:
        if data.rules:
            raise ApiError(400, "malformed", "give a ladder or rules, not both")
        try:
            base: dict[str, Any] = ladders.ladder_of(data.ladder).rules.to_dict()
        except ladders.UnknownLadder as exc:
            raise ApiError(404, "unknown_ladder", str(exc)) from None
    else:
        problem = ladders.rule_problem(dict(data.rules))
        if problem:
            raise ApiError(400, "invalid_ruleset", problem)
        base = {**ladders.rule_book()["defaults"], **data.rules}  # type: ignore[dict-item]
    if int(base["players"]) != 4:
        raise ApiError(400, "invalid_ruleset", "duplicate is partnership Spades: 4 players")
    rules = base if arena_event else {**base, "hand_cap": 1}  # a board is one hand
    problem = ladders.rule_problem(rules)
    if problem:
        raise ApiError(400, "invalid_ruleset", problem)
    return rules


class Events(Controller):
    """Duplicate events: create, list, show, enter, withdraw, start."""

    path = "/api/events"
    tags = ["events"]  # noqa: RUF012
    guards = [account_required]  # noqa: RUF012

    @post(
        "/",
        responses=ERROR_RESPONSES,
        status_code=201,
        summary="Create a private event",
        security=BEARER,
    )
    async def create(self, data: JSONBody[CreateEvent], request: Caller, state: State) -> EventPage:
        """Create a private event you host (`format`: duplicate, swiss or arena); its boards'
        seeds are drawn and their SHA-256 published at once (`boards[].commitment`; an arena
        has no boards: each game is dealt as every game is). 400 `invalid_ruleset`,
        `unknown_format`, `bad_rounds` (a Swiss event's rounds past its pairs less one),
        `bad_duration` (an arena's `minutes` missing or outside 1 to 600, or `minutes` for
        another format), `malformed` (a start in the past or over 60 days ahead, a ladder
        and rules both, a name blank or with control characters); 404 `unknown_ladder`;
        429 `rate_limited` (with Retry-After) past SPADES_EVENT_CHANGES_PER_MINUTE (10)
        creations, entries, withdrawals and returns a minute. A retry with the same
        `command_id` answers the event it created."""
        gateway = gateway_of(state)
        host = request.user.player_id
        changes = spend_change(gateway, host)
        if not data.name.strip() or not data.name.isprintable():
            raise ApiError(400, "malformed", "an event's name is printable text, not blank")
        rules = rules_of(data)
        now = time.time()
        starts_at = data.starts_at if data.starts_at is not None else now + 3600
        if not now - 60 <= starts_at <= now + MAX_DAYS_AHEAD * 86400:
            raise ApiError(400, "malformed", f"an event starts within {MAX_DAYS_AHEAD} days")
        opens = min(now, starts_at - 60 * data.signup_minutes) if data.signup_minutes else now
        tourney_id = tourneys.event_id_of(host, data.command_id or uuid.uuid4())
        async with _locked(gateway) as conn:
            found = await conn.fetchval("SELECT 1 FROM tourneys WHERE tourney_id = $1", tourney_id)
            if not found:
                await tourneys.create(
                    conn,
                    tourney_id=tourney_id,
                    name=data.name.strip(),
                    host=host,
                    private=True,
                    rules=rules,
                    ladder=data.ladder or None,
                    boards_per_round=data.boards_per_round,
                    rounds=data.rounds,
                    max_pairs=data.max_pairs,
                    starts_at=starts_at,
                    signup_opens_at=opens,
                    format=data.format,
                    minutes=data.minutes,
                )
        changes.append(time.monotonic())
        return await _page(gateway, str(tourney_id))

    @get("/", responses=ERROR_RESPONSES, summary="Events", security=BEARER)
    async def listing(self, request: Caller, state: State) -> list[EventSummary]:
        """Public events not over (latest start first), and the events you host or play in."""
        return await tourneys.listing(gateway_of(state).pool, request.user.player_id)

    @post(
        "/{event_id:str}/join",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Enter as a pair",
        security=BEARER,
    )
    async def join(
        self, event_id: EVENT_ID, data: JSONBody[JoinEvent], request: Caller, state: State
    ) -> EventPage:
        """Enter with a partner (again: answered as is); a running arena takes pairs until
        its end time. 404 `unknown_event`, `unknown_player`; 400 `bots_not_allowed` (a bot
        partner in a public event), `malformed` (yourself as partner); 403 `playban` (a
        queue ban for leaving rated games still runs, you or your partner: `ends_at`); 409
        `event_full`, `event_started`, `event_cancelled`, `signup_not_open`, `event_over`
        (an arena past its end time), `already_entered` (you or the partner are in a pair
        already: a pair plays each board once), `not_available` (a block); 429
        `rate_limited` (the events' budget, as for creating)."""
        gateway = gateway_of(state)
        player = request.user.player_id
        changes = spend_change(gateway, player)
        partner = data.partner.strip().lower()
        partner = tourneys.BOT if partner == "bot" else partner
        if partner != tourneys.BOT:
            account = await auth.find_account(gateway.pool, partner)
            if account is None or account.bot:
                raise ApiError(404, "unknown_player", f"no player {partner[:40]!r}")
            if await social.invitation_refused(gateway.pool, player, partner):
                raise ApiError(409, "not_available", f"{partner} is not available")
        now = time.time()
        for name in (player, partner):
            if name == tourneys.BOT:
                continue
            ban = await eventsignup.running_ban(gateway, name, now)
            if ban is not None:
                who = "you are" if name == player else f"{name} is"
                raise ApiError(
                    403,
                    "playban",
                    f"{who} banned from queues and events until {eventsignup.when(ban.ends_at)}"
                    " for leaving rated games",
                    ends_at=ban.ends_at,
                )
        async with _locked(gateway) as conn:
            row = await tourneys.by_id(conn, event_id, lock=True)
            joined = await eventsignup.join(
                conn, row, player, partner, now, clock_of(gateway).now()
            )
        changes.append(time.monotonic())
        if joined is not None:
            await eventrun.tell(gateway, event_id)
        return await _page(gateway, event_id)

    @post(
        "/{event_id:str}/leave",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Withdraw your pair",
        security=BEARER,
    )
    async def leave(self, event_id: EVENT_ID, request: Caller, state: State) -> EventPage:
        """Withdraw the pair you are in (player or partner) before the start; in a running
        arena, pause it (no new game for it; a game it plays finishes and counts; again:
        answered as is). 404 `unknown_event`; 409 `not_entered`, `event_started`,
        `event_cancelled`, `event_over` (an arena past its end time); 429 `rate_limited` (the
        events' budget)."""
        gateway, player = gateway_of(state), request.user.player_id

        async def leave(conn: Conn, row: asyncpg.Record) -> None:
            await eventsignup.leave(conn, row, player, time.time(), clock_of(gateway).now())

        return await _pair_change(gateway, player, event_id, leave)

    @post(
        "/{event_id:str}/resume",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Come back to a running arena",
        security=BEARER,
    )
    async def resume(self, event_id: EVENT_ID, request: Caller, state: State) -> EventPage:
        """Your paused pair is paired again in the running arena. 404 `unknown_event`; 409
        `not_entered`, `not_paused`, `not_an_arena`, `event_over` (past its end time); 429
        `rate_limited` (the events' budget)."""
        gateway, player = gateway_of(state), request.user.player_id

        async def resume(conn: Conn, row: asyncpg.Record) -> None:
            await eventsignup.resume(conn, row, player, clock_of(gateway).now())

        return await _pair_change(gateway, player, event_id, resume)

    @post(
        "/{event_id:str}/start",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Start your private event",
        security=BEARER,
    )
    async def start(
        self, event_id: EVENT_ID, data: JSONBody[StartEvent], request: Caller, state: State
    ) -> EventPage:
        """The host starts his private event now: the pairs are seated, round 1's first
        boards open (`games[].game_id`; an arena's first games, `arena.games[]`, and its
        clock runs; an `event_standings` message tells everyone in it).
        403 `not_host`; 409 `not_enough_pairs` (fewer than two, or, for duplicate, odd
        without `fill_with_bots`; an odd Swiss field gives a bye each round),
        `event_started`, `event_cancelled`; 503 `unavailable`."""
        gateway = gateway_of(state)
        await strict_bools(request, "fill_with_bots")
        async with _locked(gateway) as conn:
            row = await tourneys.by_id(conn, event_id, lock=True)
            if row["host"] != request.user.player_id:
                raise EventRefusal(403, "not_host", "only the event's host may start it")
            if row["status"] != tourneys.OPEN:
                eventsignup.check_signup(row, time.time())
            pairs = await tourneys.pairs_of(conn, row["tourney_id"])
            count = len(pairs) + (len(pairs) % 2 if data.fill_with_bots else 0)
            # an odd Swiss field: a bye each round; an odd arena: one pair waits for the next
            odd_ok = row["format"] in (tourneys.SWISS, tourneys.ARENA)
            if count < 2 or (count % 2 and not odd_ok):
                raise EventRefusal(
                    409,
                    "not_enough_pairs",
                    f"{len(pairs)} pairs entered: duplicate needs an even number, two or more"
                    + (" (fill_with_bots adds a bot pair)" if len(pairs) % 2 else ""),
                )
            await eventrun.start(gateway, conn, row, fill_with_bots=data.fill_with_bots)
        await eventrun.tell(gateway, event_id)
        return await _page(gateway, event_id)


class EventPages(Controller):
    """An event's page and log: public, so anyone can check its commitments and arithmetic."""

    path = "/api/events"
    tags = ["events"]  # noqa: RUF012

    @get("/{event_id:str}", responses=ERROR_RESPONSES, summary="An event")
    async def show(self, event_id: EVENT_ID, state: State) -> EventPage:
        """The event: pairs, boards (`commitment` from the start, `seed` once it is over:
        SHA-256 of the seed is the commitment, and `spades verify GAME_ID --commitment C`
        checks a board's game was dealt from it), each board's games and points, the
        standings (matchpoints, percentage, cross-IMPs) and every pair's score on every board
        with the pairs it was compared with. 404 `unknown_event`."""
        return await _page(gateway_of(state), event_id)

    @get(
        "/{event_id:str}/log",
        responses=ERROR_RESPONSES,
        summary="An event's audit log",
    )
    async def log(self, event_id: EVENT_ID, state: State) -> list[LogEntry]:
        """What happened, in order: EventCreated, BoardsCommitted, PairJoined, PairLeft,
        EventStarted, RoundStarted, BoardOpened, BoardResult, SeedsRevealed, EventFinished,
        EventCancelled; an arena's ArenaGameOpened, ArenaGameResult, PairPaused,
        PairResumed. 404 `unknown_event`."""
        try:
            return await tourneys.audit(gateway_of(state).pool, event_id)
        except EventRefusal as exc:
            raise ApiError(exc.status, exc.code, exc.message) from None


__all__ = ["CreateEvent", "EventPages", "Events", "JoinEvent", "StartEvent"]
