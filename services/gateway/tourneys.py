"""Duplicate events: sign-up, the boards' committed seeds, the games of each round, results.

Where this lives, and why the gateway. An event is, like a friends' table, a meeting of
accounts before and between games: who entered with whom, when it starts, which games its
boards became. The games themselves are the table service's, opened with `OpenCasual` as a
friends' table is (one hand, ``hand_cap`` 1, dealt from the board's seed with no client
contribution), and live in the event log; the gateway already holds the accounts, the blocks
and the friends' tables, reads finished games from the log, and tells players over the
WebSocket. Matchmaking owns queues of strangers paired by rating, which an event is not.
The event's rows are the gateway's own SQL (migration 41): ``tourneys`` (one row an event,
every change under its lock), ``tourney_pairs``, ``tourney_boards`` (seed and commitment),
``tourney_games`` (a board at a table, its game and result; one result per pair and board
by two unique keys) and ``tourney_log``, the event's audit trail as events in order
(EventCreated, BoardsCommitted, PairJoined, PairLeft, EventStarted, RoundStarted,
BoardOpened, BoardResult, SeedsRevealed, EventFinished, EventCancelled; an arena's
ArenaGameOpened, ArenaGameResult, PairPaused, PairResumed). An arena (migration 43) keeps
its games in ``tourney_arena_games`` (`services.gateway.arenarows`): their deals are no
duplicate boards, so nothing of them is sealed. Sign-up is `services.gateway.eventsignup`.

The audit log is the gateway's own table rather than a stream of the event store: the relay
publishes every stream to JetStream for consumers that know games, ratings and queues, and
an event's log has one reader, its page (`GET /api/events/{id}/log`). The pure part
(movement, matchpoints, IMPs) is `services.gateway.duplicate`; running an event (the
driver) is `services.gateway.eventrun`.

Hidden information: a board's cards are the same at every table, so a finished board game
would tell a player at another table what he holds. Until the event is over its games stay
out of every public read (`sealed`: the game routes answer 403 `board_in_play`), they are
unlisted, and the seeds stay in this table, published as their SHA-256 only.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg
import msgspec

from events.errors import Refusal
from events.pgstore import Conn
from services.gateway import arenarows, duplicate, swiss
from services.gateway.arena import ArenaStanding
from services.gateway.arenarows import ArenaView
from services.gateway.duplicate import Result
from services.gateway.protocol import _Out

OPEN, RUNNING, FINISHED, CANCELLED = "open", "running", "finished", "cancelled"
DUPLICATE, SWISS, ARENA = "duplicate", "swiss", "arena"
FORMATS = (DUPLICATE, SWISS, ARENA)
BOT = "bot:"
"""A partner (or a whole pair, in a private event) played by a bot: no account's name (the
API's "bot" becomes it), so an account named "bot" is never taken for one."""
_NAMESPACE = uuid.UUID("5ade5000-0000-4000-8000-0000000e7e27")
_COLUMNS = (
    "tourney_id, name, format, host, private, rules, ladder, boards_per_round, rounds,"
    " max_pairs, starts_at, signup_opens_at, status, round, created_at, minutes, ends_at"
)


class EventRefusal(Refusal):
    """An event request refused: ``code`` for programs, the message for people; nothing
    changed (the transaction it ran in rolls back)."""

    def __init__(self, status: int, code: str, message: str, ends_at: float | None = None) -> None:
        super().__init__(code, message)
        self.status = status
        self.ends_at = ends_at


class Pair(msgspec.Struct, frozen=True, kw_only=True):
    """A pair of the event: its number, its player and partner (`BOT`, "bot:", for a bot)."""

    pair: int
    player: str
    partner: str


class Board(msgspec.Struct, frozen=True, kw_only=True):
    """A board: the SHA-256 of its seed from the start, the seed itself once the event is over."""

    board: int
    round: int
    commitment: str
    seed: str | None = None


class BoardGame(msgspec.Struct, frozen=True, kw_only=True):
    """A board at a table: who sat North-South and East-West, its game, its points."""

    board: int
    round: int
    table: int
    ns_pair: int
    ew_pair: int
    game_id: str | None = None
    ns_points: int | None = None
    ew_points: int | None = None


