"""Fair play on the ranked ladder: who may not sit together, and the record an operator reads.

Policy (the operator guide, deploy/README.md, states it too):

- The gateway records a *sighting* of an account at each login and each ranked-queue join:
  its client address (the TCP peer, or the forwarded address from a proxy listed in
  SPADES_TRUSTED_PROXIES) and, when the client sends one, its device token (header
  `X-Spades-Device`, a random value the browser client keeps in localStorage; stored only as
  its sha256). Migration 10, table `fairplay_sightings`.
- Two accounts seen at one address or one device within `SPADES_FAIRPLAY_DAYS` (7) of each
  other are *linked*. Linked accounts are never seated at one ranked table, as partners or
  as opponents: matchmaking reads the links when a player joins (`linked_accounts`) and
  pairing skips any group that holds a linked pair. They still play, with other people; a
  household sharing one address waits for other players, it is not refused.
- A window of 0 turns linking off (a LAN tournament, or tests where every client runs on
  one machine); the sightings are still recorded and reported.
- Sightings older than the window are deleted by `spades fairplay --prune` (run it daily,
  e.g. as a CronJob): an address is personal data, kept no longer than the rule needs it.
- `spades fairplay` prints the record, like lichess's fair-play reports: linked accounts
  (address or device, how many accounts, when), and pairs of accounts that keep meeting on
  the ladder with one-sided results (opponents in at least `--min-games` (3) rated games of
  the window, one side winning at least `--one-sided` (0.8) of them), the pattern of
  win-trading and rating farming; and partners of whom one keeps abandoning (his seat taken
  over by a bot in at least `--min-games` rated games of the window they played together):
  the abandoner's rating takes the partnership's loss in full, his partner's does not move
  (`services.rating.model`), so a pair could shield one account by the other timing out
  whenever they are losing. An abandonment is *while losing* when the abandoner's side was
  behind on score when his seat went to the bot (the totals of the last `HandScored` before
  the game's `SeatAbandoned`; level, or before any hand is scored, is not behind); the record
  says how many of each pair's abandonments came while losing, and names apart the pairs
  with at least `--min-losing` (3) abandonments while losing in the window: the pattern of
  a shield (`abandoning_losing`). It decides nothing by itself: an operator reads it.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import hashlib
import itertools
import json
from collections import Counter
from dataclasses import asdict, dataclass, field

import asyncpg
import msgspec

from events.contracts import game as wire
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from services.runtime.config import Settings

WINDOW_DAYS = 7.0
MIN_LOSING = 3
"""Abandonments while losing that name a pair in `Report.abandoning_losing` (`--min-losing`)."""
DEVICE_HEADER = "x-spades-device"
MAX_DEVICE_CHARS = 128


def window_days(settings: Settings | None = None) -> float:
    """Return the fair-play window in days (SPADES_FAIRPLAY_DAYS, default 7)."""
    return max(0.0, (settings or Settings.from_env()).fairplay_days)


def device_value(token: str | None) -> str | None:
    """Return what is stored of a client's device token (its sha256), or None without one."""
    if not token or len(token) > MAX_DEVICE_CHARS or not token.isprintable():
        return None
    return hashlib.sha256(token.encode()).hexdigest()


async def record_sighting(
    pool: asyncpg.Pool, player_id: str, address: str | None, device: str | None
) -> None:
    """Record that ``player_id`` was seen at ``address`` and with device token ``device``."""
    rows = [("address", address)] if address else []
    stored = device_value(device)
    if stored:
        rows.append(("device", stored))
    if not rows:
        return
    await pool.executemany(
        "INSERT INTO fairplay_sightings (player_id, kind, value) VALUES ($1, $2, $3)"
        " ON CONFLICT (kind, value, player_id) DO UPDATE SET last_seen = now()",
        [(player_id, kind, value) for kind, value in rows],
    )


_LINKED_SQL = """
SELECT DISTINCT other.player_id
FROM fairplay_sightings AS mine
JOIN fairplay_sightings AS other
  ON other.kind = mine.kind AND other.value = mine.value AND other.player_id <> mine.player_id
WHERE mine.player_id = $1
  AND mine.last_seen > now() - $2::float8 * interval '1 day'
  AND other.last_seen > now() - $2::float8 * interval '1 day'
"""


