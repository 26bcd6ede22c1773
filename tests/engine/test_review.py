"""The review of a finished game: deterministic (golden), blind to hidden cards, and naming the
errors planted in a constructed hand."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from engine import BidPlaced, CardPlayed, HandDealt, HandScored, PlaceBid, PlayCard, Ruleset, review
from engine.bot import choose, wanted_bid
from engine.cards import parse_card, parse_cards
from engine.game import decide
from engine.model import Event, StartGame
from engine.review import (
    BLUNDER,
    INACCURACY,
    MISTAKE,
    _grade_bid,
    _grade_card,
    grade_of,
    review_game,
)
from engine.state import GameState, apply, initial_state, replay
from engine.view import view

GOLDEN = Path(__file__).parent / "golden" / "review_200.json"


def example_game(seed: int, rules: Ruleset) -> list[Event]:
    """Return the events of a whole game between baseline bots."""
    events = decide(initial_state(), StartGame(rules, seed))
    state = replay(events)
    rng = random.Random(seed)
    while state.phase != "over":
        new = decide(state, choose(view(state, state.turn), rng))
        events += new
        state = replay(new, state)
    return events


def _short_game() -> list[Event]:
    return example_game(4, Ruleset(target=200))


def test_grades_follow_the_stated_thresholds() -> None:
    assert grade_of(INACCURACY - 0.01) == ""
    assert grade_of(INACCURACY) == "inaccuracy"
    assert grade_of(MISTAKE) == "mistake"
    assert grade_of(BLUNDER) == "blunder"


def test_a_review_is_byte_identical_and_matches_its_golden_file() -> None:
    events = _short_game()
    first = review_game(events, seed="golden", worlds=4, dd_tricks=3).to_json()
    again = review_game(events, seed="golden", worlds=4, dd_tricks=3).to_json()
    assert first == again
    if os.environ.get("SPADES_REGOLD"):
        GOLDEN.write_text(first + "\n")
    assert GOLDEN.read_text() == first + "\n", "regenerate with SPADES_REGOLD=1 if intended"
    data = json.loads(first)
    assert data["decisions"], "a whole game has graded decisions"
    for d in data["decisions"]:
        assert d["loss"] >= 0
        assert d["grade"] == grade_of(d["loss"])
        assert isinstance(events[d["at"]], BidPlaced | CardPlayed)
    for hand in data["hands"]:
        for cost in hand["dd"]["cards"]:
            assert cost["before"] >= cost["after"]


def _shuffled(state: GameState, seat: int, rng: random.Random) -> GameState:
    """Return ``state`` with the cards ``seat`` cannot see dealt anew among the other seats
    (each keeps its count): everything ``seat`` knows is unchanged."""
    others = [s for s in range(len(state.hands)) if s != seat]
    pool = [c for s in others for c in state.hands[s]]
    rng.shuffle(pool)
    hands = list(state.hands)
    for s in others:
        size = len(hands[s])
        hands[s], pool = tuple(sorted(pool[:size])), pool[size:]
    return state._replace(hands=tuple(hands))


def test_grading_never_uses_cards_the_seat_could_not_see() -> None:
    events = _short_game()
    state = initial_state()
    rng = random.Random(9)
    checked = changed = 0
    for at, event in enumerate(events):
        if isinstance(event, CardPlayed | BidPlaced) and at % 7 == 0:
            other = _shuffled(state, event.seat, rng)
            assert view(other, event.seat) == view(state, event.seat)
            changed += other.hands != state.hands
            grade = _grade_card if isinstance(event, CardPlayed) else _grade_bid
            assert grade(other, event, at, "s", 3) == grade(state, event, at, "s", 3)  # type: ignore[arg-type]
            checked += 1
        state = apply(state, event)
    assert checked >= 10
    assert changed >= 5, "the shuffles must move hidden cards for the test to mean anything"


def _planted() -> list[Event]:
    """Return hand 1 of a game dealt by hand: seat 1 bids nil holding the ace of spades, its
    partner (seat 3) ducks under it at trick 1 and seat 1 takes it with the king of hearts;
    at trick 2 seat 0 trumps its partner's sure ace of clubs with the king of spades."""
    rules = Ruleset()
    events = decide(initial_state(), StartGame(rules, seed=3))
    dealt = events[-1]
    assert isinstance(dealt, HandDealt)
    state = replay(events)
    assert state.dealer == 1  # seat 2 bids and leads first
    fixed = {
        0: "3H KS 3S",
        1: "AS KH 4C",
        2: "5H AC 2D",
        3: "AH 2H 5C",
    }
    hands = {s: list(parse_cards(text)) for s, text in fixed.items()}
    used = {c for h in hands.values() for c in h}
    for card in sorted(set(range(52)) - used):
        suit = card // 13
        for s in (2, 3, 1, 0):
            banned = (s == 0 and suit == 0) or (s in (1, 3) and suit == 2)
            if len(hands[s]) < 13 and not banned:
                hands[s].append(card)
                break
    assert all(len(h) == 13 for h in hands.values())
    events[-1] = dataclasses.replace(dealt, hands=tuple(tuple(sorted(hands[s])) for s in range(4)))
    state = replay(events)
    script = [
        PlaceBid(2, 4),
        PlaceBid(3, 3),
        PlaceBid(0, 4),
        PlaceBid(1, 0),
        PlayCard(2, parse_card("5H")),
        PlayCard(3, parse_card("2H")),
        PlayCard(0, parse_card("3H")),
        PlayCard(1, parse_card("KH")),
        PlayCard(1, parse_card("4C")),
        PlayCard(2, parse_card("AC")),
        PlayCard(3, parse_card("5C")),
        PlayCard(0, parse_card("KS")),
    ]
    for command in script:
        new = decide(state, command)
        events += new
        state = replay(new, state)
    rng = random.Random(1)
    while not any(isinstance(e, HandScored) for e in events):
        new = decide(state, choose(view(state, state.turn), rng))
        events += new
        state = replay(new, state)
    return events


