"""Quitters pay: the playban events matchmaking records, and the escalation they follow.

Leaving a rated game before its end is an *offence*: a seat abandoned (three missed turns in
a row, which is also what a disconnect that never comes back ends in, or the player's own
"Leave"/"Resign"), or running the clock out (`CLOCK_TIMEOUTS` or more turns timed out in one
rated game without being abandoned). Each offence in the last `WINDOW_DAYS` counts, lichess's
playban being the anchor: the first is a warning, then queue bans of `STEPS` (15 minutes,
1 hour, 1 day for each one after). A ban refuses `JoinQueue` with the code ``playban``, the
reason and its end (`Reply.ends_at`); a game in progress is never touched.

Each offence is one event in the player's stream ``playban-<player_id>``, appended by
matchmaking exactly once per game and player (`services/matchmaking/playbans.py`).
"""

from __future__ import annotations

import msgspec

from events.envelope import REGISTRY

__all__ = [
    "CLOCK_TIMEOUTS",
    "PLAYBAN",
    "REASONS",
    "STEPS",
    "WINDOW_DAYS",
    "PlaybanEvent",
    "PlaybanIssued",
    "ban_seconds",
    "playban_stream",
]

STEPS = (0.0, 15 * 60.0, 60 * 60.0, 24 * 60 * 60.0)
"""Ban length of the 1st, 2nd, 3rd, 4th and later offences in the window (0: a warning)."""
WINDOW_DAYS = 30.0
"""Offences older than this are forgiven: they no longer count toward the next step."""
CLOCK_TIMEOUTS = 5
"""Turns timed out in one rated game (not abandoned) that count as running the clock out."""
REASONS = {
    "abandoned": "you missed three turns in a row in a rated game, and a bot took your seat",
    "left": "you left a rated game before its end",
    "clock": "you let your clock run out turn after turn in a rated game",
}


def playban_stream(player_id: str) -> str:
    """Return the stream id of a player's offences."""
    return f"playban-{player_id}"


def ban_seconds(offence: int) -> float:
    """Return how long the ``offence``-th offence in the window bans (0: a warning)."""
    return STEPS[min(max(offence, 1), len(STEPS)) - 1]


class PlaybanEvent(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of the playban context's events; the tag is the class name."""


class PlaybanIssued(PlaybanEvent, frozen=True, kw_only=True):
    """A player's offence at a rated game, and what it cost: a warning (``ends_at`` equal
    to ``at``) or a ban from every queue until ``ends_at`` (unix seconds)."""

    player_id: str
    game_id: str
    ladder: str
    reason: str
    """A key of `REASONS`: abandoned, left or clock."""
    offence: int
    """The offence's number in the last `WINDOW_DAYS` (1: the first, a warning)."""
    at: float
    ends_at: float


PlaybanEvents = PlaybanIssued

PLAYBAN = REGISTRY.register("playban", PlaybanEvents)
