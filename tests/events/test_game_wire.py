"""The game context's wire schema: every engine event and command crosses it unchanged."""

from __future__ import annotations

import dataclasses
import random

import msgspec
import pytest

import engine
from events import game as wire
from events.envelope import REGISTRY, Metadata


def _played_game(seed: int, rules: engine.Ruleset) -> list[engine.Event]:
    rng = random.Random(seed)
    state = engine.initial_state()
    events = engine.decide(state, engine.StartGame(rules, seed=seed))
    state = engine.replay(events)
    while state.phase != "over":
        command = rng.choice(engine.legal_actions(state, state.turn))
        new = engine.decide(state, command)
        events += new
        for event in new:
            state = engine.apply(state, event)
    return events


RULESETS = [
    engine.ranked_default(),
    engine.two_player_default(),
    engine.Ruleset.from_options({"players": "2", "deal": "draw", "blind_nil": "no"}),
    engine.Ruleset.from_options({"jokers": "yes", "target": "200"}),
]


@pytest.mark.parametrize("rules", RULESETS, ids=lambda r: str(r.changes() or "ranked"))
def test_every_event_of_a_game_round_trips_through_the_log_format(rules: engine.Ruleset) -> None:
    for event in _played_game(11, rules):
        stored = REGISTRY.new_event(wire.to_wire(event), Metadata(actor="test"))
        decoded = REGISTRY.decode(stored)
        assert wire.to_engine(decoded) == event


def test_cards_are_stored_by_name_not_by_engine_number() -> None:
    played = wire.to_wire(engine.CardPlayed(seat=2, card=engine.parse_card("QS")))
    assert msgspec.json.decode(msgspec.json.encode(played)) == {
        "type": "CardPlayed",
        "seat": 2,
        "card": "QS",
    }


def test_every_engine_event_has_a_wire_twin_with_the_same_fields() -> None:
    for name, cls in engine.EVENT_TYPES.items():
        twin = getattr(wire, name)
        engine_fields = {f.name for f in dataclasses.fields(cls)} - {"ruleset"}
        assert engine_fields <= set(twin.__struct_fields__), name


def test_table_facts_have_no_engine_event() -> None:
    opened = wire.TableOpened(game_id="g", ladder="standard", rated=True, players=("a",) * 4)
    assert wire.to_engine(opened) is None


def test_every_legal_command_round_trips_with_the_seat_from_the_asker() -> None:
    state = engine.replay(
        engine.decide(engine.initial_state(), engine.StartGame(engine.ranked_default(), seed=3))
    )
    rng = random.Random(3)
    seen: set[str] = set()
    while state.phase != "over" and len(seen) < 4:
        legal = engine.legal_actions(state, state.turn)
        for command in legal:
            seen.add(type(command).__name__)
            on_wire = msgspec.json.encode(wire.command_to_wire(command))
            decoded = msgspec.json.decode(on_wire, type=wire.AnySeatCommand)
            assert wire.command_to_engine(decoded, command.seat) == command
        for event in engine.decide(state, rng.choice(legal)):
            state = engine.apply(state, event)
    assert {"PlaceBid", "PlayCard"} <= seen


def test_a_bad_card_name_in_a_command_is_refused() -> None:
    with pytest.raises(engine.InvalidCard, match="not a card"):
        wire.command_to_engine(wire.PlayCard(card="ZZ"), seat=0)