def test_the_planted_errors_are_named() -> None:
    events = _planted()
    review = review_game(events, seed="planted", worlds=12, dd_tricks=0)
    named = {(d.seat, d.chosen): d.errors for d in review.decisions}
    assert "bid nil holding AS, a sure trick" in named[(1, "bid nil")]
    assert "left partner's nil uncovered" in named[(3, "2H")]
    assert "trumped partner's winning card" in named[(0, "KS")]
    # The clean decisions around them carry no name.
    assert named[(2, "5H")] == ()
    assert named[(2, "AC")] == ()


def test_a_bid_is_graded_against_the_window_around_the_baseline_nil_and_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each bid graded is a play-out in every sampled deal: the candidates are the bids within
    BID_WINDOW of the baseline's wanted bid, nil and the bid made (here a wild 13), never all
    fourteen."""
    events = _short_game()
    state, at = initial_state(), 0
    for at, event in enumerate(events):  # noqa: B007  (the first bid's place is kept)
        if isinstance(event, BidPlaced):
            break
        state = apply(state, event)
    seat = state.turn
    wild = BidPlaced(seat=seat, tricks=13)
    graded: list[list[int]] = []
    real = review.bid_values

    def recording(v: Any, bids: Any, rng: Any, worlds: int) -> dict[int, float]:
        graded.append(list(bids))
        return real(v, bids, rng, worlds)

    monkeypatch.setattr(review, "bid_values", recording)
    decision = _grade_bid(state, wild, at, "window", 4)
    wanted = wanted_bid(view(state, seat))
    expected = sorted({0, 13, *(b for b in range(14) if abs(b - wanted) <= review.BID_WINDOW)})
    assert graded == [expected]
    assert len(expected) < 14
    assert decision is not None
    assert decision.chosen == "bid 13"
    assert decision.grade == "blunder"  # thirteen on a hand the baseline bids a few
