"""Duplicate Spades, pure: who sits where each round, the boards' committed seeds, the score.

A duplicate event removes the luck of the deal as bridge does: every table of a round plays the
same boards (the same cards at the same seats), and a pair's result on a board is compared only
with the pairs that held the same cards. Nothing here touches a database or a clock.

- **Boards.** Board ``b`` (1-based) is one hand of the event's rules, dealt from a 32-byte seed
  drawn when the event is created (`new_seed`); its SHA-256 (`commitment_of`, the same as
  `engine.fairness.commitment`) is published from then on, and the seed itself only when the
  event is over. Every table opens its board game with that seed and no client contribution,
  so every table's deal (and first dealer) is the seed's (docs/FAIRNESS.md's derivation).
- **Movement** (`movement`): round ``r`` plays boards ``r*B+1 .. (r+1)*B``; the pairs meet by
  the round-robin circle (pair 1 stays, the others turn), one table per two pairs, and a pair's
  direction alternates from table to table and round to round, so a pair sits North-South at
  one table and East-West at another over the event. Seats: North 0 and South 2 are the
  North-South pair (its player, then partner), East 1 and West 3 the East-West pair.
- **Score of a board** for a pair: its side's points on the hand minus the other side's (the
  net, so North-South's net is East-West's with the sign turned). **Matchpoints** (`score`):
  against every other pair that held the same cards (the same board, the same direction),
  2 for each one it beat, 1 for each tie, as bridge does. **Cross-IMPs**: the point
  difference with each of them turned into IMPs by `SPADES_IMPS` and summed (negative when it
  lost), the IMP-style total.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import msgspec

from events.errors import Refusal

NS, EW = "NS", "EW"
SPADES_IMPS: tuple[int, ...] = (10, 30, 50, 80, 110, 150, 200, 250, 300, 400, 500, 600)
"""A point difference of at least ``SPADES_IMPS[k-1]`` is worth ``k`` IMPs (capped at 12): the
bridge scale's shape for Spades' points (a hand moves 50 to 300 points; bridge's 20 to 4000)."""


class ScheduleRefusal(Refusal):
    """A schedule the event cannot play (``code`` for programs, the message for people)."""


@dataclass(frozen=True, slots=True)
class Seating:
    """One table of one round: its number and the pair sitting North-South and East-West."""

    round: int
    table: int
    ns: int
    ew: int


@dataclass(frozen=True, slots=True)
class Result:
    """One board played at one table: the points each side scored on its hand."""

    board: int
    table: int
    ns: int
    ew: int
    ns_points: int
    ew_points: int


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    """One pair's result compared with another that held the same cards."""

    pair: int
    net: int
    matchpoints: int
    imps: int


class BoardScore(msgspec.Struct, frozen=True, kw_only=True):
    """A pair's score on one board, with its arithmetic."""

    board: int
    pair: int
    direction: str
    table: int
    points: int
    """Its side's points on the hand."""
    against: int
    """The other side's points."""
    net: int
    matchpoints: int
    top: int
    """The most matchpoints the board could give it: 2 per other pair that held the cards."""
    imps: int
    versus: list[Comparison]


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    """A pair's place: its matchpoints (and out of how many), their percentage, IMPs."""

    rank: int
    pair: int
    matchpoints: int
    top: int
    percent: float
    imps: int
    boards: int


def new_seed() -> str:
    """Return a fresh secret board seed: 32 bytes from the OS's CSPRNG as 64 hex digits."""
    return secrets.token_hex(32)


def commitment_of(seed: str) -> str:
    """Return a board seed's commitment: the SHA-256 of its 32 bytes, lowercase hex."""
    return hashlib.sha256(bytes.fromhex(seed)).hexdigest()


def imps(difference: int) -> int:
    """Return the IMPs a point difference is worth (the sign of the difference kept)."""
    size = sum(1 for step in SPADES_IMPS if abs(difference) >= step)
    return size if difference >= 0 else -size


def boards_of_round(round_: int, per_round: int) -> range:
    """Return the board numbers round ``round_`` (1-based) plays."""
    return range((round_ - 1) * per_round + 1, round_ * per_round + 1)


def movement(pairs: int, rounds: int) -> list[list[Seating]]:
    """Return each round's tables for ``pairs`` pairs (an even number, 2 or more).

    >>> [[(s.table, s.ns, s.ew) for s in r] for r in movement(4, 2)]
    [[(1, 1, 4), (2, 3, 2)], [(1, 2, 1), (2, 3, 4)]]
    """
    if pairs < 2 or pairs % 2:
        raise ScheduleRefusal(
            "bad_schedule", f"duplicate needs an even number of pairs, not {pairs}"
        )
    if not 1 <= rounds <= pairs - 1:
        raise ScheduleRefusal(
            "bad_schedule", f"{pairs} pairs play 1 to {pairs - 1} rounds (each a new opponent)"
        )
    others = list(range(2, pairs + 1))
    schedule: list[list[Seating]] = []
    for r in range(rounds):
        ring = [1, *others[r:], *others[:r]]
        tables: list[Seating] = []
        for t in range(pairs // 2):
            a, b = ring[t], ring[-1 - t]
            ns, ew = (a, b) if (r + t) % 2 == 0 else (b, a)
            tables.append(Seating(round=r + 1, table=t + 1, ns=ns, ew=ew))
        schedule.append(tables)
    check_schedule(schedule, per_round=1)
    return schedule


def check_schedule(schedule: Sequence[Sequence[Seating]], per_round: int) -> None:
    """Refuse a schedule in which a pair would play one board twice (`board_played_twice`)
    or sit at two tables of one round."""
    held: set[tuple[int, int]] = set()
    for tables in schedule:
        seated: set[int] = set()
        for seating in tables:
            for pair in (seating.ns, seating.ew):
                if pair in seated:
                    raise ScheduleRefusal(
                        "board_played_twice",
                        f"pair {pair} sits at two tables of round {seating.round}",
                    )
                seated.add(pair)
                for board in boards_of_round(seating.round, per_round):
                    if (pair, board) in held:
                        raise ScheduleRefusal(
                            "board_played_twice", f"pair {pair} would play board {board} twice"
                        )
                    held.add((pair, board))


def check_result(results: Iterable[Result], new: Result) -> None:
    """Refuse a board result for a pair that already has one on that board."""
    for old in results:
        if old.board == new.board and {old.ns, old.ew} & {new.ns, new.ew}:
            pair = next(iter({old.ns, old.ew} & {new.ns, new.ew}))
            raise ScheduleRefusal(
                "board_played_twice", f"pair {pair} already has a result on board {new.board}"
            )


def board_scores(results: Sequence[Result]) -> list[BoardScore]:
    """Return every pair's score on every board it played, compared with the pairs that held
    the same cards; board by board, North-South first, then by pair."""
    out: list[BoardScore] = []
    for board in sorted({r.board for r in results}):
        played = [r for r in results if r.board == board]
        for direction in (NS, EW):
            nets = {
                (r.ns if direction == NS else r.ew): (
                    r,
                    (r.ns_points - r.ew_points) if direction == NS else (r.ew_points - r.ns_points),
                )
                for r in played
            }
            for pair, (r, net) in sorted(nets.items()):
                versus = [
                    Comparison(
                        pair=other,
                        net=their,
                        matchpoints=2 if net > their else 1 if net == their else 0,
                        imps=imps(net - their),
                    )
                    for other, (_, their) in sorted(nets.items())
                    if other != pair
                ]
                points, against = (
                    (r.ns_points, r.ew_points) if direction == NS else (r.ew_points, r.ns_points)
                )
                out.append(
                    BoardScore(
                        board=board,
                        pair=pair,
                        direction=direction,
                        table=r.table,
                        points=points,
                        against=against,
                        net=net,
                        matchpoints=sum(v.matchpoints for v in versus),
                        top=2 * len(versus),
                        imps=sum(v.imps for v in versus),
                        versus=versus,
                    )
                )
    return out


def standings(pairs: Iterable[int], scores: Sequence[BoardScore]) -> list[Standing]:
    """Return the pairs ranked by matchpoint percentage, then IMPs (equal: the same rank)."""
    rows = []
    for pair in pairs:
        mine = [s for s in scores if s.pair == pair]
        mp, top = sum(s.matchpoints for s in mine), sum(s.top for s in mine)
        percent = round(100 * mp / top, 2) if top else 0.0
        rows.append((percent, sum(s.imps for s in mine), pair, mp, top, len(mine)))
    rows.sort(key=lambda row: (-row[0], -row[1], row[2]))
    out: list[Standing] = []
    for i, (percent, imp, pair, mp, top, boards) in enumerate(rows):
        rank = i + 1
        if out and (out[-1].percent, out[-1].imps) == (percent, imp):
            rank = out[-1].rank
        out.append(
            Standing(
                rank=rank,
                pair=pair,
                matchpoints=mp,
                top=top,
                percent=percent,
                imps=imp,
                boards=boards,
            )
        )
    return out


def seats_of(ns: Sequence[str], ew: Sequence[str]) -> tuple[str, ...]:
    """Return a board game's players in seat order: North, East, South, West."""
    return (ns[0], ew[0], ns[1], ew[1])


__all__ = [
    "EW",
    "NS",
    "SPADES_IMPS",
    "BoardScore",
    "Comparison",
    "Result",
    "ScheduleRefusal",
    "Seating",
    "Standing",
    "board_scores",
    "boards_of_round",
    "check_result",
    "check_schedule",
    "commitment_of",
    "imps",
    "movement",
    "new_seed",
    "seats_of",
    "standings",
]
