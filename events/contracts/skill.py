"""The skill model the rating service and matchmaking share: a player's rating, its
inactivity decay, and the predicted result of a game between two teams.

OpenSkill Plackett-Luce (``MODEL``); the rating service rates finished games with it
(`services.rating.model.rate_game`), matchmaking balances tables with ``win_probability``
and queues a player with his ``decayed`` rating. It lives outside both service packages so
that neither imports the other (tests/services/test_boundaries.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from openskill.models import PlackettLuce

MU0 = 25.0
SIGMA0 = 25.0 / 3.0
PROVISIONAL_GAMES = 10
INACTIVITY_C = 0.35  # sigma units per sqrt(day) of idleness

MODEL = PlackettLuce(mu=MU0, sigma=SIGMA0)


@dataclass(frozen=True, slots=True)
class Rating:
    """One player's rating on one ladder."""

    mu: float = MU0
    sigma: float = SIGMA0
    games: int = 0
    last_played: float | None = None  # unix seconds of the last rated game

    @property
    def ordinal(self) -> float:
        """Return the conservative skill estimate mu - 3*sigma used to order the ladder."""
        return self.mu - 3.0 * self.sigma

    @property
    def provisional(self) -> bool:
        """Return whether too few games are rated for the ordinal to be trusted."""
        return self.games < PROVISIONAL_GAMES


def decayed(rating: Rating, now: float) -> Rating:
    """Return the rating with sigma widened for the days idle since its last game."""
    if rating.last_played is None or now <= rating.last_played:
        return rating
    idle_days = (now - rating.last_played) / 86_400.0
    sigma = min(SIGMA0, math.sqrt(rating.sigma**2 + INACTIVITY_C**2 * idle_days))
    return Rating(rating.mu, sigma, rating.games, rating.last_played)


def win_probability(team_a: list[Rating], team_b: list[Rating]) -> float:
    """Return the predicted probability that team_a beats team_b."""
    a = [MODEL.rating(mu=r.mu, sigma=r.sigma) for r in team_a]
    b = [MODEL.rating(mu=r.mu, sigma=r.sigma) for r in team_b]
    return float(MODEL.predict_win([a, b])[0])


def field_win_probabilities(players: list[Rating]) -> list[float]:
    """Return each player's predicted chance to win a game where each plays for himself."""
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in players]
    return [float(p) for p in MODEL.predict_win(teams)]
