"""The rating context: one `RatingsUpdated` per rated game, with every player's before/after.

The event lives in stream `rating-<game id>` and is appended at expected version 0, in the same
transaction as the rating read models: a second attempt for the same game (a redelivery, a
restart after a crash) conflicts on the version and is recognised as already done. So a
finished game moves ratings exactly once, and the log says by how much.

The model's numbers (OpenSkill mu, sigma, the ordinal mu - 3 sigma) stay in every answer.
Beside them, `display` is the rating shown to people, on the scale card rooms use: 1500 for a
newcomer, `DISPLAY_PER_MU` (40) points per unit of mu, so one win or loss moves a settled
player some 10-30 points and a provisional one (marked "?", fewer than 10 rated games) more.
It follows mu, the model's estimate, not the conservative ordinal: a newcomer's first loss
shows as a loss, not as a gain from his shrinking sigma. Ladders stay ordered by the ordinal.
"""

from __future__ import annotations

import msgspec

from events.envelope import REGISTRY

__all__ = [
    "DISPLAY_BASE",
    "DISPLAY_PER_MU",
    "RATING",
    "LadderEntry",
    "LadderQuery",
    "PlayerQuery",
    "PlayerRating",
    "RatingChange",
    "RatingEvent",
    "RatingHistory",
    "RatingsUpdated",
    "Reply",
    "display_rating",
    "rating_stream",
]

DISPLAY_BASE = 1500
DISPLAY_PER_MU = 40.0
_MU0 = 25.0  # services/rating/model.py MU0: the starting mu shows as DISPLAY_BASE


def display_rating(mu: float) -> int:
    """Return the rating people see for a model mu: 1500 at the start, 40 points per mu."""
    return round(DISPLAY_BASE + DISPLAY_PER_MU * (mu - _MU0))


def rating_stream(game_id: str) -> str:
    """Return the stream id of a game's rating update."""
    return f"rating-{game_id}"


class RatingChange(msgspec.Struct, frozen=True, kw_only=True):
    """How one player's rating moved in one game (`games`: rated games after this one)."""

    player_id: str
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    ordinal_before: float
    ordinal_after: float
    games: int


class RatingEvent(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of the rating context's events; the tag is the class name."""


class RatingsUpdated(RatingEvent, frozen=True, kw_only=True):
    """A rated game moved these players' ratings on `ladder` (at `rated_at`, unix seconds).

    `sigma_before` already includes the inactivity decay up to the game.
    """

    game_id: str
    ladder: str
    changes: tuple[RatingChange, ...]
    rated_at: float = 0.0


RatingEvents = RatingsUpdated

RATING = REGISTRY.register("rating", RatingEvents)


# -- reads (core NATS request/reply, JSON) ------------------------------------------------


class LadderQuery(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One page of a ladder, best conservative ordinal first."""

    ladder: str
    offset: int = 0
    limit: int = 50


class PlayerQuery(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A player's ratings on every ladder and his rating history."""

    player_id: str
    history_limit: int = 100


class LadderEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One player on a ladder: rank, OpenSkill mu/sigma, the ordinal ranked by, games."""

    rank: int
    player_id: str
    mu: float
    sigma: float
    ordinal: float
    games: int
    provisional: bool
    display: int = DISPLAY_BASE
    """The rating shown to people (see the module docstring); "?" after it when provisional."""


class PlayerRating(msgspec.Struct, frozen=True, kw_only=True):
    """A player's rating on one ladder (inactivity decay applied)."""

    mu: float
    sigma: float
    ordinal: float
    games: int
    provisional: bool
    display: int = DISPLAY_BASE
    """The rating shown to people (see the module docstring); "?" after it when provisional."""


class RatingHistory(msgspec.Struct, frozen=True, kw_only=True):
    """How one rated game moved the player's rating."""

    game_id: str
    ladder: str
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    ordinal_before: float
    ordinal_after: float
    games: int
    rated_at: float
    display_before: int = DISPLAY_BASE
    display_after: int = DISPLAY_BASE
    """The shown rating before and after this game (`games` counts this one)."""


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """Every answer of the rating reads: `ok`, a machine `code`, a human `message`; a ladder
    page fills `ladder`, `total` and `players`, a player's page `player_id`, `ratings` and
    `history`."""

    ok: bool
    code: str
    message: str
    ladder: str | None = None
    total: int = 0
    players: list[LadderEntry] = []
    player_id: str | None = None
    ratings: dict[str, PlayerRating] = {}
    history: list[RatingHistory] = []
