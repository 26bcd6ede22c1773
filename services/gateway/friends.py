"""Friends' tables before their game starts: the lobby table, its seats and its code.

Where this state lives, and why here. A friends' table is a meeting of accounts before there is
any game: who is invited, who has come, which seat is a bot. No rule of the game is decided and
nothing is hidden, so the table service (which owns games by hash slot and folds streams) has
no part in it until the host starts; then the gateway asks the table service to open the game
(`events.contracts.game.OpenCasual`) and from there on it is a game like any other, in the event
log. Until then it is the gateway's, like the accounts and sessions it already keeps: one row of
its own SQL table `friends_tables` (migration 16) per lobby table, every change under that
row's lock (``SELECT ... FOR UPDATE``). That makes the one hard question, two people joining
the last seat at once, a plain serial decision in PostgreSQL: exactly one wins, the other is
refused ``seat_taken`` (or ``table_full``), whichever gateway replica each reached. An event
stream would give the same guarantee by its expected version, at the price of a read model for
the lobby list; a pre-start lobby has no history worth replaying, so a row it is.

Seats (a JSON array in the row, one object per seat): ``kind`` is ``open`` (whoever has the
code may sit; ``player_id`` is who did), ``reserved`` (kept for ``player_id``: he joins with
the code, or from his list of invitations) or ``bot``; ``seated`` says whether the person is
there. The host sits at a reserved seat of his own from the start.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg
import msgspec

from events.contracts.bots import LEVELS
from events.errors import Refusal
from events.pgstore import Conn

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
"""The letters of a table's code: no 0/O, 1/I/L to misread (31 letters)."""
CODE_LENGTH = 8
"""31**8, about 8.5e11 codes: with the rate limits, unguessable enough for a card table."""
OPEN, RESERVED, BOT = "open", "reserved", "bot"
WAITING, STARTED, CLOSED = "waiting", "started", "closed"
_NAMESPACE = uuid.UUID("5ade5000-0000-4000-8000-00000000f1e5")


class FriendsRefusal(Refusal):
    """A lobby request refused: ``code`` for programs, the message for people; nothing changed."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(code, message)
        self.status = status


class Seat(msgspec.Struct, frozen=True, kw_only=True):
    """One seat of a friends' table: ``kind`` open, reserved or bot; who sits or is awaited."""

    seat: int
    kind: str
    player_id: str | None = None
    seated: bool = False


class FriendsTable(msgspec.Struct, frozen=True, kw_only=True):
    """A friends' table as everyone with its code sees it."""

    code: str
    link: str
    """The invitation's path on this site (`/#/join/CODE`): share it with the origin before."""
    host: str
    rules: dict[str, Any]
    options: dict[str, Any]
    bot_level: str
    unlisted: bool
    seats: list[Seat]
    status: str
    """``waiting`` (seats being filled), ``started`` (``game_id`` is its game), ``closed``."""
    game_id: str | None = None
    open_seats: int = 0


def new_code() -> str:
    """Return a fresh random table code."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(code: str) -> str:
    """Return a typed code as stored: capitals, no spaces or dashes."""
    return code.strip().replace("-", "").replace(" ", "").upper()


def table_id_of(host: str, command_id: uuid.UUID) -> uuid.UUID:
    """Return the id of the table ``host`` opens with ``command_id`` (a retry finds it)."""
    return uuid.uuid5(_NAMESPACE, f"{host}\n{command_id}")


def stored_seats(row: asyncpg.Record) -> list[dict[str, Any]]:
    """Return a table row's seats as stored."""
    return _seats(row["seats"])


def _seats(raw: Any) -> list[dict[str, Any]]:
    seats = msgspec.json.decode(raw) if isinstance(raw, str | bytes) else raw
    return [dict(s) for s in seats]


def public(row: asyncpg.Record) -> FriendsTable:
    """Return a table row as the API shows it."""
    seats = _seats(row["seats"])
    rules = row["rules"]
    options = row["options"]
    return FriendsTable(
        code=row["code"],
        link=f"/#/join/{row['code']}",
        host=row["host"],
        rules=msgspec.json.decode(rules) if isinstance(rules, str) else dict(rules),
        options=msgspec.json.decode(options) if isinstance(options, str) else dict(options),
        bot_level=row["bot_level"],
        unlisted=row["unlisted"],
        seats=[
            Seat(
                seat=i, kind=s["kind"], player_id=s.get("player_id"), seated=s.get("seated", False)
            )
            for i, s in enumerate(seats)
        ],
        status=row["status"],
        game_id=None if row["game_id"] is None else str(row["game_id"]),
        open_seats=sum(1 for s in seats if s["kind"] == OPEN and not s.get("seated")),
    )


def people(row: asyncpg.Record) -> tuple[str, ...]:
    """Return everyone a change of this table concerns: the host, the seated, the invited."""
    named = [s.get("player_id") for s in _seats(row["seats"])]
    return tuple(dict.fromkeys([row["host"], *(p for p in named if p)]))


