"""The rules: ``decide`` turns a command into events or a typed rejection.

>>> from engine import StartGame, PlaceBid, Ruleset, decide, replay, legal_actions
>>> events = decide(replay([]), StartGame(Ruleset(), seed=1))
>>> [type(e).__name__ for e in events]
['GameStarted', 'HandDealt']
>>> state = replay(events)
>>> state.phase, state.turn
('bid', 1)
>>> [(c.tricks, c.blind) for c in legal_actions(state, 1)[:2]]
[(0, False), (1, False)]
>>> decide(state, PlaceBid(seat=0, tricks=3))
Traceback (most recent call last):
...
engine.errors.OutOfTurn: out of turn: seat 1 (E) is to bid, not seat 0 (N)
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Callable
from itertools import combinations
from typing import Any

from engine import errors, fairness
from engine.cards import CLUBS, SPADES, SUIT_SYMBOLS, TWO_OF_CLUBS, card_str, seat_name
from engine.model import (
    BidPlaced,
    BlindNilDeclared,
    BlindNilDeclined,
    CardDrawn,
    CardPlayed,
    CardsPassed,
    CloseSeeding,
    Command,
    Contribute,
    DeclareBlindNil,
    DeclineBlindNil,
    DrawCard,
    Event,
    GameFinished,
    GameStarted,
    HandDealt,
    HandScored,
    PassCards,
    PlaceBid,
    PlayCard,
    SeedContributed,
    SeedRevealed,
    StartGame,
    TrickWon,
)
from engine.rules import MOES, Ruleset, Tables, tables
from engine.scoring import score_hand
from engine.state import (
    BID,
    DEALING,
    DRAW,
    NEW,
    OVER,
    PASS,
    PLAY,
    GameState,
    Trick,
    apply,
    blind_bid_open,
    blind_nil_open,
    is_nil,
)

# Commands and events for a card are interned: they are frozen, and building a
# dataclass costs more than the rest of a legal-move check.
_PLAY = tuple(tuple(PlayCard(s, c) for c in range(54)) for s in range(5))
_PLAYED = tuple(tuple(CardPlayed(s, c) for c in range(54)) for s in range(5))
_BID = tuple(tuple(PlaceBid(s, b) for b in range(19)) for s in range(5))
# Exchange commands are interned as met (at most 4 x C(54, 2) of them).
_PASSES: tuple[dict[tuple[int, ...], PassCards], ...] = tuple({} for _ in range(5))


def _inline_shuffle(deck: list[int], rng: random.Random) -> None:
    # random.Random.shuffle of CPython 3.11, step for step (the same getrandbits calls
    # and swaps), with _randbelow inlined: it is most of the cost of a deal.
    getrandbits = rng.getrandbits
    bits = _BITS
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        k = bits[n]
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]


def _library_shuffle(deck: list[int], rng: random.Random) -> None:
    rng.shuffle(deck)


def _pick_shuffle() -> Callable[[list[int], random.Random], None]:
    # The inlined shuffle is used only where it gives random.shuffle's results, so the
    # same seed deals the same cards on any Python.
    for seed in ("0/1", "1/2", "check"):
        mine, theirs = list(range(54)), list(range(54))
        _inline_shuffle(mine, random.Random(seed))
        random.Random(seed).shuffle(theirs)
        if mine != theirs:
            return _library_shuffle
    return _inline_shuffle


_BITS = tuple(n.bit_length() for n in range(64))
_shuffle = _pick_shuffle()


def deal(rules: Ruleset, t: Tables, seed: int, hand: int, dealer: int) -> HandDealt:
    """Return hand number ``hand``'s deal by the legacy derivation, from (seed, hand) only."""
    deck = list(t.deck)
    _shuffle(deck, random.Random(f"{seed}/{hand}"))
    return deal_out(rules, t, deck, hand, dealer)


