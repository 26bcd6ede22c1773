"""Entering events: a pair joins or withdraws before the start; an arena's pairs also enter
while it runs, pause and come back.

The rows are `services.gateway.tourneys`'; every function runs in the caller's transaction on
the event's locked row, and a refusal (its own code) leaves everything as it was.

- **Duplicate and Swiss**: the pairs change only while sign-up is open.
- **Arena** (`services.gateway.arena`): a pair may also enter while it runs, until its end
  time; withdrawing from a running arena *pauses* the pair (no new game for it; a game it is
  playing finishes and counts), `resume` brings it back into the pairing. After the end
  time: 409 ``event_over``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from events.contracts.playbans import PlaybanIssued, playban_stream
from events.envelope import REGISTRY
from events.pgstore import Conn
from services.gateway.state import Gateway
from services.gateway.tourneys import (
    ARENA,
    BOT,
    CANCELLED,
    FINISHED,
    OPEN,
    RUNNING,
    EventRefusal,
    Pair,
    log,
    pairs_of,
)


async def running_ban(gateway: Gateway, player_id: str, now: float) -> PlaybanIssued | None:
    """Return the queue ban ``player_id`` is serving now (matchmaking's playban log), if any."""
    stored = await gateway.store.read(playban_stream(player_id))
    for event in reversed([REGISTRY.decode(s) for s in stored]):
        if isinstance(event, PlaybanIssued) and event.ends_at > max(event.at, now):
            return event
    return None


def arena_running(row: asyncpg.Record, now: float) -> bool:
    """Return whether ``row`` is an arena under way before its end time; refuse one past it
    (409 ``event_over``: no new game opens, nobody enters, pauses or comes back)."""
    if row["format"] != ARENA or row["status"] not in (RUNNING, FINISHED):
        return False
    if row["status"] == FINISHED or row["ends_at"] is None or now >= row["ends_at"].timestamp():
        raise EventRefusal(409, "event_over", "this arena is over: no new games, no new pairs")
    return True


def check_signup(row: asyncpg.Record, now: float) -> None:
    """Refuse a change of the pairs once the event started, or before its sign-up opens."""
    if row["status"] == CANCELLED:
        raise EventRefusal(409, "event_cancelled", "this event was cancelled")
    if row["status"] != OPEN:
        raise EventRefusal(409, "event_started", "this event has started: sign-up is closed")
    if now < row["signup_opens_at"].timestamp():
        opens = row["signup_opens_at"].astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        raise EventRefusal(409, "signup_not_open", f"sign-up opens at {opens}")


async def join(
    conn: Conn, row: asyncpg.Record, player: str, partner: str, now: float, arena_now: float
) -> Pair | None:
    """Enter ``player`` with ``partner`` (an account already checked, or `BOT`); return the new
    pair, None when that very pair is in already. Refuse with the reason otherwise. ``now``
    is the wall clock of sign-up, ``arena_now`` the stack's clock an arena's end is on."""
    tourney_id = row["tourney_id"]
    pairs = await pairs_of(conn, tourney_id)
    for p in pairs:
        if (p.player, p.partner) == (player, partner):
            return None  # a retry
    if not arena_running(row, arena_now):
        check_signup(row, now)
    if partner == BOT and not row["private"]:
        raise EventRefusal(
            400, "bots_not_allowed", "bots may fill seats only in private events: name a partner"
        )
    if partner == player:
        raise EventRefusal(400, "malformed", "your partner is another player")
    entered = {name for p in pairs for name in (p.player, p.partner) if name != BOT}
    for name in (player, partner):
        if name in entered:
            who = "you are" if name == player else f"{name} is"
            raise EventRefusal(
                409,
                "already_entered",
                f"{who} already in a pair of this event (a pair plays each board once)",
            )
    if len(pairs) >= row["max_pairs"]:
        raise EventRefusal(409, "event_full", f"all {row['max_pairs']} places are taken")
    number = max((p.pair for p in pairs), default=0) + 1
    await conn.execute(
        "INSERT INTO tourney_pairs (tourney_id, pair, player, partner) VALUES ($1, $2, $3, $4)",
        tourney_id,
        number,
        player,
        partner,
    )
    await log(conn, tourney_id, "PairJoined", pair=number, player=player, partner=partner)
    return Pair(pair=number, player=player, partner=partner)


async def leave(conn: Conn, row: asyncpg.Record, player: str, now: float, arena_now: float) -> Pair:
    """Withdraw the pair ``player`` is in (as player or partner) before the start; pause it in
    a running arena."""
    pairs = await pairs_of(conn, row["tourney_id"])
    mine = next((p for p in pairs if player in (p.player, p.partner)), None)
    if mine is None:
        raise EventRefusal(409, "not_entered", "you are in no pair of this event")
    if arena_running(row, arena_now):
        if not await conn.fetchval(
            "UPDATE tourney_pairs SET paused = true WHERE tourney_id = $1 AND pair = $2"
            " AND NOT paused RETURNING true",
            row["tourney_id"],
            mine.pair,
        ):
            return mine  # paused already: a retry
        await log(conn, row["tourney_id"], "PairPaused", pair=mine.pair, player=player)
        return mine
    check_signup(row, now)
    await conn.execute(
        "DELETE FROM tourney_pairs WHERE tourney_id = $1 AND pair = $2",
        row["tourney_id"],
        mine.pair,
    )
    await log(conn, row["tourney_id"], "PairLeft", pair=mine.pair, player=player)
    return mine


def when(value: float) -> str:
    """Return a unix time as people read it (UTC)."""
    return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d %H:%M UTC")


async def resume(conn: Conn, row: asyncpg.Record, player: str, now: float) -> Pair:
    """Bring the paused pair ``player`` is in back into a running arena's pairing."""
    if row["format"] != ARENA:
        raise EventRefusal(409, "not_an_arena", "only an arena's pairs pause and come back")
    pairs = await pairs_of(conn, row["tourney_id"])
    mine = next((p for p in pairs if player in (p.player, p.partner)), None)
    if mine is None:
        raise EventRefusal(409, "not_entered", "you are in no pair of this event")
    if row["status"] == OPEN:
        raise EventRefusal(409, "not_paused", "your pair is not paused: the arena has not begun")
    arena_running(row, now)
    if not await conn.fetchval(
        "UPDATE tourney_pairs SET paused = false, free_since = now() WHERE tourney_id = $1"
        " AND pair = $2 AND paused RETURNING true",
        row["tourney_id"],
        mine.pair,
    ):
        raise EventRefusal(409, "not_paused", "your pair is not paused")
    await log(conn, row["tourney_id"], "PairResumed", pair=mine.pair, player=player)
    return mine


__all__ = ["arena_running", "check_signup", "join", "leave", "resume", "running_ban", "when"]
