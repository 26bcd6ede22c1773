"""Swiss pairing, pure: score groups top-down, no rematch while one can be avoided, byes that
rotate, directions that alternate; hand-worked cases and a Hypothesis property checked
against a brute-force search of every pairing."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.gateway import duplicate, swiss
from services.gateway.duplicate import Result
from services.gateway.swiss import Pairing, met_key, pair_round, ranking, seat


def test_round_one_pairs_the_order_top_down() -> None:
    assert pair_round([1, 2, 3, 4, 5, 6], set()) == Pairing(
        tables=((1, 2), (3, 4), (5, 6)), bye=None
    )


def test_ranking_is_total_then_tiebreak_then_pair_number() -> None:
    # pairs 1 and 3 both on 2: pair 3's IMPs (+10) beat pair 1's (-5); 5 and 6 tie on all
    order = ranking([1, 2, 3, 4, 5, 6], {1: 2, 2: 4, 3: 2, 4: 0}, {1: -5, 3: 10})
    assert order == [2, 3, 1, 4, 5, 6]


def test_score_groups_pair_within_then_float_down_avoiding_rematches() -> None:
    # after round 1 (1-2, 3-4, 5-6) the order is 1..6: 1 meets 3 (2 already met); 2 would
    # meet 4, but that leaves 5-6, a rematch, so 2 meets 5 and 4 meets 6
    met = {met_key(1, 2), met_key(3, 4), met_key(5, 6)}
    assert pair_round([1, 2, 3, 4, 5, 6], met) == Pairing(tables=((1, 3), (2, 5), (4, 6)), bye=None)
    # a score group of two who have not met stays together: top pairs 1 and 4
    order = ranking([1, 2, 3, 4], {1: 4, 4: 4, 2: 0, 3: 0})
    assert order == [1, 4, 2, 3]
    assert pair_round(order, {met_key(1, 2), met_key(3, 4)}) == Pairing(
        tables=((1, 4), (2, 3)), bye=None
    )


def test_the_top_pair_looks_further_down_when_the_next_was_met() -> None:
    assert pair_round([1, 2, 3, 4], {met_key(1, 2), met_key(1, 3)}).tables == ((1, 4), (2, 3))
    assert pair_round([1, 2, 3, 4], {met_key(1, 3), met_key(2, 4)}).tables == ((1, 2), (3, 4))


def test_a_rematch_only_when_every_pairing_has_one() -> None:
    everyone = {met_key(a, b) for a in range(1, 5) for b in range(a + 1, 5)}
    assert pair_round([1, 2, 3, 4], everyone).tables == ((1, 2), (3, 4))


def test_byes_go_to_the_lowest_with_fewest_byes_and_rotate() -> None:
    order = [1, 2, 3, 4, 5]
    assert pair_round(order, set()).bye == 5
    assert pair_round(order, set(), {5: 1}).bye == 4
    assert pair_round(order, set(), {1: 1, 3: 1, 4: 1, 5: 1}).bye == 2
    # the lowest (3) sitting out would leave 1-2, a rematch: the next lowest sits out
    assert pair_round([1, 2, 3], {met_key(1, 2)}) == Pairing(tables=((1, 3),), bye=2)


def test_direction_goes_to_the_pair_that_sat_north_south_less() -> None:
    assert seat(1, 2, {}) == (1, 2)
    assert seat(1, 2, {1: 2, 2: 1}) == (2, 1)
    assert seat(1, 2, {1: 1, 2: 1}) == (1, 2)


def test_an_entrant_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        pair_round([1, 2, 2, 3], set())


def _matchings(people: list[int]) -> Iterator[list[tuple[int, int]]]:
    if not people:
        yield []
        return
    first, rest = people[0], people[1:]
    for i, other in enumerate(rest):
        for tail in _matchings(rest[:i] + rest[i + 1 :]):
            yield [(first, other), *tail]


def _clean_exists(people: list[int], met: set[frozenset[int]], byes: list[int | None]) -> bool:
    for bye in byes:
        rest = [p for p in people if p != bye]
        if any(all(met_key(a, b) not in met for a, b in m) for m in _matchings(rest)):
            return True
    return False


@given(
    st.integers(min_value=2, max_value=8),
    st.integers(min_value=1, max_value=8),
    st.randoms(use_true_random=False),
)
def test_rounds_never_rematch_while_avoidable_and_byes_rotate(
    n: int, rounds: int, rng: random.Random
) -> None:
    people = list(range(1, n + 1))
    totals = dict.fromkeys(people, 0)
    met: set[frozenset[int]] = set()
    byes: dict[int, int] = {}
    for _ in range(rounds):
        order = ranking(people, totals)
        pairing = pair_round(order, met, byes)
        seated = [p for t in pairing.tables for p in t]
        if pairing.bye is not None:
            seated.append(pairing.bye)
        assert sorted(seated) == people  # everyone once: at one table, or the bye
        assert (pairing.bye is None) == (n % 2 == 0)
        rematch = any(met_key(a, b) in met for a, b in pairing.tables)
        everyone: list[int | None] = list(people) if n % 2 else [None]
        assert rematch == (not _clean_exists(people, met, everyone))
        if n % 2 and not rematch:
            fewest = min(byes.get(p, 0) for p in people)
            owed: list[int | None] = [p for p in people if byes.get(p, 0) == fewest]
            if _clean_exists(people, met, owed):  # rotation holds while it costs no rematch
                assert pairing.bye in owed
        for a, b in pairing.tables:
            assert order.index(a) < order.index(b)  # the higher-ranked pair first
            met.add(met_key(a, b))
            winner = a if rng.random() < 0.5 else b
            totals[winner] += 2
            totals[a] += 1
            totals[b] += 1
        if pairing.bye is not None:
            byes[pairing.bye] = byes.get(pairing.bye, 0) + 1
            totals[pairing.bye] += 1


def test_a_bye_scores_half_the_top_of_each_board_of_its_round() -> None:
    # six pairs played boards 3 and 4 (round 2, two per round) at three tables: a pair's top
    # is 4 (two others held its cards); the bye gets 2 of 4 on each, nothing on unscored 5
    played = duplicate.board_scores(
        [
            Result(board=b, table=t, ns=2 * t - 1, ew=2 * t, ns_points=10 * t, ew_points=0)
            for b in (3, 4)
            for t in (1, 2, 3)
        ]
    )
    byes = swiss.bye_scores({2: 7, 3: 8}, played, 2)
    assert [(s.board, s.pair, s.direction, s.matchpoints, s.top) for s in byes] == [
        (3, 7, "BYE", 2, 4),
        (4, 7, "BYE", 2, 4),
    ]
    ranked = duplicate.standings([1, 7], played + byes)
    assert [(s.pair, s.matchpoints, s.top) for s in ranked] == [(7, 4, 8), (1, 0, 8)]
