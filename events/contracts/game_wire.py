"""The engine's events, seat commands and redacted forms on the wire: Structs, cards by name.

Generated from engine/model.py and engine/audience.py by `python -m events.contracts.wiregen`;
do not edit. The engine's dataclasses are the one declaration; `events.contracts.wiregen` lists
what the wire does differently, and `events.contracts.game` re-exports these classes and
bridges them to the engine.
"""
# Generated from engine/model.py and engine/audience.py: `python -m events.contracts.wiregen`.

from __future__ import annotations

import msgspec

Card = str
"""A card by name: rank 23456789TJQKA then suit CDHS ("QS", "TH"), or "LJ" / "BJ"."""

RuleValue = int | bool | str


class GameEvent(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of every event in a game stream; the tag is the class name."""


class SeatCommand(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of what a seat may ask; the seat itself comes from who is asking, never the body."""


# -- events ----------------------------------------------------------------------------------------


class GameStarted(GameEvent, frozen=True, kw_only=True):
    """A game started with this ruleset, secret seed and first dealer.

    ``scheme`` names the deal derivation (`engine.fairness`): legacy games deal from ``seed``;
    the others from ``server_seed`` (secret until `SeedRevealed`), whose SHA-256 is the public
    ``commitment``, and the contributions of the ``contributors`` seats."""

    rules: dict[str, RuleValue]
    seed: int
    dealer: int
    scheme: str = "cpython-mt-v0"
    commitment: str = ""
    server_seed: str = ""
    contributors: tuple[int, ...] = ()


class SeedContributed(GameEvent, frozen=True, kw_only=True):
    """A seat's client added ``value`` (64 hex digits) to the deals before hand 1."""

    seat: int
    value: str


class SeedRevealed(GameEvent, frozen=True, kw_only=True):
    """The game ended: the server seed its commitment hid, so anyone can check every deal."""

    server_seed: str


class HandDealt(GameEvent, frozen=True, kw_only=True):
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


class CardDrawn(GameEvent, frozen=True, kw_only=True):
    """In the draw deal a seat took two cards from the stock: kept one, discarded one."""

    seat: int
    kept: Card
    discarded: Card


class BlindNilDeclared(GameEvent, frozen=True, kw_only=True):
    """A seat bid blind nil without having seen its hand."""

    seat: int


class BlindNilDeclined(GameEvent, frozen=True, kw_only=True):
    """A blind candidate turned the blind options down and now sees its hand."""

    seat: int


class BidPlaced(GameEvent, frozen=True, kw_only=True):
    """A seat bid a number of tricks (``blind``: before seeing its hand; ``moe``: Little or
    Big Moe). In suicide with forcing, a bid copying the partner's forces the partner into
    the opposite (the fold derives it from the rules)."""

    seat: int
    tricks: int
    blind: bool = False
    moe: bool = False


class CardsPassed(GameEvent, frozen=True, kw_only=True):
    """Blind-nil or nil card exchange: ``seat`` gave ``cards`` to ``to_seat``."""

    seat: int
    to_seat: int
    cards: tuple[Card, ...]


class CardPlayed(GameEvent, frozen=True, kw_only=True):
    """A seat played a card to the current trick."""

    seat: int
    card: Card


class TrickWon(GameEvent, frozen=True, kw_only=True):
    """A trick was completed; ``seat`` won it and leads next. ``cards`` in play order."""

    seat: int
    cards: tuple[Card, ...]


class HandScored(GameEvent, frozen=True, kw_only=True):
    """A hand ended; per seat tricks taken, per side points scored and the new totals."""

    hand: int
    tricks: tuple[int, ...]
    points: tuple[int, ...]
    scores: tuple[int, ...]
    bags: tuple[int, ...]


class GameFinished(GameEvent, frozen=True, kw_only=True):
    """The game ended: ``winner`` side (-1 = draw), why ("target", "mercy", "boston",
    "hand_cap") and the final scores."""

    winner: int
    reason: str
    scores: tuple[int, ...]
    ladder: str = ""
    """Added by the table. The ladder the game was played on ("" off any ladder)."""
    rated: bool = False
    """Added by the table. Whether ratings move."""
    players: tuple[str, ...] = ()
    """Added by the table. Each seat's player id: consumers need no other stream."""
    abandoned: tuple[int, ...] = ()
    """Added by the table. The seats a bot took over."""


EngineEvent = (
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
"""Every event the engine decides (in its order)."""


# -- what a seat may be told of an event that holds secrets ---------------------------------------


class SeatGameStarted(msgspec.Struct, frozen=True, kw_only=True, tag="GameStarted"):
    """`GameStarted` without its seeds: the rules, the first dealer, a committed game's
    public SHA-256 ``commitment`` and the seats that may contribute."""

    rules: dict[str, RuleValue]
    dealer: int
    scheme: str = "cpython-mt-v0"
    commitment: str = ""
    contributors: tuple[int, ...] = ()


class SeatHandDealt(msgspec.Struct, frozen=True, kw_only=True, tag="HandDealt"):
    """`HandDealt` without the cards: how many each seat holds (and the stock), plus the
    power checks, dealt face up for everyone to see."""

    hand: int
    dealer: int
    hand_sizes: tuple[int, ...]
    stock_size: int = 0
    face_up: tuple[tuple[Card, ...], ...] = ()


class SeatCardDrawn(msgspec.Struct, frozen=True, kw_only=True, tag="CardDrawn"):
    """`CardDrawn`: only the drawer is told what it kept and discarded (else `NO_CARD`:
    None on the wire)."""

    seat: int
    kept: Card | None = None
    discarded: Card | None = None


class SeatCardsPassed(msgspec.Struct, frozen=True, kw_only=True, tag="CardsPassed"):
    """`CardsPassed`: everyone learns how many cards went; only the two seats which."""

    seat: int
    to_seat: int
    count: int
    cards: tuple[Card, ...] = ()


# -- seat commands ---------------------------------------------------------------------------------


class PlaceBid(SeatCommand, frozen=True, kw_only=True):
    """Bid a number of tricks (0 = nil where nil is allowed); ``blind`` before seeing cards;
    ``moe``: the bid of 6 or 8 is Little or Big Moe (that many tricks in a row)."""

    tricks: int
    blind: bool = False
    moe: bool = False


class DeclareBlindNil(SeatCommand, frozen=True, kw_only=True):
    """Bid blind nil before seeing the hand."""


class DeclineBlindNil(SeatCommand, frozen=True, kw_only=True):
    """Turn down every blind option and see the hand."""


class PassCards(SeatCommand, frozen=True, kw_only=True):
    """Give cards to the partner in the blind-nil (or nil card) exchange."""

    cards: tuple[Card, ...]


class PlayCard(SeatCommand, frozen=True, kw_only=True):
    """Play a card to the current trick."""

    card: Card


class DrawCard(SeatCommand, frozen=True, kw_only=True):
    """Two-player draw deal: keep the top card of the stock (and discard the next) or not."""

    keep: bool


class Contribute(SeatCommand, frozen=True, kw_only=True):
    """A seat's client adds its random contribution to the deals (before hand 1)."""

    value: str


AnySeatCommand = (
    PlaceBid | DeclareBlindNil | DeclineBlindNil | PassCards | PlayCard | DrawCard | Contribute
)
"""Everything a seat may ask."""


CARD_DEPTH: dict[tuple[str, str], int] = {
    ("HandDealt", "hands"): 3,
    ("HandDealt", "stock"): 2,
    ("HandDealt", "face_up"): 3,
    ("CardDrawn", "kept"): 1,
    ("CardDrawn", "discarded"): 1,
    ("CardsPassed", "cards"): 2,
    ("CardPlayed", "card"): 1,
    ("TrickWon", "cards"): 2,
    ("SeatHandDealt", "face_up"): 3,
    ("SeatCardDrawn", "kept"): 1,
    ("SeatCardDrawn", "discarded"): 1,
    ("SeatCardsPassed", "cards"): 2,
    ("PassCards", "cards"): 2,
    ("PlayCard", "card"): 1,
}
"""(class, field) -> how deep its cards sit: 1 a card, 2 a tuple, 3 tuples."""

WIRE_NAMES: dict[tuple[str, str], str] = {
    ("GameStarted", "ruleset"): "rules",
    ("SeatGameStarted", "ruleset"): "rules",
}
"""(class, engine field) -> its wire field, where the names differ."""