class EventSummary(msgspec.Struct, frozen=True, kw_only=True):
    """An event as a list shows it."""

    event_id: str
    name: str
    format: str
    host: str | None
    private: bool
    status: str
    """``open`` (sign-up), ``running``, ``finished`` or ``cancelled``."""
    starts_at: float
    signup_opens_at: float
    boards_per_round: int
    rounds: int
    max_pairs: int
    pairs: int
    round: int
    minutes: int | None = None
    """An arena's length in minutes."""
    ends_at: float | None = None
    """When a running arena stops pairing (its games then finish and count)."""


class EventPage(msgspec.Struct, frozen=True, kw_only=True):
    """An event in full: its settings, pairs, boards (commitments; seeds after the end), the
    games of each board, the standings and every pair's score on every board with its
    arithmetic."""

    event: EventSummary
    rules: dict[str, Any]
    pairs: list[Pair]
    boards: list[Board]
    games: list[BoardGame]
    standings: list[duplicate.Standing]
    """Duplicate and Swiss; an arena's are ``arena.standings``."""
    scores: list[duplicate.BoardScore]
    arena: ArenaView | None = None


class LogEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of an event's audit log."""

    seq: int
    type: str
    at: float
    body: dict[str, Any]


class EventStandings(_Out, frozen=True, tag="event_standings"):
    """An event you play in moved: a board result came in, a round or the event started or
    ended. ``standings`` as `GET /api/events/{event_id}` ranks them; read it for the rest."""

    event_id: str
    status: str
    round: int
    standings: list[duplicate.Standing]
    arena: list[ArenaStanding] | None = None
    """An arena's standings (its points), ``standings`` then empty."""
    ends_at: float | None = None


def event_id_of(creator: str, command_id: uuid.UUID) -> uuid.UUID:
    """Return the id of the event ``creator`` creates with ``command_id`` (a retry finds it)."""
    return uuid.uuid5(_NAMESPACE, f"{creator}\n{command_id}")


def _json(column: Any) -> Any:
    return msgspec.json.decode(column) if isinstance(column, str | bytes) else column


def summary(row: asyncpg.Record, pairs: int) -> EventSummary:
    """Return an event row as a list shows it."""
    return EventSummary(
        event_id=str(row["tourney_id"]),
        name=row["name"],
        format=row["format"],
        host=row["host"],
        private=row["private"],
        status=row["status"],
        starts_at=row["starts_at"].timestamp(),
        signup_opens_at=row["signup_opens_at"].timestamp(),
        boards_per_round=row["boards_per_round"],
        rounds=row["rounds"],
        max_pairs=row["max_pairs"],
        pairs=pairs,
        round=row["round"],
        minutes=row["minutes"],
        ends_at=None if row["ends_at"] is None else row["ends_at"].timestamp(),
    )


async def log(conn: Conn, tourney_id: uuid.UUID, kind: str, **body: Any) -> None:
    """Append one entry to the event's audit log (under the event's lock)."""
    await conn.execute(
        "INSERT INTO tourney_log (tourney_id, seq, type, body) SELECT $1,"
        " coalesce(max(seq), 0) + 1, $2, $3::jsonb FROM tourney_log WHERE tourney_id = $1",
        tourney_id,
        kind,
        msgspec.json.encode(body).decode(),
    )


