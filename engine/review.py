"""Review a finished game: every bid and card graded from what its seat could see, and what
was possible with all cards seen (`engine.dd`).

Each decision is judged by the strong search's own estimate (`engine.search`): the seat's
view is sampled into deals consistent with it (`search.Sampler`), every distinct choice
(cards equivalent for that seat count once; the choice made always counts) is played out
in the SAME sampled deals (common random numbers, so the difference between two choices
is not the luck of the deal) with the search's rollout, and scored by the engine. A
choice's value is the side's expected margin in points: its points (a carried bag
charged a tenth of the bag penalty, as the search does) minus the mean of the other
sides'. The loss is the best choice's value minus the chosen one's, and the grade:

- ``blunder``: a loss of `BLUNDER` (60) points or more;
- ``mistake``: `MISTAKE` (25) or more;
- ``inaccuracy``: `INACCURACY` (10) or more.

A player's accuracy is the share (in %) of his graded decisions (those with more than one
distinct choice) that lost less than `INACCURACY`.

Recognisable errors are named in words on the decision they belong to: a partner's nil
left uncovered (the partner then took the trick), a partner's winning card trumped or
overtaken, a bag taken past the bag limit when a card that lost the trick was at hand, a
nil bid holding the deck's top trump (a sure trick), a contract over- or underbid by more
than `BID_SLACK` tricks against the side's double-dummy tricks, and a card that cost a
trick with all cards seen in a hand the side was then set in though best play made it.

Only the view reaches the grading: two games differing in cards the seat could not see
grade its decision alike (tests/engine/test_review.py shuffles them). Bids are graded (against
those within `BID_WINDOW` of the baseline's, nil and itself) where the strong search searches
bids (plain numeric bids: not blind bids, Moe, suicide, Boston, 10-for-200, team minimums,
the nil exchange or the draw deal); other decisions of those
variants (blind choices, exchanges, draws) are not graded. Deterministic: the sampling of
each decision is seeded from the review's seed and the decision's place, so the same events
and seed give the same review, byte for byte (`Review.to_json`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

from engine import ddcore
from engine.bot import model_bid, wanted_bid
from engine.botrollout import copy_table, play_out
from engine.cards import SPADES, card_str
from engine.dd import Position
from engine.ddhand import HandDD, analyse_hand
from engine.fast import Table, outcome, table_at
from engine.model import BidPlaced, CardPlayed, Event, HandDealt, PlaceBid, PlayCard, TrickWon
from engine.rules import Ruleset, tables
from engine.search import Sampler, _covering, distinct_cards
from engine.state import GameState, apply, first_leader, initial_state
from engine.view import SeatView, view

INACCURACY, MISTAKE, BLUNDER = 10.0, 25.0, 60.0
BID_SLACK = 3
"""A contract more than this many tricks from the side's double-dummy tricks is named."""
WORLDS = 24
"""Sampled deals per decision (every choice is played out in each)."""
BID_WINDOW = 3
"""Bids graded each side of the baseline's (`search.BID_WINDOW` + 1; nil and the bid made too)."""


def grade_of(loss: float) -> str:
    """Return the grade of a loss in points ("" below an inaccuracy)."""
    if loss >= BLUNDER:
        return "blunder"
    if loss >= MISTAKE:
        return "mistake"
    if loss >= INACCURACY:
        return "inaccuracy"
    return ""


@dataclass(frozen=True, slots=True)
class Decision:
    """One graded decision: ``at`` is its event's index in the game (the replay's step
    before it), ``chosen`` and ``best`` name the choices ("QS", "bid 4", "bid nil")."""

    at: int
    hand: int
    seat: int
    kind: str
    chosen: str
    best: str
    chosen_value: float
    best_value: float
    loss: float
    grade: str
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HandReview:
    """A hand's double-dummy figures (`engine.dd.HandDD`; None when not solved)."""

    hand: int
    dd: HandDD | None


