"""Which queue requests arrive too late to apply.

The gateway sends a join or leave again while it is unanswered (a replica of the public queue
group may be paused and swallow it, a ladder may be changing hands), so a copy can reach a
ladder's owner after the player's next request: a join swallowed by a paused replica and
forwarded when it resumes would queue a player who has left since. Each request carries when
the player issued it (`JoinQueue.issued_at`); the owner refuses one issued before the last
change it applied for that player, or longer ago than `STALE_AFTER` (a replica paused for
minutes). Copies of one request share their time, so a duplicate is still a duplicate
(`already_queued`, `not_queued`), which the gateway reads as the first copy's success.

The last changes are the owner's memory: a new owner starts without them, and within
`STALE_AFTER` of a take-over a copy older than the player's last change but forwarded to the
new owner could still apply (the take-over and the late copy would both have to fall there).
"""

from __future__ import annotations

STALE_AFTER = 60.0
"""Seconds after which a queue request is refused whatever it asks."""
KEPT = 10_000
"""Players whose last change is remembered before those older than `STALE_AFTER` go."""


class Freshness:
    """The owner's record of when each player's last applied queue request was issued."""

    def __init__(self) -> None:
        self.changed: dict[str, float] = {}

    def stale(self, player: str, issued_at: float, now: float) -> bool:
        """Return whether a request ``player`` issued at ``issued_at`` comes too late."""
        if issued_at <= 0:  # a client that does not say: no order to keep
            return False
        return issued_at < self.changed.get(player, 0.0) or now - issued_at > STALE_AFTER

    def applied(self, player: str, issued_at: float, now: float) -> None:
        """Record that a request ``player`` issued at ``issued_at`` changed his place."""
        if issued_at <= 0:
            return
        self.changed[player] = max(issued_at, self.changed.get(player, 0.0))
        if len(self.changed) > KEPT:
            for old in [p for p, t in self.changed.items() if now - t > STALE_AFTER]:
                del self.changed[old]
