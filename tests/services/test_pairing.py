"""Pairing: windows widen with time, tables are mutual, teams are balanced, nobody twice."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from events.contracts.skill import Rating
from services.matchmaking.pairing import (
    WINDOW_MAX,
    WINDOW_START,
    Waiting,
    best_split,
    pair,
    window,
)


def w(pid: str, mu: float, joined: float = 0.0) -> Waiting:
    return Waiting(pid, Rating(mu=mu, sigma=3.0), joined)


def test_window_starts_tight_and_widens_to_a_cap() -> None:
    assert window(0) == WINDOW_START
    assert window(10) > window(5) > window(0)
    assert window(10_000) == WINDOW_MAX


def test_far_apart_players_wait_then_match_once_windows_widen() -> None:
    queue = [w("a", 10), w("b", 20), w("c", 30), w("d", 40)]
    assert pair(queue, 4, now=1.0) == []
    tables = pair(queue, 4, now=1_000.0)
    assert len(tables) == 1
    assert sorted(p for team in tables[0].teams for p in team) == ["a", "b", "c", "d"]


def test_split_pairs_strongest_with_weakest() -> None:
    players = [w("a", 40), w("b", 30), w("c", 20), w("d", 10)]
    split = best_split(players)
    assert {frozenset(t) for t in split.teams} == {frozenset({"a", "d"}), frozenset({"b", "c"})}
    assert abs(split.win_probability - 0.5) < 0.05


def test_longest_waiting_player_is_seated_first() -> None:
    early = [w("old", 25, joined=0.0)]
    late = [w(f"new{i}", 25, joined=50.0) for i in range(4)]
    tables = pair(early + late, 4, now=51.0)
    seated = [p for t in tables for team in t.teams for p in team]
    assert "old" in seated


def test_heads_up_ladder_pairs_two() -> None:
    tables = pair([w("a", 25), w("b", 25.5), w("c", 40)], 2, now=0.0)
    assert [sorted(t.teams[0] + t.teams[1]) for t in tables] == [["a", "b"]]


@settings(max_examples=60, deadline=None)
@given(
    mus=st.lists(st.floats(0, 50), min_size=0, max_size=14),
    now=st.floats(0, 300),
    seats=st.sampled_from([2, 4]),
)
def test_every_table_is_full_mutual_and_nobody_sits_twice(
    mus: list[float], now: float, seats: int
) -> None:
    queue = [w(f"p{i}", mu, joined=float(i)) for i, mu in enumerate(mus)]
    tables = pair(queue, seats, now=max(now, float(len(mus))))
    seated = [p for t in tables for team in t.teams for p in team]
    assert len(seated) == len(set(seated)) == seats * len(tables)
    by_id = {q.player_id: q for q in queue}
    t_now = max(now, float(len(mus)))
    for table in tables:
        players = [p for team in table.teams for p in team]
        for player in players:
            for other in players:
                gap = abs(by_id[player].rating.mu - by_id[other].rating.mu)
                assert gap <= window(t_now - by_id[player].joined_at) + 1e-9
