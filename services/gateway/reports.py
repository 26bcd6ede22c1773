"""`spades reports`: the operator's queue of reported players and messages, each with the game
and the talk around it (`services.gateway.social.report`).

    spades reports              the open reports, oldest first, each with its context
    spades reports --all        closed ones too
    spades reports --close 12   mark report 12 dealt with
    spades reports --json       the same as JSON

A reported message shows the talk of its game around it (`CONTEXT` messages each side), the
reported one marked ``>>``; a reported player with a game shows what he said there. Everything
said is shown whatever its audience was: the operator reads the record, not a seat's view.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict, dataclass

import asyncpg

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.contracts.talk import Talked, phrase
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from services.gateway import social

CONTEXT = 5
"""Messages shown before and after a reported one."""


@dataclass(frozen=True)
class Line:
    """One thing said at the reported game."""

    seq: int
    player_id: str
    to: str
    said: str
    reported: bool


@dataclass(frozen=True)
class InContext:
    """A report and the talk of its game around it."""

    report: social.Report
    ladder: str | None
    rated: bool | None
    talk: list[Line]


async def in_context(pool: asyncpg.Pool, report: social.Report) -> InContext:
    """Return a report with its game's talk around the reported message (or by the player)."""
    if report.game_id is None:
        return InContext(report=report, ladder=None, rated=None, talk=[])
    stored = await PostgresEventStore(pool).read(stream_of(report.game_id))
    events = [(s.version, REGISTRY.decode(s)) for s in stored]
    opened = next((e for _, e in events if isinstance(e, wire.TableOpened)), None)
    players = opened.players if opened else ()
    said = [
        Line(
            seq=seq,
            player_id=players[e.seat] if e.seat < len(players) else str(e.seat),
            to=e.to,
            said=phrase(e),
            reported=seq == report.seq,
        )
        for seq, e in events
        if isinstance(e, Talked)
    ]
    if report.seq is not None:
        at = next((i for i, line in enumerate(said) if line.reported), None)
        said = [] if at is None else said[max(0, at - CONTEXT) : at + CONTEXT + 1]
    else:
        said = [line for line in said if line.player_id == report.reported][-2 * CONTEXT :]
    return InContext(
        report=report,
        ladder=opened.ladder if opened else None,
        rated=opened.rated if opened else None,
        talk=said,
    )


def render(found: list[InContext]) -> str:
    """Return the queue as text for an operator."""
    if not found:
        return "no open reports\n"
    out = []
    for item in found:
        r = item.report
        state = "closed" if r.closed else "open"
        out.append(
            f"#{r.report_id} [{state}] {r.created_at} {r.reporter} reports {r.reported}:"
            f" {r.reason}{f' ({r.note})' if r.note else ''}"
        )
        if r.game_id is not None:
            kind = "rated" if item.rated else "unrated"
            out.append(f"  game {r.game_id} ({item.ladder}, {kind})")
        for line in item.talk:
            mark = ">>" if line.reported else "  "
            # json.dumps: the text is shown escaped, never as terminal control sequences
            out.append(
                f"  {mark} {line.seq:5d} {line.player_id} to {line.to}: {json.dumps(line.said)}"
            )
    return "\n".join(out) + "\n"


async def _run(args: argparse.Namespace) -> int:
    from events.migrations import database_url

    pool = await asyncpg.create_pool(database_url(), min_size=1, max_size=2)
    try:
        if args.close is not None:
            closed = await social.close_report(pool, args.close)
            print(f"report {args.close} {'closed' if closed else 'was not open'}")
            return 0 if closed else 1
        found = [
            await in_context(pool, r) for r in await social.reports(pool, include_closed=args.all)
        ]
    finally:
        await pool.close()
    if args.json:
        print(json.dumps([asdict(f) for f in found], indent=2))
    else:
        print(render(found), end="")
    return 0


def run(args: argparse.Namespace) -> int:
    """`spades reports`: print the operator's queue of reports (or close one); exit code."""
    return asyncio.run(_run(args))