def deal_of(state: GameState, hand: int, dealer: int) -> HandDealt:
    """Return hand number ``hand``'s deal by the derivation the game was started with."""
    if state.scheme == fairness.LEGACY:
        return deal(state.rules, state.tables, state.seed, hand, dealer)
    deck = fairness.shuffled(
        state.tables.deck, bytes.fromhex(state.server_seed), state.contributions, hand
    )
    return deal_out(state.rules, state.tables, list(deck), hand, dealer)


def deal_out(rules: Ruleset, t: Tables, deck: list[int], hand: int, dealer: int) -> HandDealt:
    """Return the deal of a shuffled deck: who gets which card, which are face up.

    The deck's composition (``t.deck``) and the shuffle stay outside: this is only the
    dealer's hands, one card at a time from dealer's left, the first ``power_checks``
    rounds face up.
    """
    n = t.players
    if rules.deal == "draw":
        return HandDealt(hand=hand, dealer=dealer, hands=((),) * n, stock=tuple(deck))
    # One card at a time, starting at dealer's left.
    hands = tuple(tuple(sorted(deck[(s - dealer - 1) % n : n * t.tricks : n])) for s in range(n))
    k = rules.power_checks
    if not k:
        return HandDealt(hand=hand, dealer=dealer, hands=hands)
    face_up = tuple(tuple(sorted(deck[(s - dealer - 1) % n : n * k : n])) for s in range(n))
    return HandDealt(hand=hand, dealer=dealer, hands=hands, face_up=face_up)


def first_dealer(seed: int, players: int) -> int:
    """Return the first dealer drawn from the game's seed."""
    return random.Random(f"{seed}/dealer").randrange(players)


# ---------------------------------------------------------------- legal moves


# Hands are sorted, and without deuces-high each effective suit is one run of card
# numbers (jokers sort after the spades), so a suit is a slice found by bisection.
_SUIT_LO = (0, 13, 26, 39)
_SUIT_HI = (13, 26, 39, 54)


def suit_cards(hand: tuple[int, ...], t: Tables, s: int) -> tuple[int, ...]:
    """Return the cards of effective suit ``s`` in a sorted hand."""
    if t.contiguous:
        return hand[bisect_left(hand, _SUIT_LO[s]) : bisect_left(hand, _SUIT_HI[s])]
    suit = t.suit
    return tuple(c for c in hand if suit[c] == s)


def _no_spades(hand: tuple[int, ...], t: Tables) -> tuple[int, ...]:
    if t.contiguous:
        return hand[: bisect_left(hand, _SUIT_LO[SPADES])]
    suit = t.suit
    return tuple(c for c in hand if suit[c] != SPADES)


def _holds(hand: tuple[int, ...], t: Tables, s: int) -> bool:
    """Return whether a sorted hand holds a card of effective suit ``s``."""
    if t.contiguous:
        i = bisect_left(hand, _SUIT_LO[s])
        return i < len(hand) and hand[i] < _SUIT_HI[s]
    suit = t.suit
    return any(suit[c] == s for c in hand)


def _holds_non_spade(hand: tuple[int, ...], t: Tables) -> bool:
    """Return whether a sorted hand holds a card that is not a spade (nor a trump)."""
    if t.contiguous:
        return bool(hand) and hand[0] < _SUIT_LO[SPADES]
    suit = t.suit
    return any(suit[c] != SPADES for c in hand)


def legal_cards(state: GameState, seat: int) -> tuple[int, ...]:
    """Return the cards ``seat`` may play now, ascending (empty if not its turn)."""
    if seat != state.turn or seat < 0 or state.phase != PLAY:
        return ()
    trick = state.trick
    if trick and state.tricks:
        # The common case, past the first trick: follow suit if able; otherwise any card.
        hand = state.hands[seat]
        t = state.tables
        led = t.suit[trick[0]]
        if t.contiguous:
            return hand[bisect_left(hand, _SUIT_LO[led]) : bisect_left(hand, _SUIT_HI[led])] or hand
        return suit_cards(hand, t, led) or hand
    return _legal_cards(state, seat, trick)


