"""Friends' tables: open one with any rules, share its link or code, fill and start it.

The lobby table lives in the gateway's `friends_tables` (`services.gateway.friends` says why);
its game, once started, is opened by the table service like any unrated table
(`events.contracts.game.OpenCasual`) and lives in the event log. Every refusal has its own code
and changes nothing (each change is one transaction on the table's locked row).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import asyncpg
import msgspec
from litestar import Controller, get, post
from litestar.datastructures import State
from litestar.params import JSONBody, Parameter

from events.contracts import game as wire
from events.contracts import ladders
from events.contracts.game import stream_of
from events.pgstore import Conn
from services.gateway import auth, friends, social
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.friends import FriendsRefusal, FriendsTable
from services.gateway.http.common import BEARER, asked_again, gateway_of, refused, strict_bools
from services.gateway.http.security import Caller, account_required
from services.gateway.notices import FriendsTableChanged, publish
from services.gateway.state import Gateway

CODE = Annotated[
    str,
    Parameter(
        pattern=r"^[A-Za-z0-9 -]{1,32}$",
        description="a friends' table's code (capitals or not, dashes and spaces ignored)",
    ),
]


class SeatChoice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One seat as the host wants it: ``host`` (he sits here), ``open`` (whoever has the link
    or code), ``player`` (kept for ``player_id``) or ``bot``."""

    kind: Literal["host", "open", "player", "bot"]
    player_id: Annotated[str, msgspec.Meta(max_length=64)] | None = None


class TableOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Options of the table beyond the rule book."""

    free_text_chat: bool = False
    """Seats may say free text to the table, not only the presets (`events.contracts.talk`)."""


class OpenFriendsTable(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A friends' table to open: the rules (empty: the ladder's), each seat's kind (empty: the
    host at seat 0, the others open), the bots' level, whether it stays out of public lists."""

    rules: dict[str, wire.RuleValue] = {}
    seats: list[SeatChoice] = []
    bot_level: str = "baseline"
    unlisted: bool = False
    options: TableOptions = TableOptions()
    command_id: uuid.UUID | None = None


class JoinRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Which seat to take (none: yours if one is kept for you, else the first open one)."""

    seat: int | None = None


class SwapRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Two seats whose occupants (people, invitations, bots) change places."""

    seats: Annotated[list[int], msgspec.Meta(min_length=2, max_length=2)]


class StartRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Start now; ``fill_with_bots`` seats bots at the seats still empty."""

    fill_with_bots: bool = False


class Lobby(msgspec.Struct, frozen=True, kw_only=True):
    """Public friends' tables with a seat open to anyone, and your own tables."""

    open: list[FriendsTable]
    mine: list[FriendsTable]


_table_reply = msgspec.json.Decoder(wire.TableReply)


@contextlib.asynccontextmanager
async def _locked(gateway: Gateway) -> AsyncIterator[Conn]:
    """A transaction; a lobby refusal inside it rolls back and becomes its HTTP answer."""
    try:
        async with gateway.pool.acquire() as conn, conn.transaction():
            yield conn
    except FriendsRefusal as exc:
        raise ApiError(exc.status, exc.code, exc.message) from None


async def _finished(gateway: Gateway, row: asyncpg.Record) -> bool:
    if row["game_id"] is None:
        return False
    stored = await gateway.store.read(stream_of(str(row["game_id"])))
    return bool(stored) and stored[-1].type == "GameFinished"


async def _told(gateway: Gateway, row: asyncpg.Record, also: tuple[str, ...] = ()) -> FriendsTable:
    """Return the table as shown, having told everyone it concerns (and ``also``)."""
    table = friends.public(row)
    people = tuple(dict.fromkeys([*friends.people(row), *also]))
    await publish(gateway, people, FriendsTableChanged(table=table))
    return table


