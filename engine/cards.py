"""Cards and seats as small ints, with tiny named helpers and parse/format pairs.

A card is ``suit * 13 + rank`` with ranks 0..12 for 2..A and suits clubs, diamonds,
hearts, spades (0..3); the two jokers are 52 (little) and 53 (big).

>>> parse_card("QS")
49
>>> card_str(49)
'QS'
>>> [card_str(c) for c in parse_cards("AS 10H 2C BJ")]
['AS', 'TH', '2C', 'BJ']
"""

from __future__ import annotations

from collections.abc import Iterable

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
SUITS = "CDHS"
RANKS = "23456789TJQKA"
SUIT_SYMBOLS = "♣♦♥♠"
LITTLE_JOKER = 52
BIG_JOKER = 53
TWO_OF_CLUBS = 0
SPECTATOR = -1
"""The seat number that views a game as a spectator."""

Card = int
"""A card: ``suit * 13 + rank``, or a joker (52, 53). Annotating a field ``Card`` (or a tuple of
them) marks it a card for the wire, which names it ("QS"): see `events.contracts.wiregen`."""


class InvalidCard(ValueError):
    """A card or list of cards could not be parsed."""


def make_card(suit: int, rank: int) -> int:
    """Return the card of ``suit`` and ``rank`` (0 = two .. 12 = ace)."""
    return suit * 13 + rank


def suit_of(card: int) -> int:
    """Return the printed suit of a card (jokers count as spades)."""
    return SPADES if card >= LITTLE_JOKER else card // 13


def rank_of(card: int) -> int:
    """Return the printed rank of a card: 0 = two .. 12 = ace, 13/14 = little/big joker."""
    return card - 39 if card >= LITTLE_JOKER else card % 13


def card_str(card: int) -> str:
    """Return the two-letter name of a card, e.g. 'QS', 'TH', 'BJ'."""
    if card == LITTLE_JOKER:
        return "LJ"
    if card == BIG_JOKER:
        return "BJ"
    if not 0 <= card < LITTLE_JOKER:
        raise InvalidCard(f"no card has the number {card}")
    return RANKS[card % 13] + SUITS[card // 13]


def parse_card(text: str) -> int:
    """Return the card named by ``text`` ('QS', '10h', 'TH', 'LJ', 'BJ')."""
    name = text.strip().upper()
    if name in ("LJ", "BJ"):
        return LITTLE_JOKER if name == "LJ" else BIG_JOKER
    if name.startswith("10"):
        name = "T" + name[2:]
    if len(name) != 2 or name[0] not in RANKS or name[1] not in SUITS:
        raise InvalidCard(f"not a card: {text!r} (expected e.g. 'QS', '10H', 'BJ')")
    return make_card(SUITS.index(name[1]), RANKS.index(name[0]))


def cards_str(cards: Iterable[int]) -> str:
    """Return the cards as space-separated names (the inverse of `parse_cards`)."""
    return " ".join(card_str(c) for c in cards)


def parse_cards(text: str) -> tuple[int, ...]:
    """Return the cards named in a space- or comma-separated string."""
    return tuple(parse_card(part) for part in text.replace(",", " ").split())


def next_seat(seat: int, players: int = 4) -> int:
    """Return the seat to the left of ``seat`` (play and deal go clockwise)."""
    return (seat + 1) % players


def partner_of(seat: int) -> int:
    """Return the partner of a seat at a four-player table (opposite side)."""
    return (seat + 2) % 4


def team_of(seat: int, players: int = 4) -> int:
    """Return the team of a seat: N+S = 0 and E+W = 1 with four players, else the seat."""
    return seat % 2 if players == 4 else seat


def seat_name(seat: int, players: int = 4) -> str:
    """Return a seat's compass name at four players (N E S W), else 'P0', 'P1', ..."""
    if seat == SPECTATOR:
        return "spectator"
    return "NESW"[seat] if players == 4 else f"P{seat}"