def _legal_cards(state: GameState, seat: int, trick: tuple[int, ...]) -> tuple[int, ...]:
    hand = state.hands[seat]
    t = state.tables
    first = not state.tricks
    if first and state.rules.first_lead == "lowest_club":
        # Seed 003: everyone plays his lowest club to the first trick.
        clubs = suit_cards(hand, t, CLUBS)
        if clubs:
            return (min(clubs, key=t.power.__getitem__),)
        if trick:
            follow = suit_cards(hand, t, t.suit[trick[0]])
            if follow:
                return follow
        return _no_spades(hand, t) or hand
    if not trick:
        if first:
            lead = state.rules.first_lead
            if lead == "two_of_clubs":
                # The holder of the two of clubs leads it.
                return (TWO_OF_CLUBS,)
            if lead == "any":
                return hand
        if state.broken:
            return hand
        # Spades may not be led until broken, unless the leader holds only spades.
        return _no_spades(hand, t) or hand
    # Follow suit if able; otherwise any card.
    return suit_cards(hand, t, t.suit[trick[0]]) or hand


def legal_bids(state: GameState, seat: int) -> tuple[int, ...]:
    """Return the numbers ``seat`` may bid (0 = nil where allowed), ascending."""
    r = state.rules
    t = state.tables
    if not (r.suicide or r.team_min_bid or r.moe) or t.players != 4:
        return t.bids
    bids = list(t.bids)
    partner_seat = (seat + 2) % 4
    partner = state.bids[partner_seat]
    if r.moe and state.moe[partner_seat]:
        # The partner bid a Moe: the side's contract is the Moe, which this seat seconds.
        return ()
    if r.suicide:
        # One nil and one bid of at least four per partnership.
        if partner < 0:
            bids = [b for b in bids if b == 0 or b >= 4]
        elif partner == 0:
            bids = [b for b in bids if b >= 4]
        else:
            bids = [0]
        if r.suicide_forcing and partner >= 0 and seat != state.forced:
            # Forcing: the second partner may copy the first's bid instead.
            bids = sorted({*bids, partner})
    if r.team_min_bid and partner >= 0:
        # The second partner brings the contract up to the team minimum.
        bids = [b for b in bids if b + partner >= r.team_min_bid]
    return tuple(bids)


def legal_moes(state: GameState, seat: int) -> tuple[int, ...]:
    """Return the Moe bids (6 Little, 8 Big) ``seat`` may make, ascending."""
    r = state.rules
    if not r.moe:
        return ()
    partner_seat = (seat + 2) % 4
    if state.moe[partner_seat]:
        # Seconding the partner's Moe is the only bid left.
        return (state.bids[partner_seat],)
    if state.bids[partner_seat] >= 0:
        # Only the first partner of a side to bid may bid a Moe.
        return ()
    return tuple(MOES)


def _command_key(command: Command) -> tuple[int, tuple[object, ...]]:
    order = _COMMAND_ORDER[type(command)]
    return order, tuple(getattr(command, f) for f in command.__slots__)


_COMMAND_ORDER = {
    cls: i
    for i, cls in enumerate(
        (StartGame, DrawCard, DeclareBlindNil, DeclineBlindNil, PlaceBid, PassCards, PlayCard)
    )
}