class Friends(Controller):
    """Friends' tables: open, join by code, swap seats, start."""

    path = "/api/friends"
    tags = ["friends"]  # noqa: RUF012
    guards = [account_required]  # noqa: RUF012

    @post(
        "/",
        responses=ERROR_RESPONSES,
        status_code=201,
        summary="Open a friends' table",
        security=BEARER,
    )
    async def open(
        self, data: JSONBody[OpenFriendsTable], request: Caller, state: State
    ) -> FriendsTable:
        """Open a waiting table and answer its `code` and `link` to share. 400
        `invalid_ruleset`, `wrong_player_count` (one seat choice per seat of the rules),
        `malformed` (not exactly one `host` seat, a person twice), `unknown_bot_level`; 404
        `unknown_player` (a seat kept for nobody); 429 `too_many_invitations` (over
        `SPADES_FRIENDS_TABLES_PER_HOUR` tables opened in an hour); 409 `too_many_tables` (over
        `SPADES_LIVE_TABLES_PER_ACCOUNT` waiting). A retry with the same `command_id` answers
        the table it opened."""
        gateway = gateway_of(state)
        host = request.user.player_id
        await strict_bools(request, "unlisted", "options.free_text_chat")
        problem = ladders.rule_problem(dict(data.rules))
        if problem:
            raise ApiError(400, "invalid_ruleset", problem)
        rules = {**ladders.rule_book()["defaults"], **data.rules}  # type: ignore[dict-item]
        count = int(rules["players"])
        choices = data.seats or [SeatChoice(kind="host"), *[SeatChoice(kind="open")] * (count - 1)]
        if len(choices) != count:
            raise ApiError(
                400, "wrong_player_count", f"these rules seat {count}, not {len(choices)}"
            )
        seats = await _seats_of(gateway, host, choices)
        try:
            friends.check_level(data.bot_level)
        except FriendsRefusal as exc:
            raise ApiError(exc.status, exc.code, exc.message) from None
        table_id = friends.table_id_of(host, data.command_id or uuid.uuid4())
        async with _locked(gateway) as conn:
            await conn.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", FRIENDS_LOCK, host)
            row = await friends.by_id(conn, table_id)
            if row is not None:
                return friends.public(row)
            lately, waiting = await friends.opened_lately(conn, host)
            per_hour = gateway.config.friends_tables_per_hour
            if lately >= per_hour:
                raise ApiError(
                    429,
                    "too_many_invitations",
                    f"at most {per_hour} friends' tables an hour: use one you opened",
                    headers={"Retry-After": "600"},
                )
            cap = gateway.config.live_tables_per_account
            if waiting >= cap:
                raise ApiError(
                    409, "too_many_tables", f"you have {waiting} tables waiting (at most {cap})"
                )
            row = await friends.insert(
                conn,
                table_id=table_id,
                host=host,
                rules=rules,
                options=msgspec.to_builtins(data.options),
                bot_level=data.bot_level,
                unlisted=data.unlisted,
                seats=seats,
            )
        return await _told(gateway, row)

    @get(
        "/",
        responses=ERROR_RESPONSES,
        summary="Open seats at public friends' tables",
        security=BEARER,
    )
    async def lobby(self, request: Caller, state: State) -> Lobby:
        """`open`: waiting public tables with a seat open to anyone (newest first); `mine`: the
        tables you host, sit at or are invited to (waiting, or started within a day)."""
        found, mine = await friends.lobby(gateway_of(state).pool, request.user.player_id)
        return Lobby(open=found, mine=mine)

    @get(
        "/{code:str}",
        responses=ERROR_RESPONSES,
        summary="A friends' table by its code",
        security=BEARER,
    )
    async def table(self, code: CODE, state: State) -> FriendsTable:
        """The table as anyone with its code sees it; 404 `unknown_code`."""
        try:
            return friends.public(await friends.by_code(gateway_of(state).pool, code))
        except FriendsRefusal as exc:
            raise ApiError(exc.status, exc.code, exc.message) from None

    @post(
        "/{code:str}/join",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Take a seat",
        security=BEARER,
    )
    async def join(
        self, code: CODE, data: JSONBody[JoinRequest], request: Caller, state: State
    ) -> FriendsTable:
        """Sit down (again: answered as is). 404 `unknown_code`; 409 `table_full`,
        `seat_taken` (someone sat there a moment earlier), `seat_reserved`, `seat_not_open`
        (a bot's), `already_seated` (at another seat), `table_started`, `table_finished`,
        `table_closed`; 400 `bad_seat`."""
        gateway = gateway_of(state)
        async with _locked(gateway) as conn:
            row = await friends.by_code(conn, code, lock=True)
            if await social.invitation_refused(gateway.pool, row["host"], request.user.player_id):
                raise ApiError(409, "not_available", "this table is not available to you")
            finished = row["status"] == friends.STARTED and await _finished(gateway, row)
            seats = friends.joined(row, request.user.player_id, data.seat, finished=finished)
            if seats is None:
                return friends.public(row)
            row = await friends.save(conn, row["table_id"], seats)
        return await _told(gateway, row)

    @post(
        "/{code:str}/leave",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Get up, or close your table",
        security=BEARER,
    )
    async def leave(self, code: CODE, request: Caller, state: State) -> FriendsTable:
        """A guest gets up (his seat opens again, or waits for him if it was kept for him);
        the host closes the table. 409 `not_seated`, `table_started`, `table_closed`."""
        gateway = gateway_of(state)
        player = request.user.player_id
        async with _locked(gateway) as conn:
            row = await friends.by_code(conn, code, lock=True)
            if row["host"] == player:
                friends.still_waiting(row)
                seats = friends.stored_seats(row)
                row = await friends.save(conn, row["table_id"], seats, status=friends.CLOSED)
            else:
                row = await friends.save(conn, row["table_id"], friends.left(row, player))
        return await _told(gateway, row)

    @post(
        "/{code:str}/swap",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Swap two seats",
        security=BEARER,
    )
    async def swap(
        self, code: CODE, data: JSONBody[SwapRequest], request: Caller, state: State
    ) -> FriendsTable:
        """The host exchanges two seats before the start. 403 `not_host`; 400 `bad_seat`;
        409 `table_started`, `table_closed`."""
        gateway = gateway_of(state)
        async with _locked(gateway) as conn:
            row = await friends.by_code(conn, code, lock=True)
            friends.host_only(row, request.user.player_id)
            row = await friends.save(conn, row["table_id"], friends.swapped(row, *data.seats))
        return await _told(gateway, row)

    @post(
        "/{code:str}/start",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Start the game",
        security=BEARER,
    )
    async def start(
        self, code: CODE, data: JSONBody[StartRequest], request: Caller, state: State
    ) -> FriendsTable:
        """The host starts: the game opens (unrated) with these seats, `game_id` in the answer
        and in a `friends_table` message to everyone seated. 403 `not_host`; 409
        `seats_not_filled` (without `fill_with_bots`), `table_started`, `table_closed`."""
        gateway = gateway_of(state)
        await strict_bools(request, "fill_with_bots")
        async with _locked(gateway) as conn:
            row = await friends.by_code(conn, code, lock=True)
            friends.host_only(row, request.user.player_id)
            seats = friends.filled(row, data.fill_with_bots)
            invited = friends.people(row)  # one whose kept seat a bot now takes is told too
            players, bots = friends.players_of(seats)
            rules = row["rules"]
            body = wire.OpenCasual(
                players=players,
                bots=bots,
                bot_level=row["bot_level"],
                command_id=uuid.uuid5(row["table_id"], "start"),
                rules=_decoded(rules),
                unlisted=row["unlisted"],
                free_text_chat=bool(_decoded(row["options"]).get("free_text_chat", False)),
            )
            # resent while unanswered, as a practice open is: the command id names the game,
            # opened once, so a start during a table take-over waits for it, not a 503
            answer, _ = await asked_again(gateway, gateway.subjects.table_open(), body)
            reply = _table_reply.decode(answer)
            if not reply.ok:
                raise refused(reply.code, reply.message)
            row = await friends.save(
                conn, row["table_id"], seats, status=friends.STARTED, game_id=reply.game_id
            )
        return await _told(gateway, row, invited)


