"""Personal statistics: what the rating service tells of a player's games per ladder.

The rating service owns the read model (`services/rating/stats.py`): it already consumes
every finished game exactly once and keeps each ladder's ratings and their history, which
are part of a player's statistics. It folds a finished ladder game's stream (bids, tricks,
hand scores) into one row per player and game, and answers `StatsQuery` on
`Subjects.rating_stats()` with a `StatsReply`.

Definitions (per player and ladder, over his finished ladder games; a seat a bot took over
still counts as his):

- ``bids``: hands he bid a number (not nil); ``made`` / ``set``: of those, his side's
  contract made or set (a side is his partnership, or himself when each plays for himself);
  ``over_by``: made contracts by overtricks, ``{"0": exact, "1": one over, ...}``.
- ``nil`` / ``nil_made``, ``blind_nil`` / ``blind_nil_made``: his nil bids and those that
  took no trick.
- ``bags``: bags his side took in the hands he played; ``bag_penalties``: times his side hit
  the bag limit; ``points``: his side's points over those hands (per hand: ``/ hands``).
- ``partners`` / ``opponents``: the players met most, with the number of games.
"""

from __future__ import annotations

import msgspec

__all__ = ["LadderStats", "Met", "StatsQuery", "StatsRatingPoint", "StatsReply"]


class StatsQuery(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A player's statistics, on one ladder or (``ladder`` empty) every ladder he played."""

    player_id: str
    ladder: str = ""
    top: int = 5
    """How many partners and opponents to name."""


class Met(msgspec.Struct, frozen=True, kw_only=True):
    """Another player and how many games they shared a table (as partners or opponents)."""

    player_id: str
    games: int


class StatsRatingPoint(msgspec.Struct, frozen=True, kw_only=True):
    """The shown rating after one rated game, oldest first."""

    game_id: str
    rated_at: float
    display: int
    ordinal: float


class LadderStats(msgspec.Struct, frozen=True, kw_only=True):
    """One player's statistics on one ladder (see the module docstring)."""

    ladder: str
    games: int
    wins: int
    hands: int
    bids: int
    made: int
    set: int
    over_by: dict[str, int]
    nil: int
    nil_made: int
    blind_nil: int
    blind_nil_made: int
    bags: int
    bag_penalties: int
    points: int
    bags_per_hand: float
    points_per_hand: float
    partners: list[Met]
    opponents: list[Met]
    rating_history: list[StatsRatingPoint]


class StatsReply(msgspec.Struct, frozen=True, kw_only=True):
    """The answer: ``ok``, a machine ``code``, a human ``message``, the ladders' stats."""

    ok: bool
    code: str
    message: str
    player_id: str = ""
    ladders: list[LadderStats] = []
