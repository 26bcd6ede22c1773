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


def rule_problem(options: dict[str, object]) -> str:
    """Return why practice ``options`` make no valid table, "" when they do: the check the
    table itself applies (`engine.Ruleset.from_options`: bounds, then every dependency)."""
    try:
        engine.Ruleset.from_options(options)  # type: ignore[arg-type]
    except (engine.InvalidRuleset, TypeError) as exc:
        return str(exc)
    return ""


def rule_book() -> dict[str, object]:
    """Return what a rules form needs from the engine: every option's default, the bounds of
    the whole-number ones, and the rule book's named variants (`engine.presets.PRESETS`)."""
    from engine import presets, rules

    return {
        "defaults": engine.ranked_default().to_dict(),
        "bounds": {name: list(bound) for name, bound in rules.BOUNDS.items()},
        "other_bound": list(rules.OTHER_BOUND),
        "presets": [
            {
                "name": p.name,
                "label": p.label,
                "description": p.description,
                "rules": dict(p.options),
            }
            for p in presets.PRESETS
        ],
    }
