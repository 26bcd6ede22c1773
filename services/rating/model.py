"""Ratings: OpenSkill Plackett-Luce on individual players inside partnerships.

Each player has a (mu, sigma) per ladder. A finished game is one Plackett-Luce update with
the two partnerships as teams, so a strong player carrying a weak partner gains less than
the partner. The ladder orders players by the conservative ordinal mu - 3*sigma, which a
new player cannot climb by luck in a few games.

Decisions the sources leave open, written down here so the code and the operator guide agree:

- A player is *provisional* until he has finished ``PROVISIONAL_GAMES`` rated games.
- Inactivity widens sigma like Glicko's rating deviation:
  ``sigma' = min(SIGMA0, sqrt(sigma^2 + INACTIVITY_C^2 * idle_days))``, applied when the
  player's next game is rated (and when the ladder is read), never beyond the starting sigma.
- Abandonment (a seat taken over by a bot after its timeout streak): the game stays rated.
  The abandoner is charged a loss against the two opponents whatever the final score; his
  partner's rating does not move (he played beside a bot through no fault of his own); the
  opponents are credited the win only if they actually won the game, otherwise they do not
  move either. Both partners abandoning charges each of them a loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from openskill.models import PlackettLuce

MU0 = 25.0
SIGMA0 = 25.0 / 3.0
PROVISIONAL_GAMES = 10
INACTIVITY_C = 0.35  # sigma units per sqrt(day) of idleness

_MODEL = PlackettLuce(mu=MU0, sigma=SIGMA0)


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
    a = [_MODEL.rating(mu=r.mu, sigma=r.sigma) for r in team_a]
    b = [_MODEL.rating(mu=r.mu, sigma=r.sigma) for r in team_b]
    return float(_MODEL.predict_win([a, b])[0])


def rate_game(
    teams: tuple[list[str], list[str]],
    ratings: dict[str, Rating],
    winner: int,
    now: float,
    abandoned: frozenset[str] = frozenset(),
) -> dict[str, Rating]:
    """Return the new rating of every player whose rating moves after one finished game.

    ``teams`` holds the player ids of team 0 and team 1; ``winner`` is the winning team's
    index; ``abandoned`` names players whose seats were taken over by a bot.
    """
    if winner not in (0, 1):
        raise ValueError(f"winner must be team 0 or 1, not {winner!r}")
    current = {p: decayed(ratings.get(p, Rating()), now) for p in (*teams[0], *teams[1])}
    if not abandoned:
        return _update([teams[winner], teams[1 - winner]], current, now)

    new: dict[str, Rating] = {}
    for team_index, team in enumerate(teams):
        opponents = teams[1 - team_index]
        for quitter in (p for p in team if p in abandoned):
            new[quitter] = _update([opponents, [quitter]], current, now)[quitter]
    if not any(p in abandoned for p in teams[winner]):
        # the winners beat a side that had a bot in it: only credit them if nobody of theirs left
        losers_quit = [p for p in teams[1 - winner] if p in abandoned]
        if losers_quit:
            new.update(
                {
                    p: r
                    for p, r in _update([teams[winner], losers_quit], current, now).items()
                    if p in teams[winner]
                }
            )
    return new


def _update(ranked: list[list[str]], current: dict[str, Rating], now: float) -> dict[str, Rating]:
    """Return new ratings for the players of ``ranked`` teams, best team first."""
    teams = [[_MODEL.rating(mu=current[p].mu, sigma=current[p].sigma) for p in t] for t in ranked]
    result = _MODEL.rate(teams, ranks=list(range(len(ranked))))
    out: dict[str, Rating] = {}
    for players, rated in zip(ranked, result, strict=True):
        for player, r in zip(players, rated, strict=True):
            out[player] = Rating(float(r.mu), float(r.sigma), current[player].games + 1, now)
    return out