@dataclass(frozen=True, slots=True)
class Review:
    """A finished game reviewed: the graded decisions, the hands' double-dummy figures and
    each seat's accuracy (%, None for a seat with no graded decision)."""

    decisions: tuple[Decision, ...]
    hands: tuple[HandReview, ...]
    accuracy: tuple[float | None, ...]

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def to_json(self) -> str:
        """Return the review as canonical JSON (sorted keys, no spaces): byte-identical for
        the same events and seed."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))


def _value(
    rules: Ruleset, v: SeatView, bids: Sequence[int], taken: Sequence[int], history: object
) -> float:
    t = tables(rules)
    pts, bags = outcome(rules, bids, v.blind, taken, v.scores, v.bags, v.moe, history)  # type: ignore[arg-type]
    bag_cost = rules.bag_penalty / rules.bag_limit if rules.bags else 0.0
    value = [pts[s] - bag_cost * (bags[s] - v.bags[s]) for s in range(t.teams)]
    me = t.team[v.seat]
    others = [s for s in range(t.teams) if s != me]
    return value[me] - sum(value[o] for o in others) / len(others)


def card_values(
    v: SeatView, cards: Sequence[int], rng: random.Random, worlds: int
) -> dict[int, float]:
    """Return each card's mean value (`_value`) over ``worlds`` deals sampled from the view,
    every card played out in the same deals with the search's rollout."""
    t = tables(v.rules)
    sampler = Sampler(v, t)
    totals = dict.fromkeys(cards, 0.0)
    weights = 0.0
    habits: dict[tuple[int, ...], list[int]] = {}  # the rollout's, for these bids
    for _ in range(worlds):
        hands = sampler.sample(rng)
        weight = sampler.bid_weight(hands)
        weights += weight
        start = table_at(v, hands)
        for card in cards:
            table = copy_table(start)
            table.play(v.seat, card)
            taken = play_out(table, habits)
            totals[card] += weight * _value(v.rules, v, v.bids, taken, table.history)
    return {c: round(totals[c] / weights, 2) if weights else 0.0 for c in cards}


def bid_values(
    v: SeatView, bids: Sequence[int], rng: random.Random, worlds: int
) -> dict[int, float]:
    """Return each bid's mean value over sampled deals: the seats still to bid bid as the
    baseline would, the hand is played out with the search's rollout (`search.choose_bid`)."""
    rules = v.rules
    t = tables(rules)
    sampler = Sampler(v, t)
    totals = dict.fromkeys(bids, 0.0)
    weights = 0.0
    later = [s for s in range(t.players) if s != v.seat and v.bids[s] < 0]
    for _ in range(worlds):
        hands = sampler.sample(rng)
        weight = sampler.bid_weight(hands)
        weights += weight
        leader = first_leader(rules, tuple(tuple(h) for h in hands), v.dealer)
        for bid in bids:
            made = list(v.bids)
            made[v.seat] = bid
            for s in later:
                made[s] = model_bid(v, s, hands[s], made)
            table = Table(rules, hands, leader, bids=made, blind=v.blind)
            taken = play_out(table)
            totals[bid] += weight * _value(rules, v, made, taken, table.history)
    return {b: round(totals[b] / weights, 2) if weights else 0.0 for b in bids}


def _bids_graded(rules: Ruleset) -> bool:
    return not (
        rules.suicide
        or rules.boston
        or rules.moe
        or rules.blind_bids
        or rules.nil_exchange
        or rules.team_min_bid
        or rules.deal == "draw"
        or rules.ten_for_two_hundred
    )


def _bid_name(bid: int, rules: Ruleset) -> str:
    return "bid nil" if bid == 0 and rules.nil_allowed else f"bid {bid}"


def _top_power(v: SeatView, card: int) -> int:
    t = tables(v.rules)
    led = t.suit[v.trick[0]]
    return t.power[card] if t.suit[card] in (led, SPADES) else -1


