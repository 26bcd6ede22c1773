"""The hidden-information truth: which cards a seat must not know at a state of the game.

Shared by the engine's audience tests (card numbers) and the gateway's checks of what a
WebSocket client received (card names, `tests.gateway.hidden`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import engine

CARD_FIELDS = {"card", "kept", "discarded", "cards", "stock", "hands", "face_up"}
"""Fields of an event (or what a seat is told of it) that hold cards."""


def secret_numbers(state: engine.GameState, seat: int) -> set[int]:
    """Return the cards ``seat`` must not know at ``state``: other seats' unplayed cards (bar
    those it gave them in an exchange), its own while a blind choice is pending, the stock
    (bar its top card while this seat is the one to draw), other seats' draw discards; power
    checks (face-up cards) are public while their holder keeps them."""
    secret: set[int] = set(state.stock)
    if state.phase == "draw" and state.turn == seat and state.stock:
        secret.discard(state.stock[0])  # the drawer looks at the top card
    for other, hand in enumerate(state.hands):
        if other != seat or not state.seen[other]:
            secret |= set(hand)
    for other, discards in enumerate(state.discards):
        if other != seat:
            secret |= set(discards)
    for giver, _receiver, cards in state.passed:
        if giver == seat:
            secret -= set(cards)
    # power checks: dealt face up, every seat sees them while their holder keeps them
    for holder, up in enumerate(state.face_up):
        secret -= {c for c in up if c in state.hands[holder]}
    return secret


def _flatten(value: Any) -> set[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return {value}
    if isinstance(value, tuple):
        out: set[int] = set()
        for v in value:
            out |= _flatten(v)
        return out
    return set()


def cards_in(told: Any) -> set[int]:
    """Return every card number a dataclass event (or redacted event) carries."""
    found: set[int] = set()
    for f in dataclasses.fields(told):
        if f.name in CARD_FIELDS:
            found |= _flatten(getattr(told, f.name)) - {-1}
    return found
