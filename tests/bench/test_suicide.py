"""`benchmarks.suicide`: the random walk behind the suicide figures ends games by the rules.

Nothing here is timed or compared with a measured rate: only that the model scores a hand,
ends a game at the target or at the mercy floor like the engine does, and reads real games.
"""

from __future__ import annotations

import random

from benchmarks import suicide
from engine import GameState
from engine.bot import _rule
from engine.botnil import nil_saved
from tests.engine.support import bid_round, hands, start


def test_nils_that_always_make_end_every_game_by_the_target() -> None:
    rng = random.Random(1)
    # +100 or +110 a hand: both sides pass 500, and the game ends once they differ
    assert {suicide.walk(1.0, [0, 10], [0], rng) for _ in range(50)} == {"target"}
    # level all the way: an exact tie plays on, so the walk only stops at its hand cap
    assert suicide.walk(1.0, [0], [0], rng) == "hand_cap"


def test_nils_that_always_fail_end_every_game_by_mercy_after_two_hands() -> None:
    # -100 a hand for both sides: -200 after the second hand, the ladder's floor
    assert suicide.walk(0.0, [0], [0], random.Random(1)) == "mercy"
    assert suicide.walk(0.0, [0], [50], random.Random(1)) == "mercy"  # -50 a hand: fourth hand
    assert suicide.walk(0.0, [0], [140, 160], random.Random(1)) == "target"  # +40/+60 a hand


def test_the_target_share_grows_with_the_nil_rate() -> None:
    made, failed = [30, 60, -40], [0, 20, -60]
    shares = [suicide.target_share(p, made, failed, 2000) for p in (0.3, 0.6, 0.9)]
    assert shares == sorted(shares)
    assert shares[0] < 0.5 < shares[2]


def test_observed_games_have_one_nil_per_side_every_hand() -> None:
    ends, made, failed = suicide.observe(3)
    assert sum(ends.values()) == 3
    assert set(ends) <= {"target", "mercy", "hand_cap"}
    hands = len(made) + len(failed)
    assert hands >= 2 * 3  # a game lasts two hands at least
    assert hands % 2 == 0  # both sides, every hand


def test_the_oracle_plays_whole_suicide_games() -> None:
    ends, rate = suicide.oracle(2, 5000)
    assert sum(ends.values()) == 2
    assert set(ends) <= {"target", "mercy"}
    assert 0 < rate < 1


def nil_deal(nil_hand: str) -> GameState:
    """North (the first to lead, dealer West) bids nil holding ``nil_hand``, South 5; East
    nil, West 5; the rest of the deck dealt in order."""
    mine = hands(nil_hand)[0]
    rest = [c for c in range(52) if c not in mine]
    dealt = (mine, tuple(rest[:13]), tuple(rest[13:26]), tuple(rest[26:]))
    return bid_round(start(suicide.RULES, dealt, dealer=3), {0: 0, 1: 0, 2: 5, 3: 5})


def test_a_nil_holding_every_spade_is_never_saved() -> None:
    # It leads a spade and nobody else has one: it takes the first trick whatever is played.
    assert nil_saved(nil_deal("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"), 0, 5000, _rule) is False


def test_a_nil_of_low_cards_is_saved_and_a_small_search_may_not_know() -> None:
    state = nil_deal("2C 3C 4C 2D 3D 4D 2H 3H 4H 2S 3S 4S 5S")
    assert nil_saved(state, 0, 100_000, _rule) is True
    assert nil_saved(nil_deal("AC KC QC AD KD QD AH KH QH 2S 3S 4S 5S"), 0, 1, _rule) is None


def test_the_bound_counts_every_nil_of_a_game() -> None:
    nils, made, saved, undecided = suicide.bound(1, 5000, 2000)
    assert nils >= 4
    assert nils % 2 == 0
    assert made <= nils
    assert saved + undecided <= nils
