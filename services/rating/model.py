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
  The abandoner is charged a loss in full whatever the final score: exactly what his
  partnership losing the game to the opponents would cost him (his partner's rating is part
  of the sum his side is judged by). Rating him alone against the two opponents, as once
  done, made his "team" half as strong as theirs, so the loss was expected and cost little:
  timing out whenever the partnership was losing was cheap, and shielded the partner. His
  partner's rating does not move (he played beside a bot through no fault of his own; a pair
  where one keeps abandoning while partnered shows in `spades fairplay`); the opponents are
  credited the win only if they actually won the game, otherwise they do not move either.
  Both partners abandoning charges each of them the full loss.
- Each for himself (cut-throat, five players: a side per seat): one Plackett-Luce update of
  the whole field ranked by final score (the winner first, equal scores share a place). An
  abandoner is charged last place in the full field, below everyone; the others are rated
  by their order among themselves (they played it out, against a bot in his seat), when at
  least two of them are left.
"""

from __future__ import annotations

from events.contracts.skill import (
    INACTIVITY_C,
    MODEL,
    MU0,
    PROVISIONAL_GAMES,
    SIGMA0,
    Rating,
    decayed,
    win_probability,
)

# The skill model matchmaking shares lives in events/contracts/skill.py; it is re-exported here for
# the rating service's own callers.
__all__ = [
    "INACTIVITY_C",
    "MU0",
    "PROVISIONAL_GAMES",
    "SIGMA0",
    "Rating",
    "decayed",
    "rate_field",
    "rate_game",
    "win_probability",
]


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
        if any(p in abandoned for p in team):
            # the partnership's loss, in full: taken by its quitters only
            lost = _update([teams[1 - team_index], team], current, now)
            new.update({p: lost[p] for p in team if p in abandoned})
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
    teams = [[MODEL.rating(mu=current[p].mu, sigma=current[p].sigma) for p in t] for t in ranked]
    result = MODEL.rate(teams, ranks=list(range(len(ranked))))
    out: dict[str, Rating] = {}
    for players, rated in zip(ranked, result, strict=True):
        for player, r in zip(players, rated, strict=True):
            out[player] = Rating(float(r.mu), float(r.sigma), current[player].games + 1, now)
    return out


def rate_field(
    players: list[str],
    scores: list[int],
    winner: int,
    ratings: dict[str, Rating],
    now: float,
    abandoned: frozenset[str] = frozenset(),
) -> dict[str, Rating]:
    """Return the new ratings after a game where each played for himself (see the module
    docstring): ``players[i]`` scored ``scores[i]``; ``winner`` is the winning seat."""
    current = {p: decayed(ratings.get(p, Rating()), now) for p in players}

    def place(i: int) -> tuple[int, int]:  # the winner first, then by score
        return (0 if i == winner else 1, -scores[i])

    order = sorted(range(len(players)), key=place)
    new: dict[str, Rating] = {}
    stayed = [i for i in order if players[i] not in abandoned]
    if abandoned:
        field = [*stayed, *(i for i in order if players[i] in abandoned)]
        ranks = [place(i) if players[i] not in abandoned else (2, 0) for i in field]
        lost = _ranked([players[i] for i in field], _dense(ranks), current, now)
        new.update({p: r for p, r in lost.items() if p in abandoned})
        if len(stayed) >= 2:
            places = _dense([place(i) for i in stayed])
            new.update(_ranked([players[i] for i in stayed], places, current, now))
        return new
    return _ranked([players[i] for i in order], _dense([place(i) for i in order]), current, now)


def _dense(keys: list[tuple[int, int]]) -> list[int]:
    """Return 0-based places of sorted keys, equal keys sharing one."""
    distinct = sorted(set(keys))
    return [distinct.index(k) for k in keys]


def _ranked(
    players: list[str], ranks: list[int], current: dict[str, Rating], now: float
) -> dict[str, Rating]:
    teams = [[MODEL.rating(mu=current[p].mu, sigma=current[p].sigma)] for p in players]
    result = MODEL.rate(teams, ranks=[float(r) for r in ranks])
    return {
        p: Rating(float(r[0].mu), float(r[0].sigma), current[p].games + 1, now)
        for p, r in zip(players, result, strict=True)
    }
