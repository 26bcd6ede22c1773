"""The double-dummy solver against brute force on small endings, every variant's card order.

The brute force walks every legal card sequence with the engine's own fast table
(`engine.fast.Table`: its legal moves, its trick winner, its first-trick leads), which the
engine's differential test holds to the public `decide`; the solver's value must equal the
minimax over that tree for every objective it answers (a side's tricks, a nil).
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import dd, ddcore
from engine.cards import parse_cards
from engine.dd import Position, solve
from engine.ddhand import analyse_hand, nil_makeable, side_seats
from engine.fast import Table, deal_hands
from engine.rules import Ruleset, tables
from engine.state import first_leader

VARIANTS = (
    Ruleset(),
    Ruleset(jokers=True),
    Ruleset(deuces_high=True),
    Ruleset(jokers=True, deuces_high=True),
    Ruleset(first_lead="two_of_clubs"),
    Ruleset(first_lead="any"),
    Ruleset(players=2, blind_nil=False, blind_nil_exchange=0),
    Ruleset(players=2, blind_nil=False, blind_nil_exchange=0, first_lead="lowest_club"),
    Ruleset(players=2, blind_nil=False, blind_nil_exchange=0, jokers=True, deuces_high=True),
    Ruleset(players=3),
    Ruleset(players=3, jokers=True),
    Ruleset(players=5),
    Ruleset(players=5, jokers=True),
)


def _table(rules: Ruleset, pos: Position) -> Table:
    return Table(
        rules,
        [list(h) for h in pos.hands],
        pos.leader,
        trick=pos.trick,
        done=pos.done,
        broken=pos.broken,
    )


def _after(rules: Ruleset, pos: Position, card: int) -> tuple[Position, int]:
    """Play ``card`` on the engine's own table; return the position and who took a trick."""
    table = _table(rules, pos)
    seat = table.to_play()
    assert card in table.legal(seat)
    before = list(table.taken)
    table.play(seat, card)
    hands = tuple(tuple(sorted(c for suit in h for c in suit)) for h in table.hands)
    won = next((s for s in range(len(before)) if table.taken[s] > before[s]), -1)
    return Position(hands, table.leader, tuple(table.trick), table.broken, table.done), won


def brute(rules: Ruleset, pos: Position, counted: set[int], maxi: set[int]) -> int:
    """Return the minimax tricks of ``counted`` over every legal card sequence.

    Every sequence is played out on the engine's own table; a position reached again by
    another order of the same cards is looked up, not searched again (a minimax value
    depends on the position alone). Without that, an example of four tricks with five
    hands could take minutes, and which examples the derandomized profile draws changes
    whenever a test's source does.
    """
    seen: dict[Position, int] = {}

    def value(pos: Position) -> int:
        known = seen.get(pos)
        if known is not None:
            return known
        table = _table(rules, pos)
        seat = table.to_play()
        if not pos.hands[seat]:
            return 0
        values = []
        for card in sorted(set(table.legal(seat))):
            nxt, won = _after(rules, pos, card)
            values.append((won in counted) + value(nxt))
        seen[pos] = result = max(values) if seat in maxi else min(values)
        return result

    return value(pos)


def _two_of_clubs_out(rules: Ruleset, hands: list[list[int]]) -> int:
    """Give the first hand the two of clubs if no hand holds it (it must be out to be led, at
    a first trick where it is); return the seat that leads it."""
    if not any(0 in h for h in hands):
        hands[0][0] = 0
    return first_leader(rules, tuple(tuple(h) for h in hands), 0)


@st.composite
def endings(draw: st.DrawFn, most: int = 4) -> tuple[Ruleset, Position]:
    """Return a ruleset and an ending of 1..``most`` tricks (one fewer with five players),
    maybe with a trick in progress."""
    rules = draw(st.sampled_from(VARIANTS))
    t = tables(rules)
    rng = random.Random(draw(st.integers(0, 2**32)))
    left = draw(st.integers(1, most if t.players < 5 else most - 1))
    hands = [rng.sample(h, left) for h in deal_hands(t, rng)]
    first = draw(st.booleans())
    if first and rules.first_lead == "two_of_clubs":
        leader = _two_of_clubs_out(rules, hands)
    else:
        leader = draw(st.integers(0, t.players - 1))
    pos = Position(
        tuple(tuple(sorted(h)) for h in hands),
        leader,
        broken=draw(st.booleans()),
        done=0 if first else 1,
    )
    for _ in range(draw(st.integers(0, t.players - 1))):
        legal = _table(rules, pos).legal(pos.to_play)
        pos, _ = _after(rules, pos, rng.choice(sorted(legal)))
    return rules, pos


SOLVERS = (dd.Solver, ddcore.Solver)
"""Every brute-force test holds both the Python reference and the C kernel to one brute force."""


@settings(max_examples=60)
@given(endings(), st.data())
def test_side_values_equal_brute_force(
    ending: tuple[Ruleset, Position], data: st.DataObject
) -> None:
    rules, pos = ending
    t = tables(rules)
    for side in t.members:
        expected = brute(rules, pos, set(side), set(side))
        for solver in SOLVERS:
            assert solver(rules, side, side).value(pos) == expected, solver
    seat = data.draw(st.integers(0, t.players - 1))
    k = data.draw(st.integers(0, pos.left + 1))
    mine = side_seats(rules, seat)
    reached = brute(rules, pos, set(mine), set(mine)) >= k
    for solver in SOLVERS:
        assert solver(rules, mine, mine).at_least(pos, k) == reached, solver


FORCED_FIRST = (
    Ruleset(first_lead="two_of_clubs"),
    Ruleset(players=2, blind_nil=False, blind_nil_exchange=0, first_lead="lowest_club"),
)


