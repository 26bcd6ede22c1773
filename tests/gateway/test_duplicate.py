"""Duplicate scoring and movement, pure: matchpoints and cross-IMPs against hand-computed
figures, and a movement in which no pair ever meets a board twice."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.gateway import duplicate
from services.gateway.duplicate import Result, ScheduleRefusal

# Four pairs, one round of two boards: table 1 pair 1 North-South against pair 4, table 2
# pair 3 North-South against pair 2 (`movement(4, 1)`).
FOUR_PAIRS = [
    # board 1: NS nets +58 (pair 1) and +19 (pair 3)
    Result(board=1, table=1, ns=1, ew=4, ns_points=110, ew_points=52),
    Result(board=1, table=2, ns=3, ew=2, ns_points=80, ew_points=61),
    # board 2: NS nets -170 (pair 1, a nil set) and -79 (pair 3)
    Result(board=2, table=1, ns=1, ew=4, ns_points=-100, ew_points=70),
    Result(board=2, table=2, ns=3, ew=2, ns_points=41, ew_points=120),
]


def test_matchpoints_and_imps_of_four_pairs_by_hand() -> None:
    scores = {(s.board, s.pair): s for s in duplicate.board_scores(FOUR_PAIRS)}
    # board 1: pair 1 (+58) beat pair 3 (+19): 2 MP to 0; 39 points are 2 IMPs (30 <= 39 < 50)
    assert (scores[1, 1].net, scores[1, 1].matchpoints, scores[1, 1].imps) == (58, 2, 2)
    assert (scores[1, 3].net, scores[1, 3].matchpoints, scores[1, 3].imps) == (19, 0, -2)
    # East-West held the other cards: pair 2 (-19) beat pair 4 (-58)
    assert (scores[1, 2].net, scores[1, 2].matchpoints, scores[1, 2].imps) == (-19, 2, 2)
    assert (scores[1, 4].net, scores[1, 4].matchpoints, scores[1, 4].imps) == (-58, 0, -2)
    # board 2: pair 3 (-79) beat pair 1 (-170) by 91 points: 4 IMPs (80 <= 91 < 110)
    assert (scores[2, 3].matchpoints, scores[2, 3].imps) == (2, 4)
    assert (scores[2, 1].matchpoints, scores[2, 1].imps) == (0, -4)
    assert (scores[2, 4].net, scores[2, 4].matchpoints, scores[2, 4].imps) == (170, 2, 4)
    assert (scores[2, 2].matchpoints, scores[2, 2].imps) == (0, -4)
    assert all(s.top == 2 for s in scores.values())
    assert scores[1, 1].versus == [duplicate.Comparison(pair=3, net=19, matchpoints=2, imps=2)]
    assert (scores[2, 4].direction, scores[2, 4].points, scores[2, 4].against) == ("EW", 70, -100)
    # every pair 2 of 4 matchpoints (50%); the IMPs decide: pairs 3 and 4 +2, pairs 1 and 2 -2
    table = [
        (s.rank, s.pair, s.matchpoints, s.top, s.percent, s.imps, s.boards)
        for s in duplicate.standings([1, 2, 3, 4], list(scores.values()))
    ]
    assert table == [
        (1, 3, 2, 4, 50.0, 2, 2),
        (1, 4, 2, 4, 50.0, 2, 2),
        (3, 1, 2, 4, 50.0, -2, 2),
        (3, 2, 2, 4, 50.0, -2, 2),
    ]


def test_a_tie_is_one_matchpoint_and_each_pair_beaten_two() -> None:
    results = [
        Result(board=1, table=1, ns=1, ew=2, ns_points=70, ew_points=20),  # +50
        Result(board=1, table=2, ns=3, ew=4, ns_points=90, ew_points=40),  # +50
        Result(board=1, table=3, ns=5, ew=6, ns_points=40, ew_points=20),  # +20
    ]
    scores = {s.pair: s for s in duplicate.board_scores(results)}
    assert (scores[1].matchpoints, scores[3].matchpoints, scores[5].matchpoints) == (3, 3, 0)
    assert (scores[2].matchpoints, scores[4].matchpoints, scores[6].matchpoints) == (1, 1, 4)
    assert all(s.top == 4 for s in scores.values())
    ranked = duplicate.standings(range(1, 7), list(scores.values()))
    assert [(s.pair, s.percent) for s in ranked][:1] == [(6, 100.0)]
    assert [(s.pair, s.percent) for s in ranked][-1] == (5, 0.0)


def test_the_imp_scale() -> None:
    assert [duplicate.imps(d) for d in (0, 9, 10, 29, 30, 91, 600, 2000)] == [
        0,
        0,
        1,
        1,
        2,
        4,
        12,
        12,
    ]
    assert duplicate.imps(-91) == -4


def test_a_board_result_twice_for_one_pair_is_refused() -> None:
    again = Result(board=1, table=2, ns=1, ew=2, ns_points=0, ew_points=0)
    with pytest.raises(ScheduleRefusal) as refused:
        duplicate.check_result(FOUR_PAIRS, again)
    assert refused.value.code == "board_played_twice"
    duplicate.check_result(FOUR_PAIRS[:1], FOUR_PAIRS[1])  # another pair: fine


def test_a_schedule_giving_a_pair_a_board_twice_is_refused() -> None:
    twice = [
        [duplicate.Seating(round=1, table=1, ns=1, ew=2), duplicate.Seating(1, 2, 1, 3)],
    ]
    with pytest.raises(ScheduleRefusal) as refused:
        duplicate.check_schedule(twice, per_round=2)
    assert refused.value.code == "board_played_twice"
    with pytest.raises(ScheduleRefusal) as odd:
        duplicate.movement(3, 1)
    assert odd.value.code == "bad_schedule"
    with pytest.raises(ScheduleRefusal):
        duplicate.movement(4, 4)  # a fourth round would meet an opponent again


@given(st.integers(1, 8).map(lambda n: 2 * n), st.data())
def test_the_movement_seats_everyone_once_a_round_against_new_opponents(
    pairs: int, data: st.DataObject
) -> None:
    rounds = data.draw(st.integers(1, pairs - 1))
    schedule = duplicate.movement(pairs, rounds)
    met: set[frozenset[int]] = set()
    directions: dict[int, set[str]] = {}
    for r, tables in enumerate(schedule, 1):
        seated = [p for s in tables for p in (s.ns, s.ew)]
        assert sorted(seated) == list(range(1, pairs + 1))
        for s in tables:
            assert s.round == r
            match = frozenset((s.ns, s.ew))
            assert match not in met
            met.add(match)
            directions.setdefault(s.ns, set()).add("NS")
            directions.setdefault(s.ew, set()).add("EW")
        duplicate.check_schedule(schedule, per_round=3)
    if rounds >= 2 and pairs >= 4:
        assert any(len(d) == 2 for d in directions.values())  # pairs change direction


def test_a_commitment_is_the_seeds_sha256() -> None:
    seed = duplicate.new_seed()
    assert len(seed) == 64
    assert duplicate.commitment_of(seed) == hashlib.sha256(bytes.fromhex(seed)).hexdigest()
    assert duplicate.new_seed() != seed
