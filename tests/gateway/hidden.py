"""The hidden-information check: what a seat received against the true state of the game."""

from __future__ import annotations

import re
from typing import Any

import engine
from events.contracts import game as wire
from events.envelope import REGISTRY, StoredEvent
from tests.engine.hidden import secret_numbers
from tests.gateway.wsclient import Received

CARD = re.compile(r'"((?:[2-9TJQKA][CDHS])|LJ|BJ)"')


def states(stored: list[StoredEvent]) -> list[engine.GameState]:
    """Return the true state after each version (index 0: before any event)."""
    state = engine.initial_state()
    out = [state]
    for s in stored:
        event = wire.to_engine(REGISTRY.decode(s))
        if event is not None:
            state = engine.apply(state, event)
        out.append(state)
    return out


def secret_cards(state: engine.GameState, seat: int) -> set[str]:
    """Return the cards ``seat`` must not know at ``state``, by name (the rule:
    `tests.engine.hidden.secret_numbers`)."""
    return {engine.card_str(c) for c in secret_numbers(state, seat)}


def leaks(
    received: list[Received], game_id: str, seat: int, truth: list[engine.GameState]
) -> list[str]:
    """Return every message that tells ``seat`` (-1: a spectator) something it may not know:
    a secret card, the deck seed, or a committed game's server seed before the game is over."""
    found = []
    server_seeds = {s.server_seed for s in truth if s.server_seed}
    for r in received:
        body: dict[str, Any] = r.body
        if '"seed"' in r.text:
            found.append(f"seed sent: {r.text[:200]}")
        seq = body.get("seq")
        # SeedRevealed is always the event just before GameFinished (the last one)
        over = truth[-1].phase == "over"
        ended = over and isinstance(seq, int) and len(truth) - 2 <= seq < len(truth)
        if not ended and any(seed in r.text for seed in server_seeds):
            found.append(f"server seed sent before the end: {r.text[:200]}")
        if body.get("game_id") != game_id or "seq" not in body:
            continue
        secret = secret_cards(truth[body["seq"]], seat)
        shown = set(CARD.findall(r.text)) & secret
        if shown:
            found.append(f"seat {seat} told {sorted(shown)} at seq {body['seq']}: {r.text[:300]}")
    return found