_COLUMNS = "table_id, code, host, rules, options, bot_level, unlisted, seats, status, game_id"


async def insert(
    conn: Conn,
    *,
    table_id: uuid.UUID,
    host: str,
    rules: dict[str, Any],
    options: dict[str, Any],
    bot_level: str,
    unlisted: bool,
    seats: Sequence[dict[str, Any]],
) -> asyncpg.Record:
    """Insert a new waiting table with a fresh code (another on the rare collision)."""
    while True:
        row = await conn.fetchrow(
            "INSERT INTO friends_tables (table_id, code, host, rules, options, bot_level,"
            " unlisted, seats, status) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7,"
            f" $8::jsonb, 'waiting') ON CONFLICT (code) DO NOTHING RETURNING {_COLUMNS}",
            table_id,
            new_code(),
            host,
            msgspec.json.encode(rules).decode(),
            msgspec.json.encode(options).decode(),
            bot_level,
            unlisted,
            msgspec.json.encode(list(seats)).decode(),
        )
        if row is not None:
            return row


async def by_id(conn: Conn, table_id: uuid.UUID) -> asyncpg.Record | None:
    """Return a table by its id, or None."""
    return await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM friends_tables WHERE table_id = $1", table_id
    )


async def by_code(conn: Conn | asyncpg.Pool, code: str, *, lock: bool = False) -> asyncpg.Record:
    """Return a table by its code (locked for a change with ``lock``); refuse an unknown one."""
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM friends_tables WHERE code = $1" + (" FOR UPDATE" if lock else ""),
        normal_code(code),
    )
    if row is None:
        raise FriendsRefusal(404, "unknown_code", "no friends' table has this code: check it")
    return row


async def opened_lately(conn: Conn, host: str) -> tuple[int, int]:
    """Return how many tables ``host`` opened in the last hour, and how many still wait."""
    row = await conn.fetchrow(
        "SELECT count(*) FILTER (WHERE created_at > now() - interval '1 hour') AS lately,"
        " count(*) FILTER (WHERE status = 'waiting') AS waiting"
        " FROM friends_tables WHERE host = $1",
        host,
    )
    assert row is not None
    return int(row["lately"]), int(row["waiting"])


async def save(
    conn: Conn,
    table_id: uuid.UUID,
    seats: Sequence[dict[str, Any]],
    *,
    status: str = WAITING,
    game_id: str | None = None,
) -> asyncpg.Record:
    """Write a locked table's new seats (and status) and return it."""
    row = await conn.fetchrow(
        "UPDATE friends_tables SET seats = $2::jsonb, status = $3, game_id = $4,"
        f" updated_at = now() WHERE table_id = $1 RETURNING {_COLUMNS}",
        table_id,
        msgspec.json.encode(list(seats)).decode(),
        status,
        None if game_id is None else uuid.UUID(game_id),
    )
    assert row is not None
    return row


async def lobby(pool: asyncpg.Pool, player_id: str, limit: int = 50) -> tuple[list[Any], list[Any]]:
    """Return the public waiting tables with an open seat, newest first, and the caller's own
    (hosted, seated or invited; waiting, or started within a day)."""
    open_rows = await pool.fetch(
        f"SELECT {_COLUMNS} FROM friends_tables WHERE status = 'waiting' AND NOT unlisted"
        " AND EXISTS (SELECT 1 FROM jsonb_array_elements(seats) s"
        " WHERE s ->> 'kind' = 'open' AND NOT coalesce((s ->> 'seated')::boolean, false))"
        " ORDER BY created_at DESC LIMIT $1",
        limit,
    )
    mine = await pool.fetch(
        f"SELECT {_COLUMNS} FROM friends_tables WHERE (host = $1 OR seats @> $2::jsonb)"
        " AND (status = 'waiting'"
        " OR (status = 'started' AND updated_at > now() - interval '1 day'))"
        " ORDER BY created_at DESC LIMIT $3",
        player_id,
        msgspec.json.encode([{"player_id": player_id}]).decode(),
        limit,
    )
    return [public(r) for r in open_rows], [public(r) for r in mine]


# -- the seat rules (pure: a locked row's seats in, the new seats out) ------------------------


def still_waiting(row: asyncpg.Record, *, finished: bool = False) -> None:
    """Refuse a change to a table that is no longer waiting for its players."""
    if row["status"] == CLOSED:
        raise FriendsRefusal(409, "table_closed", "the host closed this table")
    if row["status"] == STARTED and finished:
        raise FriendsRefusal(409, "table_finished", "this table's game is over")
    if row["status"] == STARTED:
        raise FriendsRefusal(409, "table_started", "this table's game has started without you")


