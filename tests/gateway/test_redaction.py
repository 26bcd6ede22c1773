"""`events.contracts.game.redact` and `visible_hand` over many bot games, without servers, and the
hidden-information checker itself (it must be able to fail)."""

from __future__ import annotations

import json
import random

import msgspec
import pytest

import engine
from engine.bot import play_game
from events.contracts import game as wire
from tests.gateway.hidden import CARD, secret_cards

RULES = [
    {},
    {"blind_nil_deficit": 0},
    {"blind_bids": True, "blind_bid_deficit": 0, "blind_nil_deficit": 0},
    {"players": 2, "deal": "draw", "blind_nil": False},
    {"jokers": True, "deuces_high": True},
    {"players": 5, "jokers": True, "power_checks": 3, "blind_nil_deficit": 0},
    {"suicide": True, "suicide_forcing": True, "nil_exchange": True, "power_checks": 1},
]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: ",".join(r) or "ladder")
@pytest.mark.parametrize("seed", range(4))
def test_what_a_seat_is_told_never_holds_a_secret_card_or_the_seed(
    rules: dict[str, object], seed: int
) -> None:
    ruleset = engine.Ruleset.from_options(rules)  # type: ignore[arg-type]
    events, _ = play_game(ruleset, seed)
    state = engine.initial_state()
    seats = range(-1, ruleset.players)
    told_blind = 0
    for event in events:
        before = state
        state = engine.apply(state, event)
        stored = wire.to_wire(event)
        for seat in seats:
            redacted = msgspec.json.encode(wire.redact(stored, seat)).decode()
            assert "seed" not in redacted
            secret = secret_cards(state, seat)
            assert not set(CARD.findall(redacted)) & secret, (seat, redacted)
            hand = wire.visible_hand(state, seat)
            if hand is not None:
                assert not set(hand) & secret
            elif 0 <= seat < len(state.hands) and state.hands[seat]:
                told_blind += not state.seen[seat]
            if seat >= 0 and before.hands and isinstance(stored, wire.CardsPassed):
                # exchanged cards: the giver and the receiver know them, nobody else
                told = seat in (stored.seat, stored.to_seat)
                assert bool(json.loads(redacted)["cards"]) == told
    if rules.get("blind_nil_deficit") == 0:
        assert told_blind > 0  # the blind-candidate path was exercised
    if rules.get("power_checks"):
        # the face-up cards reach every seat and spectator, in the deal's redacted form
        dealt = next(e for e in events if isinstance(e, engine.HandDealt))
        up = {engine.card_str(c) for cards in dealt.face_up for c in cards}
        assert len(up) == rules["power_checks"] * ruleset.players
        for seat in seats:
            told = msgspec.json.encode(wire.redact(wire.to_wire(dealt), seat)).decode()
            assert set(CARD.findall(told)) == up


def test_the_checker_flags_an_unredacted_deal_and_the_seed() -> None:
    events, _ = play_game(engine.Ruleset(), 1)
    state = engine.initial_state()
    for event in events[:2]:
        state = engine.apply(state, event)
    dealt = msgspec.json.encode(wire.to_wire(events[1])).decode()
    assert set(CARD.findall(dealt)) & secret_cards(state, 0)
    redacted = msgspec.json.encode(wire.redact(wire.to_wire(events[1]), 0)).decode()
    assert not set(CARD.findall(redacted)) & secret_cards(state, 0)
    started = msgspec.json.encode(wire.to_wire(events[0])).decode()
    assert "seed" in started
    assert "seed" not in msgspec.json.encode(wire.redact(wire.to_wire(events[0]), 0)).decode()


def test_a_public_state_shows_power_checks_and_moe_bids_but_no_hand_before_the_end() -> None:
    from services.records.public import state_at_of

    rules = engine.Ruleset(power_checks=2, moe=True)
    state = engine.replay(engine.decide(engine.initial_state(), engine.StartGame(rules, 4)))
    seat = state.turn
    state = engine.replay(engine.decide(state, engine.PlaceBid(seat, 8, moe=True)), state)
    public = state_at_of("g", 3, state, face_up=False)
    assert public.hands == ()
    assert public.moe[seat]
    assert public.power_checks == tuple(
        tuple(engine.card_str(c) for c in up) for up in state.face_up
    )
    text = msgspec.json.encode(public).decode()
    up = {engine.card_str(c) for cards in state.face_up for c in cards}
    assert set(CARD.findall(text)) == up


@pytest.mark.parametrize("rules", RULES, ids=lambda r: ",".join(r) or "ladder")
def test_a_committed_games_server_seed_reaches_nobody_before_the_end(
    rules: dict[str, object],
) -> None:
    from services.records.fairness import bot_game

    ruleset = engine.Ruleset.from_options(rules)  # type: ignore[arg-type]
    server_seed = "5e" * 32
    contributions = {0: "c0" * 32}
    events = bot_game(ruleset, server_seed, contributions, random.Random(3))
    state = engine.initial_state()
    for event in events:
        state = engine.apply(state, event)
        stored = wire.to_wire(event)
        over = isinstance(event, engine.SeedRevealed | engine.GameFinished)
        for seat in range(-1, ruleset.players):
            told = msgspec.json.encode(wire.redact(stored, seat)).decode()
            view = msgspec.json.encode(wire.view_to_wire(engine.view(state, seat))).decode()
            if not over:
                assert server_seed not in told
                assert server_seed not in view
                assert "server_seed" not in told
            if isinstance(stored, wire.GameStarted):
                assert engine.fairness.commitment(bytes.fromhex(server_seed)) in told
    assert isinstance(events[-2], engine.SeedRevealed)
    assert server_seed in msgspec.json.encode(wire.redact(wire.to_wire(events[-2]), 1)).decode()


def test_the_checker_flags_the_server_seed_before_the_end() -> None:
    from services.records.fairness import bot_game
    from tests.gateway.hidden import leaks
    from tests.gateway.wsclient import Received

    events = bot_game(engine.Ruleset(target=100), "7a" * 32, {}, random.Random(2))
    truth = [engine.initial_state()]
    for event in events:
        truth.append(engine.apply(truth[-1], event))
    text = json.dumps({"game_id": "g", "seq": 2, "note": "7a" * 32})
    assert leaks([Received(at=0.0, text=text, body=json.loads(text))], "g", 0, truth)
    late = json.dumps({"game_id": "g", "seq": len(events) - 1, "note": "7a" * 32})
    assert not leaks([Received(at=0.0, text=late, body=json.loads(late))], "g", 0, truth)
