"""The matchmaking context: queue streams, and the request/reply messages of the queue.

One stream per ladder, `queue-<ladder>`, holds who joined, who left and which matches were
formed. `MatchFound` sits in the same stream as the queue, so taking four players out of the
queue and announcing their match is ONE append at the stream's expected version: a match is
never announced for players still queued, nor players removed without their match.

Folding the stream gives the queue (`fold_queue`); the matchmaking service rebuilds its state
that way at every start, so a restart (or a kill -9) loses nobody.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from events.envelope import REGISTRY

__all__ = [
    "MATCHMAKING",
    "JoinQueue",
    "LeaveQueue",
    "MatchFound",
    "MatchmakingEvent",
    "PlayerLeftQueue",
    "PlayerQueued",
    "QueueStatus",
    "Reply",
    "fold_queue",
    "queue_stream",
]


def queue_stream(ladder: str) -> str:
    """Return the stream id of a ladder's queue."""
    return f"queue-{ladder}"


class MatchmakingEvent(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of every event of a queue stream; the tag is the class name."""


class PlayerQueued(MatchmakingEvent, frozen=True, kw_only=True):
    """A player joined the ladder's queue with this rating, at `joined_at` (unix seconds)."""

    player_id: str
    ladder: str
    mu: float
    sigma: float
    joined_at: float
    avoid: tuple[str, ...] = ()
    """Accounts linked to this one when it joined (the gateway's fair-play record, sent in
    `JoinQueue.avoid`): never seated with it."""


class PlayerLeftQueue(MatchmakingEvent, frozen=True, kw_only=True):
    """A player left the queue without a match (`reason`: "left", ...)."""

    player_id: str
    reason: str


class MatchFound(MatchmakingEvent, frozen=True, kw_only=True):
    """Players were taken out of the queue and seated together; the table opens the game.

    `seats` holds the player id per seat. Four players: the partnership (a, b) against (c, d)
    sits a=0, c=1, b=2, d=3 (team = seat % 2). Heads-up: seat = side. `win_probability` is the
    predicted chance of the side of seat 0.
    """

    match_id: str
    ladder: str
    rules: dict[str, Any]
    seats: tuple[str, ...]
    win_probability: float


MatchmakingEvents = PlayerQueued | PlayerLeftQueue | MatchFound

MATCHMAKING = REGISTRY.register("matchmaking", MatchmakingEvents)


def fold_queue(
    events: Iterable[MatchmakingEvent], queue: dict[str, PlayerQueued] | None = None
) -> dict[str, PlayerQueued]:
    """Return who is waiting (player id -> their PlayerQueued) after `events`, in order."""
    waiting = dict(queue or {})
    for event in events:
        if isinstance(event, PlayerQueued):
            waiting[event.player_id] = event
        elif isinstance(event, PlayerLeftQueue):
            waiting.pop(event.player_id, None)
        elif isinstance(event, MatchFound):
            for player in event.seats:
                waiting.pop(player, None)
    return waiting


# -- requests (core NATS request/reply, JSON) -----------------------------------------------------


class JoinQueue(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Put `player_id` in the queue of `ladder`."""

    player_id: str
    ladder: str
    avoid: tuple[str, ...] = ()
    """Accounts never to seat with him: the gateway owns the fair-play record (who was seen
    at one address or device) and sends the accounts it links to his at each join."""
    issued_at: float = 0.0
    """When the player asked (unix s, the gateway's clock; 0: unknown). The gateway sends a
    request again while unanswered, so a copy may arrive late: one issued before the player's
    last applied change, or over a minute ago, is refused `stale` and changes nothing."""


class LeaveQueue(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Take `player_id` out of whatever queue he is in."""

    player_id: str
    issued_at: float = 0.0
    """As `JoinQueue.issued_at`."""


class QueueStatus(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where `player_id` stands, and how many wait on each ladder."""

    player_id: str
    avoid: tuple[str, ...] = ()
    """The accounts the gateway's fair-play record links to his (as in `JoinQueue`): the
    status counts how many of those wait in his queue (`Reply.linked_waiting`)."""


class Reply(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Every matchmaking answer: `ok`, a machine `code`, a human `message`, and details.

    Answers (ok): queued, left; status answers queued, in_game or idle. Refusals (not ok,
    nothing appended): malformed, unknown_ladder, bot_not_allowed, already_queued, in_game,
    not_queued, playban (a queue ban runs until `ends_at`: events/contracts/playbans.py),
    unavailable (the service could not reach its store: try again).
    """

    ok: bool
    code: str
    message: str
    ladder: str | None = None
    waited: float | None = None
    window: float | None = None
    queue_sizes: dict[str, int] | None = None
    match_id: str | None = None
    linked_waiting: int | None = None
    """Status of a queued player: how many of the others waiting in his queue fair play keeps
    from his table (the accounts of `QueueStatus.avoid`, and those that named him when they
    joined): when they are all there is, that, not the window, holds him back."""
    ends_at: float | None = None
    """A ``playban`` refusal: when the ban ends (unix seconds)."""