async def linked_accounts(pool: asyncpg.Pool, player_id: str, days: float) -> set[str]:
    """Return the accounts seen at an address or device of ``player_id`` within ``days``
    (none when ``days`` is 0: linking is off)."""
    if days <= 0:
        return set()
    return {r["player_id"] for r in await pool.fetch(_LINKED_SQL, player_id, days)}


# -- the operator's record ----------------------------------------------------------------------


@dataclass(frozen=True)
class SharedSighting:
    """Accounts seen at one address or device within the window."""

    kind: str
    value: str
    accounts: list[str]
    first_seen: str
    last_seen: str


@dataclass(frozen=True)
class Meeting:
    """Two accounts that met as opponents in rated games, and how one-sided it went."""

    players: list[str]
    games: int
    wins: list[int]
    """Games each of ``players`` won against the other."""


@dataclass(frozen=True)
class Abandoning:
    """Partners in rated games, one of whom (``quitter``) keeps leaving his seat to a bot."""

    quitter: str
    partner: str
    games: int
    """Rated games the two played as partners in the window."""
    abandoned: int
    """Of those, the games ``quitter`` abandoned and ``partner`` did not."""
    while_losing: int = 0
    """Of those abandonments, the ones made while their side was behind on score."""


@dataclass(frozen=True)
class Report:
    """What `spades fairplay` prints."""

    window_days: float
    shared: list[SharedSighting]
    one_sided: list[Meeting]
    abandoning: list[Abandoning]
    abandoning_losing: list[Abandoning] = field(default_factory=list)
    """Partners of whom one abandoned at least ``min_losing`` times while losing."""


class _Finished(msgspec.Struct):
    winner: int
    rated: bool = False
    players: list[str] = []
    abandoned: list[int] = []


def behind_at_abandonment(events: list[object], seat: int, sides: int) -> bool:
    """Return whether ``seat``'s side was behind on score when it was abandoned: the totals of
    the last hand scored before the seat's first `SeatAbandoned` (none: level, not behind).

    >>> scored = wire.HandScored(hand=1, tricks=(), points=(), scores=(40, 90), bags=())
    >>> left = wire.SeatAbandoned(seat=2, player_id="x", streak=3)
    >>> behind_at_abandonment([scored, left], 2, 2), behind_at_abandonment([scored, left], 1, 2)
    (True, False)
    """
    scores: tuple[int, ...] = ()
    for event in events:
        if isinstance(event, wire.HandScored):
            scores = event.scores
        elif isinstance(event, wire.SeatAbandoned) and event.seat == seat:
            break
    else:
        return False  # never abandoned in the log: no position to judge
    if len(scores) < 2:
        return False
    mine = scores[seat % sides]
    return mine < max(s for side, s in enumerate(scores) if side != seat % sides)


