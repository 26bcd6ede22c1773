"""Builders for engine tests: hand-built deals, bidding rounds, scored hands."""

from __future__ import annotations

from collections.abc import Iterable

from engine import (
    Command,
    Event,
    GameStarted,
    GameState,
    HandDealt,
    Ruleset,
    apply,
    decide,
    legal_actions,
    parse_cards,
    replay,
)
from engine.rules import tables
from engine.state import PLAY


def hands(*texts: str) -> tuple[tuple[int, ...], ...]:
    """Return sorted hands from one card string per seat."""
    return tuple(tuple(sorted(parse_cards(t))) for t in texts)


def start(
    rules: Ruleset | None = None,
    dealt: tuple[tuple[int, ...], ...] | None = None,
    *,
    dealer: int = 3,
    scores: tuple[int, ...] | None = None,
    bags: tuple[int, ...] | None = None,
    stock: tuple[int, ...] = (),
    hand: int = 1,
) -> GameState:
    """Return a game at the start of a hand with the given deal, scores and bags."""
    rules = rules or Ruleset()
    state = replay([GameStarted(rules, 0, dealer)])
    state = state._replace(
        scores=scores if scores is not None else state.scores,
        bags=bags if bags is not None else state.bags,
    )
    if dealt is None and not stock:
        from engine import deal

        return apply(state, deal(rules, tables(rules), 0, hand, dealer))
    return apply(state, HandDealt(hand, dealer, dealt or ((),) * rules.players, stock))


def run(state: GameState, *commands: Command) -> tuple[GameState, list[Event]]:
    """Return the state and events after deciding and applying each command."""
    events: list[Event] = []
    for command in commands:
        new = decide(state, command)
        events += new
        state = replay(new, state)
    return state, events


def bid_round(state: GameState, bids: dict[int, int]) -> GameState:
    """Return the state after every seat bids (in turn order) the number given for it."""
    from engine import DeclineBlindNil, PlaceBid

    while state.phase == "bid":
        seat = state.turn
        if not state.seen[seat]:
            state, _ = run(state, DeclineBlindNil(seat))
        state, _ = run(state, PlaceBid(seat, bids[seat]))
    return state


def play_lowest(state: GameState, until_phase_not: str = PLAY) -> tuple[GameState, list[Event]]:
    """Return the state after every seat plays its first legal card until the phase changes."""
    events: list[Event] = []
    while state.phase == until_phase_not:
        state, new = run(state, legal_actions(state, state.turn)[0])
        events += new
    return state, events


def score(
    rules: Ruleset,
    bids: Iterable[int],
    taken: Iterable[int],
    *,
    scores: tuple[int, ...] | None = None,
    bags: tuple[int, ...] | None = None,
    blind: Iterable[bool] | None = None,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int]:
    """Return score_hand's (points, scores, bags, boston side) for bids and tricks taken."""
    from engine import score_hand

    t = tables(rules)
    bids = tuple(bids)
    state = GameState(
        rules=rules,
        tables=t,
        bids=bids,
        blind=tuple(blind) if blind is not None else (False,) * len(bids),
        scores=scores if scores is not None else (0,) * t.teams,
        bags=bags if bags is not None else (0,) * t.teams,
    )
    return score_hand(state, tuple(taken))
