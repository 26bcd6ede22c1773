"""The par of a hand: what each side would have scored had the strong bot held every seat with
the same cards, the same scores and the same dealer (several runs, averaged). A side's result
minus its par is what the play (bidding included) made of the cards; summed over a game, the
cards' worth and the play's worth split the final margin.

Deterministic: run ``r`` of hand ``h`` samples with ``random.Random(f"par/{seed}/{h}/{r}")``.
Blind choices, exchanges and draws are the strong bot's own (`engine.search.player`), from
the state just after the deal.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.game import decide
from engine.model import Event, HandDealt, HandScored
from engine.search import player
from engine.state import GameState, apply, initial_state
from engine.view import view

RUNS = 3
PLAYOUTS = 60
"""The strong bot's budget per decision in a par run (a fraction of the table's)."""


@dataclass(frozen=True, slots=True)
class HandPar:
    """A hand's par (mean points per side over the runs) beside what the sides scored."""

    hand: int
    par: tuple[float, ...]
    scored: tuple[int, ...]

    @property
    def play(self) -> tuple[float, ...]:
        """Return each side's result minus its par: what the play made of the cards."""
        return tuple(round(s - p, 2) for s, p in zip(self.scored, self.par, strict=True))


def play_hand(state: GameState, rng: random.Random, playouts: int = PLAYOUTS) -> tuple[int, ...]:
    """Return each side's points when strong bots play the hand dealt in ``state`` out."""
    bot = player("strong", playouts=playouts)
    while True:
        for event in decide(state, bot(view(state, state.turn), rng)):
            if isinstance(event, HandScored):
                return event.points
            state = apply(state, event)


def game_par(
    events: Sequence[Event],
    *,
    seed: str = "",
    runs: int = RUNS,
    playouts: int = PLAYOUTS,
    on_hand: Callable[[int], None] | None = None,
) -> tuple[HandPar, ...]:
    """Return the par of every hand of a game's events (played hands only); ``on_hand`` is
    told each hand's number once its par is known (progress)."""
    state = initial_state()
    out: list[HandPar] = []
    dealt: GameState | None = None
    for event in events:
        state = apply(state, event)
        if isinstance(event, HandDealt):
            dealt = state
        elif isinstance(event, HandScored) and dealt is not None:
            totals = [0.0] * len(event.points)
            for r in range(runs):
                rng = random.Random(f"par/{seed}/{event.hand}/{r}")
                for side, points in enumerate(play_hand(dealt, rng, playouts)):
                    totals[side] += points
            par = tuple(round(t / runs, 2) for t in totals)
            out.append(HandPar(event.hand, par, event.points))
            dealt = None
            if on_hand is not None:
                on_hand(event.hand)
    return tuple(out)
