"""Arena pairing and points, pure: the free pairs meet by points top-down, no immediate
rematch while another free pair can be met instead, the pair free last waits when the count
is odd; a win 2, a draw 1, a loss 0, double on fire (after two wins in a row). Hand-worked
cases and a Hypothesis property checked against a brute-force search of every pairing."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from services.gateway import arena
from services.gateway.arena import DRAW, LOSS, WIN, Free, Game, pair_free


def test_the_free_pairs_meet_the_closest_in_points_top_down() -> None:
    free = [Free(1, 0, None, 0), Free(2, 6, None, 0), Free(3, 2, None, 0), Free(4, 4, None, 0)]
    # order by points: 2 (6), 4 (4), 3 (2), 1 (0): the top two meet, then the next two
    assert pair_free(free) == [(2, 4), (3, 1)]
    # equal points: the lower number first
    assert pair_free([Free(7, 2, None, 0), Free(5, 2, None, 0)]) == [(5, 7)]


def test_no_immediate_rematch_while_another_free_pair_can_be_met() -> None:
    # 2 (6 points) last met 4 (4): 2 meets 3 instead, which leaves 4 with 1
    free = [Free(1, 0, 3, 0), Free(2, 6, 4, 0), Free(3, 2, 1, 0), Free(4, 4, 2, 0)]
    assert pair_free(free) == [(2, 3), (4, 1)]
    # 2-1 and 3-4 just played: the closest by points (2-4, then 3-1) are both fresh
    both = [Free(1, 0, 2, 0), Free(2, 6, 1, 0), Free(3, 2, 4, 0), Free(4, 4, 3, 0)]
    assert pair_free(both) == [(2, 4), (3, 1)]
    # only two free and they just met: nobody else is free, so they play again
    assert pair_free([Free(1, 2, 2, 0), Free(2, 0, 1, 0)]) == [(1, 2)]
    # the top-down choice backtracks: 1's closest (2) is fresh, but then 3 and 4 would
    # rematch, so 1 meets 3 and 2 meets 4
    square = [Free(1, 8, 9, 0), Free(2, 6, 9, 0), Free(3, 4, 4, 0), Free(4, 2, 3, 0)]
    assert pair_free(square) == [(1, 3), (2, 4)]


def test_an_odd_count_leaves_the_pair_free_last_waiting() -> None:
    free = [Free(1, 4, None, 10.0), Free(2, 2, None, 30.0), Free(3, 0, None, 20.0)]
    assert pair_free(free) == [(1, 3)]  # 2 came free last
    assert pair_free([Free(1, 0, None, 5.0)]) == []
    assert pair_free([]) == []


def test_points_a_win_two_a_draw_one_double_on_fire() -> None:
    # pair 1 wins three in a row, draws, wins: 2 + 2 + 4 (on fire) + 2 (a draw on fire) + 2
    games = [
        Game(1, 1, 2, winner=1),
        Game(2, 3, 1, winner=1),
        Game(3, 1, 4, winner=1),
        Game(4, 2, 1, winner=0),
        Game(5, 1, 3, winner=1),
        Game(6, 2, 3, winner=None),  # being played: no points yet
    ]
    got = arena.awards(games)
    assert [got[n, 1] for n in (1, 2, 3, 4, 5)] == [2, 2, 4, 2, 2]
    assert got[4, 2] == 1  # pair 2 draws, not on fire
    assert (6, 2) not in got
    assert arena.points_of(games) == {1: 12, 2: 1, 3: 0, 4: 0}
    table = arena.standings([1, 2, 3, 4], games)
    assert [(s.rank, s.pair, s.points, s.games, s.wins, s.draws, s.losses) for s in table] == [
        (1, 1, 12, 5, 4, 1, 0),
        (2, 2, 1, 2, 0, 1, 1),
        (3, 3, 0, 2, 0, 0, 2),
        (3, 4, 0, 1, 0, 0, 1),
    ]
    assert (table[0].streak, table[0].on_fire) == (1, False)
    assert arena.award([WIN, WIN], WIN) == 4
    assert arena.award([WIN, LOSS, WIN], WIN) == 2
    assert arena.award([DRAW, WIN, WIN], LOSS) == 0
    assert arena.last_opponents(games) == {1: 3, 2: 3, 3: 2, 4: 1}


def test_a_game_closed_unplayed_scores_nobody_and_ends_a_streak() -> None:
    assert arena.winner_of(0, "target", 5, 6) == 5
    assert arena.winner_of(1, "mercy", 5, 6) == 6
    assert arena.winner_of(-1, "hand_cap", 5, 6) == 0  # a draw
    assert arena.winner_of(-1, "abandoned", 5, 6) == arena.NO_RESULT
    assert arena.winner_of(0, "idle", 5, 6) == arena.NO_RESULT
    # pair 1 wins twice, then a game closed unplayed: no points, and no longer on fire
    games = [
        Game(1, 1, 2, winner=1),
        Game(2, 1, 2, winner=1),
        Game(3, 1, 2, winner=arena.NO_RESULT),
        Game(4, 1, 2, winner=1),
    ]
    got = arena.awards(games)
    assert [got[n, 1] for n in (1, 2, 3, 4)] == [2, 2, 0, 2]
    assert [got[n, 2] for n in (1, 2, 3, 4)] == [0, 0, 0, 0]
    first = arena.standings([1, 2], games)[0]
    assert (first.pair, first.points, first.wins, first.losses, first.streak) == (1, 6, 3, 1, 1)


def test_a_pair_whose_people_all_left_their_seats_is_absent() -> None:
    persons = {1: ["ann", "bob"], 2: ["cy"], 3: ["di", "ed"]}  # pair 2: cy and a bot
    assert arena.absent(persons, ["ann"]) == []  # bob is still there
    assert arena.absent(persons, ["ann", "bob", "cy"]) == [1, 2]
    assert arena.absent(persons, []) == []
    assert arena.absent({4: []}, ["x"]) == []  # a bot pair is never absent


def _matchings(pairs: list[int]) -> Iterator[list[tuple[int, int]]]:
    if not pairs:
        yield []
        return
    first, rest = pairs[0], pairs[1:]
    for i, other in enumerate(rest):
        for tail in _matchings(rest[:i] + rest[i + 1 :]):
            yield [(first, other), *tail]


@given(
    st.lists(
        st.tuples(st.integers(0, 10), st.integers(0, 9), st.integers(0, 5)),
        min_size=0,
        max_size=8,
        unique_by=lambda t: t[0],
    ),
)
def test_every_free_pair_but_one_at_most_is_seated_once_without_avoidable_rematches(
    raw: list[tuple[int, int, int]],
) -> None:
    numbers = [n for n, _, _ in raw]
    free = [
        Free(n, 2 * points, numbers[(i + 1) % len(numbers)] if i % 2 else None, float(since))
        for i, (n, points, since) in enumerate(raw)
    ]
    tables = pair_free(free)
    seated = [p for t in tables for p in t]
    assert len(seated) == len(set(seated))
    assert len(seated) == len(free) - len(free) % 2
    if len(free) % 2:  # the one left waiting came free last (ties: the higher number)
        (waits,) = set(numbers) - set(seated)
        assert max(free, key=lambda f: (f.since, f.pair)).pair == waits
    by = {f.pair: f for f in free}
    for a, b in tables:  # the first of a table is placed no lower than the second
        assert (-by[a].points, a) < (-by[b].points, b)

    def rematches(pairing: list[tuple[int, int]]) -> int:
        return sum(by[a].last == b or by[b].last == a for a, b in pairing)

    best = min((rematches(m) for m in _matchings(sorted(seated))), default=0)
    if best == 0:
        assert rematches(tables) == 0