def _decoded(column: Any) -> dict[str, Any]:
    """Return a jsonb column's object (asyncpg gives it as text without a codec)."""
    return dict(msgspec.json.decode(column) if isinstance(column, str) else column)


FRIENDS_LOCK = 0x5ADE8
"""First key of the advisory lock serialising one host's openings (the hourly count)."""


async def _seats_of(
    gateway: Gateway, host: str, choices: list[SeatChoice]
) -> list[dict[str, object]]:
    """Return the stored seats of the host's choices; refuse a bad choice."""
    if sum(1 for c in choices if c.kind == "host") != 1:
        raise ApiError(400, "malformed", "exactly one seat is the host's (kind: host)")
    seats: list[dict[str, object]] = []
    named: set[str] = {host}
    for choice in choices:
        if choice.kind == "host":
            seats.append({"kind": friends.RESERVED, "player_id": host, "seated": True})
        elif choice.kind == "open":
            seats.append({"kind": friends.OPEN})
        elif choice.kind == "bot":
            seats.append({"kind": friends.BOT})
        else:
            wanted = (choice.player_id or "").strip().lower()
            account = await auth.find_account(gateway.pool, wanted) if wanted else None
            if account is None or account.bot:
                raise ApiError(
                    404, "unknown_player", f"no player {wanted[:40]!r} to keep a seat for"
                )
            if wanted in named:
                raise ApiError(400, "malformed", f"{wanted} cannot sit twice")
            if await social.invitation_refused(gateway.pool, host, wanted):
                raise ApiError(409, "not_available", f"{wanted} is not available")
            named.add(wanted)
            seats.append({"kind": friends.RESERVED, "player_id": wanted, "seated": False})
    return seats


__all__ = ["Friends", "FriendsTable", "Lobby", "OpenFriendsTable"]
