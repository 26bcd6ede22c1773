"""Tables of players each for himself (cut-throat's three, five players): one side a seat,
seated in queue order, the prediction the field's; and their ratings (`rate_field`)."""

from __future__ import annotations

import pytest

from events.contracts.skill import Rating
from services.matchmaking.pairing import Waiting, pair, seats_of
from services.rating.model import MU0, rate_field


def w(pid: str, mu: float, joined: float = 0.0) -> Waiting:
    return Waiting(pid, Rating(mu=mu, sigma=3.0), joined)


@pytest.mark.parametrize("seats", [3, 5])
def test_a_field_table_seats_n_players_each_his_own_side(seats: int) -> None:
    queue = [w(f"p{i}", 25.0 + i * 0.1, joined=float(i)) for i in range(seats + 1)]
    (table,) = pair(queue, seats, now=10.0)
    assert table.teams == tuple((f"p{i}",) for i in range(seats))  # the longest waiting first
    assert seats_of(table) == tuple(f"p{i}" for i in range(seats))
    assert 0.0 < table.win_probability < 1.0
    assert abs(table.win_probability - 1 / seats) < 0.05  # near-equal ratings: an even field


def test_partnerships_still_seat_a_c_b_d() -> None:
    (table,) = pair([w("a", 40), w("b", 30), w("c", 20), w("d", 10)], 4, now=1_000.0)
    assert seats_of(table) == (
        table.teams[0][0],
        table.teams[1][0],
        table.teams[0][1],
        table.teams[1][1],
    )


def test_a_field_game_rates_by_place_the_winner_up_the_last_down() -> None:
    players = ["x", "y", "z"]
    new = rate_field(players, [520, 310, -40], winner=0, ratings={}, now=1.0)
    assert new["x"].mu > MU0 > new["z"].mu
    assert new["x"].mu > new["y"].mu > new["z"].mu
    assert {r.games for r in new.values()} == {1}


def test_equal_scores_share_a_place() -> None:
    new = rate_field(["x", "y", "z"], [510, 200, 200], winner=0, ratings={}, now=1.0)
    assert new["y"].mu == pytest.approx(new["z"].mu)


def test_an_abandoner_in_a_field_is_charged_last_the_others_rated_among_themselves() -> None:
    players = ["x", "y", "quitter", "v", "u"]
    scores = [500, 300, 450, 100, 200]  # the bot in his seat did well: he is charged last
    new = rate_field(
        players, scores, winner=0, ratings={}, now=1.0, abandoned=frozenset({"quitter"})
    )
    clean = rate_field(players, scores, winner=0, ratings={}, now=1.0)
    assert new["quitter"].mu < clean["quitter"].mu
    assert new["quitter"].mu == min(r.mu for r in new.values())
    assert new["x"].mu > new["y"].mu > new["u"].mu > new["v"].mu
