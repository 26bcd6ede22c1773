"""The par of a hand: strong bots in every seat with the same cards, deterministic, and the
play's share the difference between the result and the par."""

from __future__ import annotations

import random

from engine import HandScored, Ruleset, StartGame, decide, initial_state, replay, view
from engine.bot import choose
from engine.model import Event
from engine.par import game_par


def short_game(seed: int) -> list[Event]:
    events = decide(initial_state(), StartGame(Ruleset(target=100, mercy=-100), seed))
    state = replay(events)
    rng = random.Random(seed)
    while state.phase != "over":
        new = decide(state, choose(view(state, state.turn), rng))
        events += new
        state = replay(new, state)
    return events


def test_par_is_deterministic_and_the_play_is_the_result_minus_it() -> None:
    events = short_game(2)
    first = game_par(events, seed="t", runs=2, playouts=8)
    assert first == game_par(events, seed="t", runs=2, playouts=8)
    scored = [e for e in events if isinstance(e, HandScored)]
    assert [p.hand for p in first] == [e.hand for e in scored]
    for par, hand in zip(first, scored, strict=True):
        assert par.scored == hand.points
        assert len(par.par) == 2
        assert all(
            abs(play - (s - p)) < 0.01
            for play, s, p in zip(par.play, par.scored, par.par, strict=True)
        )
        # a hand's points are bounded: a side scores at most a Boston and loses at most two nils
        assert all(-500 <= p <= 500 for p in par.par)
