"""What each audience may receive of one event: a seat, or the spectators.

`view` (engine/view.py) answers "what may this seat know now"; this module answers "what may
this seat be *told* of the event that just happened", the other half of the same rule, so that
hidden information has one owner: the engine, run by the table (the only process that folds a
game). The gateway forwards what the table built from these functions and never decides.

- `redact(event, seat)`: the event as ``seat`` (`SPECTATOR` for a spectator) may receive it.
  No seed, no hand, no card of another seat before it is played; exchanged cards only to their
  giver and receiver; the two-player draw only to the drawer. Public events come back as they
  are (the same object). The redacted forms are the ``Seat*`` dataclasses below, which stand for
  the event of the same name without its secrets.
- `visible_hand(state, seat)`: the seat's whole hand, when it may see it.
- `tell(before, event, after, seat)`: the redacted event and the seat's hand when it changed.
- `releases_spectators(event)`: spectators are kept one trick behind: they receive everything
  up to a completed trick (or the game's end) in one batch.
- `turn_commands(state, seat)`: what the seat may send when it is on turn (its ``your_turn``).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.cards import SPECTATOR, Card
from engine.fairness import LEGACY
from engine.game import legal_actions
from engine.model import (
    BidPlaced,
    BlindNilDeclared,
    BlindNilDeclined,
    CardDrawn,
    CardPlayed,
    CardsPassed,
    Command,
    Event,
    GameFinished,
    GameStarted,
    HandDealt,
    HandScored,
    SeedContributed,
    SeedRevealed,
    StartGame,
    TrickWon,
)
from engine.rules import Ruleset
from engine.state import GameState

__all__ = [
    "NO_CARD",
    "PUBLIC_EVENTS",
    "SeatCardDrawn",
    "SeatCardsPassed",
    "SeatGameStarted",
    "SeatHandDealt",
    "Tell",
    "Told",
    "redact",
    "releases_spectators",
    "tell",
    "turn_commands",
    "visible_hand",
]

NO_CARD = -1
"""A card field left out of what a seat is told."""


@dataclass(frozen=True, slots=True)
class SeatGameStarted:
    """`GameStarted` without its seeds: the rules, the first dealer, a committed game's
    public SHA-256 ``commitment`` and the seats that may contribute."""

    ruleset: Ruleset
    dealer: int
    scheme: str = LEGACY
    commitment: str = ""
    contributors: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SeatHandDealt:
    """`HandDealt` without the cards: how many each seat holds (and the stock), plus the
    power checks, dealt face up for everyone to see."""

    hand: int
    dealer: int
    hand_sizes: tuple[int, ...]
    stock_size: int = 0
    face_up: tuple[tuple[Card, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class SeatCardDrawn:
    """`CardDrawn`: only the drawer is told what it kept and discarded (else `NO_CARD`:
    None on the wire)."""

    seat: int
    kept: Card = NO_CARD
    discarded: Card = NO_CARD


@dataclass(frozen=True, slots=True)
class SeatCardsPassed:
    """`CardsPassed`: everyone learns how many cards went; only the two seats which."""

    seat: int
    to_seat: int
    count: int
    cards: tuple[Card, ...] = ()


Told = Event | SeatGameStarted | SeatHandDealt | SeatCardDrawn | SeatCardsPassed
"""What one audience may receive of one event."""

PUBLIC_EVENTS: frozenset[type] = frozenset(
    {
        SeedContributed,
        BlindNilDeclared,
        BlindNilDeclined,
        BidPlaced,
        CardPlayed,
        TrickWon,
        HandScored,
        GameFinished,
        # only ever decided together with GameFinished: the game is over when anyone sees it
        SeedRevealed,
    }
)
"""Events every seat and spectator receives as they are."""


def redact(event: Event, seat: int) -> Told:
    """Return what ``seat`` (`SPECTATOR`: a spectator) may be told of ``event``."""
    if type(event) in PUBLIC_EVENTS:
        return event
    if isinstance(event, GameStarted):
        return SeatGameStarted(
            ruleset=event.ruleset,
            dealer=event.dealer,
            scheme=event.scheme,
            commitment=event.commitment,
            contributors=event.contributors,
        )
    if isinstance(event, HandDealt):
        return SeatHandDealt(
            hand=event.hand,
            dealer=event.dealer,
            hand_sizes=tuple(len(h) for h in event.hands),
            stock_size=len(event.stock),
            face_up=event.face_up,
        )
    if isinstance(event, CardDrawn):
        if seat != SPECTATOR and event.seat == seat:
            return SeatCardDrawn(seat=seat, kept=event.kept, discarded=event.discarded)
        return SeatCardDrawn(seat=event.seat)
    if isinstance(event, CardsPassed):
        told = seat != SPECTATOR and seat in (event.seat, event.to_seat)
        return SeatCardsPassed(
            seat=event.seat,
            to_seat=event.to_seat,
            count=len(event.cards),
            cards=event.cards if told else (),
        )
    raise TypeError(f"no redaction for {type(event).__name__}")


def visible_hand(state: GameState, seat: int) -> tuple[int, ...] | None:
    """Return the cards ``seat`` holds and may see, or None (a spectator, no deal yet, or a
    blind candidate who has not chosen)."""
    if seat < 0 or seat >= len(state.hands) or not state.seen[seat]:
        return None
    return state.hands[seat]


@dataclass(frozen=True, slots=True)
class Tell:
    """What one seat receives of one event: the event redacted for it, and its whole hand
    when the event changed it (the deal, a blind choice, the exchange, a card played)."""

    event: Told
    hand: tuple[int, ...] | None = None


def tell(before: GameState, event: Event, after: GameState, seat: int) -> Tell:
    """Return what ``seat`` receives of ``event``, which took the game from ``before`` to
    ``after``."""
    old = visible_hand(before, seat)
    new = visible_hand(after, seat)
    return Tell(event=redact(event, seat), hand=new if new is not None and new != old else None)


def releases_spectators(event: object) -> bool:
    """Return whether spectators may now see everything up to ``event``: they are kept one
    trick behind, so they learn a trick (and the bids before it) once it is complete."""
    return isinstance(event, TrickWon | GameFinished)


def turn_commands(state: GameState, seat: int) -> tuple[Command, ...]:
    """Return every command ``seat`` may send now (empty unless it is on turn and the game
    goes on); the table's own `StartGame` is never a seat's."""
    if seat < 0 or state.turn != seat or state.phase == "over":
        return ()
    return tuple(c for c in legal_actions(state, seat) if not isinstance(c, StartGame))
