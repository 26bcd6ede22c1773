"""Quitters pay: offences at rated games recorded, queue bans that escalate, and their refusal.

    ev.game.*.GameFinished (rated) ──▶ consumer `matchmaking-playbans` ──▶ read the game's
        stream: SeatAbandoned (left or timed out), TurnTimedOut per seat
    ──▶ per offender, one transaction with the consumer's position:
        PlaybanIssued appended to `playban-<player>` + a `matchmaking_playbans` row

The rules (what counts, the steps, the window) are `events/contracts/playbans.py`. The time
of an offence and of a join is `services.runtime.clock` (a test moves it with
SPADES_CLOCK_FILE). `refusal` answers a join while a ban runs: code ``playban``, the reason,
the end (`Reply.ends_at`). `spades playbans` lists the offences for operators.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
from collections.abc import Coroutine
from typing import Any

import asyncpg

from events.consumer import Received, Unprocessable
from events.contracts import game as wire
from events.contracts.matchmaking import Reply
from events.contracts.playbans import (
    CLOCK_TIMEOUTS,
    REASONS,
    WINDOW_DAYS,
    PlaybanIssued,
    ban_seconds,
    playban_stream,
)
from events.envelope import REGISTRY, Metadata
from events.pgstore import Conn, PostgresEventStore, append_with
from events.subjects import split_stream_id
from services.runtime.clock import Clock, clock_of
from services.runtime.service import Runtime

__all__ = ["CONSUMER", "offenders", "record", "refusal", "run", "start"]

CONSUMER = "matchmaking-playbans"
BOT_PREFIX = "bot:"
_clock = Clock()


def offenders(events: list[Any]) -> dict[str, str]:
    """Return the offenders of a finished rated game's events: player id -> reason."""
    opened = next(e for e in events if isinstance(e, wire.TableOpened))
    found: dict[str, str] = {}
    timeouts: dict[int, int] = {}
    for event in events:
        if isinstance(event, wire.SeatAbandoned):
            found[event.player_id] = "left" if event.left else "abandoned"
        elif isinstance(event, wire.TurnTimedOut):
            timeouts[event.seat] = timeouts.get(event.seat, 0) + 1
        elif isinstance(event, wire.GameFinished):  # the seats a bot took over, in any case
            for seat in event.abandoned:
                if 0 <= seat < len(opened.players):
                    found.setdefault(opened.players[seat], "abandoned")
    for seat, count in timeouts.items():
        player = opened.players[seat]
        if count >= CLOCK_TIMEOUTS and player not in found:
            found[player] = "clock"
    return {p: r for p, r in found.items() if not p.startswith(BOT_PREFIX)}


async def record(conn: Conn, received: Received, store: PostgresEventStore, now: float) -> int:
    """Record the offences of one GameFinished (inside the consumer's transaction); return
    how many. Unrated games and games nobody left record nothing."""
    finished = received.payload
    if not isinstance(finished, wire.GameFinished):
        raise Unprocessable(f"expected GameFinished, got {received.event.type}")
    category, game_id = split_stream_id(received.event.stream_id)
    if category != "game":
        raise Unprocessable(f"GameFinished from stream {received.event.stream_id!r}")
    if not finished.rated:
        return 0
    events = [REGISTRY.decode(e) for e in await store.read(received.event.stream_id)]
    try:
        found = offenders(events)
    except StopIteration:
        raise Unprocessable(f"game {game_id}: no TableOpened") from None
    for player, reason in sorted(found.items()):
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"playban:{player}")
        if await conn.fetchval(
            "SELECT 1 FROM matchmaking_playbans WHERE player_id = $1 AND game_id = $2",
            player,
            game_id,
        ):
            continue  # recorded already (a replay of the game's end by another route)
        version = await conn.fetchval(
            "SELECT count(*) FROM matchmaking_playbans WHERE player_id = $1", player
        )
        recent = await conn.fetchval(
            "SELECT count(*) FROM matchmaking_playbans WHERE player_id = $1 AND issued_at > $2",
            player,
            now - WINDOW_DAYS * 86_400.0,
        )
        offence = recent + 1
        issued = PlaybanIssued(
            player_id=player,
            game_id=game_id,
            ladder=finished.ladder,
            reason=reason,
            offence=offence,
            at=now,
            ends_at=now + ban_seconds(offence),
        )
        metadata = Metadata(causation_id=received.event.event_id, actor="matchmaking")
        await append_with(
            conn, playban_stream(player), version, [REGISTRY.new_event(issued, metadata)]
        )
        await conn.execute(
            "INSERT INTO matchmaking_playbans (player_id, game_id, ladder, reason, offence,"
            " issued_at, ends_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            player,
            game_id,
            finished.ladder,
            reason,
            offence,
            now,
            issued.ends_at,
        )
    return len(found)


