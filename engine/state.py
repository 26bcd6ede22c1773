"""The game state and the fold: ``state = reduce(apply, events, initial_state())``.

The state is an immutable NamedTuple rather than a frozen dataclass: building one is
about four times cheaper, and apply() builds one per card played (see benchmarks).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeVar

from engine.cards import SPADES, TWO_OF_CLUBS
from engine.fairness import LEGACY
from engine.model import (
    BidPlaced,
    BlindNilDeclared,
    BlindNilDeclined,
    CardDrawn,
    CardPlayed,
    CardsPassed,
    Event,
    GameFinished,
    GameStarted,
    HandDealt,
    HandScored,
    SeedContributed,
    SeedRevealed,
    TrickWon,
)
from engine.rules import Ruleset, Tables, tables

NEW = "new"
"""Before GameStarted."""
DEALING = "dealing"
"""Between hands: after GameStarted or HandScored, before the next HandDealt."""
DRAW = "draw"
BID = "bid"
PASS = "pass"
PLAY = "play"
OVER = "over"

_DEFAULT_RULES = Ruleset()
_DEFAULT_TABLES = tables(_DEFAULT_RULES)


class Trick(NamedTuple):
    """A completed trick: who led, the cards in play order, who won."""

    leader: int
    cards: tuple[int, ...]
    winner: int


class GameState(NamedTuple):
    """Everything known about a game, hidden cards included (use `view` for a seat)."""

    rules: Ruleset = _DEFAULT_RULES
    tables: Tables = _DEFAULT_TABLES
    seed: int = 0
    phase: str = NEW
    hand: int = 0
    """Number of the current hand, from 1."""
    dealer: int = 0
    turn: int = -1
    """Seat due to act, -1 when nobody is."""
    hands: tuple[tuple[int, ...], ...] = ()
    stock: tuple[int, ...] = ()
    discards: tuple[tuple[int, ...], ...] = ()
    seen: tuple[bool, ...] = ()
    """Whether each seat has seen its hand (a blind candidate has not, until it chooses)."""
    bids: tuple[int, ...] = ()
    """Each seat's bid, -1 before it bids."""
    blind: tuple[bool, ...] = ()
    pending: tuple[tuple[int, int, int], ...] = ()
    """Exchanges still due, as (giver, receiver, number of cards)."""
    passed: tuple[tuple[int, int, tuple[int, ...]], ...] = ()
    leader: int = -1
    trick: tuple[int, ...] = ()
    tricks: tuple[Trick, ...] = ()
    taken: tuple[int, ...] = ()
    broken: bool = False
    scores: tuple[int, ...] = ()
    bags: tuple[int, ...] = ()
    winner: int = -1
    reason: str = ""
    moe: tuple[bool, ...] = ()
    """Whether each seat's bid is a Moe (its bid is then 6 or 8)."""
    face_up: tuple[tuple[int, ...], ...] = ()
    """Each seat's power checks as dealt (see `view` for the ones still held)."""
    forced: int = -1
    """Suicide with forcing: the seat sent back to bid the opposite of its partner's nil."""
    scheme: str = LEGACY
    """The deal derivation (`engine.fairness`)."""
    server_seed: str = ""
    """The secret seed of a committed game (hex); never in a view."""
    commitment: str = ""
    contributors: tuple[int, ...] = ()
    """Seats whose contribution hand 1 waits for (until the table closes the window)."""
    contributions: tuple[str, ...] = ()
    """Each seat's contribution (hex), "" for none."""


def initial_state() -> GameState:
    """Return the state of a game that has not started."""
    return GameState()