async def build_report(
    pool: asyncpg.Pool,
    days: float,
    min_games: int = 3,
    one_sided: float = 0.8,
    min_losing: int = MIN_LOSING,
) -> Report:
    """Return the fair-play record of the last ``days``."""
    shared = [
        SharedSighting(
            kind=r["kind"],
            value=r["value"],
            accounts=sorted(r["accounts"]),
            first_seen=r["first_seen"].isoformat(),
            last_seen=r["last_seen"].isoformat(),
        )
        for r in await pool.fetch(
            "SELECT kind, value, array_agg(player_id) AS accounts, min(first_seen) AS"
            " first_seen, max(last_seen) AS last_seen FROM fairplay_sightings"
            " WHERE last_seen > now() - $1::float8 * interval '1 day'"
            " GROUP BY kind, value HAVING count(*) > 1 ORDER BY count(*) DESC, kind, value",
            days,
        )
    ]
    met: Counter[tuple[str, str]] = Counter()
    won: Counter[tuple[str, str]] = Counter()  # (winner, loser)
    partnered: Counter[tuple[str, str]] = Counter()  # (player, partner), both ways
    left: Counter[tuple[str, str]] = Counter()  # (quitter, partner who stayed)
    losing: Counter[tuple[str, str]] = Counter()  # of those, while their side was behind
    since = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    store = PostgresEventStore(pool)
    for event in await store.recorded("GameFinished", since):
        finished = msgspec.json.decode(event.data, type=_Finished)
        players = finished.players
        if not finished.rated or len(players) < 2:
            continue
        sides = 2 if len(players) == 4 else len(players)
        for a, b in itertools.combinations(range(len(players)), 2):
            if a % sides == b % sides:  # partners
                partnered[(players[a], players[b])] += 1
                partnered[(players[b], players[a])] += 1
                for quitter, stayed in ((a, b), (b, a)):
                    if quitter in finished.abandoned and stayed not in finished.abandoned:
                        left[(players[quitter], players[stayed])] += 1
                        logged = [REGISTRY.decode(e) for e in await store.read(event.stream_id)]
                        if behind_at_abandonment(logged, quitter, sides):
                            losing[(players[quitter], players[stayed])] += 1
                continue
            pa, pb = players[a], players[b]
            key = (min(pa, pb), max(pa, pb))
            met[key] += 1
            if finished.winner == a % sides:
                won[(pa, pb)] += 1
            elif finished.winner == b % sides:
                won[(pb, pa)] += 1
    meetings = []
    for (one, other), games in met.items():
        wins = [won[(one, other)], won[(other, one)]]
        if games >= min_games and max(wins) >= one_sided * games:
            meetings.append(Meeting(players=[one, other], games=games, wins=wins))
    meetings.sort(key=lambda m: (-m.games, m.players))
    every = [
        Abandoning(
            quitter=q, partner=p, games=partnered[(q, p)], abandoned=n, while_losing=losing[(q, p)]
        )
        for (q, p), n in left.items()
    ]
    abandoning = sorted(
        (a for a in every if a.abandoned >= min_games),
        key=lambda a: (-a.abandoned, a.quitter, a.partner),
    )
    abandoning_losing = sorted(
        (a for a in every if a.while_losing >= min_losing),
        key=lambda a: (-a.while_losing, a.quitter, a.partner),
    )
    return Report(
        window_days=days,
        shared=shared,
        one_sided=meetings,
        abandoning=abandoning,
        abandoning_losing=abandoning_losing,
    )


def render(report: Report) -> str:
    """Return the report as text for a terminal."""
    lines = [f"fair play, last {report.window_days:g} days"]
    lines.append(f"accounts sharing an address or device: {len(report.shared)}")
    for s in report.shared:
        value = s.value if s.kind == "address" else s.value[:12]
        lines.append(
            f"  {s.kind} {value}: {', '.join(s.accounts)} ({s.first_seen} .. {s.last_seen})"
        )
    lines.append(f"opponents meeting with one-sided results: {len(report.one_sided)}")
    for m in report.one_sided:
        lines.append(
            f"  {m.players[0]} v {m.players[1]}: {m.games} rated games, "
            f"won {m.wins[0]} - {m.wins[1]}"
        )
    lines.append(f"partners of whom one keeps abandoning: {len(report.abandoning)}")
    for a in report.abandoning:
        lines.append(
            f"  {a.quitter} left {a.partner} to a bot in {a.abandoned} of"
            f" {a.games} rated games together ({a.while_losing} while behind on score)"
        )
    lines.append(
        f"partners of whom one keeps abandoning while losing: {len(report.abandoning_losing)}"
    )
    for a in report.abandoning_losing:
        lines.append(
            f"  {a.quitter} left {a.partner} to a bot {a.while_losing} times while behind on"
            f" score ({a.abandoned} abandonments in {a.games} rated games together)"
        )
    return "\n".join(lines)


async def _run(args: argparse.Namespace) -> int:
    from events.migrations import database_url

    conn = await asyncpg.create_pool(database_url(), min_size=1, max_size=2)
    try:
        days = args.days if args.days is not None else window_days()
        if args.prune:
            status = await conn.execute(
                "DELETE FROM fairplay_sightings"
                " WHERE last_seen <= now() - $1::float8 * interval '1 day'",
                days,
            )
            print(f"pruned {status.split()[-1]} sightings older than {days:g} days")
            return 0
        report = await build_report(conn, days, args.min_games, args.one_sided, args.min_losing)
    finally:
        await conn.close()
    print(json.dumps(asdict(report), indent=2) if args.json else render(report))
    return 0


def run(args: argparse.Namespace) -> int:
    """`spades fairplay`: print the fair-play record (or prune old sightings); exit code."""
    return asyncio.run(_run(args))
