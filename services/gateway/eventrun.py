"""Duplicate and Swiss events running: the start, each round's board games, results, the end.

`driving` runs in every gateway replica (a lifespan task): every ``SPADES_EVENTS_SECONDS`` it
starts the events whose time has come and moves each running event on (`advance`):
a finished board game's points are read from its log (its `HandScored`), the next board of
that table opens, a round over starts the next (a Swiss event's next round is paired then,
by `services.gateway.swissrun`), the last one reveals the seeds; an arena is moved on by
`services.gateway.arenarun`, on the stack's clock (`services.runtime.clock`). One replica
moves an event at a time (its row is taken FOR UPDATE SKIP LOCKED), and opening a board is
safe to repeat (its game id comes from the event, the board and the table). The rows and the
sign-up are `services.gateway.tourneys`'; the pure scoring `services.gateway.duplicate`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated

import asyncpg
import msgspec
from msgspec import Meta

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import Conn
from events.settings import from_environ
from services.gateway import arenarun, duplicate, swissrun
from services.gateway.duplicate import Result
from services.gateway.notices import publish
from services.gateway.state import Gateway, Unavailable, ask
from services.gateway.tourneys import (
    _COLUMNS,
    ARENA,
    BOT,
    OPEN,
    RUNNING,
    SWISS,
    EventStandings,
    _json,
    add_bot_pair,
    cancel_for_want_of_pairs,
    games_of,
    log,
    page,
    pairs_of,
    results_of,
    scores_of,
)
from services.runtime.clock import clock_of


@dataclass(frozen=True, slots=True)
class EventSettings:
    """SPADES_EVENTS_SECONDS: how often a replica looks for events to start or move on."""

    events_seconds: Annotated[float, Meta(gt=0, le=60)] = 1.0


async def start(gateway: Gateway, conn: Conn, row: asyncpg.Record, *, fill_with_bots: bool) -> bool:
    """Start a locked open event: seat its pairs by the movement and open round 1's first
    boards; return False (and cancel it) when too few pairs came. A private event may be
    filled to an even count with a bot pair; a public one leaves out the last pair entered.
    An arena starts by `arenarun.start`."""
    if row["format"] == ARENA:
        now = clock_of(gateway).now()
        return await arenarun.start(gateway, conn, row, now, fill_with_bots=fill_with_bots)
    tourney_id = row["tourney_id"]
    pairs = await pairs_of(conn, tourney_id)
    if len(pairs) % 2 and row["private"] and fill_with_bots:
        pairs.append(await add_bot_pair(conn, tourney_id, pairs))
    elif len(pairs) % 2 and row["format"] != SWISS:  # Swiss gives a bye each round instead
        last = pairs.pop()
        await conn.execute(
            "DELETE FROM tourney_pairs WHERE tourney_id = $1 AND pair = $2", tourney_id, last.pair
        )
        await log(conn, tourney_id, "PairLeft", pair=last.pair, player=last.player, odd=True)
    if len(pairs) < 2:
        await cancel_for_want_of_pairs(conn, tourney_id)
        return False
    # the movement numbers pairs 1..n: map them to the pairs' own numbers
    numbers = [p.pair for p in pairs]
    rounds = min(row["rounds"], len(pairs) - 1)
    if row["format"] == SWISS:  # round 1 now, each next one from the standings after it
        await conn.execute(
            "UPDATE tourneys SET status = 'running', round = 1, rounds = $2, updated_at = now()"
            " WHERE tourney_id = $1",
            tourney_id,
            rounds,
        )
        await log(conn, tourney_id, "EventStarted", pairs=numbers, rounds=rounds)
        await swissrun.pair_next(conn, tourney_id, 1, numbers)
        await log(conn, tourney_id, "RoundStarted", round=1)
        await _open_next(gateway, conn, tourney_id, 1)
        return True
    schedule = duplicate.movement(len(pairs), rounds)
    per_round = row["boards_per_round"]
    seatings = [
        duplicate.Seating(round=s.round, table=s.table, ns=numbers[s.ns - 1], ew=numbers[s.ew - 1])
        for tables in schedule
        for s in tables
    ]
    duplicate.check_schedule(
        [[s for s in seatings if s.round == r] for r in range(1, rounds + 1)], per_round
    )
    await conn.executemany(
        "INSERT INTO tourney_games (tourney_id, board, round, table_no, ns_pair, ew_pair)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        [
            (tourney_id, board, s.round, s.table, s.ns, s.ew)
            for s in seatings
            for board in duplicate.boards_of_round(s.round, per_round)
        ],
    )
    await conn.execute(
        "UPDATE tourneys SET status = 'running', round = 1, rounds = $2, updated_at = now()"
        " WHERE tourney_id = $1",
        tourney_id,
        rounds,
    )
    await log(conn, tourney_id, "EventStarted", pairs=numbers, rounds=rounds)
    await log(conn, tourney_id, "RoundStarted", round=1)
    await _open_next(gateway, conn, tourney_id, 1)
    return True


_table_reply = msgspec.json.Decoder(wire.TableReply)


async def _open_next(gateway: Gateway, conn: Conn, tourney_id: uuid.UUID, round_: int) -> int:
    """Open, at every table of ``round_``, its next board once the one before is over; return
    how many opened."""
    row = await conn.fetchrow("SELECT rules FROM tourneys WHERE tourney_id = $1", tourney_id)
    assert row is not None
    rules = dict(_json(row["rules"]))
    pairs = {p.pair: p for p in await pairs_of(conn, tourney_id)}
    games = [g for g in await games_of(conn, tourney_id) if g.round == round_]
    opened = 0
    for table in sorted({g.table for g in games}):
        mine = sorted((g for g in games if g.table == table), key=lambda g: g.board)
        if any(g.game_id is not None and g.ns_points is None for g in mine):
            continue  # a board is being played here
        waiting = next((g for g in mine if g.game_id is None), None)
        if waiting is None:
            continue
        ns, ew = pairs[waiting.ns_pair], pairs[waiting.ew_pair]
        names = duplicate.seats_of((ns.player, ns.partner), (ew.player, ew.partner))
        players = tuple(f"bot:{s}" if n == BOT else n for s, n in enumerate(names))
        bots = tuple(s for s, n in enumerate(names) if n == BOT)
        seed = await conn.fetchval(
            "SELECT seed FROM tourney_boards WHERE tourney_id = $1 AND board = $2",
            tourney_id,
            waiting.board,
        )
        body = wire.OpenCasual(
            players=players,
            bots=bots,
            command_id=uuid.uuid5(tourney_id, f"board/{waiting.board}/table/{table}"),
            rules=rules,
            unlisted=True,
            board_seed=seed,
        )
        reply = _table_reply.decode(await ask(gateway, gateway.subjects.table_open(), body))
        if not reply.ok or reply.game_id is None:
            raise Unavailable(f"the table did not open board {waiting.board}: {reply.code}")
        await conn.execute(
            "UPDATE tourney_games SET game_id = $4 WHERE tourney_id = $1 AND board = $2"
            " AND table_no = $3",
            tourney_id,
            waiting.board,
            table,
            uuid.UUID(reply.game_id),
        )
        await log(
            conn,
            tourney_id,
            "BoardOpened",
            board=waiting.board,
            table=table,
            game_id=reply.game_id,
            ns=waiting.ns_pair,
            ew=waiting.ew_pair,
        )
        opened += 1
    return opened


async def board_points(gateway: Gateway, game_id: str) -> tuple[int, int] | None:
    """Return a finished board game's points (North-South, East-West), None while it runs.
    A game closed before its hand was scored (every person left) scores 0 to 0."""
    stored = await gateway.store.read(stream_of(game_id))
    if not any(s.type == "GameFinished" for s in stored):  # talk may follow the end
        return None
    for s in stored:
        if s.type == "HandScored":
            scored = REGISTRY.decode(s)
            assert isinstance(scored, wire.HandScored)
            return scored.points[0], scored.points[1]
    return 0, 0


async def advance(gateway: Gateway, event_id: str, now: float) -> bool:
    """Move one event on as far as it can go now (start it, record finished boards, open the
    next ones, finish it); return whether anything changed. One replica at a time: the
    event's row is taken with SKIP LOCKED."""
    async with gateway.pool.acquire() as conn, conn.transaction():
        row = await conn.fetchrow(
            f"SELECT {_COLUMNS} FROM tourneys WHERE tourney_id = $1 FOR UPDATE SKIP LOCKED",
            uuid.UUID(event_id),
        )
        if row is None:
            return False
        if row["status"] == OPEN:
            if now < row["starts_at"].timestamp():
                return False  # its host may start a private one sooner (`POST .../start`)
            await start(gateway, conn, row, fill_with_bots=row["private"])
            return True
        if row["status"] != RUNNING:
            return False
        if row["format"] == ARENA:
            return await arenarun.advance(gateway, conn, row, clock_of(gateway).now())
        return await _run_round(gateway, conn, row)