def legal_actions(state: GameState, seat: int) -> list[Command]:
    """Return every command ``seat`` may send now, sorted by kind then fields."""
    if seat != state.turn or seat < 0:
        return []
    phase = state.phase
    if phase == PLAY:
        row = _PLAY[seat]
        trick = state.trick
        if state.tricks:
            # legal_cards past the first trick, inlined: follow suit if able, otherwise
            # any card; lead anything once spades are broken, else a non-spade if held.
            hand = state.hands[seat]
            t = state.tables
            if trick:
                led = t.suit[trick[0]]
                if t.contiguous:
                    lo, hi = _SUIT_LO[led], _SUIT_HI[led]
                    cards = hand[bisect_left(hand, lo) : bisect_left(hand, hi)]
                else:
                    cards = suit_cards(hand, t, led)
                return [row[c] for c in cards or hand]
            if state.broken:
                return [row[c] for c in hand]
            return [row[c] for c in _no_spades(hand, t) or hand]
        return [row[c] for c in _legal_cards(state, seat, trick)]
    if phase == BID:
        if state.seen[seat]:
            row_bids = _BID[seat]
            plain: list[Command] = [row_bids[b] for b in legal_bids(state, seat)]
            if state.rules.moe:
                plain += [PlaceBid(seat, b, moe=True) for b in legal_moes(state, seat)]
                plain.sort(key=_command_key)
            return plain
        choices: list[Command] = []
        bids = legal_bids(state, seat)
        if blind_nil_open(state, seat) and 0 in bids:
            choices.append(DeclareBlindNil(seat))
        choices.append(DeclineBlindNil(seat))
        if blind_bid_open(state, seat):
            least = state.rules.blind_bid_min
            choices += [
                PlaceBid(seat, b, True) for b in bids if not is_nil(state.rules, b) and b >= least
            ]
        return sorted(choices, key=_command_key)
    if phase == PASS:
        k = state.pending[0][2]
        passes = _PASSES[seat]
        return [
            passes.get(combo) or passes.setdefault(combo, PassCards(seat, combo))
            for combo in combinations(state.hands[seat], k)
        ]
    if phase == DRAW:
        return [DrawCard(seat, False), DrawCard(seat, True)]
    return []


# ---------------------------------------------------------------- decide


def decide(state: GameState, command: Command) -> list[Event]:
    """Return the events a command causes, or raise a `RuleViolation` naming the rule."""
    kind = type(command)
    if kind is PlayCard:
        # Most commands are cards: their checks are inlined here, saving a call.
        seat, card = command.seat, command.card  # type: ignore[union-attr]
        if state.phase != PLAY or seat != state.turn:
            _check_turn(state, seat, PLAY)
        t = state.tables
        hand = state.hands[seat]
        if card not in hand:
            _reject_play(state, seat, card)
        trick = state.trick
        if state.tricks:
            # Past the first trick (legal_cards' rules, checked for the one card): follow
            # suit if able; lead a spade only once broken or when holding nothing else.
            suit = t.suit
            if trick:
                led = suit[trick[0]]
                if suit[card] != led and _holds(hand, t, led):
                    _reject_play(state, seat, card)
            elif suit[card] == SPADES and not state.broken and _holds_non_spade(hand, t):
                _reject_play(state, seat, card)
        elif card not in legal_cards(state, seat):
            _reject_play(state, seat, card)
        if len(trick) + 1 < t.players:
            return [_PLAYED[seat][card]]
        return _last_card(state, seat, card)
    if kind is StartGame:
        return _decide_start(state, command)  # type: ignore[arg-type]
    if kind is Contribute:
        if state.phase == NEW:
            raise errors.GameNotStarted("the game has not started: send StartGame first")
        return _decide_contribute(state, command)  # type: ignore[arg-type]
    if kind is CloseSeeding:
        return _decide_close(state, command)  # type: ignore[arg-type]
    handler: Callable[[GameState, Any], list[Event]] | None = _HANDLERS.get(kind)
    if handler is None:
        raise errors.UnknownCommand(f"unknown command {command!r}")
    seat = command.seat  # type: ignore[union-attr]
    phase = _PHASE_OF[kind]
    if state.phase != phase or seat != state.turn or not isinstance(seat, int) or seat < 0:
        _check_turn(state, seat, phase)
    return handler(state, command)


def _check_turn(state: GameState, seat: int, phase: str) -> None:
    if state.phase == NEW:
        raise errors.GameNotStarted("the game has not started: send StartGame first")
    if state.phase == OVER:
        raise errors.GameOver(f"the game is over ({state.reason}): no more moves")
    n = state.tables.players
    if not isinstance(seat, int) or not 0 <= seat < n:
        raise errors.NotYourSeat(f"no seat {seat!r} at a {n}-player table")
    if state.phase != phase:
        raise errors.WrongPhase(f"wrong phase: the hand is in its {state.phase} phase, not {phase}")
    if seat != state.turn:
        raise errors.OutOfTurn(
            f"out of turn: seat {state.turn} ({seat_name(state.turn, n)}) is to {phase},"
            f" not seat {seat} ({seat_name(seat, n)})"
        )