async def create(
    conn: Conn,
    *,
    tourney_id: uuid.UUID,
    name: str,
    host: str | None,
    private: bool,
    rules: dict[str, Any],
    ladder: str | None,
    boards_per_round: int,
    rounds: int,
    max_pairs: int,
    starts_at: float,
    signup_opens_at: float,
    format: str = "duplicate",
    minutes: int | None = None,
) -> asyncpg.Record:
    """Create an event open for sign-up and commit its boards' seeds; return its row.
    ``format`` is ``duplicate`` (a fixed movement), ``swiss`` (`services.gateway.swiss`) or
    ``arena`` (``minutes`` long, no boards: `services.gateway.arena`)."""
    row = await conn.fetchrow(
        "INSERT INTO tourneys (tourney_id, name, format, host, private, rules, ladder,"
        " boards_per_round, rounds, max_pairs, starts_at, signup_opens_at, status, minutes)"
        " VALUES ($1, $2, $12, $3, $4, $5::jsonb, $6, $7, $8, $9, to_timestamp($10),"
        f" to_timestamp($11), 'open', $13) RETURNING {_COLUMNS}",
        tourney_id,
        name,
        host,
        private,
        msgspec.json.encode(rules).decode(),
        ladder,
        boards_per_round,
        rounds,
        max_pairs,
        starts_at,
        signup_opens_at,
        format,
        minutes,
    )
    assert row is not None
    seeds = [
        duplicate.new_seed() for _ in range(0 if format == ARENA else boards_per_round * rounds)
    ]
    await conn.executemany(
        "INSERT INTO tourney_boards (tourney_id, board, seed, commitment) VALUES ($1, $2, $3, $4)",
        [(tourney_id, b, s, duplicate.commitment_of(s)) for b, s in enumerate(seeds, 1)],
    )
    await log(
        conn,
        tourney_id,
        "EventCreated",
        name=name,
        format=format,
        host=host,
        private=private,
        rules=rules,
        boards_per_round=boards_per_round,
        rounds=rounds,
        max_pairs=max_pairs,
        starts_at=starts_at,
        signup_opens_at=signup_opens_at,
        **({"minutes": minutes} if format == ARENA else {}),
    )
    if seeds:
        await log(
            conn,
            tourney_id,
            "BoardsCommitted",
            commitments=[duplicate.commitment_of(s) for s in seeds],
        )
    return row


async def by_id(conn: Conn | asyncpg.Pool, event_id: str, *, lock: bool = False) -> asyncpg.Record:
    """Return an event by id (locked for a change with ``lock``); refuse an unknown one."""
    try:
        tourney_id = uuid.UUID(event_id)
    except ValueError:
        raise EventRefusal(404, "unknown_event", f"no event {event_id[:40]!r}") from None
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM tourneys WHERE tourney_id = $1" + (" FOR UPDATE" if lock else ""),
        tourney_id,
    )
    if row is None:
        raise EventRefusal(404, "unknown_event", f"no event {event_id[:40]!r}")
    return row


async def pairs_of(conn: Conn | asyncpg.Pool, tourney_id: uuid.UUID) -> list[Pair]:
    """Return the event's pairs by number."""
    rows = await conn.fetch(
        "SELECT pair, player, partner FROM tourney_pairs WHERE tourney_id = $1 ORDER BY pair",
        tourney_id,
    )
    return [Pair(pair=r["pair"], player=r["player"], partner=r["partner"]) for r in rows]


async def add_bot_pair(conn: Conn, tourney_id: uuid.UUID, pairs: list[Pair]) -> Pair:
    """Enter a pair of two bots after ``pairs`` (a private event filled to an even count)."""
    number = max(p.pair for p in pairs) + 1
    await conn.execute(
        "INSERT INTO tourney_pairs (tourney_id, pair, player, partner) VALUES ($1, $2, $3, $3)",
        tourney_id,
        number,
        BOT,
    )
    await log(conn, tourney_id, "PairJoined", pair=number, player=BOT, partner=BOT)
    return Pair(pair=number, player=BOT, partner=BOT)


async def cancel_for_want_of_pairs(conn: Conn, tourney_id: uuid.UUID) -> None:
    """Cancel an event that reached its start with fewer than two pairs."""
    await conn.execute(
        "UPDATE tourneys SET status = 'cancelled', updated_at = now() WHERE tourney_id = $1",
        tourney_id,
    )
    await log(conn, tourney_id, "EventCancelled", reason="fewer than two pairs entered")


async def games_of(conn: Conn | asyncpg.Pool, tourney_id: uuid.UUID) -> list[BoardGame]:
    """Return every board at every table of the event, board by board."""
    rows = await conn.fetch(
        "SELECT board, round, table_no, ns_pair, ew_pair, game_id, ns_points, ew_points"
        " FROM tourney_games WHERE tourney_id = $1 ORDER BY board, table_no",
        tourney_id,
    )
    return [
        BoardGame(
            board=r["board"],
            round=r["round"],
            table=r["table_no"],
            ns_pair=r["ns_pair"],
            ew_pair=r["ew_pair"],
            game_id=None if r["game_id"] is None else str(r["game_id"]),
            ns_points=r["ns_points"],
            ew_points=r["ew_points"],
        )
        for r in rows
    ]


