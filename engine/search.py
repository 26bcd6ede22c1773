"""The searching bot (``strong``): determinized Monte-Carlo over one seat's view.

For a card to play it samples deals of the unseen cards consistent with everything
the seat has seen (its own hand, every card played, voids shown by a failure to
follow suit, a spade led before spades were broken, the cards it gave its partner in
an exchange and the partner still holds, face-up cards, the hand sizes; every deal is
checked against them, `Sampler.consistent`), plays each legal card in each sampled deal, finishes
the hand with a quick heuristic rollout for every seat (`engine.botrollout`: the baseline's
habits, nil bidders duck, partners cover, contracts are chased and bags ducked), and scores
the hand with the engine's own scoring (nil, bags and their penalty, blind bids,
10-for-200, Boston): the card with the best average margin over the other sides is
played. Deals are weighted by how well they explain the other seats' bids (the
baseline's bidding model), and only one card of each run of equivalent cards is
searched. Every candidate card is tried in the same sampled deals (common random
numbers), so the comparison between cards is not swamped by the luck of the deal.
This is perfect-information Monte Carlo (PIMC), the method of GIB and of the first
Monte-Carlo Spades programs. The bid is searched the same way (`choose_bid`): the
baseline's bid, its neighbours and nil are each played out in the same sampled deals
(the seats still to bid bid as the baseline would) and the best mean margin wins; a
partner's intact nil is always covered (the trick headed) when it can be, and a
partner's trick is never overtaken by the last card. Blind
choices, exchanges, draws and the bids of variants whose bid is more than a number
(blind bids, Moe, suicide, Boston, 10-for-200, team minimums, the nil exchange, the
draw deal) are the baseline's (`engine.bot`).

It reads nothing but the `SeatView` it is given: two games that differ only in
cards this seat cannot see give it the same view, hence the same decision
(tests/engine/test_search.py re-deals the unseen cards and checks).

>>> from engine import StartGame, Ruleset, decide, replay, view
>>> state = replay(decide(replay([]), StartGame(Ruleset(), seed=3)))
>>> while state.phase == "bid":
...     state = replay(decide(state, choose(view(state, state.turn))), state)
>>> command = choose(view(state, state.turn), playouts=40)
>>> type(command).__name__, command in view(state, state.turn).legal
('PlayCard', True)
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from engine import bot, bothand
from engine.botrollout import copy_table, play_out
from engine.botrollout import rollout as rollout
from engine.cards import CLUBS, SPADES
from engine.fast import Table, outcome, table_at
from engine.model import Command, PlaceBid, PlayCard
from engine.rules import Tables, tables
from engine.state import first_leader
from engine.view import SeatView

PLAYOUTS = 400
"""Default budget: sampled deals x candidate cards, per decision."""
SECONDS = 0.15
"""Default time cap per decision (the table service's budget is 200 ms per decision)."""
BID_SPREAD = 1.5
"""Tricks of spread between a hand's modelled bid and the bid made (a normal's sigma)."""
MIN_WORLDS = 4
"""Deals always played under a time cap (a loaded machine still gets a real search)."""


def choose(
    view: SeatView,
    rng: random.Random | None = None,
    *,
    playouts: int = PLAYOUTS,
    seconds: float | None = None,
) -> Command:
    """Return the searching bot's command for the seat of ``view``.

    ``playouts`` caps the playouts (deals x candidate cards); ``seconds``, when given,
    also caps the time spent (at least `MIN_WORLDS` deals are played). Without
    ``rng`` the sampling is seeded from the view, so the decision is a function of
    the view alone.
    """
    legal = view.legal
    if not legal:
        raise ValueError(f"seat {view.seat} has nothing to do now")
    if not isinstance(legal[0], PlayCard):
        if rng is None:
            rng = random.Random(_view_seed(view))
        if isinstance(legal[0], PlaceBid) and not view.hand_hidden:
            return choose_bid(view, rng, playouts=playouts, seconds=seconds)
        return bot.choose(view, rng)
    cards = [c.card for c in legal if isinstance(c, PlayCard)]
    if len(cards) == 1:
        return legal[0]
    if rng is None:
        rng = random.Random(_view_seed(view))
    candidates = distinct_cards(view, _covering(view, cards))
    if len(candidates) == 1:
        return PlayCard(view.seat, candidates[0])
    best = search(view, candidates, rng, playouts=playouts, seconds=seconds)
    return PlayCard(view.seat, best)


def _covering(view: SeatView, cards: list[int]) -> list[int]:
    """Return the cards a partner's intact nil calls for, if any, else ``cards``.

    The cards that head the trick when the partner's intact nil is winning it or still
    has to play to it: a nil that takes a trick is lost for good (-100 or more), the
    sampled deals and their rollouts may judge it lost anyway and save the high card,
    but a person sees an uncovered partner as the blunder it nearly always is.
    Otherwise, last to play to a trick the partner is winning, the cards that leave it
    to him: overtaking a partner's sure winner gains the side nothing.
    """
    rules = view.rules
    if rules.players != 4 or not view.trick:
        return cards
    partner = (view.seat + 2) % 4
    t = tables(rules)
    suit, power = t.suit, t.power
    led = suit[view.trick[0]]

    def value(c: int) -> int:
        return power[c] if suit[c] == led or suit[c] == SPADES else -1

    best = max(range(len(view.trick)), key=lambda i: value(view.trick[i]))
    top = value(view.trick[best])
    winning = (view.leader + best) % 4 == partner
    nil = rules.nil_allowed and view.bids[partner] == 0 and view.taken[partner] == 0
    me_nil = rules.nil_allowed and view.bids[view.seat] == 0
    to_come = (partner - view.leader) % 4 > len(view.trick)
    if nil and not me_nil and (winning or to_come):
        return [c for c in cards if value(c) > top] or cards
    if winning and len(view.trick) == 3 and not me_nil:
        return [c for c in cards if value(c) < top] or cards
    return cards


def distinct_cards(view: SeatView, cards: list[int]) -> list[int]:
    """Return one card (the lowest) of each run of equivalent cards among ``cards``.

    Two cards of one suit are equivalent when every card ranked between them is in
    this hand or already played: whatever the deal, they win and lose the same
    tricks. Searching one of them spends the budget on choices that differ.
    """
    t = tables(view.rules)
    suit, power = t.suit, t.power
    gone = set(view.hand) | set(view.trick)
    for trick in view.tricks:
        gone.update(trick.cards)
    out: list[int] = []
    by_suit: dict[int, list[int]] = {}
    for c in cards:
        by_suit.setdefault(suit[c], []).append(c)
    for s, mine in by_suit.items():
        mine.sort(key=power.__getitem__)
        # The suit's cards still unseen by this seat, in power order.
        outside = sorted(power[c] for c in t.deck if suit[c] == s and c not in gone)
        previous = -1
        for c in mine:
            if previous >= 0 and not any(power[previous] < p < power[c] for p in outside):
                continue  # equivalent to the card kept just below it
            out.append(c)
            previous = c
    return out


def _view_seed(view: SeatView) -> int:
    played = tuple(c for tr in view.tricks for c in tr.cards)
    return hash((view.seat, view.hand_number, view.hand, played, view.trick, view.scores))


def search(
    view: SeatView,
    cards: list[int],
    rng: random.Random,
    *,
    playouts: int = PLAYOUTS,
    seconds: float | None = None,
) -> int:
    """Return the card of ``cards`` with the best mean hand margin over sampled deals."""
    t = tables(view.rules)
    sampler = Sampler(view, t)
    totals = dict.fromkeys(cards, 0.0)
    worlds = max(2, playouts // len(cards))
    deadline = time.perf_counter() + seconds if seconds is not None else None
    me = t.team[view.seat]
    others = [side for side in range(t.teams) if side != me]
    rules = view.rules
    bag_cost = rules.bag_penalty / rules.bag_limit if rules.bags else 0.0
    # A hand's margin by the tricks each seat took (the same bids and scores in every
    # deal): scored once, unless the rules score from the tricks themselves.
    margins: dict[tuple[int, ...], float] = {}
    modes: dict[tuple[int, ...], list[int]] = {}
    for i in range(worlds):
        if deadline is not None and i >= MIN_WORLDS and time.perf_counter() > deadline:
            break
        hands = sampler.sample(rng)
        weight = sampler.bid_weight(hands)
        start = table_at(view, hands)
        for card in cards:
            table = copy_table(start)
            table.play(view.seat, card)
            taken = tuple(play_out(table, modes))
            margin = margins.get(taken) if table.history is None else None
            if margin is None:
                pts, bags = outcome(
                    view.rules,
                    view.bids,
                    view.blind,
                    taken,
                    view.scores,
                    view.bags,
                    view.moe,
                    table.history,
                )
                # A carried bag is a tenth of the next penalty: the hand's points alone
                # would count an overtrick as +1 and collect bags.
                value = [pts[s] - bag_cost * (bags[s] - view.bags[s]) for s in range(t.teams)]
                margin = value[me] - sum(value[o] for o in others) / len(others)
                margins[taken] = margin
            totals[card] += weight * margin
    # Ties go to the lowest card in play value: the cheaper card keeps the options.
    return max(cards, key=lambda c: (totals[c], -t.power[c], -c))


BID_SHARE = 0.75
"""A bid is searched with this share of the play budget, in whole hands played out
(each costs about twice a card's playout: ~300 hands in ~130 ms on one core)."""
BID_TOLERANCE = 3.0
"""Points of mean hand margin: the highest bid within this of the best is made (the rollouts
play this seat worse than the search does). 24 duplicate ladder games of seed 2: over its
bid +0.56 -> +0.39 (6.0: +0.35), contracts made 90% -> 84%, won 23 -> 21 (6.0: 19)."""
BID_WINDOW = 2
"""Bids searched on each side of the baseline's own bid."""


def choose_bid(
    view: SeatView,
    rng: random.Random,
    *,
    playouts: int = PLAYOUTS,
    seconds: float | None = None,
) -> Command:
    """Return the bid with the best mean hand margin over sampled deals played out.

    The candidates are the baseline's bid, the bids within `BID_WINDOW` of it and nil
    where it is legal. Each is played out in the same sampled deals (common random
    numbers): the seats still to bid bid as the baseline would with their sampled
    hands, then the rollout plays the hand and the engine scores it (contract made
    or set, nil, bags and their penalty) for every side. Variants whose bids are more
    than a number of tricks (blind bids, Moe, suicide, Boston, team minimums, the nil
    exchange) keep the baseline's bid.
    """
    fallback = bot.choose(view, rng)
    rules = view.rules
    if (
        not isinstance(fallback, PlaceBid)
        or fallback.blind
        or fallback.moe
        or rules.suicide
        or rules.boston
        or rules.moe
        or rules.blind_bids
        or rules.nil_exchange
        or rules.team_min_bid
        or rules.deal == "draw"
        or rules.ten_for_two_hundred
    ):
        return fallback
    plain = {
        c.tricks: c for c in view.legal if isinstance(c, PlaceBid) and not c.blind and not c.moe
    }
    t = tables(rules)
    partner_nil = t.players == 4 and view.bids[(view.seat + 2) % 4] == 0 and rules.nil_allowed
    wanted = fallback.tricks
    nil_ok = rules.nil_allowed and not partner_nil
    candidates = [
        b
        for b in plain
        if (abs(b - wanted) <= BID_WINDOW and (b or not rules.nil_allowed)) or (b == 0 and nil_ok)
    ]
    if len(candidates) <= 1:
        return fallback
    candidates.sort()
    sampler = Sampler(view, t)
    totals = dict.fromkeys(candidates, 0.0)
    worlds = max(MIN_WORLDS, int(playouts * BID_SHARE) // len(candidates))
    deadline = time.perf_counter() + seconds if seconds is not None else None
    me = t.team[view.seat]
    others = [side for side in range(t.teams) if side != me]
    bag_cost = rules.bag_penalty / rules.bag_limit if rules.bags else 0.0
    later = [s for s in range(t.players) if s != view.seat and view.bids[s] < 0]
    margins: dict[tuple[int, ...], float] = {}
    modes: dict[tuple[int, ...], dict[tuple[int, ...], list[int]]] = {}
    weights = 0.0
    for i in range(worlds):
        if deadline is not None and i >= MIN_WORLDS and time.perf_counter() > deadline:
            break
        hands = sampler.sample(rng)
        weight = sampler.bid_weight(hands)
        weights += weight
        leader = first_leader(rules, tuple(tuple(h) for h in hands), view.dealer)
        # The seats still to bid answer only whether this seat went nil (a nil beside a
        # nil is never bid): their modelled bids are worked out once per deal and case.
        modelled: dict[bool, list[int]] = {}
        for bid in candidates:
            nil = bid == 0
            if nil not in modelled:
                bids = list(view.bids)
                bids[view.seat] = bid
                for s in later:
                    bids[s] = bot.model_bid(view, s, hands[s], bids)
                modelled[nil] = bids
            bids = modelled[nil][:]
            bids[view.seat] = bid
            table = Table(rules, hands, leader, bids=bids, blind=view.blind)
            taken = tuple(play_out(table, modes.setdefault(tuple(bids), {})))
            seen = (*bids, *taken)
            margin = margins.get(seen) if table.history is None else None
            if margin is None:
                pts, bags = outcome(
                    rules, bids, view.blind, taken, view.scores, view.bags, view.moe, table.history
                )
                value = [pts[s] - bag_cost * (bags[s] - view.bags[s]) for s in range(t.teams)]
                margin = value[me] - sum(value[o] for o in others) / len(others)
                margins[seen] = margin
            totals[bid] += weight * margin
    # Ties go to the baseline's own bid, then the lower; the highest within `BID_TOLERANCE`.
    best = max(candidates, key=lambda b: (totals[b], b == wanted, -b))
    slack = BID_TOLERANCE * weights
    return plain[
        max(b for b in candidates if totals[b] >= totals[best] - slack and (b or best == 0))
    ]


class Sampler:
    """Deals of the unseen cards consistent with one seat's view (face-up cards included)."""

    def __init__(self, view: SeatView, t: Tables) -> None:
        n = t.players
        me = view.seat
        suit = t.suit
        played: set[int] = set(view.trick)
        void: list[set[int]] = [set() for _ in range(n)]
        broken = False
        first_lead = view.rules.first_lead
        rounds = [(tr.leader, tr.cards) for tr in view.tricks]
        if view.trick:
            rounds.append((view.leader, view.trick))
        played_by: list[list[int]] = [[] for _ in range(n)]
        for number, (leader, trick) in enumerate(rounds):
            played.update(trick)
            for i, c in enumerate(trick):
                played_by[(leader + i) % n].append(c)
            led = suit[trick[0]]
            special = number == 0 and first_lead != "no_spade"
            if led == SPADES and not broken and not special:
                # A spade led before spades broke: the leader held nothing else.
                void[leader].update(s for s in range(4) if s != SPADES)
            for i, c in enumerate(trick):
                seat = (leader + i) % n
                if number == 0 and first_lead == "lowest_club":
                    if suit[c] != CLUBS:
                        void[seat].add(CLUBS)
                    continue
                if i and suit[c] != led:
                    void[seat].add(led)
                if suit[c] == SPADES:
                    broken = True
        fixed: list[list[int]] = [[] for _ in range(n)]
        fixed[me] = list(view.hand)
        if view.given and n == 4:
            # Exchanges are between partners only: a card this seat gave is the partner's
            # unless it was played or came back (a partner may hand a received card back).
            partner = (me + 2) % 4
            mine = set(view.hand)
            fixed[partner] = sorted({c for c in view.given if c not in played and c not in mine})
        for s, up in enumerate(view.face_up):
            # Power checks: cards dealt face up are seen in their holder's hand.
            if s != me:
                fixed[s] += [c for c in up if c not in played and c not in fixed[s]]
        for s in range(n):
            # A card known to be in a hand is never of a suit that hand showed void in
            # (it would have been played, or handed back): a contradiction here is a
            # bug in this reading of the view, never a deal to search.
            assert s == me or not any(suit[c] in void[s] for c in fixed[s]), (s, fixed[s])
        known = played | set(view.hand) | set(view.discards)
        for hand in fixed:
            known.update(hand)
        self.pool = [c for c in t.deck if c not in known]
        self.fixed = fixed
        self.room = [0 if s == me else view.hand_sizes[s] - len(fixed[s]) for s in range(n)]
        self.void = void
        self.suit = suit
        self.n = n
        # Per suit, the seats with room that may hold its cards (not void in it).
        self.able = [
            [s for s in range(n) if self.room[s] > 0 and x not in void[s]] for x in range(4)
        ]
        # Cards nobody holds (two players dealt 13 each): a bucket without limits.
        self.spare = len(self.pool) - sum(self.room)
        self.played_by = played_by
        self.rules = view.rules
        self.t = t
        self.bids = view.bids
        # Seats whose bid was made looking at their cards (not blind, not an exchange
        # partner whose hand changed after bidding): their bids tell about their hands.
        exchanged = {s for s in range(n) if n == 4 and (view.blind[s] or view.blind[(s + 2) % 4])}
        self.bidders = [
            s
            for s in range(n)
            if s != me and view.bids[s] >= 0 and not view.blind[s] and s not in exchanged
        ]

    def bid_weight(self, hands: list[list[int]]) -> float:
        """Return how likely the others' bids are with these hands (the baseline's bidding).

        A bid a hand's expected tricks explain gets weight 1, one two tricks away about
        0.4; a nil from a hand the baseline would not bid nil with, 0.25. Deals are
        weighted, not rejected, so a seat bidding unlike the model costs nothing worse
        than a plain uniform sample.
        """
        weight = 1.0
        rules, t = self.rules, self.t
        margin = bot.MARGIN.get(t.players, 0.85)
        for s in self.bidders:
            held = tuple(sorted(hands[s] + self.played_by[s]))
            bid = self.bids[s]
            if bid == 0 and rules.nil_allowed:
                weight *= 1.0 if bothand.safe_nil(held, t) else 0.25
            else:
                d = bid - max(1.0, bothand.expected_tricks(held, rules) - margin)
                weight *= math.exp(-d * d / (2 * BID_SPREAD**2))
        return weight

    def sample(self, rng: random.Random) -> list[list[int]]:
        """Return one deal: every seat's hand (this seat's own as it is).

        Every deal is one the seat cannot rule out (checked: `consistent`): the quick
        random fill is tried a few times, then a fill that keeps every later card
        placeable (Hall's condition over suits and seats) and so always succeeds.
        """
        for _ in range(8):
            hands = self._try(rng)
            if hands is not None:
                break
        else:
            hands = self._fill(rng)
        assert self.consistent(hands), "sampled a deal the seat can rule out"
        return hands

    def consistent(self, hands: list[list[int]]) -> bool:
        """Return whether ``hands`` agrees with everything the view shows.

        Each seat holds its known cards and exactly as many cards as it holds, no seat
        holds a card of a suit it showed void in, and every card is unseen and dealt once.
        """
        pool = set(self.pool)
        dealt: set[int] = set()
        for s, hand in enumerate(hands):
            extra = hand[len(self.fixed[s]) :]
            if hand[: len(self.fixed[s])] != self.fixed[s] or len(extra) != self.room[s]:
                return False
            if any(c not in pool or c in dealt or self.suit[c] in self.void[s] for c in extra):
                return False
            dealt.update(extra)
        return True

    def _fill(self, rng: random.Random) -> list[list[int]]:
        """Return a deal that never strands a card: each card goes to a random seat that
        leaves the rest placeable (the unfilled room of the seats not void in any set of
        suits covers the cards of those suits still to place)."""
        suit, void, n = self.suit, self.void, self.n
        room = self.room[:]
        spare = self.spare
        pool = self.pool[:]
        rng.shuffle(pool)
        suits = sorted({suit[c] for c in pool})
        left = {x: sum(1 for c in pool if suit[c] == x) for x in suits}
        subsets = [
            [x for i, x in enumerate(suits) if mask >> i & 1] for mask in range(1, 1 << len(suits))
        ]

        def placeable() -> bool:
            for group in subsets:
                cap = spare + sum(room[s] for s in range(n) if any(x not in void[s] for x in group))
                if sum(left[x] for x in group) > cap:
                    return False
            return True

        hands = [list(h) for h in self.fixed]
        for c in pool:
            x = suit[c]
            left[x] -= 1
            weights = {s: room[s] for s in range(n) if room[s] > 0 and x not in void[s]}
            if spare > 0:
                weights[-1] = spare
            # A random order drawn in proportion to the room left (as `_try` deals).
            options = sorted(weights, key=lambda s: rng.random() ** (1 / weights[s]), reverse=True)
            for s in options:
                if s < 0:
                    spare -= 1
                else:
                    room[s] -= 1
                if placeable():
                    if s >= 0:
                        hands[s].append(c)
                    break
                if s < 0:
                    spare += 1
                else:
                    room[s] += 1
            else:
                raise AssertionError(f"no deal fits the view: {c} has no seat")
        return hands

    def _try(self, rng: random.Random) -> list[list[int]] | None:
        pool = self.pool[:]
        rng.shuffle(pool)
        suit = self.suit
        room = self.room[:]
        spare = self.spare
        able = self.able
        # The most constrained cards first (the fewest seats that may hold them).
        pool.sort(key=lambda c: len(able[suit[c]]))
        hands = [list(h) for h in self.fixed]
        for c in pool:
            eligible = [s for s in able[suit[c]] if room[s] > 0]
            weight = sum(room[s] for s in eligible) + spare
            if weight <= 0:
                return None
            pick = rng.randrange(weight)
            for s in eligible:
                if pick < room[s]:
                    hands[s].append(c)
                    room[s] -= 1
                    break
                pick -= room[s]
            else:
                spare -= 1
        return hands


LEVELS = ("baseline", "strong")
"""The bot levels a table or `spades simulate` may choose."""


def player(
    level: str, *, playouts: int = PLAYOUTS, seconds: float | None = None
) -> Callable[[SeatView, random.Random | None], Command]:
    """Return the bot function of a level name (`LEVELS`); ValueError names the levels."""
    if level == "baseline":
        return bot.choose
    if level == "strong":

        def strong(view: SeatView, rng: random.Random | None = None) -> Command:
            return choose(view, rng, playouts=playouts, seconds=seconds)

        return strong
    raise ValueError(f"unknown bot level {level!r}: one of {', '.join(LEVELS)}")
