"""A duplicate board: every table dealt from the seed the event committed holds the same
cards, and `verify_committed` accepts exactly the games dealt from the published seed."""

from __future__ import annotations

import random

import pytest

import engine
from engine import fairness
from events.contracts import game as wire
from services.records.fairness import NotVerified, bot_game, verify_committed

BOARD = engine.Ruleset(hand_cap=1)


def board_game(
    seed: str, play: int, contributions: dict[int, str] | None = None
) -> list[wire.GameEvent]:
    """A board played by the baseline bots (``play`` seeds their choices, not the deal)."""
    events = bot_game(BOARD, seed, contributions or {}, random.Random(play))
    return [wire.to_wire(e) for e in events]


def dealt(events: list[wire.GameEvent]) -> list[wire.HandDealt]:
    return [e for e in events if isinstance(e, wire.HandDealt)]


def test_every_table_of_a_board_holds_the_same_cards_and_verifies() -> None:
    seed = bytes(range(32)).hex()
    published = fairness.commitment(bytes.fromhex(seed))
    one, two = board_game(seed, 1), board_game(seed, 2)
    assert len(dealt(one)) == 1  # a board is one hand
    assert dealt(one)[0].hands == dealt(two)[0].hands
    assert dealt(one)[0].dealer == dealt(two)[0].dealer
    for game in (one, two):
        checked = verify_committed(game, published)
        assert (checked.hands, checked.server_seed) == (1, seed)


def test_a_game_dealt_from_another_seed_or_with_a_contribution_is_not_the_board() -> None:
    seed = bytes(range(32)).hex()
    published = fairness.commitment(bytes.fromhex(seed))
    other = board_game(bytes(range(1, 33)).hex(), 1)
    with pytest.raises(NotVerified) as refused:
        verify_committed(other, published)
    assert refused.value.code == "commitment_mismatch"
    mixed = board_game(seed, 1, {0: "ff" * 32})
    with pytest.raises(NotVerified) as contributed:
        verify_committed(mixed, published)
    assert contributed.value.code == "contribution_misplaced"
