"""A private fast path for the play phase: whole hands played on plain lists.

The search bot (`engine.search`) plays thousands of hands per decision; folding
events through `decide`/`apply` for each card costs more than the search can afford.
This module plays the same rules on mutable per-seat, per-suit lists, with no event
and no state built per card. It is private to the engine: nothing outside
`engine.search`, `engine.dd` (the first trick's special leads), the engine benchmark and the
differential test
(tests/engine/test_fast.py, which replays its every card through the public
`decide` and compares legal moves, tricks and scores) may rely on it.

>>> import random
>>> from engine.rules import Ruleset
>>> taken, points = random_hand(Ruleset(), random.Random(1))
>>> sum(taken), len(points)
(13, 2)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from engine.cards import CLUBS, SPADES, TWO_OF_CLUBS
from engine.rules import Ruleset, Tables, tables
from engine.scoring import score_hand
from engine.state import GameState, Trick, first_leader
from engine.view import SeatView

Policy = Callable[["Table", int, list[int]], int]
"""A play policy: (table, seat, legal cards) -> the card to play."""


class Table:
    """One hand in play, mutable: per-seat per-suit cards, the trick, who took what."""

    __slots__ = (
        "bids",
        "blind",
        "broken",
        "done",
        "first_lead",
        "hands",
        "history",
        "leader",
        "memo",
        "memo_done",
        "nil",
        "players",
        "power",
        "rules",
        "suit",
        "t",
        "taken",
        "trick",
    )

    def __init__(
        self,
        rules: Ruleset,
        hands: Sequence[Sequence[int]],
        leader: int,
        *,
        trick: Sequence[int] = (),
        done: int = 0,
        broken: bool = False,
        taken: Sequence[int] | None = None,
        bids: Sequence[int] | None = None,
        blind: Sequence[bool] | None = None,
        history: Sequence[Trick] | None = None,
    ) -> None:
        t = tables(rules)
        self.rules = rules
        self.t = t
        self.suit = t.suit
        self.power = t.power
        self.players = t.players
        suit = t.suit
        self.hands: list[list[list[int]]] = []
        for hand in hands:
            by_suit: list[list[int]] = [[], [], [], []]
            for c in sorted(hand):
                by_suit[suit[c]].append(c)
            self.hands.append(by_suit)
        self.leader = leader
        self.trick = list(trick)
        self.done = done
        self.broken = broken
        self.taken = list(taken) if taken is not None else [0] * t.players
        self.bids = list(bids) if bids is not None else [1] * t.players
        self.blind = list(blind) if blind is not None else [False] * t.players
        self.nil = [b == 0 and rules.nil_allowed for b in self.bids]
        self.first_lead = rules.first_lead
        self.memo: list[int] = []
        self.memo_done = -1
        # Moe runs and Little Willies are scored from the tricks themselves: kept only
        # for those rules (None otherwise, and the scoring never reads them).
        self.history: list[Trick] | None = (
            list(history or ()) if rules.moe or rules.little_willie else None
        )

    def legal(self, seat: int) -> list[int]:
        """Return the cards ``seat`` may play to the current trick (the engine's rules)."""
        hand = self.hands[seat]
        trick = self.trick
        if self.done == 0 and self.first_lead != "no_spade":
            return self._first_trick(hand)
        if trick:
            # Follow suit if able; otherwise any card.
            return hand[self.suit[trick[0]]] or hand[0] + hand[1] + hand[2] + hand[3]
        if self.broken:
            return hand[0] + hand[1] + hand[2] + hand[3]
        # Spades may not be led until broken, unless the leader holds only spades.
        return hand[0] + hand[1] + hand[2] or hand[3][:]

    def _first_trick(self, hand: list[list[int]]) -> list[int]:
        everything = hand[0] + hand[1] + hand[2] + hand[3]
        trick = self.trick
        lead = self.first_lead
        if lead == "lowest_club":
            # Everyone plays his lowest club; else follows suit; else a non-spade.
            if hand[CLUBS]:
                return [min(hand[CLUBS], key=self.power.__getitem__)]
            if trick and hand[self.suit[trick[0]]]:
                return hand[self.suit[trick[0]]][:]
            return hand[0] + hand[1] + hand[2] or everything
        if trick:
            return hand[self.suit[trick[0]]] or everything
        if lead == "two_of_clubs":
            return [TWO_OF_CLUBS]
        return everything  # "any": the first lead is free

    def play(self, seat: int, card: int) -> None:
        """Play ``card`` for ``seat`` (must be legal); completes the trick when full."""
        suit = self.suit[card]
        self.hands[seat][suit].remove(card)
        if suit == SPADES:
            self.broken = True
        trick = self.trick
        trick.append(card)
        if len(trick) == self.players:
            leader = self.leader
            self.leader = self.winner()
            if self.history is not None:
                self.history.append(Trick(leader, tuple(trick), self.leader))
            self.taken[self.leader] += 1
            self.done += 1
            self.trick = []

    def winner(self) -> int:
        """Return the seat winning the current trick so far."""
        trick = self.trick
        suit, power = self.suit, self.power
        led = suit[trick[0]]
        best, best_i = -1, 0
        for i, c in enumerate(trick):
            s = suit[c]
            if s == led or s == SPADES:  # noqa: SIM109 - two compares beat a tuple here
                p = power[c]
                if p > best:
                    best, best_i = p, i
        return (self.leader + best_i) % self.players

    def to_play(self) -> int:
        """Return the seat due to play."""
        return (self.leader + len(self.trick)) % self.players

    def play_out(self, policy: Policy) -> list[int]:
        """Play the rest of the hand with ``policy`` for every seat; return tricks taken."""
        total = self.t.tricks
        while self.done < total:
            seat = (self.leader + len(self.trick)) % self.players
            legal = self.legal(seat)
            card = legal[0] if len(legal) == 1 else policy(self, seat, legal)
            self.play(seat, card)
        return self.taken

    def play_out_random(self, rng: random.Random) -> list[int]:
        """Play the rest of the hand uniformly at random; return tricks taken."""
        # Table.play inlined: this loop is the figure `make bench` compares with OpenSpiel.
        rand = rng.random
        suit, power = self.suit, self.power
        hands, taken = self.hands, self.taken
        n, total = self.players, self.t.tricks
        special_first = self.first_lead != "no_spade"
        trick, leader, done, broken = self.trick, self.leader, self.done, self.broken
        while done < total:
            seat = (leader + len(trick)) % n
            hand = hands[seat]
            if done == 0 and special_first:
                self.trick, self.done = trick, done
                legal = self._first_trick(hand)
            elif trick:
                legal = hand[suit[trick[0]]] or hand[0] + hand[1] + hand[2] + hand[3]
            elif broken:
                legal = hand[0] + hand[1] + hand[2] + hand[3]
            else:
                legal = hand[0] + hand[1] + hand[2] or hand[3]
            card = legal[int(rand() * len(legal))]
            s = suit[card]
            hand[s].remove(card)
            if s == SPADES:
                broken = True
            trick.append(card)
            if len(trick) == n:
                led = suit[trick[0]]
                best, best_i = -1, 0
                for i, c in enumerate(trick):
                    cs = suit[c]
                    if cs == led or cs == SPADES:  # noqa: SIM109
                        p = power[c]
                        if p > best:
                            best, best_i = p, i
                winner = (leader + best_i) % n
                if self.history is not None:
                    self.history.append(Trick(leader, tuple(trick), winner))
                leader = winner
                taken[leader] += 1
                done += 1
                trick = []
        self.trick, self.leader, self.done, self.broken = trick, leader, done, broken
        return taken


def points(
    rules: Ruleset,
    bids: Sequence[int],
    blind: Sequence[bool],
    taken: Sequence[int],
    scores: Sequence[int] | None = None,
    bags: Sequence[int] | None = None,
    moe: Sequence[bool] | None = None,
    history: Sequence[Trick] | None = None,
) -> tuple[int, ...]:
    """Return each side's points for a hand (the engine's own `score_hand`)."""
    return outcome(rules, bids, blind, taken, scores, bags, moe, history)[0]


def outcome(
    rules: Ruleset,
    bids: Sequence[int],
    blind: Sequence[bool],
    taken: Sequence[int],
    scores: Sequence[int] | None = None,
    bags: Sequence[int] | None = None,
    moe: Sequence[bool] | None = None,
    history: Sequence[Trick] | None = None,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Return each side's (points, bags carried after) for a hand (`score_hand`).

    ``moe`` (each seat's Moe flag) and ``history`` (the hand's tricks) matter only
    with the Moe and Little Willie rules.
    """
    t = tables(rules)
    state = GameState(
        rules=rules,
        tables=t,
        bids=tuple(bids),
        blind=tuple(blind),
        scores=tuple(scores) if scores is not None else (0,) * t.teams,
        bags=tuple(bags) if bags is not None else (0,) * t.teams,
        moe=tuple(moe) if moe is not None else (False,) * t.players,
    )
    result = score_hand(state, tuple(taken), tuple(history or ()))
    return result[0], result[2]


def deal_hands(t: Tables, rng: random.Random, dealer: int = 0) -> list[list[int]]:
    """Return a random deal (one card at a time from dealer's left), each hand sorted."""
    deck = list(t.deck)
    rng.shuffle(deck)
    n = t.players
    per = t.tricks
    return [sorted(deck[(s - dealer - 1) % n : n * per : n]) for s in range(n)]


def random_hand(rules: Ruleset, rng: random.Random) -> tuple[list[int], tuple[int, ...]]:
    """Return (tricks per seat, points per side) of one hand dealt, bid and played at random.

    Bids are drawn from the bids the ruleset allows before partner constraints
    (suicide and team minimums are not applied): this is the search's and the
    benchmark's raw hand, not a game.
    """
    t = tables(rules)
    hands = deal_hands(t, rng)
    bids = [rng.choice(t.bids) for _ in range(t.players)]
    leader = first_leader(rules, tuple(tuple(h) for h in hands), 0)
    table = Table(rules, hands, leader, bids=bids)
    taken = table.play_out_random(rng)
    return taken, points(rules, bids, table.blind, taken)


def legal_sets(table: Table) -> list[int]:
    """Return the sorted legal cards of the seat due (for the differential test)."""
    return sorted(table.legal(table.to_play()))


def table_at(view: SeatView, hands: Sequence[Sequence[int]]) -> Table:
    """Return the hand in play as ``view`` sees it, with the unseen cards dealt as ``hands``
    (one sampled world): the trick, tricks done, spades broken, taken, bids and history."""
    return Table(
        view.rules,
        hands,
        view.leader,
        trick=view.trick,
        done=len(view.tricks),
        broken=view.spades_broken,
        taken=view.taken,
        bids=view.bids,
        blind=view.blind,
        history=view.tricks,
    )
