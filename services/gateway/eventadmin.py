"""`spades events`: an operator's duplicate, Swiss and arena events. `create` a public event
(no host: it starts by itself at its time, sign-up open from ``--signup-minutes`` before;
``--format arena --minutes N``: an arena's games are its rules' whole games, no one-hand
cap), `list` them, `cancel` one before its start.

Public events take no bots (`bots_not_allowed`); an odd pair count at the start leaves out the
last pair entered; fewer than two pairs cancel it. The rows are the gateway's
(`services.gateway.tourneys`); this command writes them as the HTTP API does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from datetime import datetime

import asyncpg
import msgspec

from events.contracts import ladders
from services.gateway import eventsignup, tourneys
from services.gateway.arena import MAX_MINUTES, MIN_MINUTES


def rules_for(ladder: str | None, options: list[str], one_hand: bool = True) -> dict[str, object]:
    """Return a public event's rules: a ladder's, or options over the ranked default; one hand
    a board. Raise ValueError naming the problem."""
    if ladder:
        base: dict[str, object] = dict(ladders.ladder_of(ladder).rules.to_dict())
    else:
        base = dict(ladders.rule_book()["defaults"])  # type: ignore[call-overload]
    for option in options:
        key, _, raw = option.partition("=")
        base[key] = json.loads(raw) if raw not in ("", None) else raw
    rules = {**base, "hand_cap": 1} if one_hand else base
    if int(str(rules.get("players", 4))) != 4:
        raise ValueError("duplicate is partnership Spades: 4 players")
    problem = ladders.rule_problem(rules)
    if problem:
        raise ValueError(problem)
    return rules


def parse_time(text: str) -> float:
    """Return unix seconds of an ISO 8601 time ("2026-12-01T19:00+00:00") or "+MINUTES"."""
    if text.startswith("+"):
        return time.time() + 60 * float(text[1:])
    return datetime.fromisoformat(text).timestamp()


async def _run(args: argparse.Namespace) -> int:
    from events.migrations import database_url

    pool = await asyncpg.create_pool(database_url(), min_size=1, max_size=2)
    try:
        if args.action == "create":
            try:
                arena_event = args.format == tourneys.ARENA
                rules = rules_for(args.ladder, args.rules, one_hand=not arena_event)
                length = args.minutes
                if arena_event != (length is not None) or (
                    length is not None and not MIN_MINUTES <= length <= MAX_MINUTES
                ):
                    raise ValueError(
                        "bad_duration: an arena runs --minutes 1 to 600; other formats have"
                        " rounds, no length"
                    )
                starts_at = parse_time(args.start)
                if args.format == tourneys.SWISS and args.rounds > args.max_pairs - 1:
                    raise ValueError(
                        f"bad_rounds: a Swiss event of {args.max_pairs} pairs plays 1 to"
                        f" {args.max_pairs - 1} rounds"
                    )
            except (ValueError, ladders.UnknownLadder) as exc:
                print(f"spades events: {exc}")
                return 2
            tourney_id = uuid.uuid4()
            async with pool.acquire() as conn, conn.transaction():
                await tourneys.create(
                    conn,
                    tourney_id=tourney_id,
                    name=args.name,
                    host=None,
                    private=False,
                    rules=rules,
                    ladder=args.ladder,
                    boards_per_round=args.boards,
                    rounds=args.rounds,
                    max_pairs=args.max_pairs,
                    starts_at=starts_at,
                    signup_opens_at=starts_at - 60 * args.signup_minutes
                    if args.signup_minutes
                    else time.time(),
                    format=args.format,
                    minutes=args.minutes,
                )
            print(f"event {tourney_id} created: starts {eventsignup.when(starts_at)}")
            return 0
        if args.action == "cancel":
            async with pool.acquire() as conn, conn.transaction():
                row = await tourneys.by_id(conn, args.event_id, lock=True)
                if row["status"] != tourneys.OPEN:
                    print(
                        f"event {args.event_id} is {row['status']}: only an open one is cancelled"
                    )
                    return 1
                await conn.execute(
                    "UPDATE tourneys SET status = 'cancelled', updated_at = now()"
                    " WHERE tourney_id = $1",
                    row["tourney_id"],
                )
                await tourneys.log(conn, row["tourney_id"], "EventCancelled", reason="operator")
            print(f"event {args.event_id} cancelled")
            return 0
        rows = await pool.fetch("SELECT tourney_id FROM tourneys ORDER BY starts_at DESC LIMIT 100")
        shown = [await tourneys.page(pool, str(r["tourney_id"])) for r in rows]
        if args.json:
            print(json.dumps(msgspec.to_builtins([s.event for s in shown]), indent=2))
        for page in shown if not args.json else []:
            e = page.event
            kind = "private" if e.private else "public"
            print(
                f"{e.event_id}  {e.status:9s} {kind:7s} {e.format:9s}"
                f" {e.pairs}/{e.max_pairs} pairs  {e.name}"
            )
        return 0
    except tourneys.EventRefusal as exc:
        print(f"spades events: {exc.code}: {exc.message}")
        return 1
    finally:
        await pool.close()


def run(args: argparse.Namespace) -> int:
    """`spades events ...`: exit code."""
    return asyncio.run(_run(args))
