"""`benchmarks.suicide`: the random walk behind the suicide figures ends games by the rules.

Nothing here is timed or compared with a measured rate: only that the model scores a hand,
ends a game at the target or at the mercy floor like the engine does, and reads real games.
"""

from __future__ import annotations

import random

from benchmarks import suicide


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
