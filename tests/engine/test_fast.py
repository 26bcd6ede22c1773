"""The private fast path against the public engine: same legal cards, tricks and scores.

Every card the fast table plays is also sent through the public `decide`; at every
step the two must agree on the legal cards, and at the end of the hand on who took
what and on each side's points.
"""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from engine import (
    HandScored,
    PlayCard,
    Ruleset,
    decide,
    legal_actions,
    replay,
)
from engine.fast import Table, points, random_hand
from engine.game import legal_cards, score_hand
from engine.state import GameState
from tests.engine.test_properties import PROFILE, play, rulesets


def play_phase_states(rules: Ruleset, seed: int, limit: int = 3) -> list[GameState]:
    """Return states at the start of play and mid-hand, from random legal games."""
    found: list[GameState] = []
    rng = random.Random(seed)
    for state, _ in play(rules, seed):
        if state.phase == "play" and (
            (not state.tricks and not state.trick) or rng.random() < 0.02
        ):
            found.append(state)
            if len(found) >= limit:
                break
    return found


def table_of(state: GameState) -> Table:
    return Table(
        state.rules,
        state.hands,
        state.leader,
        trick=state.trick,
        done=len(state.tricks),
        broken=state.broken,
        taken=state.taken,
        bids=state.bids,
        blind=state.blind,
        history=state.tricks,
    )


@PROFILE
@given(rulesets(max_hands=4), st.integers(0, 2**32))
def test_the_fast_table_plays_the_public_rules_card_for_card(rules: Ruleset, seed: int) -> None:
    rng = random.Random(seed)
    for state in play_phase_states(rules, seed):
        table = table_of(state)
        hand = state.hand
        while state.phase == "play" and state.hand == hand:
            seat = state.turn
            assert table.to_play() == seat
            fast = sorted(table.legal(seat))
            assert fast == list(legal_cards(state, seat))
            assert [PlayCard(seat, c) for c in fast] == legal_actions(state, seat)
            card = rng.choice(fast)
            table.play(seat, card)
            events = decide(state, PlayCard(seat, card))
            before, state = state, replay(events, state)
            scored = [e for e in events if isinstance(e, HandScored)]
            if scored:
                assert tuple(table.taken) == scored[0].tricks
                assert table.done == rules.tricks_per_hand
                # Scored on the fast table's own record of the tricks (Moe, Willie).
                assert scored[0].points == points(
                    rules,
                    before.bids,
                    before.blind,
                    table.taken,
                    before.scores,
                    before.bags,
                    before.moe,
                    table.history,
                )
                break
            assert table.taken == list(state.taken)
            assert table.broken == state.broken
            assert table.trick == list(state.trick)


@PROFILE
@given(rulesets(max_hands=4), st.integers(0, 2**32))
def test_the_fast_scoring_is_the_engines(rules: Ruleset, seed: int) -> None:
    for state in play_phase_states(rules, seed, limit=1):
        table = table_of(state)
        taken = table.play_out_random(random.Random(seed))
        assert sum(taken) == rules.tricks_per_hand
        cards = [c for h in table.hands for s in h for c in s]
        assert cards == []
        expected = points(
            rules,
            state.bids,
            state.blind,
            taken,
            state.scores,
            state.bags,
            state.moe,
            table.history,
        )
        assert expected == score_hand(state, tuple(taken), tuple(table.history or ()))[0]


def test_a_random_hand_plays_every_card_once() -> None:
    rules = Ruleset()
    for seed in range(50):
        taken, pts = random_hand(rules, random.Random(seed))
        assert sum(taken) == 13
        assert len(pts) == 2


def test_random_play_through_the_fast_path_matches_public_play() -> None:
    # The benchmark's loop (play_out_random, inlined) against the public decide: the
    # same random stream picks from the same legal lists, so the same cards are played.
    rules = Ruleset(players=3)
    for seed in range(20):
        state = next(iter(play_phase_states(rules, seed, limit=1)))
        fast = table_of(state)
        taken = fast.play_out_random(random.Random(seed))
        rand = random.Random(seed).random
        public = state
        hand = public.hand
        while public.phase == "play" and public.hand == hand:
            legal = legal_cards(public, public.turn)
            table_legal = table_of(public).legal(public.turn)
            assert sorted(table_legal) == list(legal)
            card = table_legal[int(rand() * len(table_legal))]
            events = decide(public, PlayCard(public.turn, card))
            public = replay(events, public)
            scored = [e for e in events if isinstance(e, HandScored)]
            if scored:
                assert tuple(taken) == scored[0].tricks