def _decide_start(state: GameState, command: StartGame) -> list[Event]:
    if state.phase != NEW:
        raise errors.GameAlreadyStarted("the game has already started")
    rules = command.ruleset
    if not command.server_seed:
        dealer = first_dealer(command.seed, rules.players)
        return [
            GameStarted(ruleset=rules, seed=command.seed, dealer=dealer),
            deal(rules, tables(rules), command.seed, 1, dealer),
        ]
    try:
        seed = fairness.check_hex32(command.server_seed, "server seed")
    except fairness.InvalidContribution as exc:
        raise errors.UnknownCommand(str(exc)) from None
    contributors = tuple(sorted(set(command.contributors)))
    if any(not 0 <= s < rules.players for s in contributors):
        raise errors.NotYourSeat(f"contributors must be seats of a {rules.players}-player table")
    started = GameStarted(
        ruleset=rules,
        seed=0,
        dealer=fairness.first_dealer(seed, rules.players),
        scheme=fairness.SCHEME,
        commitment=fairness.commitment(seed),
        server_seed=command.server_seed,
        contributors=contributors,
    )
    if contributors:
        return [started]  # hand 1 waits for the contributions (or CloseSeeding)
    return [started, deal_of(apply(state, started), 1, started.dealer)]


def _seeding(state: GameState) -> bool:
    return state.phase == DEALING and state.hand == 0 and state.scheme != fairness.LEGACY


def _decide_contribute(state: GameState, command: Contribute) -> list[Event]:
    seat = command.seat
    if not _seeding(state):
        raise errors.ContributionRefused(
            "contributions are taken only before the first deal of a committed game"
        )
    if seat not in state.contributors:
        raise errors.ContributionRefused(f"seat {seat!r} is not asked for a contribution")
    if state.contributions[seat]:
        raise errors.ContributionRefused("this seat has contributed already")
    try:
        fairness.check_hex32(command.value)
    except fairness.InvalidContribution as exc:
        raise errors.ContributionRefused(str(exc)) from None
    contributed = SeedContributed(seat=seat, value=command.value)
    events: list[Event] = [contributed]
    after = apply(state, contributed)
    if all(after.contributions[s] for s in after.contributors):
        events.append(deal_of(after, 1, after.dealer))
    return events


def _decide_close(state: GameState, command: CloseSeeding) -> list[Event]:
    if not _seeding(state):
        raise errors.WrongPhase("no contribution window is open: the first hand is dealt")
    return [deal_of(state, 1, state.dealer)]


def _decide_draw(state: GameState, command: DrawCard) -> list[Event]:
    top, second = state.stock[0], state.stock[1]
    if command.keep:
        return [CardDrawn(command.seat, kept=top, discarded=second)]
    return [CardDrawn(command.seat, kept=second, discarded=top)]


def _decide_blind_nil(state: GameState, command: DeclareBlindNil) -> list[Event]:
    seat = command.seat
    if state.seen[seat]:
        raise errors.BlindNilNotAllowed("blind nil must be bid before seeing the hand")
    if not state.rules.blind_nil:
        raise errors.BlindNilNotAllowed("blind nil is not played at this table")
    if not blind_nil_open(state, seat):
        raise errors.BlindNilNotAllowed(
            f"blind nil needs the side to trail by {state.rules.blind_nil_deficit} points"
        )
    _check_moe_partner(state, seat)
    if 0 not in legal_bids(state, seat):
        _reject_bid(state, seat, 0)
    return [BlindNilDeclared(seat)]


def _check_moe_partner(state: GameState, seat: int) -> None:
    partner = (seat + 2) % 4
    if state.rules.moe and state.moe[partner]:
        raise errors.MoeNotAllowed(
            f"moe: the partner bid a Moe of {state.bids[partner]};"
            " second it (moe=true, the same number)"
        )


def _decide_decline(state: GameState, command: DeclineBlindNil) -> list[Event]:
    if state.seen[command.seat]:
        raise errors.BlindNilNotAllowed("no blind choice is pending: the hand is already seen")
    return [BlindNilDeclined(command.seat)]