class _Hand:
    """What a hand's review needs from its play: the start, the cards, the decisions."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.start: Position | None = None
        self.plays: list[int] = []
        self.card_at: list[int] = []  # index into decisions (or -1) of each card played
        self.bid_at: dict[int, int] = {}  # seat -> index of its bid decision
        self.bids: tuple[int, ...] = ()
        self.state_end: GameState | None = None


def review_game(
    events: Sequence[Event],
    *,
    seed: str = "",
    worlds: int = WORLDS,
    dd_tricks: int | None = None,
    steps: Sequence[int] | None = None,
    on_hand: Callable[[int], None] | None = None,
) -> Review:
    """Return the review of a finished game's events.

    ``dd_tricks`` limits the double-dummy figures to the last that many tricks of each hand
    (None: the whole hand, by the C kernel within `DD_NODES` a search, else its last
    `DD_FALLBACK` tricks; 0: none). ``steps``
    gives each event's step in the replay (its index in the stored stream) for ``at``;
    ``on_hand(number)`` is told each hand once its decisions are graded (progress).
    """
    state = initial_state()
    decisions: list[Decision] = []
    hands: list[_Hand] = []
    current: _Hand | None = None
    for i, event in enumerate(events):
        at = steps[i] if steps is not None else i
        if isinstance(event, HandDealt):
            current = _Hand(event.hand)
            hands.append(current)
        if current is not None and isinstance(event, BidPlaced) and not event.blind:
            graded = _grade_bid(state, event, at, seed, worlds)
            if graded is not None:
                current.bid_at[event.seat] = len(decisions)
                decisions.append(graded)
        if current is not None and isinstance(event, CardPlayed):
            if current.start is None:
                current.start = Position(state.hands, state.leader, (), state.broken, 0)
                current.bids = state.bids
            current.plays.append(event.card)
            graded = _grade_card(state, event, at, seed, worlds)
            current.card_at.append(len(decisions) if graded is not None else -1)
            if graded is not None:
                decisions.append(graded)
        if isinstance(event, TrickWon) and current is not None:
            _name_trick_errors(state, event, current, decisions)
        state = apply(state, event)
        if (
            current is not None
            and state.phase != "play"
            and current.plays
            and current.state_end is None
        ):
            current.state_end = state
            if on_hand is not None:
                on_hand(current.number)
    reviews = []
    for hand in hands:
        dd = _hand_dd(state.rules, hand, dd_tricks)
        if dd is not None:
            _name_dd_errors(state.rules, hand, dd, decisions)
        reviews.append(HandReview(hand.number, dd))
    return Review(tuple(decisions), tuple(reviews), _accuracy(state.rules, decisions))


def _rng(seed: str, at: int) -> random.Random:
    return random.Random(f"review/{seed}/{at}")


def _grade_card(
    state: GameState, event: CardPlayed, at: int, seed: str, worlds: int
) -> Decision | None:
    v = view(state, event.seat)
    legal = [c.card for c in v.legal if isinstance(c, PlayCard)]
    cards = distinct_cards(v, legal)
    if event.card not in cards:
        cards = sorted({*cards, event.card})
    if len(cards) < 2:
        return None
    values = card_values(v, cards, _rng(seed, at), worlds)
    best = max(cards, key=lambda c: (values[c], c == event.card, -c))
    loss = round(values[best] - values[event.card], 2)
    return Decision(
        at,
        state.hand,
        event.seat,
        "card",
        card_str(event.card),
        card_str(best),
        values[event.card],
        values[best],
        loss,
        grade_of(loss),
        _card_errors(v, legal, event.card, loss <= 0),
    )


def _card_errors(v: SeatView, legal: list[int], card: int, best: bool) -> tuple[str, ...]:
    """Return the errors a card makes (``best``: it was the best choice, so no overtaking
    is named: taking a partner's trick can be right)."""
    rules = v.rules
    if rules.players != 4 or not v.trick:
        return ()
    errors = []
    partner = (v.seat + 2) % 4
    covering = _covering(v, legal)
    t = tables(rules)
    powers = [_top_power(v, c) for c in v.trick]
    top = max(powers)
    winning = (v.leader + powers.index(top)) % 4 == partner
    nil = rules.nil_allowed and v.bids[partner] == 0 and v.taken[partner] == 0
    me_nil = rules.nil_allowed and v.bids[v.seat] == 0
    if nil and not me_nil and covering != legal and card not in covering:
        errors.append("left partner's nil uncovered")
    elif (
        winning
        and not me_nil
        and not nil
        and not best
        and _top_power(v, card) > top
        and any(_top_power(v, c) < top for c in legal)
    ):
        led = t.suit[v.trick[0]]
        if t.suit[card] == SPADES and led != SPADES:
            errors.append("trumped partner's winning card")
        else:
            errors.append("overtook partner's winning card")
    return tuple(errors)


def _grade_bid(
    state: GameState, event: BidPlaced, at: int, seed: str, worlds: int
) -> Decision | None:
    rules = state.rules
    if not _bids_graded(rules) or event.moe:
        return None
    v = view(state, event.seat)
    legal = {c.tricks for c in v.legal if isinstance(c, PlaceBid) and not c.blind and not c.moe}
    wanted = wanted_bid(v)
    window = {b for b in legal if abs(b - wanted) <= BID_WINDOW or b == 0}
    bids = sorted(window | {event.tricks})
    if len(bids) < 2:
        return None
    values = bid_values(v, bids, _rng(seed, at), worlds)
    best = max(bids, key=lambda b: (values[b], b == event.tricks, -b))
    loss = round(values[best] - values[event.tricks], 2)
    errors = []
    if event.tricks == 0 and rules.nil_allowed:
        t = tables(rules)
        top = max(t.deck, key=t.power.__getitem__)
        if top in v.hand:
            errors.append(f"bid nil holding {card_str(top)}, a sure trick")
    return Decision(
        at,
        state.hand,
        event.seat,
        "bid",
        _bid_name(event.tricks, rules),
        _bid_name(best, rules),
        values[event.tricks],
        values[best],
        loss,
        grade_of(loss),
        tuple(errors),
    )


def _name_trick_errors(
    state: GameState, event: TrickWon, hand: _Hand, decisions: list[Decision]
) -> None:
    """Name a partner's nil left uncovered only if the nil then took the trick; name a bag
    taken past the bag limit on the card that won the trick (when it was a graded choice)."""
    rules = state.rules
    t = tables(rules)
    n = t.players
    first = len(hand.plays) - n
    for i in range(n):
        index = hand.card_at[first + i]
        if index < 0:
            continue
        d = decisions[index]
        if "left partner's nil uncovered" in d.errors and event.seat != (d.seat + 2) % 4:
            decisions[index] = _without(d, "left partner's nil uncovered")
    if not rules.bags:
        return
    side = t.team[event.seat]
    nil = [rules.nil_allowed and state.bids[s] == 0 for s in range(n)]
    contract = sum(state.bids[s] for s in t.members[side] if not nil[s])
    counted = sum(state.taken[s] for s in t.members[side] if not nil[s])
    if nil[event.seat] or counted < contract:
        return
    bags_before = state.bags[side] + counted - contract
    if bags_before + 1 < rules.bag_limit or bags_before >= rules.bag_limit:
        return
    i = (event.seat - state.leader) % n
    index = hand.card_at[first + i]
    if index >= 0:
        d = decisions[index]
        decisions[index] = _with(d, "took a bag past the bag limit")


def _with(d: Decision, error: str) -> Decision:
    return Decision(**{**asdict(d), "errors": (*d.errors, error)})


def _without(d: Decision, error: str) -> Decision:
    return Decision(**{**asdict(d), "errors": tuple(e for e in d.errors if e != error)})


DD_NODES = 50_000_000
"""The double-dummy kernel's node budget for each search of a hand (`engine.ddcore`): a few
seconds of one core. The rare deal whose whole-hand search needs more gets the figures of its
last `DD_FALLBACK` tricks instead. Nodes, not seconds: the same game gives the same review on
every machine."""
DD_FALLBACK = 4


def _hand_dd(rules: Ruleset, hand: _Hand, dd_tricks: int | None) -> HandDD | None:
    if hand.start is None or dd_tricks == 0:
        return None
    t = tables(rules)
    nil_seats = [s for s in range(t.players) if rules.nil_allowed and hand.bids[s] == 0]
    if dd_tricks is None or dd_tricks >= t.tricks:
        try:
            return analyse_hand(rules, hand.start, hand.plays, nil_seats, _budgeted)
        except ddcore.OverBudget:
            dd_tricks = DD_FALLBACK
    # Only the last ``dd_tricks`` tricks: the position after the others were played.
    skip = (t.tricks - dd_tricks) * t.players
    pos = hand.start
    for card in hand.plays[:skip]:
        pos = pos.play(rules, card)
    late = analyse_hand(rules, pos, hand.plays[skip:], nil_seats)
    return HandDD((), (), late.cards)


def _budgeted(rules: Ruleset, counted: Iterable[int], maximizers: Iterable[int]) -> ddcore.Solver:
    return ddcore.Solver(rules, counted, maximizers, budget=DD_NODES)


def _name_dd_errors(rules: Ruleset, hand: _Hand, dd: HandDD, decisions: list[Decision]) -> None:
    """Name an over- or underbid against the side's double-dummy tricks (on the side's last
    bid), and each card that cost a trick in a hand the side was set in though best play
    from the deal made it."""
    t = tables(rules)
    if not dd.tricks or hand.state_end is None:
        return
    end = hand.state_end
    for side, seats in enumerate(t.members):
        nil = [rules.nil_allowed and hand.bids[s] == 0 for s in seats]
        contract = sum(hand.bids[s] for s, z in zip(seats, nil, strict=True) if not z)
        if all(nil):
            continue
        possible = dd.tricks[side]
        bidders = [s for s in seats if s in hand.bid_at]
        if bidders:
            last = max(bidders, key=lambda s: hand.bid_at[s])
            index = hand.bid_at[last]
            if contract - possible > BID_SLACK:
                decisions[index] = _with(
                    decisions[index],
                    f"overbid: contract {contract}, {possible} tricks double-dummy",
                )
            elif possible - contract > BID_SLACK:
                decisions[index] = _with(
                    decisions[index],
                    f"underbid: contract {contract}, {possible} tricks double-dummy",
                )
        taken = (
            sum(end.taken[s] for s, z in zip(seats, nil, strict=True) if not z) if end.taken else 0
        )
        if possible >= contract > taken:
            for cost, index in zip(dd.cards, hand.card_at, strict=False):
                if index >= 0 and cost.cost > 0 and t.team[cost.seat] == side:
                    decisions[index] = _with(
                        decisions[index], "cost a trick double-dummy in a contract that was set"
                    )


def _accuracy(rules: Ruleset, decisions: Sequence[Decision]) -> tuple[float | None, ...]:
    out: list[float | None] = []
    for seat in range(rules.players):
        mine = [d for d in decisions if d.seat == seat]
        good = sum(d.loss < INACCURACY for d in mine)
        out.append(round(100.0 * good / len(mine), 1) if mine else None)
    return tuple(out)
