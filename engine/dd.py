"""Double-dummy analysis: what every side could take with all cards seen, by Spades's own rules.

Exact, not sampled: a boolean alpha-beta (null-window) search on trick counts, "can these
seats take at least ``k`` of the tricks left against best defence?", driven to the exact
value by bisection, with

- a transposition table at trick starts keyed on the remaining cards (relative ranks per
  suit, so positions differing only in which small cards are already gone share an
  entry), the leader and whether spades are broken, holding the bounds found so far;
- equivalent cards: of a run of cards one hand holds that are adjacent in rank once the
  played cards are removed (the cards of the trick in progress still count), only one
  is searched;
- move ordering: a partner winning gets the lowest card, otherwise the cheapest winner is
  tried first, leads start with the top of each suit;
- sure bounds: the search stops as soon as the target is reached or out of reach.

The rules are the engine's: the effective suits and card order of every variant (jokers,
deuces high, 2 to 5 players) come from `engine.rules.tables`, the first trick's special
leads from `engine.fast.Table` itself, and after it the plain rules of `engine.fast`:
follow the led suit if able, otherwise any card; spades may not be led until broken
unless the leader holds only spades; any spade played breaks them. The property tests
(tests/engine/test_dd.py) check every value against a brute force over the engine's own
legal moves (`engine.fast.Table`), and against the bridge solver DDS where the rules
coincide.

Sides: with four players the partnerships, zero-sum (the tricks one side does not take,
the other does). With two players each seat. With three or five players every player is
his own side and double-dummy is not zero-sum: a seat's figure is what it takes against
all the others playing together to hold it down (the "paranoid" value), so the seats'
figures need not add up to the tricks of the hand.

A hand's figures (each side's tricks, each nil, each card's cost) are `engine.ddhand`'s.

This module is the reference and the specification; the review runs the same search in C,
`engine.ddcore` (100 to 160 times faster on small four-player deals, with stronger sure-trick
bounds), which tests/engine/test_ddcore.py holds to exactly this module's values in every
variant.

>>> from engine.rules import Ruleset
>>> from engine.cards import parse_cards
>>> hands = [parse_cards(h) for h in ("AS KH", "QS 2H", "3C 4C", "5D 6D")]
>>> solve(Ruleset(), Position(tuple(hands), leader=0, broken=True), sides=(0, 2))
2
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.cards import SPADES
from engine.fast import Table
from engine.rules import Ruleset, Tables, tables

SUIT_BITS = 16
"""Bits per effective suit in a hand's mask (spades hold at most 16 cards: deuces high)."""
_SUIT_MASK = (1 << SUIT_BITS) - 1


@dataclass(frozen=True, slots=True)
class Position:
    """A position with every card seen: the hands, who leads the trick in progress, the cards
    already on it (in play order), whether spades are broken and how many tricks are done
    (only whether it is the hand's first trick matters: its special leads)."""

    hands: tuple[tuple[int, ...], ...]
    leader: int
    trick: tuple[int, ...] = ()
    broken: bool = False
    done: int = 0

    @property
    def to_play(self) -> int:
        """Return the seat due to play."""
        return (self.leader + len(self.trick)) % len(self.hands)

    @property
    def left(self) -> int:
        """Return the tricks still to be won, the one in progress included."""
        return len(self.hands[self.leader]) + (1 if self.trick else 0)

    def play(self, rules: Ruleset, card: int) -> Position:
        """Return the position after the seat due plays ``card`` (assumed legal)."""
        t = tables(rules)
        seat = self.to_play
        hands = list(self.hands)
        hands[seat] = tuple(c for c in hands[seat] if c != card)
        trick = (*self.trick, card)
        broken = self.broken or t.suit[card] == SPADES
        if len(trick) < t.players:
            return Position(tuple(hands), self.leader, trick, broken, self.done)
        return Position(
            tuple(hands), trick_winner(t, self.leader, trick), (), broken, self.done + 1
        )


