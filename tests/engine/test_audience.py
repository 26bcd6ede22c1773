"""`engine.audience`: what each seat and the spectators are told of every event, checked
against the true state over many bot games (hypothesis picks the rules and the seed); and the
checker itself must be able to fail (a planted leak is caught)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import audience
from engine.bot import play_game
from tests.engine.hidden import cards_in, secret_numbers

RULES = [
    {},
    {"blind_nil_deficit": 0},
    {"blind_bids": True, "blind_bid_deficit": 0, "blind_nil_deficit": 0},
    {"players": 2, "deal": "draw", "blind_nil": False},
    {"jokers": True, "deuces_high": True},
    {"players": 5, "jokers": True, "power_checks": 3, "blind_nil_deficit": 0},
    {"suicide": True, "suicide_forcing": True, "nil_exchange": True, "power_checks": 1},
]


def leaks(before: engine.GameState, event: engine.Event, after: engine.GameState) -> list[str]:
    """Return what any audience is told of ``event`` that it may not know."""
    found = []
    for seat in range(-1, after.rules.players):
        told = audience.tell(before, event, after, seat)
        secret = secret_numbers(after, seat)
        shown = cards_in(told.event) & secret
        if shown:
            found.append(f"seat {seat} told cards {sorted(shown)} in {told.event}")
        if told.hand is not None and set(told.hand) & secret:
            found.append(f"seat {seat} shown a hand holding secrets {told.hand}")
        names = {f.name for f in dataclasses.fields(told.event)}
        if "seed" in names or ("server_seed" in names and after.phase != "over"):
            found.append(f"seat {seat} told a seed in {type(told.event).__name__}")
        if seat < 0 and told.hand is not None:
            found.append("a spectator was shown a hand")
    return found


@settings(max_examples=30, deadline=None)
@given(rules=st.sampled_from(RULES), seed=st.integers(0, 2**32))
def test_no_audience_is_ever_told_a_secret_card_or_a_seed(
    rules: dict[str, object], seed: int
) -> None:
    ruleset = engine.Ruleset.from_options(rules)
    events, _ = play_game(ruleset, seed)
    state = engine.initial_state()
    shown_hands = 0
    for event in events:
        after = engine.apply(state, event)
        assert leaks(state, event, after) == []
        for seat in range(ruleset.players):
            told = audience.tell(state, event, after, seat)
            shown_hands += told.hand is not None
            if isinstance(event, engine.CardsPassed):
                assert bool(told.event.cards) == (seat in (event.seat, event.to_seat))  # type: ignore[union-attr]
        state = after
    assert shown_hands > 0  # every seat saw its hand at least once: the hand path ran


@settings(max_examples=15, deadline=None)
@given(rules=st.sampled_from(RULES), seed=st.integers(0, 2**32))
def test_the_hand_goes_with_every_change_and_only_then(rules: dict[str, object], seed: int) -> None:
    ruleset = engine.Ruleset.from_options(rules)
    events, _ = play_game(ruleset, seed)
    state = engine.initial_state()
    for event in events:
        after = engine.apply(state, event)
        for seat in range(ruleset.players):
            told = audience.tell(state, event, after, seat)
            now = audience.visible_hand(after, seat)
            if now != audience.visible_hand(state, seat) and now is not None:
                assert told.hand == now
            else:
                assert told.hand is None
        state = after


def test_public_events_pass_as_they_are_and_power_checks_reach_everyone() -> None:
    ruleset = engine.Ruleset.from_options({"players": 5, "jokers": True, "power_checks": 3})
    events, _ = play_game(ruleset, 7)
    dealt = next(e for e in events if isinstance(e, engine.HandDealt))
    up = {c for cards in dealt.face_up for c in cards}
    assert len(up) == 3 * ruleset.players
    for seat in range(-1, ruleset.players):
        assert cards_in(audience.redact(dealt, seat)) == up
    played = next(e for e in events if isinstance(e, engine.CardPlayed))
    assert audience.redact(played, -1) is played


def test_the_turn_lists_the_seats_legal_commands_and_nothing_off_turn() -> None:
    events, _ = play_game(engine.Ruleset(), 3)
    state = engine.replay(events[:2])
    seat = state.turn
    assert audience.turn_commands(state, seat) == tuple(engine.legal_actions(state, seat))
    for other in range(-1, 4):
        if other != seat:
            assert audience.turn_commands(state, other) == ()
    assert audience.turn_commands(engine.replay(events), seat) == ()
    assert not any(isinstance(c, engine.StartGame) for c in audience.turn_commands(state, seat))


def test_spectators_are_released_by_a_completed_trick_or_the_end() -> None:
    events, _ = play_game(engine.Ruleset(target=100), 2)
    released = {type(e).__name__ for e in events if audience.releases_spectators(e)}
    assert released == {"TrickWon", "GameFinished"}


def test_the_checker_flags_a_planted_leak() -> None:
    """A redaction that lets one card through, or a seed, must be caught."""
    events, _ = play_game(engine.Ruleset(), 1)
    state = engine.replay(events[:1])
    dealt = events[1]
    after = engine.apply(state, dealt)
    assert leaks(state, dealt, after) == []
    real = audience.redact

    def leaky(event: engine.Event, seat: int) -> audience.Told:
        told = real(event, seat)
        if isinstance(told, audience.SeatHandDealt) and isinstance(event, engine.HandDealt):
            other = event.hands[(seat + 1) % 4]
            return dataclasses.replace(told, face_up=((other[0],), (), (), ()))
        return told

    audience.redact = leaky
    try:
        assert leaks(state, dealt, after)
    finally:
        audience.redact = real
    started = events[0]
    assert cards_in(started) == set()
    assert "seed" in {f.name for f in dataclasses.fields(started)}
    seedless = audience.redact(started, 0)
    assert "seed" not in {f.name for f in dataclasses.fields(seedless)}
