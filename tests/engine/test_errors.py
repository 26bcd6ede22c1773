"""Typed rejections: stable, distinct machine codes and one-line docstrings."""

from __future__ import annotations

import engine.errors as errors
from engine import COMMAND_TYPES, EVENT_TYPES, RuleViolation


def violations() -> list[type[RuleViolation]]:
    return [
        cls
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, RuleViolation) and cls is not RuleViolation
    ]


def test_every_rule_violation_has_its_own_code_and_a_one_line_docstring() -> None:
    codes = [cls.code for cls in violations()]
    assert len(codes) == len(set(codes))
    assert {"out_of_turn", "must_follow_suit", "spades_not_broken", "bid_out_of_range"} <= set(
        codes
    )
    assert {"blind_nil_not_allowed", "game_over", "not_your_seat"} <= set(codes)
    for cls in violations():
        assert cls.__doc__
        assert "\n" not in cls.__doc__.strip()


def test_registries_name_every_command_and_event_class() -> None:
    assert all(name == cls.__name__ for name, cls in {**COMMAND_TYPES, **EVENT_TYPES}.items())
    assert set(EVENT_TYPES) >= {
        "GameStarted",
        "HandDealt",
        "BlindNilDeclared",
        "BlindNilDeclined",
        "BidPlaced",
        "CardsPassed",
        "CardPlayed",
        "TrickWon",
        "HandScored",
        "GameFinished",
        "CardDrawn",
    }
