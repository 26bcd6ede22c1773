"""The C kernel (`engine.ddcore`) against its specification, the Python solver (`engine.dd`).

Random positions of every variant the reference supports (jokers, deuces high, 2-5 players,
the first trick's special leads, spades unbroken, tricks in progress), bigger than the
brute-force endings of test_dd.py (up to 6 tricks left): the kernel must give exactly the
reference's values for every objective (each side's tricks, a nil: one seat against all the
others, "at least k"). And the kernel checks what it is given: a position that is not one is
refused with a clear error, never searched.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import dd, ddcore
from engine.cards import parse_cards
from engine.dd import Position
from engine.ddhand import side_seats
from engine.fast import deal_hands
from engine.rules import Ruleset, tables
from tests.engine.test_dd import VARIANTS, _after, _table, endings


def positions() -> st.SearchStrategy[tuple[Ruleset, Position]]:
    """Return rulesets and positions of 1..6 tricks left, maybe with a trick in progress
    (the brute-force tests' endings, longer: the Python solver is the reference here)."""
    return endings(most=6)


@settings(max_examples=100)
@given(positions(), st.data())
def test_kernel_values_equal_the_python_solver(
    position: tuple[Ruleset, Position], data: st.DataObject
) -> None:
    rules, pos = position
    t = tables(rules)
    for side in t.members:
        assert ddcore.Solver(rules, side, side).value(pos) == dd.Solver(rules, side, side).value(
            pos
        ), (rules, pos, side)
    seat = data.draw(st.integers(0, t.players - 1))
    k = data.draw(st.integers(-1, pos.left + 1))
    mine = side_seats(rules, seat)
    assert ddcore.Solver(rules, mine, mine).at_least(pos, k) == dd.Solver(
        rules, mine, mine
    ).at_least(pos, k)
    # A nil: the seat (with his partner) against every other seat giving him a trick.
    others = [s for s in range(t.players) if s not in mine]
    assert ddcore.Solver(rules, (seat,), others).at_least(pos, 1) == dd.Solver(
        rules, (seat,), others
    ).at_least(pos, 1)


@st.composite
def middles(draw: st.DrawFn) -> tuple[Ruleset, Position]:
    """Return a ruleset and a position of 4..7 tricks left at a trick's start: long enough
    for the search to meet positions again that differ in small cards, which the kernel's
    table (partition search: an entry holds for every position whose cards that mattered
    sit alike) answers without searching them."""
    rules = draw(st.sampled_from(VARIANTS))
    t = tables(rules)
    rng = random.Random(draw(st.integers(0, 2**32)))
    left = draw(st.integers(4, 7 if t.players < 5 else 6))
    hands = [sorted(rng.sample(h, left)) for h in deal_hands(t, rng)]
    leader = draw(st.integers(0, t.players - 1))
    return rules, Position(tuple(map(tuple, hands)), leader, broken=draw(st.booleans()), done=1)


def _objectives(rules: Ruleset, pos: Position) -> list[tuple[tuple[int, ...], list[int], bool]]:
    """Return every side's tricks and every seat's nil (the seat against every other seat giving
    him a trick) as (counted, maximizers, is a nil)."""
    t = tables(rules)
    out: list[tuple[tuple[int, ...], list[int], bool]] = []
    for seat in range(t.players):
        mine = side_seats(rules, seat)
        out.append((mine, list(mine), False))
        out.append(((seat,), [s for s in range(t.players) if s not in mine], True))
    return out


@settings(max_examples=80)
@given(middles())
def test_kernel_table_shares_entries_only_where_the_values_agree(
    position: tuple[Ruleset, Position],
) -> None:
    rules, pos = position
    for counted, maximizers, nil in _objectives(rules, pos):
        kernel = ddcore.Solver(rules, counted, maximizers)
        reference = dd.Solver(rules, counted, maximizers)
        if nil:
            assert kernel.at_least(pos, 1) == reference.at_least(pos, 1), (rules, pos, counted)
        else:
            assert kernel.value(pos) == reference.value(pos), (rules, pos, counted)


@settings(max_examples=80)
@given(middles())
def test_sure_tricks_never_exceed_what_best_play_gives(
    position: tuple[Ruleset, Position],
) -> None:
    # The bounds that settle a trick's start without a search (quick tricks, master trumps)
    # hold for each side of every variant: never more than the exact values.
    rules, pos = position
    t = tables(rules)
    for side in t.members:
        kernel = ddcore.Solver(rules, side, side)
        mine, theirs = kernel.sure_tricks(pos)
        value = kernel.value(pos)
        assert mine <= value, (rules, pos, side, mine, value)
        assert theirs <= pos.left - value, (rules, pos, side, theirs, value)


def test_master_trumps_count_every_seat_not_only_the_top_spades_run() -> None:
    # North's KS JS beat every opposing spade though his partner holds the AS: two tricks
    # for the side, sure (the top run of one seat counted only the AS). The other side's one:
    # East leads a club to West's 8C, which North, with one club, cannot ruff.
    hands = (
        parse_cards("KS JS 2C"),
        parse_cards("TS 3C 4C"),
        parse_cards("AS 5C 6C"),
        parse_cards("9S 7C 8C"),
    )
    pos = Position(tuple(map(tuple, hands)), 1, broken=True, done=1)
    kernel = ddcore.Solver(Ruleset(), (0, 2), (0, 2))
    assert kernel.sure_tricks(pos) == (2, 1)
    assert kernel.value(pos) == dd.Solver(Ruleset(), (0, 2), (0, 2)).value(pos) == 2


def test_a_lead_to_a_partners_top_cards_counts_the_tricks_he_then_cashes() -> None:
    # North holds no top card, but leads a heart to South's AH: South then cashes KH QH.
    # Three sure tricks for the side (the leader's own top cards counted none).
    hands = (
        parse_cards("2H 3H 2C"),
        parse_cards("4H 5H 4C"),
        parse_cards("AH KH QH"),
        parse_cards("6H 5C 6C"),
    )
    pos = Position(tuple(map(tuple, hands)), 0, broken=True, done=1)
    kernel = ddcore.Solver(Ruleset(), (0, 2), (0, 2))
    assert kernel.sure_tricks(pos) == (3, 0)
    assert kernel.value(pos) == dd.Solver(Ruleset(), (0, 2), (0, 2)).value(pos) == 3
    # With West's 2S for his heart the crossing is ruffed and nothing is sure for the side:
    # West takes every trick (the ruff, then his clubs, or his clubs and the 2S).
    ruffed = Position(
        (hands[0], hands[1], hands[2], tuple(parse_cards("2S 5C 6C"))), 0, broken=True, done=1
    )
    assert kernel.sure_tricks(ruffed) == (0, 1)
    assert kernel.value(ruffed) == dd.Solver(Ruleset(), (0, 2), (0, 2)).value(ruffed) == 0


def test_sure_tricks_are_counted_at_a_trick_start_of_a_counted_side_only() -> None:
    hands = (parse_cards("KS 2C"), parse_cards("TS 3C"), parse_cards("AS 5C"), parse_cards("9S 7C"))
    pos = Position(tuple(map(tuple, hands)), 1, broken=True, done=1)
    with pytest.raises(ValueError, match="trick's start"):
        ddcore.Solver(Ruleset(), (0, 2), (0, 2)).sure_tricks(pos.play(Ruleset(), 19))
    with pytest.raises(ValueError, match="not a position"):
        ddcore.Solver(Ruleset(), (0,), (1, 3)).sure_tricks(pos)


@pytest.mark.parametrize(
    ("rules", "hands", "leader", "broken"),
    [
        # Positions a first partition table answered wrongly: it took a run of equivalent
        # cards, one of them searched, as equivalent still where the run crossed the lowest
        # card that mattered (a seat's small cards then stood for a card it did not search).
        (
            Ruleset(players=3, jokers=True),
            ((19, 21, 31, 49), (6, 11, 46, 51), (27, 33, 34, 38)),
            0,
            True,
        ),
        (
            Ruleset(),
            ((8, 17, 24, 25), (12, 16, 30, 47), (19, 23, 26, 29), (6, 14, 32, 33)),
            1,
            True,
        ),
        (
            Ruleset(players=5),
            ((12, 42, 45, 49), (1, 8, 10, 18), (5, 14, 21, 43), (15, 27, 33, 46), (4, 17, 26, 39)),
            4,
            False,
        ),
        (Ruleset(players=3), ((8, 11, 30, 34), (2, 10, 24, 33), (27, 29, 35, 37)), 2, False),
        (
            Ruleset(),
            (
                (2, 11, 22, 35, 38, 46, 51),
                (0, 1, 12, 15, 18, 19, 37),
                (6, 16, 25, 28, 33, 36, 41),
                (14, 20, 24, 34, 40, 43, 44),
            ),
            2,
            False,
        ),
    ],
)
def test_positions_a_careless_partition_table_gets_wrong(
    rules: Ruleset, hands: tuple[tuple[int, ...], ...], leader: int, broken: bool
) -> None:
    pos = Position(hands, leader, broken=broken, done=1)
    for counted, maximizers, _nil in _objectives(rules, pos):
        kernel = ddcore.Solver(rules, counted, maximizers)
        reference = dd.Solver(rules, counted, maximizers)
        assert kernel.value(pos) == reference.value(pos), counted
        assert kernel.at_least(pos, 1) == reference.at_least(pos, 1), counted


def test_one_solver_answers_positions_of_one_hand_like_fresh_ones() -> None:
    # The table outlives a search: later positions of the same hand reuse it.
    rules = Ruleset()
    rng = random.Random(3)
    hands = [sorted(rng.sample(h, 6)) for h in deal_hands(tables(rules), rng)]
    pos = Position(tuple(tuple(h) for h in hands), leader=2, broken=True, done=7)
    shared = ddcore.Solver(rules, (0, 2), (0, 2))
    while pos.hands[pos.to_play]:
        assert shared.value(pos) == dd.Solver(rules, (0, 2), (0, 2)).value(pos)
        pos, _ = _after(rules, pos, sorted(_table(rules, pos).legal(pos.to_play))[0])


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_full_deals_of_every_table_size_are_solved(players: int) -> None:
    from benchmarks.dd import RULES, deal

    rules = RULES[players]
    t = tables(rules)
    pos = deal(rules, 1)
    values = [ddcore.Solver(rules, m, m).value(pos) for m in t.members]
    assert all(0 <= v <= t.tricks for v in values)
    if players in (2, 4):
        assert sum(values) == t.tricks  # zero-sum between the two sides


def test_the_biggest_deck_fits_and_a_bigger_hand_is_refused() -> None:
    # Three players with jokers: 54 cards, 18 tricks, the most the kernel holds.
    rules = Ruleset(players=3, jokers=True)
    t = tables(rules)
    rng = random.Random(1)
    hands = [sorted(rng.sample(h, 2)) for h in deal_hands(t, rng)]
    pos = Position(tuple(tuple(h) for h in hands), 0, broken=True, done=16)
    assert ddcore.Solver(rules, (0,), (0,)).value(pos) == dd.Solver(rules, (0,), (0,)).value(pos)
    full = deal_hands(t, random.Random(2))
    assert {len(h) for h in full} == {18}
    big = Position((tuple(full[0] + full[1][:1]), tuple(full[1][1:]), tuple(full[2])), 0)
    with pytest.raises(ValueError, match="not a position"):
        ddcore.Solver(rules, (0,), (0,)).value(big)


@pytest.mark.parametrize(
    ("hands", "trick", "why"),
    [
        ((("AS",), ("AS",), ("2C",), ("3C",)), (), "share a card"),
        ((("AS", "KS"), ("2H",), ("2C",), ("3C",)), (), "sizes"),
        ((("AS",), ("2H",), ("2C",), ("3C",)), ("2H",), "trick in progress"),
    ],
)
def test_a_position_that_is_not_one_is_refused(
    hands: tuple[tuple[str, ...], ...], trick: tuple[str, ...], why: str
) -> None:
    from engine.cards import parse_cards

    pos = Position(
        tuple(tuple(parse_cards(" ".join(h))) for h in hands),
        0,
        tuple(parse_cards(" ".join(trick))) if trick else (),
        broken=True,
        done=5,
    )
    with pytest.raises(ValueError, match=why):
        ddcore.Solver(Ruleset(), (0, 2), (0, 2)).value(pos)


def test_a_missing_kernel_is_an_error_naming_the_build_never_a_fallback(tmp_path: object) -> None:
    code = (
        "from engine import ddcore\n"
        "from engine.rules import Ruleset\n"
        "try:\n"
        "    ddcore.Solver(Ruleset(), (0, 2), (0, 2))\n"
        "except ddcore.KernelMissing as exc:\n"
        "    print(exc)\n"
    )
    env = {**os.environ, "SPADES_DDCORE": os.path.join(str(tmp_path), "missing.so")}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "is not built" in out
    assert "make install" in out


def test_a_search_over_its_budget_stops_and_leaves_the_solver_right() -> None:
    from benchmarks.dd import RULES, deal

    rules = RULES[4]
    pos = deal(rules, 0)
    tight = ddcore.Solver(rules, (0, 2), (0, 2), budget=1000)
    with pytest.raises(ddcore.OverBudget):
        tight.value(pos)
    assert tight.nodes <= 1001 * 8  # each of the bisection's searches stops at the budget
    # What was stored before the stop is right: a later position of the hand, small enough
    # for the budget, gets the reference's value from the same solver.
    rng = random.Random(0)
    hands = [sorted(rng.sample(h, 3)) for h in pos.hands]
    small = Position(tuple(tuple(h) for h in hands), pos.leader, broken=True, done=10)
    assert tight.value(small) == dd.Solver(rules, (0, 2), (0, 2)).value(small)
    assert ddcore.Solver(rules, (0, 2), (0, 2), budget=10**9).value(pos) == 6


def test_the_bot_tier_stops_at_its_start_without_the_kernel(tmp_path: object) -> None:
    code = "from services.bots.app import check_kernel\ncheck_kernel()\n"
    env = {**os.environ, "SPADES_DDCORE": os.path.join(str(tmp_path), "missing.so")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert "spades bots: the double-dummy kernel" in done.stderr
    assert "make install" in done.stderr
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


@settings(max_examples=30)
@given(middles())
def test_a_tiny_table_that_evicts_and_empties_itself_stays_exact(
    position: tuple[Ruleset, Position],
) -> None:
    # 64 entries (5 blocks, a class keeping 1) and 64 class slots: the replacement and the
    # emptying of a full table run all the time; what the table then keeps must be right.
    rules, pos = position
    for counted, maximizers, _nil in _objectives(rules, pos):
        tiny = ddcore.Solver(rules, counted, maximizers, table_log2=6)
        assert tiny.value(pos) == dd.Solver(rules, counted, maximizers).value(pos), counted


def test_the_kernel_counts_what_its_table_did() -> None:
    # Eight tricks of a four-player deal: with 128 entries (a class keeps 2) the table
    # evicts and empties itself, with the full table neither; both give the same value.
    rules = Ruleset()
    rng = random.Random(1)
    hands = [sorted(rng.sample(h, 8)) for h in deal_hands(tables(rules), rng)]
    pos = Position(tuple(map(tuple, hands)), 0, broken=True, done=1)
    tiny = ddcore.Solver(rules, (0, 2), (0, 2), table_log2=7)
    big = ddcore.Solver(rules, (0, 2), (0, 2))
    assert tiny.value(pos) == big.value(pos)
    for solver in (tiny, big):
        stats = solver.stats()
        assert list(stats) == list(ddcore.STATS)
        assert 0 < stats["hits"] <= stats["lookups"] <= solver.nodes
        assert stats["hits"] <= stats["walked"]
        assert 0 < stats["new"] <= stats["stores"]
    assert tiny.stats()["resets"] > 0
    assert tiny.stats()["evicted"] > 0
    assert big.stats()["resets"] == big.stats()["evicted"] == 0