def _when(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _length(seconds: float) -> str:
    if seconds >= 86_400:
        return f"{seconds / 86_400:g} day" + ("s" if seconds > 86_400 else "")
    if seconds >= 3_600:
        return f"{seconds / 3_600:g} hour" + ("s" if seconds > 3_600 else "")
    return f"{max(1, round(seconds / 60))} min"


async def refusal(pool: asyncpg.Pool, player: str) -> Reply | None:
    """Return the refusal of a join while a ban of ``player`` runs, else None."""
    now = _clock.now()
    row = await pool.fetchrow(
        "SELECT reason, offence, ends_at FROM matchmaking_playbans"
        " WHERE player_id = $1 AND ends_at > $2 ORDER BY ends_at DESC LIMIT 1",
        player,
        now,
    )
    if row is None:
        return None
    why = REASONS.get(row["reason"], row["reason"])
    return Reply(
        ok=False,
        code="playban",
        ends_at=row["ends_at"],
        message=f"{player} may not queue until {_when(row['ends_at'])}"
        f" ({_length(row['ends_at'] - now)} from now): {why}"
        f" (offence {row['offence']} in {WINDOW_DAYS:g} days)",
    )


def start(rt: Runtime) -> Coroutine[Any, Any, None]:
    """Use the runtime's clock, and return the consumer loop of offences."""
    global _clock
    _clock = clock_of(rt)

    async def handle(conn: Conn, received: Received) -> None:
        found = await record(conn, received, rt.store, _clock.now())
        if found:
            rt.log.info("playban offences recorded", offenders=found)

    return rt.consume(CONSUMER, rt.subjects.game_finished(), handle, ack_wait=30.0)


async def _list(args: argparse.Namespace) -> int:
    from events.migrations import database_url

    pool = await asyncpg.create_pool(database_url(), min_size=1, max_size=2)
    try:
        now = Clock(os.environ.get("SPADES_CLOCK_FILE", "")).now()  # the stack's clock
        rows = await pool.fetch(
            "SELECT player_id, game_id, ladder, reason, offence, issued_at, ends_at"
            " FROM matchmaking_playbans WHERE issued_at > $1 AND ($2 = '' OR player_id = $2)"
            " ORDER BY issued_at DESC, player_id",
            now - args.days * 86_400.0,
            args.player or "",
        )
    finally:
        await pool.close()
    if args.json:
        print(json.dumps([dict(r) | {"active": r["ends_at"] > now} for r in rows], indent=2))
        return 0
    print(f"offences at rated games in the last {args.days:g} days: {len(rows)}")
    for r in rows:
        cost = (
            "warning"
            if r["ends_at"] <= r["issued_at"]
            else f"banned {_length(r['ends_at'] - r['issued_at'])} until {_when(r['ends_at'])}"
            + (" (running)" if r["ends_at"] > now else "")
        )
        print(
            f"  {_when(r['issued_at'])}  {r['player_id']}: {r['reason']} on {r['ladder']}"
            f" (game {r['game_id']}), offence {r['offence']}: {cost}"
        )
    return 0


def run(args: argparse.Namespace) -> int:
    """`spades playbans`: print the offences and bans of the window; exit code."""
    return asyncio.run(_list(args))
