"""What one seat (or a spectator) may know: `view(state, seat)`.

A view never holds another seat's unplayed cards, the stock, or the seed (a committed game's
server seed included: only its SHA-256 commitment).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.cards import SPECTATOR
from engine.game import legal_actions
from engine.model import Command
from engine.rules import Ruleset
from engine.state import DRAW, GameState, Trick, blind_bid_open, blind_nil_open


@dataclass(frozen=True, slots=True)
class SeatView:
    """One seat's (or a spectator's, seat -1) knowledge of a game."""

    seat: int
    rules: Ruleset
    phase: str
    hand_number: int
    dealer: int
    turn: int
    hand: tuple[int, ...]
    """Own unplayed cards; empty for a spectator or a blind candidate who has not chosen."""
    hand_hidden: bool
    """True while this seat is a blind candidate who has not seen its hand."""
    hand_sizes: tuple[int, ...]
    bids: tuple[int, ...]
    blind: tuple[bool, ...]
    leader: int
    trick: tuple[int, ...]
    tricks: tuple[Trick, ...]
    taken: tuple[int, ...]
    spades_broken: bool
    scores: tuple[int, ...]
    bags: tuple[int, ...]
    given: tuple[int, ...]
    """Cards this seat gave in the blind-nil exchange."""
    received: tuple[int, ...]
    """Cards this seat was given in the blind-nil exchange."""
    drawn: int
    """Two-player draw deal: the stock's top card, shown to the seat about to draw; else -1."""
    discards: tuple[int, ...]
    """Two-player draw deal: this seat's own discards."""
    blind_nil_open: bool
    blind_bid_open: bool
    legal: tuple[Command, ...]
    winner: int
    reason: str
    moe: tuple[bool, ...] = ()
    """Whether each seat's bid is a Big or Little Moe."""
    face_up: tuple[tuple[int, ...], ...] = ()
    """Power checks: every seat's face-up cards still in its hand, shown to everyone."""
    commitment: str = ""
    """SHA-256 of the secret server seed of a committed game (docs/FAIRNESS.md), public."""
    contributors: tuple[int, ...] = ()
    contributions: tuple[str, ...] = ()
    """Each seat's deal contribution so far ("" none): they predict nothing without the seed."""


def view(state: GameState, seat: int) -> SeatView:
    """Return what ``seat`` (or `SPECTATOR`) may know of the game now."""
    players = state.tables.players if state.hands else 0
    me = 0 <= seat < players
    hidden = me and not state.seen[seat]
    given: tuple[int, ...] = ()
    received: tuple[int, ...] = ()
    for giver, receiver, cards in state.passed:
        if giver == seat:
            given += cards
        if receiver == seat:
            received += cards
    drawing = me and state.phase == DRAW and state.turn == seat and bool(state.stock)
    return SeatView(
        seat=seat if me else SPECTATOR,
        rules=state.rules,
        phase=state.phase,
        hand_number=state.hand,
        dealer=state.dealer,
        turn=state.turn,
        hand=state.hands[seat] if me and not hidden else (),
        hand_hidden=hidden,
        hand_sizes=tuple(len(h) for h in state.hands),
        bids=state.bids,
        blind=state.blind,
        leader=state.leader,
        trick=state.trick,
        tricks=state.tricks,
        taken=state.taken,
        spades_broken=state.broken,
        scores=state.scores,
        bags=state.bags,
        given=given,
        received=received,
        drawn=state.stock[0] if drawing else -1,
        discards=state.discards[seat] if me else (),
        blind_nil_open=me and bool(state.scores) and blind_nil_open(state, seat),
        blind_bid_open=me and bool(state.scores) and blind_bid_open(state, seat),
        legal=tuple(legal_actions(state, seat)) if me else (),
        winner=state.winner,
        reason=state.reason,
        moe=state.moe,
        face_up=tuple(
            tuple(c for c in up if c in held)
            for up, held in zip(state.face_up, state.hands, strict=False)
        )
        if state.rules.power_checks
        else (),
        commitment=state.commitment,
        contributors=state.contributors,
        contributions=state.contributions,
    )
