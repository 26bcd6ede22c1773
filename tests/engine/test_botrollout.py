"""The strong bot's fused rollout plays the same cards as the policy on the fast table."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from engine.botrollout import copy_table, play_out, rollout
from engine.fast import Table, deal_hands
from engine.rules import Ruleset, tables
from engine.state import first_leader
from tests.engine.test_properties import PROFILE, rulesets


def position(rules: Ruleset, seed: int, bids: list[int] | None = None) -> Table:
    """Return a random deal with random bids (nils often), a random number of cards in."""
    rng = random.Random(seed)
    t = tables(rules)
    hands = deal_hands(t, rng)
    if bids is None:
        bids = [0 if rng.random() < 0.3 else rng.choice(t.bids) for _ in range(t.players)]
    leader = first_leader(rules, tuple(tuple(h) for h in hands), 0)
    table = Table(rules, hands, leader, bids=bids, history=[])
    for _ in range(rng.randrange(t.tricks * t.players)):
        seat = table.to_play()
        table.play(seat, rng.choice(table.legal(seat)))
    return table


def state_of(table: Table) -> tuple[object, ...]:
    return (table.hands, table.trick, table.leader, table.done, table.broken, table.taken)


@PROFILE
@given(rulesets(max_hands=1), st.integers(0, 2**32))
def test_the_fused_play_out_plays_the_rollouts_cards(rules: Ruleset, seed: int) -> None:
    start = position(rules, seed)
    before = state_of(copy_table(start))
    policy, fused = copy_table(start), copy_table(start)
    taken = policy.play_out(rollout)
    assert play_out(fused) == taken
    assert state_of(fused) == state_of(policy)
    assert fused.history == policy.history
    # The copies shared nothing that play changes with the position they came from.
    assert state_of(start) == before


@PROFILE
@given(st.integers(0, 2**32))
def test_the_fused_play_out_matches_on_ladder_hands_with_nils(seed: int) -> None:
    start = position(Ruleset(), seed)
    policy, fused = copy_table(start), copy_table(start)
    assert play_out(fused) == policy.play_out(rollout)
    assert state_of(fused) == state_of(policy)


@PROFILE
@given(rulesets(max_hands=1), st.integers(0, 2**32))
def test_habits_kept_across_hands_of_the_same_bids_change_no_card(
    rules: Ruleset, seed: int
) -> None:
    # As a search plays them: many deals of one position, one dict of habits.
    modes: dict[tuple[int, ...], list[int]] = {}
    first = position(rules, seed)
    for k in range(6):
        start = position(rules, seed + k, first.bids)
        policy, fused = copy_table(start), copy_table(start)
        assert play_out(fused, modes) == policy.play_out(rollout)
        assert state_of(fused) == state_of(policy)