def _decide_bid(state: GameState, command: PlaceBid) -> list[Event]:
    seat, tricks = command.seat, command.tricks
    if command.blind:
        if state.seen[seat]:
            raise errors.BlindBidNotAllowed("a blind bid must be made before seeing the hand")
        if not state.rules.blind_bids:
            raise errors.BlindBidNotAllowed("blind bids are not played at this table")
        if not blind_bid_open(state, seat):
            raise errors.BlindBidNotAllowed(
                f"a blind bid needs the side to trail by {state.rules.blind_bid_deficit} points"
            )
        if is_nil(state.rules, tricks):
            raise errors.BlindBidNotAllowed("a blind bid of 0 is blind nil: send DeclareBlindNil")
        if isinstance(tricks, int) and tricks < state.rules.blind_bid_min:
            raise errors.BlindBidNotAllowed(
                f"a blind bid must be at least {state.rules.blind_bid_min} at this table"
            )
        if command.moe:
            raise errors.MoeNotAllowed("a Moe cannot be bid blind: see the hand first")
    elif not state.seen[seat]:
        raise errors.BlindChoicePending(
            "blind choice pending: bid blind (nil or tricks) or decline to see the hand first"
        )
    if command.moe is not False:
        if command.moe is not True:
            raise errors.MoeNotAllowed("moe must be true or false")
        if not state.rules.moe:
            raise errors.MoeNotAllowed("Big and Little Moe are not played at this table")
        moes = legal_moes(state, seat)
        if tricks not in moes:
            if moes and len(moes) == 1:
                raise errors.MoeNotAllowed(
                    f"moe: the partner bid a Moe of {moes[0]}; second it with the same bid"
                )
            if not moes:
                raise errors.MoeNotAllowed(
                    "moe: only the first partner of a side to bid may bid a Moe"
                )
            raise errors.MoeNotAllowed("moe: bid 6 (Little Moe) or 8 (Big Moe)")
        return [BidPlaced(seat, tricks, False, True)]
    _check_moe_partner(state, seat)
    if not isinstance(tricks, int) or tricks not in legal_bids(state, seat):
        _reject_bid(state, seat, tricks)
    return [BidPlaced(seat, tricks, command.blind)]


def _reject_bid(state: GameState, seat: int, tricks: object) -> None:
    r = state.rules
    top = state.tables.tricks
    if not isinstance(tricks, int) or not 0 <= tricks <= top:
        raise errors.BidOutOfRange(f"bid out of range: bids are whole numbers 0..{top}")
    if tricks == 0 and not r.nil_allowed and r.min_bid > 0:
        raise errors.NilNotAllowed(f"nil is not allowed here: the minimum bid is {r.min_bid}")
    if 0 < tricks < r.min_bid or (tricks == 0 and not r.nil_allowed):
        raise errors.BidOutOfRange(f"bid out of range: the minimum bid is {r.min_bid}")
    if r.suicide:
        if r.suicide_forcing:
            raise errors.SuicideBid(
                "suicide: each partnership bids one nil and one bid of at least 4"
                " (the second partner may copy the first's bid to force him)"
            )
        raise errors.SuicideBid("suicide: each partnership bids one nil and one bid of at least 4")
    raise errors.TeamMinimumBid(
        f"team minimum: the partnership's contract must be at least {r.team_min_bid}"
    )


def _decide_pass(state: GameState, command: PassCards) -> list[Event]:
    seat = command.seat
    k = state.pending[0][2]
    kind = "blind-nil" if state.blind[seat] or state.blind[(seat + 2) % 4] else "nil card"
    if state.bids.count(-1):
        kind = "nil card"
    try:
        cards = tuple(command.cards)
        distinct = len(set(cards))
    except TypeError:
        raise errors.InvalidPass(f"cards must be a list of {k} cards") from None
    if len(cards) != k or distinct != k:
        raise errors.InvalidPass(
            f"the {kind} exchange gives exactly {k} different card{'s' if k > 1 else ''}"
        )
    for c in cards:
        if c not in state.hands[seat]:
            raise errors.InvalidPass(f"card not in hand: {_name(c)} cannot be passed")
    receiver = state.pending[0][1]
    return [CardsPassed(seat, receiver, tuple(sorted(cards)))]