def results_of(games: Sequence[BoardGame]) -> list[Result]:
    """Return the boards played to the end."""
    return [
        Result(
            board=g.board,
            table=g.table,
            ns=g.ns_pair,
            ew=g.ew_pair,
            ns_points=g.ns_points,
            ew_points=g.ew_points,
        )
        for g in games
        if g.ns_points is not None and g.ew_points is not None
    ]


async def byes_of(conn: Conn | asyncpg.Pool, tourney_id: uuid.UUID) -> dict[int, int]:
    """Return a Swiss event's byes so far: round -> the pair that sat out (its log's
    RoundPaired entries)."""
    rows = await conn.fetch(
        "SELECT body FROM tourney_log WHERE tourney_id = $1 AND type = 'RoundPaired'", tourney_id
    )
    byes: dict[int, int] = {}
    for r in rows:
        body = dict(_json(r["body"]))
        if body.get("bye") is not None:
            byes[int(body["round"])] = int(body["bye"])
    return byes


async def scores_of(
    conn: Conn | asyncpg.Pool, tourney_id: uuid.UUID, games: Sequence[BoardGame], per_round: int
) -> list[duplicate.BoardScore]:
    """Return every pair's score on every board played, and a Swiss bye's average."""
    scores = duplicate.board_scores(results_of(games))
    byes = await byes_of(conn, tourney_id)
    return scores + swiss.bye_scores(byes, scores, per_round) if byes else scores


async def page(pool: asyncpg.Pool, event_id: str) -> EventPage:
    """Return an event in full, standings computed from its results."""
    row = await by_id(pool, event_id)
    tourney_id = row["tourney_id"]
    pairs = await pairs_of(pool, tourney_id)
    games = await games_of(pool, tourney_id)
    boards = await pool.fetch(
        "SELECT board, seed, commitment, revealed FROM tourney_boards WHERE tourney_id = $1"
        " ORDER BY board",
        tourney_id,
    )
    per_round = row["boards_per_round"]
    scores = await scores_of(pool, tourney_id, games, per_round)
    if row["format"] == ARENA:
        shown, _ = await arenarows.view(pool, row, [p.pair for p in pairs])
        return EventPage(
            event=summary(row, len(pairs)),
            rules=dict(_json(row["rules"])),
            pairs=pairs,
            boards=[],
            games=[],
            standings=[],
            scores=[],
            arena=shown,
        )
    return EventPage(
        event=summary(row, len(pairs)),
        rules=dict(_json(row["rules"])),
        pairs=pairs,
        boards=[
            Board(
                board=b["board"],
                round=(b["board"] - 1) // per_round + 1,
                commitment=b["commitment"],
                seed=b["seed"] if b["revealed"] else None,
            )
            for b in boards
        ],
        games=games,
        standings=duplicate.standings([p.pair for p in pairs], scores),
        scores=scores,
    )


async def listing(pool: asyncpg.Pool, player_id: str, limit: int = 50) -> list[EventSummary]:
    """Return the public events not over (soonest first) and the caller's own events."""
    rows = await pool.fetch(
        f"SELECT {_COLUMNS}, (SELECT count(*) FROM tourney_pairs p"
        " WHERE p.tourney_id = t.tourney_id) AS pairs FROM tourneys t"
        " WHERE (NOT private AND status IN ('open', 'running'))"
        " OR host = $1 OR EXISTS (SELECT 1 FROM tourney_pairs p WHERE p.tourney_id ="
        " t.tourney_id AND (p.player = $1 OR p.partner = $1))"
        " ORDER BY starts_at DESC LIMIT $2",
        player_id,
        limit,
    )
    return [summary(r, r["pairs"]) for r in rows]


async def audit(pool: asyncpg.Pool, event_id: str) -> list[LogEntry]:
    """Return the event's audit log in order."""
    row = await by_id(pool, event_id)
    rows = await pool.fetch(
        "SELECT seq, type, body, at FROM tourney_log WHERE tourney_id = $1 ORDER BY seq",
        row["tourney_id"],
    )
    return [
        LogEntry(seq=r["seq"], type=r["type"], at=r["at"].timestamp(), body=dict(_json(r["body"])))
        for r in rows
    ]


__all__ = [
    "BOT",
    "EventPage",
    "EventRefusal",
    "EventStandings",
    "EventSummary",
    "create",
    "page",
]
