"""`spades dev`: for now, one baseline-bot game played out in the terminal.

A later issue replaces this with the whole platform on embedded PostgreSQL and NATS.
"""

from __future__ import annotations

import argparse
import random

from engine import (
    BidPlaced,
    BlindNilDeclared,
    GameFinished,
    HandDealt,
    HandScored,
    Ruleset,
    seat_name,
)
from engine.bot import play_game


def run(args: argparse.Namespace) -> int:
    """Play one bot game on the ladder rules and print each hand's bids, tricks and scores."""
    seed = getattr(args, "seed", None)
    seed = random.SystemRandom().randrange(2**32) if seed is None else seed
    rules = Ruleset()
    events, _ = play_game(rules, seed)
    print(f"one bot game on the ranked ladder rules (seed {seed})")
    bids: dict[int, str] = {}
    for event in events:
        if isinstance(event, HandDealt):
            bids = {}
            print(f"\nhand {event.hand}, dealer {seat_name(event.dealer)}")
        elif isinstance(event, BidPlaced):
            bids[event.seat] = ("blind " if event.blind else "") + (
                "nil" if event.tricks == 0 and rules.nil_allowed else str(event.tricks)
            )
        elif isinstance(event, BlindNilDeclared):
            bids[event.seat] = "blind nil"
        elif isinstance(event, HandScored):
            print("  bids   " + "  ".join(f"{seat_name(s)} {bids[s]}" for s in sorted(bids)))
            print(
                "  tricks " + "  ".join(f"{seat_name(s)} {t}" for s, t in enumerate(event.tricks))
            )
            print(f"  points N+S {event.points[0]:+d}  E+W {event.points[1]:+d}")
            print(
                f"  score  N+S {event.scores[0]} ({event.bags[0]} bags)"
                f"  E+W {event.scores[1]} ({event.bags[1]} bags)"
            )
        elif isinstance(event, GameFinished):
            winner = {0: "N+S", 1: "E+W"}.get(event.winner, "nobody (draw)")
            print(f"\n{winner} win by {event.reason}: {event.scores[0]} to {event.scores[1]}")
    return 0