def seat_of(seats: Sequence[dict[str, Any]], player_id: str) -> int | None:
    """Return the seat ``player_id`` sits at, or None."""
    for i, s in enumerate(seats):
        if s.get("player_id") == player_id and s.get("seated"):
            return i
    return None


def joined(
    row: asyncpg.Record, player_id: str, seat: int | None, *, finished: bool = False
) -> list[dict[str, Any]] | None:
    """Return the seats after ``player_id`` joins (at ``seat``, his reserved one, or the first
    open one); None when he already sits there. Refuse with the reason otherwise."""
    seats = _seats(row["seats"])
    sitting = seat_of(seats, player_id)
    if sitting is not None and (seat is None or seat == sitting):
        return None  # a retry, or a second tab: he is there already
    still_waiting(row, finished=finished)
    if sitting is not None:
        raise FriendsRefusal(409, "already_seated", f"you sit at seat {sitting}: leave it first")
    reserved = [
        i for i, s in enumerate(seats) if s["kind"] == RESERVED and s.get("player_id") == player_id
    ]
    if reserved and seat is None:
        seat = reserved[0]
    if seat is None:
        free = [i for i, s in enumerate(seats) if s["kind"] == OPEN and not s.get("seated")]
        if not free:
            raise FriendsRefusal(409, "table_full", "every seat of this table is taken")
        seat = free[0]
    if not 0 <= seat < len(seats):
        raise FriendsRefusal(400, "bad_seat", f"seats are 0..{len(seats) - 1}")
    chosen = seats[seat]
    if chosen["kind"] == BOT:
        raise FriendsRefusal(409, "seat_not_open", f"seat {seat} is a bot's")
    if chosen["kind"] == RESERVED and chosen.get("player_id") != player_id:
        raise FriendsRefusal(409, "seat_reserved", f"seat {seat} is kept for someone else")
    if chosen.get("seated"):
        raise FriendsRefusal(409, "seat_taken", f"seat {seat} was taken a moment ago")
    seats[seat] = {**chosen, "player_id": player_id, "seated": True}
    return seats


def left(row: asyncpg.Record, player_id: str) -> list[dict[str, Any]]:
    """Return the seats after ``player_id`` (not the host) gets up: an open seat opens again,
    a reserved one waits for him again."""
    still_waiting(row)
    seats = _seats(row["seats"])
    sitting = seat_of(seats, player_id)
    if sitting is None:
        raise FriendsRefusal(409, "not_seated", "you do not sit at this table")
    seat = seats[sitting]
    seats[sitting] = {"kind": OPEN} if seat["kind"] == OPEN else {**seat, "seated": False}
    return seats


def host_only(row: asyncpg.Record, player_id: str) -> None:
    """Refuse anyone but the table's host."""
    if row["host"] != player_id:
        raise FriendsRefusal(403, "not_host", "only the table's host may do this")


def swapped(row: asyncpg.Record, a: int, b: int) -> list[dict[str, Any]]:
    """Return the seats with seats ``a`` and ``b`` exchanged (whoever or whatever is there)."""
    still_waiting(row)
    seats = _seats(row["seats"])
    if a == b or not (0 <= a < len(seats) and 0 <= b < len(seats)):
        raise FriendsRefusal(400, "bad_seat", f"swap two different seats of 0..{len(seats) - 1}")
    seats[a], seats[b] = seats[b], seats[a]
    return seats


def filled(row: asyncpg.Record, with_bots: bool) -> list[dict[str, Any]]:
    """Return the seats ready to play: every seat a person's or a bot's (the empty ones bots
    with ``with_bots``); refuse while one is empty otherwise."""
    still_waiting(row)
    seats = _seats(row["seats"])
    empty = [i for i, s in enumerate(seats) if s["kind"] != BOT and not s.get("seated")]
    if empty and not with_bots:
        raise FriendsRefusal(
            409,
            "seats_not_filled",
            f"seats {', '.join(map(str, empty))} are empty: wait, or fill them with bots",
        )
    return [{"kind": BOT} if i in empty else s for i, s in enumerate(seats)]


def players_of(seats: Sequence[dict[str, Any]]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Return the game's players in seat order ("bot:<seat>" for a bot) and its bot seats."""
    bots = tuple(i for i, s in enumerate(seats) if s["kind"] == BOT)
    return tuple(f"bot:{i}" if i in bots else s["player_id"] for i, s in enumerate(seats)), bots


def check_level(level: str) -> None:
    """Refuse a bot level the bots do not play."""
    if level not in LEVELS:
        raise FriendsRefusal(
            400,
            "unknown_bot_level",
            f"unknown bot level {level!r}: choose one of {', '.join(LEVELS)}",
        )


__all__ = [
    "FriendsRefusal",
    "FriendsTable",
    "Seat",
    "by_code",
    "filled",
    "joined",
    "left",
    "lobby",
    "new_code",
    "players_of",
    "swapped",
]