def _set(items: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    # Through a list: cheaper than slicing and concatenating (or unpacking) the tuple.
    copy = list(items)
    copy[index] = value
    return tuple(copy)


def _trailing(scores: tuple[int, ...], side: int) -> int:
    return max(s for t, s in enumerate(scores) if t != side) - scores[side]


def trailing_by(state: GameState, seat: int) -> int:
    """Return how far the seat's side is behind the best other side (<= 0 if not behind)."""
    return _trailing(state.scores, state.tables.team[seat])


def blind_nil_open(state: GameState, seat: int) -> bool:
    """Return whether the seat's side trails enough to be offered blind nil this hand."""
    r = state.rules
    return r.blind_nil and trailing_by(state, seat) >= r.blind_nil_deficit


def blind_bid_open(state: GameState, seat: int) -> bool:
    """Return whether the seat's side trails enough to bid blind this hand."""
    r = state.rules
    return r.blind_bids and trailing_by(state, seat) >= r.blind_bid_deficit


def is_nil(rules: Ruleset, bid: int) -> bool:
    """Return whether a bid is a nil (0 where nil is allowed)."""
    return bid == 0 and rules.nil_allowed


def bidding_order(rules: Ruleset, dealer: int, players: int) -> tuple[int, ...]:
    """Return the seats in the order they bid this hand."""
    left = (dealer + 1) % players
    if rules.bidding_order == "partners":
        # Dealer's left, his partner, dealer's partner, dealer.
        return (left, (left + 2) % 4, (dealer + 2) % 4, dealer)
    return tuple((left + i) % players for i in range(players))


def next_bidder(rules: Ruleset, dealer: int, bids: tuple[int, ...]) -> int:
    """Return the first seat in bidding order that has no bid, or -1 when all have bid."""
    for seat in bidding_order(rules, dealer, len(bids)):
        if bids[seat] < 0:
            return seat
    return -1


def nil_exchange_open(state: GameState, seat: int) -> bool:
    """Return whether a nil bid by ``seat`` now starts the nil card exchange.

    Whether the partner has seen his hand yet does not matter: a partner still offered a
    blind choice is shown his hand by the exchange (he gives a card from it before he
    bids), which ends that choice.
    """
    r = state.rules
    partner = (seat + 2) % 4
    return (
        r.nil_exchange
        and state.bids[partner] < 0
        and (not r.nil_exchange_deficit or trailing_by(state, seat) >= r.nil_exchange_deficit)
    )


def first_leader(rules: Ruleset, hands: tuple[tuple[int, ...], ...], dealer: int) -> int:
    """Return the seat that leads the first trick of the hand."""
    if rules.first_lead == "two_of_clubs":
        for seat, hand in enumerate(hands):
            if TWO_OF_CLUBS in hand:
                return seat
    return (dealer + 1) % len(hands)


# Mutators work in place on a list of the state's fields (indexed by the constants
# below): apply() copies the state once, and replay() folds a whole game on one list
# and builds a single GameState at the end. One implementation serves both.
(
    RULES,
    TABLES,
    SEED,
    PHASE,
    HAND,
    DEALER,
    TURN,
    HANDS,
    STOCK,
    DISCARDS,
    SEEN,
    BIDS,
    BLIND,
    PENDING,
    PASSED,
    LEADER,
    TRICK,
    TRICKS,
    TAKEN,
    BROKEN,
    SCORES,
    BAGS,
    WINNER,
    REASON,
    MOE,
    FACE_UP,
    FORCED,
    SCHEME,
    SERVER_SEED,
    COMMITMENT,
    CONTRIBUTORS,
    CONTRIBUTIONS,
) = range(len(GameState._fields))

_BLANK = list(GameState())
E = TypeVar("E")
Fields = list[Any]
_MUTATORS: dict[type, Callable[[Fields, Any], None]] = {}
_new = tuple.__new__


def _mutator(kind: type[E]) -> Callable[[Callable[[Fields, E], None]], Callable[[Fields, E], None]]:
    def register(fn: Callable[[Fields, E], None]) -> Callable[[Fields, E], None]:
        _MUTATORS[kind] = fn
        return fn

    return register


def apply(state: GameState, event: Event) -> GameState:
    """Return the state after one event (events are facts: they are not re-validated)."""
    # [*t] beats list(t) here: list() of a tuple subclass takes the iterator path.
    fields = [*state]
    _MUTATORS[type(event)](fields, event)
    return _new(GameState, fields)


def replay(events: Iterable[Event], state: GameState | None = None) -> GameState:
    """Return the state that a game's events fold to (from ``state``, default a new game)."""
    fields = [*(state or GameState())]
    mutators = _MUTATORS
    for event in events:
        mutators[type(event)](fields, event)
    return _new(GameState, fields)


@_mutator(GameStarted)
def _started(f: Fields, ev: GameStarted) -> None:
    t = tables(ev.ruleset)
    f[:] = _BLANK
    f[RULES] = ev.ruleset
    f[TABLES] = t
    f[SEED] = ev.seed
    f[PHASE] = DEALING
    f[DEALER] = ev.dealer
    f[SCORES] = f[BAGS] = (0,) * t.teams
    f[SCHEME] = ev.scheme
    f[SERVER_SEED] = ev.server_seed
    f[COMMITMENT] = ev.commitment
    f[CONTRIBUTORS] = ev.contributors
    f[CONTRIBUTIONS] = ("",) * t.players


@_mutator(SeedContributed)
def _contributed(f: Fields, ev: SeedContributed) -> None:
    f[CONTRIBUTIONS] = _set(f[CONTRIBUTIONS], ev.seat, ev.value)


@_mutator(SeedRevealed)
def _revealed(f: Fields, ev: SeedRevealed) -> None:
    f[SERVER_SEED] = ev.server_seed


@_mutator(HandDealt)
def _dealt(f: Fields, ev: HandDealt) -> None:
    t: Tables = f[TABLES]
    rules: Ruleset = f[RULES]
    n = t.players
    left = (ev.dealer + 1) % n
    no = (False,) * n
    f[PHASE] = DRAW if ev.stock else BID
    f[HAND] = ev.hand
    f[DEALER] = ev.dealer
    f[TURN] = f[LEADER] = left
    f[HANDS] = ev.hands
    f[FACE_UP] = ev.face_up or ((),) * n
    f[MOE] = no
    f[FORCED] = -1
    f[STOCK] = ev.stock
    f[DISCARDS] = ((),) * n
    f[BIDS] = (-1,) * n
    f[BLIND] = no
    f[PENDING] = f[PASSED] = f[TRICK] = f[TRICKS] = ()
    f[TAKEN] = (0,) * n
    f[BROKEN] = False
    scores = f[SCORES]
    # A blind candidate (its side trails by a blind option's deficit) does not see its
    # hand until it chooses.
    deficits = []
    if rules.blind_nil:
        deficits.append(rules.blind_nil_deficit)
    if rules.blind_bids:
        deficits.append(rules.blind_bid_deficit)
    if ev.stock or not deficits or max(scores) - min(scores) < min(deficits):
        f[SEEN] = (True,) * n
    else:
        deficit = min(deficits)
        f[SEEN] = tuple(_trailing(scores, t.team[s]) < deficit for s in range(n))


@_mutator(CardDrawn)
def _drawn(f: Fields, ev: CardDrawn) -> None:
    seat = ev.seat
    stock = f[STOCK] = f[STOCK][2:]
    f[HANDS] = _set(f[HANDS], seat, tuple(sorted((*f[HANDS][seat], ev.kept))))
    f[DISCARDS] = _set(f[DISCARDS], seat, (*f[DISCARDS][seat], ev.discarded))
    if stock:
        f[TURN] = 1 - seat
    else:
        f[PHASE] = BID
        f[TURN] = (f[DEALER] + 1) % f[TABLES].players


@_mutator(BlindNilDeclined)
def _declined(f: Fields, ev: BlindNilDeclined) -> None:
    f[SEEN] = _set(f[SEEN], ev.seat, True)


@_mutator(BlindNilDeclared)
def _blind_nil(f: Fields, ev: BlindNilDeclared) -> None:
    _bid(f, ev.seat, 0, True, False)


@_mutator(BidPlaced)
def _bid_placed(f: Fields, ev: BidPlaced) -> None:
    _bid(f, ev.seat, ev.tricks, ev.blind, ev.moe)


def _bid(f: Fields, seat: int, tricks: int, blind: bool, moe: bool) -> None:
    rules: Ruleset = f[RULES]
    n = f[TABLES].players
    before = f[BIDS]
    bids = f[BIDS] = _set(before, seat, tricks)
    f[BLIND] = _set(f[BLIND], seat, blind)
    f[SEEN] = _set(f[SEEN], seat, True)
    if moe:
        f[MOE] = _set(f[MOE], seat, True)
    if rules.bidding_order == "clockwise" and not rules.suicide_forcing and not rules.nil_exchange:
        f[TURN] = (seat + 1) % n
    else:
        if seat == f[FORCED]:
            f[FORCED] = -1
        elif rules.suicide_forcing and before[(seat + 2) % 4] == tricks:
            # The second partner copied the first's bid: the first takes the opposite.
            partner = (seat + 2) % 4
            if tricks == 0:
                bids = f[BIDS] = _set(bids, partner, -1)
                f[FORCED] = partner
            else:
                bids = f[BIDS] = _set(bids, partner, 0)
        f[TURN] = next_bidder(rules, f[DEALER], bids)
        if (
            rules.nil_exchange
            and tricks == 0
            and not blind
            and f[FORCED] < 0
            and nil_exchange_open(_new(GameState, f), seat)
        ):
            partner = (seat + 2) % 4
            # The partner takes part with his hand in view: a blind choice still open
            # to him ends here (RULES.md: the swap comes "before partner bids").
            f[SEEN] = _set(f[SEEN], partner, True)
            if rules.nil_exchange_peek:
                f[PENDING] = ((seat, partner, 1), (partner, seat, 1))
            else:
                f[PENDING] = ((partner, seat, 1), (seat, partner, 1))
            f[PHASE] = PASS
            f[TURN] = f[PENDING][0][0]
            return
    if -1 in bids:
        return
    pending: tuple[tuple[int, int, int], ...] = ()
    k = rules.blind_nil_exchange
    if n == 4 and k:
        # Exchanges run in bidding order: the blind-nil bidder gives, then the partner.
        for s in bidding_order(rules, f[DEALER], 4):
            if f[BLIND][s] and is_nil(rules, bids[s]):
                pending += ((s, (s + 2) % 4, k), ((s + 2) % 4, s, k))
    if pending:
        f[PHASE] = PASS
        f[PENDING] = pending
        f[TURN] = pending[0][0]
    else:
        _start_play(f)


def _start_play(f: Fields) -> None:
    f[PHASE] = PLAY
    f[LEADER] = f[TURN] = first_leader(f[RULES], f[HANDS], f[DEALER])


@_mutator(CardsPassed)
def _passed(f: Fields, ev: CardsPassed) -> None:
    gone = set(ev.cards)
    hands = f[HANDS]
    hands = _set(hands, ev.seat, tuple(c for c in hands[ev.seat] if c not in gone))
    f[HANDS] = _set(hands, ev.to_seat, tuple(sorted((*hands[ev.to_seat], *ev.cards))))
    pending = f[PENDING] = f[PENDING][1:]
    f[PASSED] = (*f[PASSED], (ev.seat, ev.to_seat, ev.cards))
    if pending:
        f[TURN] = pending[0][0]
    elif -1 in f[BIDS]:
        # A nil card exchange during the bidding: the bidding goes on.
        f[PHASE] = BID
        f[TURN] = next_bidder(f[RULES], f[DEALER], f[BIDS])
    else:
        _start_play(f)


@_mutator(CardPlayed)
def _played(f: Fields, ev: CardPlayed) -> None:
    seat, card = ev.seat, ev.card
    t: Tables = f[TABLES]
    # Through a list for the hands, concatenation for the hand and the trick: the
    # cheapest ways to build these tuples in CPython 3.11.
    hands = list(f[HANDS])
    hand = hands[seat]
    i = hand.index(card)
    hands[seat] = hand[:i] + hand[i + 1 :]
    f[HANDS] = tuple(hands)
    trick = f[TRICK] = f[TRICK] + (card,)
    if t.suit[card] == SPADES:
        f[BROKEN] = True
    n = t.players
    f[TURN] = -1 if len(trick) == n else (seat + 1) % n


@_mutator(TrickWon)
def _trick_won(f: Fields, ev: TrickWon) -> None:
    w = ev.seat
    # tuple.__new__ skips Trick's Python-level __new__ (same value).
    tricks = f[TRICKS] = f[TRICKS] + (_new(Trick, (f[LEADER], ev.cards, w)),)
    taken = list(f[TAKEN])
    taken[w] += 1
    f[TAKEN] = tuple(taken)
    f[TRICK] = ()
    f[LEADER] = w
    if len(tricks) == f[TABLES].tricks:
        f[TURN] = -1
        f[PHASE] = DEALING
    else:
        f[TURN] = w


@_mutator(HandScored)
def _scored(f: Fields, ev: HandScored) -> None:
    f[SCORES] = ev.scores
    f[BAGS] = ev.bags
    f[PHASE] = DEALING
    f[TURN] = -1


@_mutator(GameFinished)
def _finished(f: Fields, ev: GameFinished) -> None:
    f[PHASE] = OVER
    f[TURN] = -1
    f[WINNER] = ev.winner
    f[REASON] = ev.reason
