"""The rule book's variants by name (RULES.md "Options"), each a valid ruleset: the practice
form offers them, and any option can still be changed after choosing one.

Each `Preset` names the options it changes from the ranked ladder's defaults
(`engine.rules.Ruleset`); `tests/engine/test_presets.py` checks that each is a valid
ruleset and named once. The gateway serves them with the bounds (`GET /api/practice/rules`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["PRESETS", "Preset"]


class Preset(NamedTuple):
    """A named variant of the rule book: the options it changes from the ranked ladder."""

    name: str
    label: str
    description: str
    options: dict[str, Any]


PRESETS: tuple[Preset, ...] = (
    Preset(
        "standard", "Standard", "The ranked ladder: four players in two partnerships, to 500.", {}
    ),
    Preset(
        "two-player",
        "Two players",
        "Heads-up (seed 003): 13 cards dealt each, no blind nil.",
        {"players": 2, "blind_nil": False, "blind_nil_exchange": 0},
    ),
    Preset(
        "two-player-draw",
        "Two players, draw",
        "Heads-up from the stock (seed 003): keep or discard the top card, 13 kept each.",
        {"players": 2, "blind_nil": False, "blind_nil_exchange": 0, "deal": "draw"},
    ),
    Preset(
        "cut-throat",
        "Cut-throat",
        "Three players, each for himself: 17 cards each, the 2♣ removed.",
        {"players": 3, "blind_nil": False, "blind_nil_exchange": 0},
    ),
    Preset(
        "five-players",
        "Five players",
        "Five players, each for himself: the deuces removed, 10 cards each.",
        {"players": 5, "blind_nil": False, "blind_nil_exchange": 0},
    ),
    Preset(
        "jokers",
        "Jokers",
        "Big and Little Joker are the top trumps; the 2♣ and 2♦ are removed.",
        {"jokers": True},
    ),
    Preset(
        "joker-joker-deuce",
        "Joker-Joker-Deuce",
        "Jokers and deuces high; Little Willie: a trick won with the 2♣ counts two.",
        {"jokers": True, "deuces_high": True, "little_willie": True},
    ),
    Preset(
        "suicide",
        "Suicide",
        "Each partnership: one partner bids nil, the other at least 4.",
        {"suicide": True},
    ),
    Preset(
        "moe",
        "Big and Little Moe",
        "A partnership may contract to take 8 (Big Moe, 300) or 6 (Little Moe, 150) in a row.",
        {"moe": True},
    ),
    Preset(
        "tournament",
        "Tournament (seed 004)",
        "2♣ leads, team minimum 4, ten for two hundred, Boston, double nil when 200 behind.",
        {
            "first_lead": "two_of_clubs",
            "team_min_bid": 4,
            "ten_for_two_hundred": True,
            "boston": True,
            "blind_nil_deficit": 200,
        },
    ),
)
