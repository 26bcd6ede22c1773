"""Swiss pairing, pure: who meets whom in the next round of a Swiss event.

A Swiss event plays a fixed number of rounds; each round pairs entrants whose totals are
equal or nearest and who have not met yet, as chess and bridge Swiss do. The boards are
still duplicate boards (`services.gateway.duplicate`): every table of a round plays the
same committed deals, a pair is scored per board in matchpoints against the pairs that held
the same cards, and its Swiss standing is its total. Round N+1 is paired only once round N
is complete, from the totals after it. Nothing here touches a database or a clock.

- **Order** (`ranking`): by total matchpoints (highest first), then cross-IMPs, then pair
  number (the tiebreak, so the order is the same on every replica).
- **Pairing** (`pair_round`): top-down: the highest unpaired entrant meets the next one in
  the order it has not met; when that leaves the rest unpairable without a rematch, the next
  candidate is tried (backtracking), so no rematch happens while a pairing without one
  exists. Only when none exists are rematches allowed (the same top-down order).
- **Bye**: with an odd number of entrants the lowest-ranked entrant that has had the fewest
  byes sits out (so byes rotate: nobody has a second before everyone has had one), provided
  the others can still be paired without a rematch; on each board of that round it scores
  an average (`bye_scores`: half the top of the pairs who played it).
- **Direction** (`seat`): of two pairs, the one that sat North-South less often does so
  now; equal, the higher-ranked one does.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from services.gateway.duplicate import BoardScore, boards_of_round

BYE = "BYE"
"""The direction of a bye's score: the pair sat out and held no cards."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """A round's pairing: its tables (higher-ranked pair first) and the pair with the bye."""

    tables: tuple[tuple[int, int], ...]
    bye: int | None


def met_key(a: int, b: int) -> frozenset[int]:
    """Return the key of a meeting of ``a`` and ``b`` (the order does not matter)."""
    return frozenset((a, b))


def ranking(
    entrants: Collection[int],
    totals: Mapping[int, int],
    tiebreak: Mapping[int, int] | None = None,
) -> list[int]:
    """Return the entrants in Swiss order: total (highest first), tiebreak, pair number.

    >>> ranking([1, 2, 3, 4], {1: 2, 2: 4, 3: 2, 4: 0}, {1: -5, 3: 10})
    [2, 3, 1, 4]
    """
    ties = tiebreak or {}
    return sorted(entrants, key=lambda p: (-totals.get(p, 0), -ties.get(p, 0), p))


def _pair_all(
    order: Sequence[int], met: Collection[frozenset[int]], rematches: bool
) -> list[tuple[int, int]] | None:
    if not order:
        return []
    top, rest = order[0], order[1:]
    for i, other in enumerate(rest):
        if not rematches and met_key(top, other) in met:
            continue
        tail = _pair_all([*rest[:i], *rest[i + 1 :]], met, rematches)
        if tail is not None:
            return [(top, other), *tail]
        if rematches:
            break  # with rematches allowed the first candidate always works
    return None


def pair_round(
    order: Sequence[int],
    met: Collection[frozenset[int]],
    byes: Mapping[int, int] | None = None,
) -> Pairing:
    """Pair one round from the entrants in Swiss ``order`` (see `ranking`), the meetings so
    far (`met_key`) and how many byes each entrant has had.

    >>> pair_round([1, 2, 3, 4], {met_key(1, 2), met_key(3, 4)})
    Pairing(tables=((1, 3), (2, 4)), bye=None)
    >>> pair_round([1, 2, 3], set(), {3: 1})
    Pairing(tables=((1, 3),), bye=2)
    """
    if len(set(order)) != len(order):
        raise ValueError("an entrant appears twice in the order")
    had = byes or {}
    if len(order) % 2 == 0:
        candidates: list[int | None] = [None]
    else:
        # the fewest byes first, then the lowest-ranked
        position = {p: i for i, p in enumerate(order)}
        ranked: list[int] = sorted(order, key=lambda p: (had.get(p, 0), -position[p]))
        candidates = [*ranked]
    for rematches in (False, True):
        for bye in candidates:
            rest = [p for p in order if p != bye]
            tables = _pair_all(rest, met, rematches)
            if tables is not None:
                return Pairing(tables=tuple(tables), bye=bye)
    raise AssertionError("unreachable: rematches allowed always pair")


def bye_scores(
    byes: Mapping[int, int], scores: Sequence[BoardScore], per_round: int
) -> list[BoardScore]:
    """Return what the pair with each round's bye (``byes``: round -> pair) scores on the
    round's boards: an average, half the top the pairs who played the board could make (so
    a bye neither wins nor loses ground on the field); nothing for a board not scored yet.

    >>> played = [BoardScore(board=1, pair=1, direction="NS", table=1, points=60, against=20,
    ...     net=40, matchpoints=2, top=2, imps=2, versus=[])]
    >>> [(s.board, s.pair, s.matchpoints, s.top) for s in bye_scores({1: 5}, played, 1)]
    [(1, 5, 1, 2)]
    """
    out: list[BoardScore] = []
    for round_, pair in sorted(byes.items()):
        for board in boards_of_round(round_, per_round):
            tops = [s.top for s in scores if s.board == board and s.direction != BYE]
            if not tops:
                continue
            top = max(tops)
            out.append(
                BoardScore(
                    board=board,
                    pair=pair,
                    direction=BYE,
                    table=0,
                    points=0,
                    against=0,
                    net=0,
                    matchpoints=top // 2,
                    top=top,
                    imps=0,
                    versus=[],
                )
            )
    return out


def seat(a: int, b: int, ns_times: Mapping[int, int]) -> tuple[int, int]:
    """Return (North-South, East-West) for ``a`` (the higher-ranked) and ``b``.

    >>> seat(1, 2, {1: 1}), seat(1, 2, {}), seat(1, 2, {2: 1})
    ((2, 1), (1, 2), (1, 2))
    """
    return (b, a) if ns_times.get(a, 0) > ns_times.get(b, 0) else (a, b)


__all__ = ["BYE", "Pairing", "bye_scores", "met_key", "pair_round", "ranking", "seat"]
