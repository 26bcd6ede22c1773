"""Seasons: a ladder's season ends, its leaderboard is frozen and kept, ratings go on.

A ladder of the ladders file (`events/contracts/ladders.py`) with ``season_days`` > 0 runs
season 1 from ``season_start``, season 2 after it, and so on. When a season is over the
rating service closes it exactly once (`services/rating/seasons.py`): `SeasonEnded` is
appended to stream ``season-<ladder>_s<N>`` at version 0 and the leaderboard is frozen: every
player who finished a rated game on the ladder during the season, with his rating after his
last game of it, ranked by the ordinal. Then ratings ``continue`` as they are, or take a
``soft`` reset as the ladder says: mu moves halfway back to the start (25) and sigma widens
to at least half the start's, so the next season's order must be earned again while a
strong player still starts ahead. Games and the provisional status are kept; matchmaking
applies the same reset to its own copy of ratings when it consumes `SeasonEnded`.

`SeasonQuery` reads a season's leaderboard (the running one: live, as `LadderQuery`).
"""

from __future__ import annotations

import msgspec

from events.contracts.rating import LadderEntry
from events.contracts.skill import MU0, SIGMA0
from events.envelope import REGISTRY

__all__ = [
    "SEASONS",
    "SOFT_KEEP",
    "SeasonBoard",
    "SeasonEnded",
    "SeasonEvent",
    "SeasonQuery",
    "season_stream",
    "soft_reset",
]

SOFT_KEEP = 0.5
"""A soft reset keeps this share of mu's distance from the start; sigma widens to at least
``SIGMA0 * SOFT_KEEP``."""


def soft_reset(mu: float, sigma: float) -> tuple[float, float]:
    """Return a rating after a soft reset (the rating service's and matchmaking's copy)."""
    return MU0 + (mu - MU0) * SOFT_KEEP, max(sigma, SIGMA0 * SOFT_KEEP)


def season_stream(ladder: str, season: int) -> str:
    """Return the stream id of a ladder's season end."""
    return f"season-{ladder}_s{season}"  # a subject token: no dot


class SeasonEvent(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of the season context's events; the tag is the class name."""


class SeasonEnded(SeasonEvent, frozen=True, kw_only=True):
    """Season ``season`` of ``ladder`` ran from ``starts_at`` to ``ends_at`` (unix seconds);
    its leaderboard of ``players`` was frozen, then ratings had a ``reset``."""

    ladder: str
    season: int
    starts_at: float
    ends_at: float
    players: int
    reset: str
    """"continue" or "soft" (see the module docstring)."""


SeasonEvents = SeasonEnded

SEASONS = REGISTRY.register("season", SeasonEvents)


class SeasonQuery(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One page of a season's leaderboard (0: the running season)."""

    ladder: str
    season: int = 0
    offset: int = 0
    limit: int = 50


class SeasonBoard(msgspec.Struct, frozen=True, kw_only=True):
    """The answer: ``ok``, ``code``, ``message``; a page of the season's leaderboard."""

    ok: bool
    code: str
    message: str
    ladder: str = ""
    season: int = 0
    current: int = 0
    """The season running now."""
    frozen: bool = False
    """The season is over: its leaderboard is kept as it was at its end."""
    starts_at: float = 0.0
    ends_at: float | None = None
    """null: a ladder without seasons (its one season never ends)."""
    total: int = 0
    players: list[LadderEntry] = []
