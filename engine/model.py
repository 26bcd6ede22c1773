"""Commands (requests from a seat) and events (facts, past tense): frozen dataclasses.

Field types stay plain (int, bool, str, tuples, Ruleset) and every card field is annotated `Card`
(or tuples of `Card`): `events.contracts.wiregen` reads these annotations to generate the wire
Structs (cards by name) from this module, so a change here is a change of the stored events' shape;
``COMMAND_TYPES`` and ``EVENT_TYPES`` name every class.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.cards import Card
from engine.fairness import LEGACY
from engine.rules import Ruleset

# ---------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class StartGame:
    """Start a game with a ruleset; the seed drives every shuffle and the first dealer."""

    ruleset: Ruleset
    seed: int
    server_seed: str = ""
    """64 hex digits: deal by `engine.fairness` (committed, revealed at the end); "" = legacy."""
    contributors: tuple[int, ...] = ()
    """Seats whose client may add a contribution before hand 1 (the deal waits for them)."""


@dataclass(frozen=True, slots=True)
class Contribute:
    """A seat's client adds its random contribution to the deals (before hand 1)."""

    seat: int
    value: str


@dataclass(frozen=True, slots=True)
class CloseSeeding:
    """Stop waiting for contributions and deal hand 1 (the table's contribution window ran out)."""


@dataclass(frozen=True, slots=True)
class DrawCard:
    """Two-player draw deal: keep the top card of the stock (and discard the next) or not."""

    seat: int
    keep: bool


@dataclass(frozen=True, slots=True)
class DeclareBlindNil:
    """Bid blind nil before seeing the hand."""

    seat: int


@dataclass(frozen=True, slots=True)
class DeclineBlindNil:
    """Turn down every blind option and see the hand."""

    seat: int


@dataclass(frozen=True, slots=True)
class PlaceBid:
    """Bid a number of tricks (0 = nil where nil is allowed); ``blind`` before seeing cards;
    ``moe``: the bid of 6 or 8 is Little or Big Moe (that many tricks in a row)."""

    seat: int
    tricks: int
    blind: bool = False
    moe: bool = False


@dataclass(frozen=True, slots=True)
class PassCards:
    """Give cards to the partner in the blind-nil (or nil card) exchange."""

    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class PlayCard:
    """Play a card to the current trick."""

    seat: int
    card: Card


SeatCommand = (
    Contribute | DrawCard | DeclareBlindNil | DeclineBlindNil | PlaceBid | PassCards | PlayCard
)
Command = StartGame | CloseSeeding | SeatCommand

# ---------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class GameStarted:
    """A game started with this ruleset, secret seed and first dealer.

    ``scheme`` names the deal derivation (`engine.fairness`): legacy games deal from ``seed``;
    the others from ``server_seed`` (secret until `SeedRevealed`), whose SHA-256 is the public
    ``commitment``, and the contributions of the ``contributors`` seats."""

    ruleset: Ruleset
    seed: int
    dealer: int
    scheme: str = LEGACY
    commitment: str = ""
    server_seed: str = ""
    contributors: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SeedContributed:
    """A seat's client added ``value`` (64 hex digits) to the deals before hand 1."""

    seat: int
    value: str


@dataclass(frozen=True, slots=True)
class SeedRevealed:
    """The game ended: the server seed its commitment hid, so anyone can check every deal."""

    server_seed: str


@dataclass(frozen=True, slots=True)
class HandDealt:
    """Hand number ``hand`` was dealt by ``dealer``; the dealt cards are recorded here.

    ``hands`` holds each seat's cards (empty in the two-player draw deal, where
    ``stock`` holds the shuffled deck to draw from instead). ``face_up`` holds each
    seat's power checks (cards of its hand dealt face up, seen by all), or is empty.
    """

    hand: int
    dealer: int
    hands: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...] = ()
    face_up: tuple[tuple[Card, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class CardDrawn:
    """In the draw deal a seat took two cards from the stock: kept one, discarded one."""

    seat: int
    kept: Card
    discarded: Card


@dataclass(frozen=True, slots=True)
class BlindNilDeclared:
    """A seat bid blind nil without having seen its hand."""

    seat: int


@dataclass(frozen=True, slots=True)
class BlindNilDeclined:
    """A blind candidate turned the blind options down and now sees its hand."""

    seat: int


@dataclass(frozen=True, slots=True)
class BidPlaced:
    """A seat bid a number of tricks (``blind``: before seeing its hand; ``moe``: Little or
    Big Moe). In suicide with forcing, a bid copying the partner's forces the partner into
    the opposite (the fold derives it from the rules)."""

    seat: int
    tricks: int
    blind: bool = False
    moe: bool = False


@dataclass(frozen=True, slots=True)
class CardsPassed:
    """Blind-nil or nil card exchange: ``seat`` gave ``cards`` to ``to_seat``."""

    seat: int
    to_seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class CardPlayed:
    """A seat played a card to the current trick."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class TrickWon:
    """A trick was completed; ``seat`` won it and leads next. ``cards`` in play order."""

    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class HandScored:
    """A hand ended; per seat tricks taken, per side points scored and the new totals."""

    hand: int
    tricks: tuple[int, ...]
    points: tuple[int, ...]
    scores: tuple[int, ...]
    bags: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameFinished:
    """The game ended: ``winner`` side (-1 = draw), why ("target", "mercy", "boston",
    "hand_cap") and the final scores."""

    winner: int
    reason: str
    scores: tuple[int, ...]


Event = (
    GameStarted
    | SeedContributed
    | SeedRevealed
    | HandDealt
    | CardDrawn
    | BlindNilDeclared
    | BlindNilDeclined
    | BidPlaced
    | CardsPassed
    | CardPlayed
    | TrickWon
    | HandScored
    | GameFinished
)

COMMAND_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        StartGame,
        Contribute,
        CloseSeeding,
        DrawCard,
        DeclareBlindNil,
        DeclineBlindNil,
        PlaceBid,
        PassCards,
        PlayCard,
    )
}
EVENT_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        GameStarted,
        SeedContributed,
        SeedRevealed,
        HandDealt,
        CardDrawn,
        BlindNilDeclared,
        BlindNilDeclined,
        BidPlaced,
        CardsPassed,
        CardPlayed,
        TrickWon,
        HandScored,
        GameFinished,
    )
}
