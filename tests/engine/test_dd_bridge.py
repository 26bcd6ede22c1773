"""`engine.dd` against an independent solver, DDS (bridge, spades trumps), where the rules agree.

`endplay` (in the dev group, so `make test` and CI run it) ships DDS's C++ in its wheel. Deals
are random endings of a standard deck with spades already broken, solved from every leader;
see tests/engine/bridge.py for why the answers must be equal there and only there.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.dd import Position, solve
from engine.fast import deal_hands
from engine.rules import Ruleset, tables
from tests.engine.bridge import dds_tricks

RULES = Ruleset()


@settings(max_examples=40)
@given(st.integers(0, 2**32), st.integers(1, 7))
def test_broken_spades_endings_agree_with_dds_from_every_leader(seed: int, left: int) -> None:
    rng = random.Random(seed)
    hands = [sorted(rng.sample(h, left)) for h in deal_hands(tables(RULES), rng)]
    for leader in range(4):
        side = (leader, (leader + 2) % 4)
        pos = Position(tuple(tuple(h) for h in hands), leader, broken=True, done=13 - left)
        assert solve(RULES, pos, side) == dds_tricks(hands, leader), (hands, leader)


def test_unbroken_spades_part_from_bridge_where_a_spade_lead_matters() -> None:
    # North must lead the heart king while spades are unbroken (East ruffs it); bridge
    # lets him draw East's trump with the ace first.
    from engine.cards import parse_cards

    hands = [list(parse_cards(h)) for h in ("AS KH", "2S 3D", "4C 5C", "6C 7C")]
    assert dds_tricks(hands, 0) == 2
    unbroken = Position(tuple(tuple(h) for h in hands), 0, broken=False, done=11)
    assert solve(RULES, unbroken, (0, 2)) == 1


def test_full_deals_with_spades_broken_agree_with_dds() -> None:
    # Whole 13-trick deals (the C kernel: the Python reference takes tens of seconds a deal);
    # `python -m benchmarks dd` compares many more (SPADES_BENCH_DD_BRIDGE).
    from benchmarks.dd import deal
    from engine import ddcore

    for seed in (0, 2, 6):  # deals that take the kernel about a second each
        pos = deal(RULES, seed)
        broken = Position(pos.hands, pos.leader, broken=True)
        side = (pos.leader, (pos.leader + 2) % 4)
        assert ddcore.solve(RULES, broken, side) == dds_tricks(pos.hands, pos.leader), seed
