"""Personal statistics: finished ladder games folded into one row per player, and their read.

    JetStream ev.game.*.GameFinished ──▶ consumer `rating-stats` ──▶ read the game's stream
        ──▶ `fold_game` ──▶ `player_game_stats` rows (one transaction with the position)

Why the rating service owns it: it already consumes every finished game exactly once per
ladder and keeps the rating history, which is part of a player's statistics; the read joins
the two in one database. What the numbers mean: `events/contracts/stats.py`.

Only games of a ladder of the ladders file count (practice and casual tables do not), rated
or not; bots get no statistics. The game's stream is read through the event store (the log),
never the table's memory; it is immutable once GameFinished is in it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from events.consumer import Received, Unprocessable
from events.contracts import game as wire
from events.contracts.ladders import UnknownLadder, ladder_of
from events.contracts.rating import display_rating
from events.contracts.stats import LadderStats, Met, StatsQuery, StatsRatingPoint, StatsReply
from events.envelope import REGISTRY
from events.pgstore import Conn, PostgresEventStore
from events.subjects import split_stream_id

__all__ = ["CONSUMER", "Line", "fold_game", "record_game", "stats_page"]

CONSUMER = "rating-stats"
BOT_PREFIX = "bot:"
MAX_TOP = 50


@dataclass
class Line:
    """One player's numbers in one game (the row of `player_game_stats`)."""

    won: bool = False
    hands: int = 0
    bids: int = 0
    made: int = 0
    set: int = 0
    over_by: Counter[int] = field(default_factory=Counter)
    nil: int = 0
    nil_made: int = 0
    blind_nil: int = 0
    blind_nil_made: int = 0
    bags: int = 0
    bag_penalties: int = 0
    points: int = 0
    partners: tuple[str, ...] = ()
    opponents: tuple[str, ...] = ()


def fold_game(events: Sequence[wire.GameEvent]) -> dict[int, Line]:
    """Return each seat's line of a finished game from its stream's events."""
    opened = next(e for e in events if isinstance(e, wire.TableOpened))
    started = next(e for e in events if isinstance(e, wire.GameStarted))
    rules = wire.stored_rules(started.rules)
    n = len(opened.players)
    pairs = rules.teams == 2 and n == 4

    def side(seat: int) -> int:
        return seat % 2 if pairs else seat

    lines = {s: Line() for s in range(n)}
    seated = list(enumerate(opened.players))
    for s, line in lines.items():
        line.partners = tuple(p for o, p in seated if o != s and side(o) == side(s))
        line.opponents = tuple(p for o, p in seated if side(o) != side(s))
    bids: dict[int, int] = {}
    blind: set[int] = set()
    moe: set[int] = set()
    bags_before = [0] * rules.teams
    for event in events:
        if isinstance(event, wire.HandDealt):
            bids, blind, moe = {}, set(), set()
        elif isinstance(event, wire.BlindNilDeclared):
            bids[event.seat] = 0
            blind.add(event.seat)
        elif isinstance(event, wire.BidPlaced):
            bids[event.seat] = event.tricks
            if event.blind:
                blind.add(event.seat)
            if event.moe:
                moe.add(event.seat)
        elif isinstance(event, wire.HandScored):
            _score_hand(lines, event, bids, blind, moe, rules, side, bags_before)
            bags_before = list(event.bags)
        elif isinstance(event, wire.GameFinished):
            for s, line in lines.items():
                line.won = event.winner >= 0 and side(s) == event.winner
    return lines


def _score_hand(
    lines: dict[int, Line],
    scored: wire.HandScored,
    bids: dict[int, int],
    blind: set[int],
    moe: set[int],
    rules: Any,
    side: Callable[[int], int],
    bags_before: list[int],
) -> None:
    nils = {s for s, b in bids.items() if b == 0 and rules.nil_allowed}
    gained = [0] * rules.teams
    contract_of: dict[int, tuple[int, int]] = {}
    for t in range(rules.teams):
        members = [s for s in lines if side(s) == t]
        bidders = [s for s in members if s not in nils]
        took = sum(scored.tricks[s] for s in bidders)
        contract = sum(max(0, bids.get(s, 0)) for s in bidders)
        contract_of[t] = (contract, took)
        over = took - contract if took >= contract and not any(s in moe for s in members) else 0
        no_bags = any(s in blind for s in bidders)  # a blind contract's overtricks are no bags
        gained[t] = (0 if no_bags else over) + sum(scored.tricks[s] for s in members if s in nils)
    for s, line in lines.items():
        t = side(s)
        line.hands += 1
        line.points += scored.points[t]
        if rules.bags:
            line.bags += gained[t]
            line.bag_penalties += max(0, bags_before[t] + gained[t] - scored.bags[t]) // max(
                1, rules.bag_limit
            )
        if s in nils:
            made = scored.tricks[s] == 0
            if s in blind:
                line.blind_nil += 1
                line.blind_nil_made += made
            else:
                line.nil += 1
                line.nil_made += made
        elif s in bids:
            line.bids += 1
            contract, took = contract_of[t]
            made = scored.points[t] > 0 if s in moe else took >= contract
            if made:
                line.made += 1
                line.over_by[0 if s in moe else took - contract] += 1
            else:
                line.set += 1