def _name(card: object) -> str:
    try:
        return card_str(card)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return repr(card)


def _last_card(state: GameState, seat: int, card: int) -> list[Event]:
    t = state.tables
    n = t.players
    events: list[Event] = [_PLAYED[seat][card]]
    trick = state.trick + (card,)  # noqa: RUF005 - faster than unpacking
    # A trick with a trump is won by the highest trump, else by the highest card led.
    suit, power = t.suit, t.power
    led = suit[trick[0]]
    best, best_i = -1, 0
    for i, c in enumerate(trick):
        if suit[c] == led or suit[c] == SPADES:
            p = power[c]
            if p > best:
                best, best_i = p, i
    winner = (state.leader + best_i) % n
    events.append(TrickWon(winner, trick))
    if len(state.tricks) + 1 < t.tricks:
        return events
    taken = list(state.taken)
    taken[winner] += 1
    last = (*state.tricks, Trick(state.leader, trick, winner))
    events += _end_of_hand(state, tuple(taken), last)
    return events


def _reject_play(state: GameState, seat: int, card: object) -> None:
    hand = state.hands[seat]
    if card not in hand:
        raise errors.CardNotInHand(f"card not in hand: seat {seat} does not hold {_name(card)}")
    assert isinstance(card, int)
    suit = state.tables.suit
    first_lead = state.rules.first_lead
    if not state.tricks and first_lead == "lowest_club":
        raise errors.FirstLeadRule(
            "first trick: everyone plays his lowest club (else follows suit, else no spade)"
        )
    if state.trick:
        led = suit[state.trick[0]]
        raise errors.MustFollowSuit(
            f"must follow suit: {SUIT_SYMBOLS[led]} was led and seat {seat} holds one"
        )
    if not state.tricks and first_lead == "two_of_clubs":
        raise errors.FirstLeadRule("first lead: the holder of the two of clubs must lead it")
    raise errors.SpadesNotBroken(
        "spades not broken: a spade may not be led until one was played on another suit"
        " (or the leader holds only spades)"
    )


def _end_of_hand(
    state: GameState, taken: tuple[int, ...], tricks: tuple[Trick, ...]
) -> list[Event]:
    r = state.rules
    points, scores, bags, boston_side = score_hand(state, taken, tricks)
    events: list[Event] = [HandScored(state.hand, taken, points, scores, bags)]
    top = max(scores)
    leaders = [side for side, s in enumerate(scores) if s == top]
    unique_top = leaders[0] if len(leaders) == 1 else -1
    if boston_side >= 0:
        finished = GameFinished(boston_side, "boston", scores)
    elif r.mercy and min(scores) <= r.mercy:
        finished = GameFinished(unique_top, "mercy", scores)
    elif top >= r.target and unique_top >= 0:
        finished = GameFinished(unique_top, "target", scores)
    elif state.hand >= r.hand_cap:
        finished = GameFinished(unique_top, "hand_cap", scores)
    else:
        dealer = (state.dealer + 1) % state.tables.players
        events.append(deal_of(state, state.hand + 1, dealer))
        return events
    if state.scheme != fairness.LEGACY:
        # the game is over: the seed can no longer predict anything, and proves every deal
        events.append(SeedRevealed(state.server_seed))
    events.append(finished)
    return events


_HANDLERS: dict[type, Callable[[GameState, Any], list[Event]]] = {
    DrawCard: _decide_draw,
    DeclareBlindNil: _decide_blind_nil,
    DeclineBlindNil: _decide_decline,
    PlaceBid: _decide_bid,
    PassCards: _decide_pass,
}
_PHASE_OF = {
    DrawCard: DRAW,
    DeclareBlindNil: BID,
    DeclineBlindNil: BID,
    PlaceBid: BID,
    PassCards: PASS,
}
