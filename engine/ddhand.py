"""A played hand's double-dummy figures (`engine.dd`): what each side could take from the first
lead, whether each nil was makeable, and what every card played cost in tricks.

A nil is makeable when the nil bidder (with his partner's help) can take no trick against
every other seat trying to give him one. A card's cost is the drop, in tricks of the whole
hand for its player's side, between best play before it and best play after it: 0 for a
best card (the bridge hand viewer's "this card costs a trick").

Solved by the C kernel (`engine.ddcore`) unless ``solver=engine.dd.Solver`` (the reference).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from engine import ddcore
from engine.dd import Position, Solver
from engine.rules import Ruleset, tables

SolverType = Callable[[Ruleset, Iterable[int], Iterable[int]], Solver | ddcore.Solver]
"""Which solver answers: the C kernel (`engine.ddcore`, the default) or the Python reference."""


def side_seats(rules: Ruleset, seat: int) -> tuple[int, ...]:
    """Return the seats of ``seat``'s side (the partnership at four, else the seat)."""
    t = tables(rules)
    return t.members[t.team[seat]]


def nil_makeable(
    rules: Ruleset, pos: Position, seat: int, solver: SolverType = ddcore.Solver
) -> bool:
    """Return whether ``seat`` (with its partner's help) can take no trick from ``pos``."""
    mine = side_seats(rules, seat)
    others = [s for s in range(tables(rules).players) if s not in mine]
    return not solver(rules, (seat,), others).at_least(pos, 1)


@dataclass(frozen=True, slots=True)
class CardCost:
    """One card played: by whom, the side's double-dummy tricks (for the whole hand) before
    and after it, and what it cost (before - after; 0 for a best card)."""

    seat: int
    card: int
    before: int
    after: int

    @property
    def cost(self) -> int:
        return self.before - self.after


@dataclass(frozen=True, slots=True)
class HandDD:
    """A hand's double-dummy figures: per side (per seat without partnerships) the tricks it
    could take from the first lead, each nil's makeability, and every card's cost."""

    tricks: tuple[int, ...]
    nils: tuple[tuple[int, bool], ...]
    cards: tuple[CardCost, ...]

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def analyse_hand(
    rules: Ruleset,
    start: Position,
    plays: Sequence[int],
    nil_seats: Iterable[int] = (),
    solver: SolverType = ddcore.Solver,
) -> HandDD:
    """Return the double-dummy figures of a hand played from ``start`` (the first lead) with
    the cards ``plays`` in order. Each figure counts the tricks of the whole hand: the tricks
    the side had already taken plus what it can take from there.

    Each position is solved once per side at most: with two sides (two or four players) one
    side's value gives the other's (zero-sum), and a card's player cannot raise his own
    side's value, so one search ("still at least as many?") settles the usual best card and
    only a costly card needs the bisection below that."""
    t = tables(rules)
    sides = t.members
    solvers = [solver(rules, m, m) for m in sides]
    zero_sum = t.teams == 2
    taken = [0] * t.teams
    pos = start
    known: dict[int, int] = {}  # side -> its tricks from ``pos`` on

    def remaining(side: int) -> int:
        if side not in known:
            other = 1 - side
            if zero_sum and other in known:
                known[side] = pos.left - known[other]
            else:
                known[side] = solvers[side].value(pos)
        return known[side]

    tricks = tuple(remaining(s) for s in range(t.teams))
    cards: list[CardCost] = []
    for card in plays:
        seat = pos.to_play
        side = t.team[seat]
        before = taken[side] + remaining(side)
        nxt = pos.play(rules, card)
        if not nxt.trick and nxt.done > pos.done:
            taken[t.team[nxt.leader]] += 1
        rest = _at_most(solvers[side], nxt, min(before - taken[side], nxt.left))
        cards.append(CardCost(seat, card, before, taken[side] + rest))
        pos, known = nxt, {side: rest}
    nils = tuple((s, nil_makeable(rules, start, s, solver)) for s in nil_seats)
    return HandDD(tricks, nils, tuple(cards))


def _at_most(solver: Solver | ddcore.Solver, pos: Position, upper: int) -> int:
    """Return the solver's value of ``pos``, known to be at most ``upper``."""
    if upper <= 0:
        return 0
    if solver.at_least(pos, upper):
        return upper
    lo, hi = 0, upper - 1
    while lo < hi:
        k = (lo + hi + 1) // 2
        if solver.at_least(pos, k):
            lo = k
        else:
            hi = k - 1
    return lo
