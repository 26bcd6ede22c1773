"""Ladders: a ladder is a name for one validated ruleset; ratings and queues are per ladder."""

from __future__ import annotations

import engine

LADDERS: dict[str, engine.Ruleset] = {
    "standard": engine.ranked_default(),
    "heads-up": engine.two_player_default(),
}
"""Every ranked ladder: the RULES.md defaults, and the two-player defaults heads-up."""


class UnknownLadder(LookupError):
    """No ranked ladder has this name."""

    code = "unknown_ladder"


def ruleset_of(ladder: str) -> engine.Ruleset:
    """Return the ruleset of ladder ``ladder``."""
    try:
        return LADDERS[ladder]
    except KeyError:
        raise UnknownLadder(
            f"no ladder named {ladder!r}; ladders: {', '.join(sorted(LADDERS))}"
        ) from None