def trick_winner(t: Tables, leader: int, trick: Sequence[int]) -> int:
    """Return the seat winning ``trick`` (led by ``leader``) so far: the engine's rule."""
    suit, power = t.suit, t.power
    led = suit[trick[0]]
    best, best_i = -1, 0
    for i, c in enumerate(trick):
        if suit[c] in (led, SPADES) and power[c] > best:
            best, best_i = power[c], i
    return (leader + best_i) % t.players


class _Layout:
    """A ruleset's cards as bits: effective suit ``s`` holds bits ``16 s ..``, by power."""

    def __init__(self, t: Tables) -> None:
        bit_of = [-1] * 54
        for s in range(4):
            ranked = sorted((c for c in t.deck if t.suit[c] == s), key=t.power.__getitem__)
            for i, c in enumerate(ranked):
                bit_of[c] = s * SUIT_BITS + i
        self.bit_of = bit_of
        self.card_of = {1 << b: c for c, b in enumerate(bit_of) if b >= 0}
        self.block = {1 << b: _SUIT_MASK << (b // SUIT_BITS * SUIT_BITS) for b in range(64)}
        self.suit_masks = tuple(_SUIT_MASK << (s * SUIT_BITS) for s in range(4))

    def mask(self, cards: Iterable[int]) -> int:
        m = 0
        for c in cards:
            m |= 1 << self.bit_of[c]
        return m

    def cards(self, mask: int) -> list[int]:
        out = []
        while mask:
            low = mask & -mask
            out.append(self.card_of[low])
            mask ^= low
        return out


_layouts: dict[Tables, _Layout] = {}


def _layout(t: Tables) -> _Layout:
    found = _layouts.get(t)
    if found is None:
        found = _layouts[t] = _Layout(t)
    return found


class Solver:
    """Exact double-dummy values for one objective: the tricks ``counted`` seats take when
    ``maximizers`` play to take as many and every other seat plays to take as few.

    The transposition table lives as long as the solver: solving several positions of the
    same hand with one solver reuses what the earlier searches found.
    """

    def __init__(self, rules: Ruleset, counted: Iterable[int], maximizers: Iterable[int]) -> None:
        t = tables(rules)
        self.rules = rules
        self.t = t
        self.n = t.players
        self.lay = _layout(t)
        self.counted = tuple(s in set(counted) for s in range(self.n))
        self.maxi = tuple(s in set(maximizers) for s in range(self.n))
        self.aligned = self.counted == self.maxi
        self.special_first = rules.first_lead != "no_spade"
        self.tt: dict[tuple[int, ...], tuple[int, int]] = {}
        self._canon: dict[tuple[int, ...], int] = {}
        self._relative: dict[tuple[int, ...], tuple[int, ...]] = {}
        self.nodes = 0
        self.moves: dict[tuple[int, ...], int] = {}
        self.hint = 0
        self.cut = 0
        self.hands: list[int] = []
        self._first_table: Table | None = None

    # -- the public side ------------------------------------------------------------------

    def value(self, pos: Position) -> int:
        """Return the tricks (of those left, the trick in progress included) the counted
        seats take from ``pos`` with best play on both sides."""
        lo, hi = 0, pos.left
        while lo < hi:
            k = (lo + hi + 1) // 2
            if self.at_least(pos, k):
                lo = k
            else:
                hi = k - 1
        return lo

    def at_least(self, pos: Position, k: int) -> bool:
        """Return whether the counted seats can take ``k`` or more of the tricks left."""
        lay = self.lay
        self.hands = [lay.mask(h) for h in pos.hands]
        left = pos.left
        if not pos.trick:
            return self._start(pos.leader, pos.broken, k, left, pos.done == 0)
        alive = 0
        for h in self.hands:
            alive |= h
        best = winner = -1
        led = lay.bit_of[pos.trick[0]] // SUIT_BITS
        for i, c in enumerate(pos.trick):
            b = 1 << lay.bit_of[c]
            alive |= b
            if (b & (lay.suit_masks[led] | lay.suit_masks[SPADES])) and b > best:
                best, winner = b, (pos.leader + i) % self.n
        return self._play(
            len(pos.trick),
            pos.to_play,
            pos.leader,
            pos.broken,
            k,
            left,
            alive,
            led,
            best,
            winner,
            [lay.bit_of[c] for c in pos.trick],
            pos.done == 0,
        )

    # -- the search -------------------------------------------------------------------------

    def _key(self, leader: int, broken: bool) -> tuple[int, ...]:
        """Return the table key: per suit the owners of the live cards from the top, then who
        leads and whether spades are broken."""
        hands = self.hands
        exact = (*hands, leader * 2 + broken)
        found = self._relative.get(exact)
        if found is not None:
            return found
        canon = self._canon
        key = [leader * 2 + broken]
        for s in range(4):
            shift = s * SUIT_BITS
            parts = tuple((h >> shift) & _SUIT_MASK for h in hands)
            code = canon.get(parts)
            if code is None:
                code = canon[parts] = _canonical(parts)
            key.append(code)
        found = self._relative[exact] = tuple(key)
        return found

    def _start(self, leader: int, broken: bool, k: int, left: int, first: bool) -> bool:
        if k <= 0:
            return True
        if k > left:
            return False
        key = self._key(leader, broken)
        tt = self.tt
        entry = tt.get(key)
        if entry is not None:
            lo, hi = entry
            if lo >= k:
                return True
            if hi < k:
                return False
        else:
            lo, hi = 0, left
        alive = 0
        for h in self.hands:
            alive |= h
        if self.aligned:
            # Sure tricks settle the question without a search: the ones the leader can
            # cash at once, and the top trumps, each a trick for its holder's side sooner
            # or later (he must play them, and no card beats them).
            mine = theirs = 0
            spades = alive & self.lay.suit_masks[SPADES]
            if spades:
                top = 1 << (spades.bit_length() - 1)
                for seat, h in enumerate(self.hands):
                    if h & top:
                        run = 0
                        while spades and h & (1 << (spades.bit_length() - 1)):
                            run += 1
                            spades ^= 1 << (spades.bit_length() - 1)
                        if self.maxi[seat]:
                            mine = run
                        else:
                            theirs = run
                        break
            # Not where the first trick's cards are forced: that trick may give the lead away.
            forced = first and self.rules.first_lead in ("two_of_clubs", "lowest_club")
            quick = 0 if forced else self._quick(leader, broken, alive)
            if self.maxi[leader]:
                mine = max(mine, quick)
            else:
                theirs = max(theirs, quick)
            if mine >= k:
                tt[key] = (max(lo, mine), hi)
                return True
            if left - theirs < k:
                tt[key] = (lo, min(hi, left - theirs))
                return False
        self.hint = self.moves.get(key, 0)
        found = self._play(0, leader, leader, broken, k, left, alive, -1, -1, -1, [], first)
        if self.cut:
            self.moves[key] = self.cut
        if found:
            lo = max(lo, k)
        else:
            hi = min(hi, k - 1)
        tt[key] = (lo, hi)
        return found

    def _quick(self, leader: int, broken: bool, alive: int) -> int:
        """Return the tricks the leader can take at once with top cards, whatever the others
        play: in each suit the run of top live cards he holds, cut to the shortest holding of
        an opponent who could ruff (holds a spade); spades only once they may be led."""
        hands = self.hands
        masks = self.lay.suit_masks
        spades = masks[SPADES]
        h = hands[leader]
        side = self.maxi[leader]
        opp = [hands[s] for s in range(self.n) if self.maxi[s] != side]
        total = 0
        for s in range(4):
            m = masks[s]
            mine = h & m
            if not mine:
                continue
            live = alive & m
            run = 0
            while live:
                top = 1 << (live.bit_length() - 1)
                if not top & mine:
                    break
                run += 1
                live ^= top
            if not run:
                continue
            if s == SPADES:
                if broken or not h & ~spades:
                    total += run
                continue
            for o in opp:
                if o & spades:
                    length = (o & m).bit_count()
                    if length < run:
                        run = length
            total += run
        return total

    def _play(
        self,
        i: int,
        seat: int,
        leader: int,
        broken: bool,
        k: int,
        left: int,
        alive: int,
        led: int,
        best: int,
        winner: int,
        trick: list[int],
        first: bool,
    ) -> bool:
        """Return whether the counted seats reach ``k`` from the seat ``seat`` playing the
        ``i``-th card of the trick (``best`` the winning card's bit so far, of ``winner``)."""
        self.nodes += 1
        lay = self.lay
        hands = self.hands
        h = hands[seat]
        masks = lay.suit_masks
        # The legal cards.
        if first and self.special_first:
            legal = self._first_trick_legal(h, trick)
        elif i:
            legal = h & masks[led] or h
        elif broken:
            legal = h
        else:
            legal = h & ~masks[SPADES] or h
        # One card of each run of equivalent cards (the highest).
        block = lay.block
        reps = []
        x = legal
        while x:
            low = x & -x
            x ^= low
            above = alive & -(low << 1)
            if not (above & -above & legal & block[low]):
                reps.append(low)
        maxi = self.maxi[seat]
        # Ordering: a teammate winning gets the lowest card; otherwise the cheapest winner.
        if i and len(reps) > 1 and self.maxi[winner] != maxi:
            eligible = masks[led] | masks[SPADES]
            win = [b for b in reps if b & eligible and b > best]
            if win:
                reps = win + [b for b in reps if not (b & eligible and b > best)]
        elif not i and len(reps) > 1:
            # Leads: the tops of suits first (winners), then the rest from the highest.
            tops = [b for b in reps if not alive & -(b << 1) & block[b]]
            if tops:
                tops.reverse()
                reps = tops + [b for b in reps if alive & -(b << 1) & block[b]]
            # The lead that settled this position in an earlier search goes first.
            hint = self.hint
            if hint in reps:
                reps.remove(hint)
                reps.insert(0, hint)
        last = i == self.n - 1
        nxt = (seat + 1) % self.n
        spades = masks[SPADES]
        beats = masks[led] | spades if i else 0
        counted = self.counted
        for b in reps:
            hands[seat] = h ^ b
            if i == 0:
                led2 = (b.bit_length() - 1) // SUIT_BITS
                best2, winner2 = b, seat
            else:
                led2 = led
                if b > best and b & beats:
                    best2, winner2 = b, seat
                else:
                    best2, winner2 = best, winner
            broken2 = broken or b & spades > 0
            if last:
                found = self._start(winner2, broken2, k - counted[winner2], left - 1, False)
            elif first:
                # The first trick's special leads need its cards so far.
                trick.append(b.bit_length() - 1)
                found = self._play(
                    i + 1, nxt, leader, broken2, k, left, alive, led2, best2, winner2, trick, first
                )
                trick.pop()
            else:
                found = self._play(
                    i + 1, nxt, leader, broken2, k, left, alive, led2, best2, winner2, trick, first
                )
            hands[seat] = h
            if found == maxi:
                if not i:
                    self.cut = b
                return found
        if not i:
            self.cut = 0
        return not maxi

    def _first_trick_legal(self, h: int, trick: list[int]) -> int:
        """Return the legal cards of the first trick's special leads: the engine's own
        (`engine.fast.Table`), asked with this hand and the cards already on the trick."""
        table = self._first_table
        if table is None:
            table = self._first_table = Table(self.rules, [[] for _ in range(self.n)], 0)
        lay = self.lay
        by_suit: list[list[int]] = [[], [], [], []]
        for c in sorted(lay.cards(h)):
            by_suit[self.t.suit[c]].append(c)
        table.trick = [lay.card_of[1 << b] for b in trick]
        return lay.mask(table._first_trick(by_suit))


def _canonical(parts: tuple[int, ...]) -> int:
    """Return the owners of a suit's live cards from the top as one number (base n+1)."""
    alive = 0
    for p in parts:
        alive |= p
    code = 1
    width = len(parts) + 1
    while alive:
        top = 1 << (alive.bit_length() - 1)
        alive ^= top
        for seat, p in enumerate(parts):
            if p & top:
                code = code * width + seat + 1
                break
    return code


# -- what a hand could have been -------------------------------------------------------------


def solve(rules: Ruleset, pos: Position, sides: Iterable[int]) -> int:
    """Return the tricks left (the one in progress included) the seats ``sides`` take from
    ``pos`` with best play, every other seat playing against them."""
    seats = tuple(sides)
    return Solver(rules, seats, seats).value(pos)
