"""The bridge double-dummy solver DDS (the `endplay` package, the optional ``dd`` dependency
group) asked the same question as `engine.dd`: standard deck, four players, spades trumps.

Where the rules coincide the answers must agree: once spades are broken, Spades's trick
play is bridge's with spades as trumps (follow suit, else any card, the highest trump or
the highest card of the led suit wins). They part only while spades are unbroken: Spades
forbids leading a spade unless the leader holds nothing else, bridge does not.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import RANKS

SEATS = "NESW"


def pbn(hands: Sequence[Sequence[int]]) -> str:
    """Return a four-seat deal (engine cards, seat 0 = North) in PBN: ``N:S.H.D.C ...``."""
    parts = []
    for hand in hands:
        suits = []
        for suit in (3, 2, 1, 0):
            ranks = sorted((c % 13 for c in hand if c // 13 == suit), reverse=True)
            suits.append("".join(RANKS[r] for r in ranks))
        parts.append(".".join(suits))
    return "N:" + " ".join(parts)


def dds_tricks(hands: Sequence[Sequence[int]], leader: int) -> int:
    """Return the tricks the leader's side takes with spades trumps, by DDS."""
    from endplay.dds import solve_board
    from endplay.types import Deal, Denom, Player

    deal = Deal(pbn(hands))
    deal.first = Player.find(SEATS[leader])
    deal.trump = Denom.spades
    return max(tricks for _, tricks in solve_board(deal))