async def record_game(conn: Conn, received: Received, store: PostgresEventStore) -> str:
    """Fold one GameFinished's game into `player_game_stats` (inside the consumer's
    transaction); return "recorded", or "skipped" for a game off the ladders."""
    finished = received.payload
    if not isinstance(finished, wire.GameFinished):
        raise Unprocessable(f"expected GameFinished, got {received.event.type}")
    category, game_id = split_stream_id(received.event.stream_id)
    if category != "game":
        raise Unprocessable(f"GameFinished from stream {received.event.stream_id!r}")
    try:
        ladder_of(finished.ladder)
    except UnknownLadder:
        return "skipped"  # practice, casual, or a ladder no longer in the file
    stored = await store.read(received.event.stream_id)
    events = [REGISTRY.decode(e) for e in stored]
    try:
        lines = fold_game(events)
    except StopIteration:  # a game closed before it started: nothing was played
        return "skipped"
    players = next(e for e in events if isinstance(e, wire.TableOpened)).players
    at = received.event.recorded_at.timestamp()
    await conn.executemany(
        "INSERT INTO player_game_stats (game_id, ladder, player_id, finished_at, won, hands,"
        " bids, made, set, over_by, nil, nil_made, blind_nil, blind_nil_made, bags,"
        " bag_penalties, points, partners, opponents) VALUES ($1, $2, $3, $4, $5, $6, $7, $8,"
        " $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) ON CONFLICT DO NOTHING",
        [
            (
                game_id,
                finished.ladder,
                players[s],
                at,
                line.won,
                line.hands,
                line.bids,
                line.made,
                line.set,
                _histogram(line.over_by),
                line.nil,
                line.nil_made,
                line.blind_nil,
                line.blind_nil_made,
                line.bags,
                line.bag_penalties,
                line.points,
                [p for p in line.partners if not p.startswith(BOT_PREFIX)],
                [p for p in line.opponents if not p.startswith(BOT_PREFIX)],
            )
            for s, line in lines.items()
            if not players[s].startswith(BOT_PREFIX)
        ],
    )
    return "recorded"


def _histogram(over_by: Counter[int]) -> list[int]:
    """Return counts by overtricks as a list: index N = contracts made N over."""
    size = max(over_by, default=-1) + 1
    return [over_by.get(n, 0) for n in range(size)]


_encoder = msgspec.json.Encoder()
_SUMS = (
    "games",
    "wins",
    "hands",
    "bids",
    "made",
    "set",
    "nil",
    "nil_made",
    "blind_nil",
    "blind_nil_made",
    "bags",
    "bag_penalties",
    "points",
)


async def stats_page(pool: Any, query: StatsQuery, now: float) -> bytes:
    """Answer a player's statistics per ladder (every ladder he played, or the one asked)."""

    def refuse(code: str, message: str) -> bytes:
        return _encoder.encode(StatsReply(ok=False, code=code, message=message))

    if not query.player_id or not 1 <= query.top <= MAX_TOP:
        return refuse("malformed", f"player_id must be non-empty, top 1..{MAX_TOP}")
    if query.ladder:
        try:
            ladder_of(query.ladder)
        except UnknownLadder as exc:
            return refuse(exc.code, str(exc))
    rows = await pool.fetch(
        "SELECT ladder, count(*) AS games, count(*) FILTER (WHERE won) AS wins,"
        " sum(hands) AS hands, sum(bids) AS bids, sum(made) AS made, sum(set) AS set,"
        " sum(nil) AS nil, sum(nil_made) AS nil_made, sum(blind_nil) AS blind_nil,"
        " sum(blind_nil_made) AS blind_nil_made, sum(bags) AS bags,"
        " sum(bag_penalties) AS bag_penalties, sum(points) AS points"
        " FROM player_game_stats WHERE player_id = $1 AND ($2 = '' OR ladder = $2)"
        " GROUP BY ladder ORDER BY ladder",
        query.player_id,
        query.ladder,
    )
    ladders = []
    for row in rows:
        ladder = row["ladder"]
        sums = {name: int(row[name] or 0) for name in _SUMS}
        over: Counter[int] = Counter()
        for (hist,) in await pool.fetch(
            "SELECT over_by FROM player_game_stats WHERE player_id = $1 AND ladder = $2",
            query.player_id,
            ladder,
        ):
            over.update({n: c for n, c in enumerate(hist) if c})
        met = {}
        for role in ("partners", "opponents"):
            met[role] = [
                Met(player_id=r["other"], games=r["n"])
                for r in await pool.fetch(
                    f"SELECT other, count(*) AS n FROM player_game_stats, unnest({role}) AS other"
                    " WHERE player_id = $1 AND ladder = $2 GROUP BY other"
                    " ORDER BY count(*) DESC, other LIMIT $3",
                    query.player_id,
                    ladder,
                    query.top,
                )
            ]
        history = await pool.fetch(
            "SELECT game_id, rated_at, mu_after, ordinal_after FROM rating_history"
            " WHERE player_id = $1 AND ladder = $2 ORDER BY rated_at, game_id",
            query.player_id,
            ladder,
        )
        hands = max(1, sums["hands"])
        ladders.append(
            LadderStats(
                ladder=ladder,
                over_by={str(n): c for n, c in sorted(over.items())},
                bags_per_hand=round(sums["bags"] / hands, 3),
                points_per_hand=round(sums["points"] / hands, 2),
                partners=met["partners"],
                opponents=met["opponents"],
                rating_history=[
                    StatsRatingPoint(
                        game_id=h["game_id"],
                        rated_at=h["rated_at"],
                        display=display_rating(h["mu_after"]),
                        ordinal=h["ordinal_after"],
                    )
                    for h in history
                ],
                **sums,
            )
        )
    return _encoder.encode(
        StatsReply(
            ok=True,
            code="stats",
            message=f"{len(ladders)} ladders",
            player_id=query.player_id,
            ladders=ladders,
        )
    )