async def _run_round(gateway: Gateway, conn: Conn, row: asyncpg.Record) -> bool:
    tourney_id, round_ = row["tourney_id"], row["round"]
    games = await games_of(conn, tourney_id)
    changed = False
    for g in games:
        if g.round != round_ or g.game_id is None or g.ns_points is not None:
            continue
        points = await board_points(gateway, g.game_id)
        if points is None:
            continue
        result = Result(g.board, g.table, g.ns_pair, g.ew_pair, *points)
        duplicate.check_result(results_of(games), result)
        await conn.execute(
            "UPDATE tourney_games SET ns_points = $4, ew_points = $5 WHERE tourney_id = $1"
            " AND board = $2 AND table_no = $3",
            tourney_id,
            g.board,
            g.table,
            points[0],
            points[1],
        )
        await log(
            conn,
            tourney_id,
            "BoardResult",
            board=g.board,
            table=g.table,
            game_id=g.game_id,
            ns=g.ns_pair,
            ew=g.ew_pair,
            ns_points=points[0],
            ew_points=points[1],
        )
        changed = True
    if await _open_next(gateway, conn, tourney_id, round_):
        changed = True
    games = await games_of(conn, tourney_id)
    if any(g.ns_points is None for g in games if g.round == round_):
        return changed
    if round_ < row["rounds"]:
        await conn.execute(
            "UPDATE tourneys SET round = $2, updated_at = now() WHERE tourney_id = $1",
            tourney_id,
            round_ + 1,
        )
        if row["format"] == SWISS:
            numbers = [p.pair for p in await pairs_of(conn, tourney_id)]
            await swissrun.pair_next(conn, tourney_id, round_ + 1, numbers)
        await log(conn, tourney_id, "RoundStarted", round=round_ + 1)
        await _open_next(gateway, conn, tourney_id, round_ + 1)
        return True
    seeds = await conn.fetch(
        "UPDATE tourney_boards SET revealed = true WHERE tourney_id = $1 RETURNING board, seed",
        tourney_id,
    )
    await conn.execute(
        "UPDATE tourneys SET status = 'finished', updated_at = now() WHERE tourney_id = $1",
        tourney_id,
    )
    await log(
        conn,
        tourney_id,
        "SeedsRevealed",
        seeds={str(s["board"]): s["seed"] for s in sorted(seeds, key=lambda s: s["board"])},
    )
    standing = duplicate.standings(
        [p.pair for p in await pairs_of(conn, tourney_id)],
        await scores_of(conn, tourney_id, games, row["boards_per_round"]),
    )
    await log(conn, tourney_id, "EventFinished", standings=msgspec.to_builtins(standing))
    return True


