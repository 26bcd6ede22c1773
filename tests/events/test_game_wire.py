"""The game context's wire schema: every engine event and command crosses it unchanged."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import get_args

import msgspec
import pytest

import engine
from engine import audience
from events.contracts import game as wire
from events.contracts import game_wire, wiregen
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
    # the seed-004 variants of issue 18: Moe bids, power checks, five seats, the nil exchange
    engine.Ruleset(moe=True, power_checks=3, bidding_order="partners"),
    engine.Ruleset(players=5, jokers=True, power_checks=1, set_scores_zero=True),
    engine.Ruleset(suicide=True, suicide_forcing=True, nil_exchange=True),
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


def test_the_generated_wire_module_is_what_the_engine_declares_now() -> None:
    # Changing an engine event (or command) without regenerating fails here: the stored
    # events' shape must change only on purpose.
    assert wiregen.GENERATED.read_text() == wiregen.render(), (
        f"events/contracts/game_wire.py is out of date: run {wiregen.COMMAND} and review the diff"
    )
    assert wiregen.main(["--check"]) == 0


def test_the_check_fails_on_a_stale_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "game_wire.py"
    stale.write_text(wiregen.render().replace("    card: Card\n", "    card: int\n"))
    monkeypatch.setattr(wiregen, "GENERATED", stale)
    assert wiregen.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert wiregen.main([]) == 0
    assert wiregen.main(["--check"]) == 0


def test_a_new_engine_field_reaches_the_generated_wire_struct() -> None:
    source = wiregen.MODEL.read_text()
    changed = source.replace(
        "    seat: int\n    card: Card\n\n\nSeatCommand",
        "    seat: int\n    card: Card\n    lead: bool = False\n\n\nSeatCommand",
    )
    assert changed != source
    text = wiregen.render(changed)
    assert text != wiregen.render()
    play_card = text[text.index("class PlayCard(") :]
    assert play_card.split("\n\n\n")[0].endswith("    card: Card\n    lead: bool = False")


def test_an_engine_field_the_wire_cannot_carry_is_refused() -> None:
    source = wiregen.MODEL.read_text().replace(
        "    server_seed: str\n", "    server_seed: Ruleset\n"
    )
    with pytest.raises(wiregen.WireGenError, match=r"SeedRevealed.server_seed.*Ruleset"):
        wiregen.render(source)


def test_every_engine_event_and_seat_command_has_a_wire_class_with_its_fields() -> None:
    renamed = {"ruleset": "rules"}
    for name, cls in engine.EVENT_TYPES.items():
        engine_fields = [renamed.get(f.name, f.name) for f in dataclasses.fields(cls)]
        wire_fields = list(getattr(wire, name).__struct_fields__)
        assert wire_fields[: len(engine_fields)] == engine_fields, name
    for seat_command in get_args(engine.SeatCommand):
        engine_fields = [f.name for f in dataclasses.fields(seat_command) if f.name != "seat"]
        assert list(getattr(wire, seat_command.__name__).__struct_fields__) == engine_fields
    for told in (audience.SeatGameStarted, audience.SeatHandDealt, audience.SeatCardDrawn):
        form = getattr(wire, told.__name__)
        engine_fields = [renamed.get(f.name, f.name) for f in dataclasses.fields(told)]
        assert list(form.__struct_fields__) == engine_fields
        assert form.__struct_config__.tag == told.__name__.removeprefix("Seat")


def test_a_card_a_seat_is_not_told_is_none_on_the_wire() -> None:
    drawn = engine.CardDrawn(seat=1, kept=engine.parse_card("QS"), discarded=0)
    to_drawer = wire.told_to_wire(audience.redact(drawn, 1))
    assert to_drawer == wire.SeatCardDrawn(seat=1, kept="QS", discarded="2C")
    to_other = msgspec.json.encode(wire.told_to_wire(audience.redact(drawn, 0)))
    assert msgspec.json.decode(to_other) == {
        "type": "CardDrawn",
        "seat": 1,
        "kept": None,
        "discarded": None,
    }


def test_card_fields_are_found_from_the_engine_annotations() -> None:
    assert game_wire.CARD_DEPTH == {
        ("HandDealt", "hands"): 3,
        ("HandDealt", "stock"): 2,
        ("HandDealt", "face_up"): 3,
        ("CardDrawn", "kept"): 1,
        ("CardDrawn", "discarded"): 1,
        ("CardsPassed", "cards"): 2,
        ("CardPlayed", "card"): 1,
        ("TrickWon", "cards"): 2,
        ("SeatHandDealt", "face_up"): 3,
        ("SeatCardDrawn", "kept"): 1,
        ("SeatCardDrawn", "discarded"): 1,
        ("SeatCardsPassed", "cards"): 2,
        ("PassCards", "cards"): 2,
        ("PlayCard", "card"): 1,
    }


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


def test_a_game_started_before_the_variants_decodes_to_their_defaults() -> None:
    # A payload as the log stored it before issue 18: none of the new rule options, no moe
    # on bids, no face-up cards on deals.
    old_rules = dict(list(engine.Ruleset().to_dict().items())[:23])
    assert list(old_rules)[-1] == "hand_cap"
    started = msgspec.json.decode(
        msgspec.json.encode({"type": "GameStarted", "rules": old_rules, "seed": 3, "dealer": 1}),
        type=wire.GameStreamEvent,
    )
    assert wire.to_engine(started) == engine.GameStarted(engine.Ruleset(), 3, 1)
    bid = msgspec.json.decode(
        b'{"type":"BidPlaced","seat":2,"tricks":4}', type=wire.GameStreamEvent
    )
    assert wire.to_engine(bid) == engine.BidPlaced(2, 4)
    dealt = msgspec.json.decode(
        b'{"type":"HandDealt","hand":1,"dealer":0,"hands":[["2C"],["3C"],["4C"],["5C"]]}',
        type=wire.GameStreamEvent,
    )
    assert wire.to_engine(dealt) == engine.HandDealt(1, 0, ((0,), (1,), (2,), (3,)))


def test_power_checks_reach_every_seat_and_spectator_and_no_other_card_does() -> None:
    rules = engine.Ruleset(power_checks=2)
    dealt = engine.decide(engine.initial_state(), engine.StartGame(rules, 9))[1]
    assert isinstance(dealt, engine.HandDealt)
    event = wire.to_wire(dealt)
    up = {c for cards in event.face_up for c in cards}  # type: ignore[attr-defined]
    assert len(up) == 8
    for seat in (-1, 0, 1, 2, 3):
        told = wire.redact(event, seat)
        assert isinstance(told, wire.SeatHandDealt)
        assert told.face_up == event.face_up  # type: ignore[attr-defined]
        text = msgspec.json.encode(told).decode()
        names = set(text.replace('"', " ").replace(",", " ").replace("[", " ").split())
        every_card = {engine.card_str(c) for c in range(52)}
        assert names & every_card == up


def test_part_blind_ten_for_two_games_recorded_before_issue_28_keep_the_blind_rule() -> None:
    options = engine.Ruleset(ten_for_two_hundred=True, blind_bids=True).to_dict()
    old = {k: v for k, v in options.items() if k != "ten_for_two_part_blind"}
    decoded = wire.to_engine(wire.GameStarted(rules=old, seed=1, dealer=0))
    assert isinstance(decoded, engine.GameStarted)
    assert decoded.ruleset.ten_for_two_part_blind == "blind_rule"
    new = wire.to_engine(wire.to_wire(engine.GameStarted(engine.Ruleset(**old), 1, 0)))  # type: ignore[arg-type]
    assert isinstance(new, engine.GameStarted)
    assert new.ruleset.ten_for_two_part_blind == "best"


def test_ten_for_two_games_recorded_before_the_decision_keep_their_per_trick_scoring() -> None:
    old = {**dict(list(engine.Ruleset().to_dict().items())[:23]), "ten_for_two_hundred": True}
    started = wire.GameStarted(rules=old, seed=1, dealer=0)
    decoded = wire.to_engine(started)
    assert isinstance(decoded, engine.GameStarted)
    assert decoded.ruleset.ten_for_two_scoring == "per_trick"
    # a new game stores the option, flat by default (the rule book: 200 for ten or more)
    new = wire.to_wire(engine.GameStarted(engine.Ruleset(ten_for_two_hundred=True), 1, 0))
    again = wire.to_engine(new)
    assert isinstance(again, engine.GameStarted)
    assert again.ruleset.ten_for_two_scoring == "flat"
    # an old game without ten for two is untouched
    plain = wire.to_engine(wire.GameStarted(rules=dict(list(old.items())[:1]), seed=1, dealer=0))
    assert isinstance(plain, engine.GameStarted)
    assert plain.ruleset == engine.Ruleset()


def test_fold_skips_the_table_facts_and_ends_where_the_engine_does() -> None:
    events = _played_game(5, engine.ranked_default())
    opened = wire.TableOpened(game_id="g", ladder="standard", rated=True, players=("a",) * 4)
    timed_out = wire.TurnTimedOut(seat=1, streak=1)
    stream = [opened, *map(wire.to_wire, events[:9]), timed_out]
    stream += map(wire.to_wire, events[9:])
    assert wire.fold(stream) == engine.replay(events)
    # from a state part-way through: the rest of the stream lands at the same end
    half = len(stream) // 2
    assert wire.fold(stream[half:], wire.fold(stream[:half])) == engine.replay(events)
    assert wire.fold([]) == engine.initial_state()


def test_steps_give_each_event_its_engine_event_and_the_state_after_it() -> None:
    events = _played_game(6, engine.Ruleset(moe=True, power_checks=3))
    opened = wire.TableOpened(game_id="g", ladder="standard", rated=True, players=("a",) * 4)
    stream = [opened, *map(wire.to_wire, events)]
    yielded = list(wire.steps(stream))
    assert [event for event, _, _ in yielded] == stream
    assert yielded[0][1] is None
    assert yielded[0][2] == engine.initial_state()
    state = engine.initial_state()
    for (_, engine_event, after), event in zip(yielded[1:], events, strict=True):
        state = engine.apply(state, event)
        assert engine_event == event
        assert after == state
