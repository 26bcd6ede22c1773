"""The rating model: direction of moves, abandonment rule, inactivity, ordinal ladder."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from events.contracts.rating import display_rating
from services.rating.model import (
    MU0,
    PROVISIONAL_GAMES,
    SIGMA0,
    Rating,
    decayed,
    rate_game,
    win_probability,
)

TEAMS = (["n", "s"], ["e", "w"])
NOW = 1_800_000_000.0


def test_winners_rise_and_losers_fall() -> None:
    new = rate_game(TEAMS, {}, winner=0, now=NOW)
    assert set(new) == {"n", "s", "e", "w"}
    assert new["n"].mu > MU0
    assert new["s"].mu > MU0
    assert new["e"].mu < MU0
    assert new["w"].mu < MU0
    assert all(r.sigma < SIGMA0 and r.games == 1 and r.last_played == NOW for r in new.values())


def test_upset_moves_more_than_expected_result() -> None:
    strong, weak = Rating(mu=35.0, sigma=3.0), Rating(mu=15.0, sigma=3.0)
    ratings = {"n": strong, "s": strong, "e": weak, "w": weak}
    expected = rate_game(TEAMS, ratings, winner=0, now=NOW)
    upset = rate_game(TEAMS, ratings, winner=1, now=NOW)
    assert upset["e"].mu - weak.mu > expected["n"].mu - strong.mu > 0


def test_carried_partner_gains_more_than_the_strong_partner() -> None:
    ratings = {"n": Rating(mu=35.0, sigma=6.0), "s": Rating(mu=20.0, sigma=8.0)}
    new = rate_game(TEAMS, ratings, winner=0, now=NOW)
    assert new["s"].mu - 20.0 > new["n"].mu - 35.0 > 0


def test_abandoner_is_charged_a_loss_even_when_his_side_wins() -> None:
    new = rate_game(TEAMS, {}, winner=0, now=NOW, abandoned=frozenset({"n"}))
    assert new["n"].mu < MU0
    assert "s" not in new  # the partner played beside a bot: no move
    assert "e" not in new
    assert "w" not in new


def test_opponents_of_an_abandoner_are_credited_when_they_win() -> None:
    new = rate_game(TEAMS, {}, winner=1, now=NOW, abandoned=frozenset({"n"}))
    assert new["n"].mu < MU0
    assert new["e"].mu > MU0
    assert new["w"].mu > MU0
    assert "s" not in new


@pytest.mark.parametrize("winner", [0, 1])
@pytest.mark.parametrize("partner_mu", [15.0, 25.0, 35.0])
def test_an_abandoners_loss_counts_in_full(winner: int, partner_mu: float) -> None:
    """Issue 26, item 9: the abandoner was rated alone against both opponents, a loss his
    half-strength "team" was expected to take, so timing out when losing cost little. He now
    moves exactly as his partnership losing the game would move him, whatever the score."""
    ratings = {"n": Rating(mu=27.0, sigma=5.0), "s": Rating(mu=partner_mu, sigma=6.0)}
    lost = rate_game(TEAMS, ratings, winner=1, now=NOW)
    new = rate_game(TEAMS, ratings, winner=winner, now=NOW, abandoned=frozenset({"n"}))
    assert new["n"] == lost["n"]
    assert "s" not in new
    both = rate_game(TEAMS, ratings, winner=winner, now=NOW, abandoned=frozenset({"n", "s"}))
    assert both["n"] == lost["n"]
    assert both["s"] == lost["s"]


def test_inactivity_widens_sigma_up_to_the_start_value() -> None:
    rated = Rating(mu=30.0, sigma=2.0, games=40, last_played=NOW)
    month = decayed(rated, NOW + 30 * 86_400)
    years = decayed(rated, NOW + 3_000 * 86_400)
    assert rated.sigma < month.sigma < years.sigma == SIGMA0
    assert month.mu == rated.mu
    assert month.ordinal < rated.ordinal
    assert decayed(rated, NOW) == rated


def test_provisional_until_enough_games() -> None:
    assert Rating(games=PROVISIONAL_GAMES - 1).provisional
    assert not Rating(games=PROVISIONAL_GAMES).provisional


def test_win_probability_is_symmetric_and_favours_the_stronger() -> None:
    strong, weak = [Rating(mu=30.0), Rating(mu=30.0)], [Rating(mu=20.0), Rating(mu=20.0)]
    p = win_probability(strong, weak)
    assert p > 0.5
    assert win_probability(weak, strong) == pytest.approx(1 - p)


def test_winner_must_be_a_team() -> None:
    with pytest.raises(ValueError, match="winner"):
        rate_game(TEAMS, {}, winner=2, now=NOW)


@given(
    st.floats(min_value=-50, max_value=100, allow_nan=False),
    st.floats(min_value=-50, max_value=100, allow_nan=False),
)
def test_the_shown_rating_starts_at_1500_and_orders_as_mu_does(a: float, b: float) -> None:
    assert display_rating(MU0) == 1500
    assert display_rating(MU0 + 1) == 1540
    if a <= b:
        assert display_rating(a) <= display_rating(b)
    assert abs(display_rating(a) - (1500 + 40 * (a - MU0))) <= 0.5