async def sealed(pool: asyncpg.Pool, game_id: str) -> bool:
    """Return whether ``game_id`` is a board that another table of its event has still to
    play, or is playing (kept from public reads: its cards are that table's cards)."""
    return bool(
        await pool.fetchval(
            "SELECT 1 FROM tourney_games g JOIN tourneys t USING (tourney_id)"
            " JOIN tourney_games other ON other.tourney_id = g.tourney_id"
            " AND other.board = g.board AND other.table_no <> g.table_no"
            " WHERE g.game_id = $1 AND t.status IN ('open', 'running')"
            " AND other.ns_points IS NULL",
            uuid.UUID(game_id),
        )
    )


async def sealed_among(pool: asyncpg.Pool, game_ids: list[str]) -> set[str]:
    """Return which of ``game_ids`` are `sealed` (one query for a list of games)."""
    rows = await pool.fetch(
        "SELECT DISTINCT g.game_id FROM tourney_games g JOIN tourneys t USING (tourney_id)"
        " JOIN tourney_games other ON other.tourney_id = g.tourney_id"
        " AND other.board = g.board AND other.table_no <> g.table_no"
        " WHERE g.game_id = ANY($1::uuid[]) AND t.status IN ('open', 'running')"
        " AND other.ns_points IS NULL",
        [uuid.UUID(g) for g in game_ids],
    )
    return {str(r["game_id"]) for r in rows}