@st.composite
def forced_first_tricks(draw: st.DrawFn) -> tuple[Ruleset, Position]:
    """Return a first trick of 2..4 tricks' hands where its cards are forced (the two of clubs
    led, every lowest club played): the solvers' sure-trick bounds at a trick's start assume
    the leader may cash his winners, which such a trick does not let him."""
    rules = draw(st.sampled_from(FORCED_FIRST))
    t = tables(rules)
    rng = random.Random(draw(st.integers(0, 2**32)))
    left = draw(st.integers(2, 4))
    hands = [rng.sample(h, left) for h in deal_hands(t, rng)]
    if rules.first_lead == "two_of_clubs":
        leader = _two_of_clubs_out(rules, hands)
    else:
        leader = draw(st.integers(0, t.players - 1))
    return rules, Position(tuple(tuple(sorted(h)) for h in hands), leader, done=0)


@settings(max_examples=60)
@given(forced_first_tricks())
def test_a_forced_first_trick_is_valued_as_brute_force_does(
    ending: tuple[Ruleset, Position],
) -> None:
    rules, pos = ending
    for side in tables(rules).members:
        expected = brute(rules, pos, set(side), set(side))
        for solver in SOLVERS:
            assert solver(rules, side, side).value(pos) == expected, (solver, side)


def test_the_first_tricks_a_fuzz_found_the_solvers_wrong_on() -> None:
    """Two forced first tricks where the quick-trick bound counted winners the leader could not
    cash (the C kernel on the first, both solvers on the second), found by 400 random forced
    first tricks against brute force; the bound is not asked there any more."""
    cases = (
        (FORCED_FIRST[0], ((0, 10), (6, 33), (4, 51), (25, 38)), 0, (1, 1)),
        (FORCED_FIRST[1], ((7, 12, 28), (2, 33, 37)), 1, (2, 1)),
    )
    for rules, hands, leader, values in cases:
        pos = Position(hands, leader, done=0)
        for side, value in zip(tables(rules).members, values, strict=True):
            assert brute(rules, pos, set(side), set(side)) == value
            for solver in SOLVERS:
                assert solver(rules, side, side).value(pos) == value, (solver, side)


@settings(max_examples=25)  # its brute force is the slowest here: ~0.5 s of CPU an example
@given(endings(), st.data())
def test_nil_makeable_equals_brute_force(
    ending: tuple[Ruleset, Position], data: st.DataObject
) -> None:
    rules, pos = ending
    t = tables(rules)
    seat = data.draw(st.integers(0, t.players - 1))
    others = {s for s in range(t.players) if s not in side_seats(rules, seat)}
    makeable = brute(rules, pos, {seat}, others) == 0
    for solver in SOLVERS:
        assert nil_makeable(rules, pos, seat, solver) == makeable, solver


@settings(max_examples=25)
@given(endings())
def test_every_card_cost_is_the_drop_in_the_players_side_value(
    ending: tuple[Ruleset, Position],
) -> None:
    rules, start = ending
    t = tables(rules)
    # Play the ending out at random; every card's figures must be the brute-force values.
    rng = random.Random(start.leader)
    plays: list[int] = []
    pos = start
    while pos.hands[pos.to_play]:
        card = rng.choice(sorted(_table(rules, pos).legal(pos.to_play)))
        plays.append(card)
        pos, _ = _after(rules, pos, card)
    result = analyse_hand(rules, start, plays, solver=dd.Solver)
    assert analyse_hand(rules, start, plays, solver=ddcore.Solver) == result
    pos = start
    taken = [0] * t.teams
    for cost, card in zip(result.cards, plays, strict=True):
        side = t.members[t.team[cost.seat]]
        assert cost.card == card
        assert cost.before == taken[t.team[cost.seat]] + brute(rules, pos, set(side), set(side))
        pos, won = _after(rules, pos, card)
        if won >= 0:
            taken[t.team[won]] += 1
        assert cost.after == taken[t.team[cost.seat]] + brute(rules, pos, set(side), set(side))
        assert cost.cost >= 0


def test_spades_unbroken_change_the_answer() -> None:
    # North must lead the heart king while spades are unbroken: East ruffs it. Broken,
    # North draws East's trump with the ace first and the king stands.
    rules = Ruleset()
    hands = tuple(parse_cards(h) for h in ("AS KH", "2S 3D", "4C 5C", "6C 7C"))
    for solve_ in (solve, ddcore.solve):
        assert solve_(rules, Position(hands, leader=0, broken=True), (0, 2)) == 2
        assert solve_(rules, Position(hands, leader=0, broken=False), (0, 2)) == 1
        assert solve_(rules, Position(hands, leader=0, broken=False), (1, 3)) == 1


def test_a_nil_with_a_sure_trick_is_not_makeable() -> None:
    rules = Ruleset()
    hands = tuple(parse_cards(h) for h in ("AS 2H", "3H 4H", "5H 6H", "7H 8H"))
    for solver in (dd.Solver, ddcore.Solver):
        assert not nil_makeable(rules, Position(hands, leader=1, broken=True), 0, solver)


def test_partnership_values_add_up_to_the_tricks_left() -> None:
    rules = Ruleset()
    t = tables(rules)
    rng = random.Random(5)
    hands = [sorted(rng.sample(h, 6)) for h in deal_hands(t, rng)]
    pos = Position(tuple(tuple(h) for h in hands), leader=1, done=7)
    for solve_ in (solve, ddcore.solve):
        assert solve_(rules, pos, (0, 2)) + solve_(rules, pos, (1, 3)) == 6