async def people(pool: asyncpg.Pool | Conn, tourney_id: uuid.UUID) -> tuple[str, ...]:
    """Return everyone an event's change concerns: its host and its pairs' people."""
    host = await pool.fetchval("SELECT host FROM tourneys WHERE tourney_id = $1", tourney_id)
    names = [host] + [n for p in await pairs_of(pool, tourney_id) for n in (p.player, p.partner)]
    return tuple(dict.fromkeys(n for n in names if n and n != BOT))


async def tell(gateway: Gateway, event_id: str) -> None:
    """Push the event's standings to everyone in it (a nudge: the page can be read again)."""
    shown = await page(gateway.pool, event_id)
    message = EventStandings(
        event_id=event_id,
        status=shown.event.status,
        round=shown.event.round,
        standings=shown.standings,
        arena=shown.arena.standings if shown.arena else None,
        ends_at=shown.event.ends_at,
    )
    await publish(gateway, await people(gateway.pool, uuid.UUID(event_id)), message)


async def drive_once(gateway: Gateway) -> int:
    """Advance every open or running event once; return how many changed. An event starts
    by the stack's clock (`services.runtime.clock`: the real time, unless a test moves it)."""
    now = clock_of(gateway).now()
    ids = await gateway.pool.fetch(
        "SELECT tourney_id FROM tourneys WHERE status = 'running'"
        " OR (status = 'open' AND starts_at <= to_timestamp($1))",
        now,
    )
    changed = 0
    for r in ids:
        event_id = str(r["tourney_id"])
        try:
            moved = await advance(gateway, event_id, now)
        except Unavailable as exc:  # the table away: the next pass tries again
            gateway.log.warning("event not advanced", event_id=event_id, error=str(exc))
            continue
        if moved:
            changed += 1
            await tell(gateway, event_id)
    return changed


async def _loop(gateway: Gateway, interval: float) -> None:
    while True:
        try:
            await drive_once(gateway)
        except Exception as exc:  # the database away: events wait, nothing else
            gateway.log.warning("events not driven", error=type(exc).__name__)
        await asyncio.sleep(interval)


@contextlib.asynccontextmanager
async def driving(gateway: Gateway) -> AsyncIterator[None]:
    """Drive the events in the background while the app runs (every
    ``SPADES_EVENTS_SECONDS``, 1 s by default)."""
    interval = from_environ(EventSettings).events_seconds
    task = asyncio.create_task(_loop(gateway, interval))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


__all__ = [
    "EventSettings",
    "advance",
    "drive_once",
    "driving",
    "sealed",
    "sealed_among",
    "start",
    "tell",
]
