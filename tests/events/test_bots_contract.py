"""`events.contracts.bots`: a seat's view crosses to the bot tier and back unchanged, for every
variant of the rule book and every seat on turn; what is sent is the view, never the state."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.bot import play_game
from events.contracts.bots import Decide, decode_view, encode_view
from services.tools.simulate import VARIANTS, variant_rules
from tests.engine.hidden import secret_numbers

NAMES = sorted(VARIANTS)


def views_on_turn(rules: engine.Ruleset, seed: int) -> list[engine.SeatView]:
    """Return the view of the seat on turn after every event of a bot game."""
    events, _ = play_game(rules, seed)
    state, found = engine.initial_state(), []
    for event in events:
        state = engine.apply(state, event)
        if state.turn >= 0 and state.phase != "over":
            found.append(engine.view(state, state.turn))
    return found


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(NAMES), seed=st.integers(0, 2**32))
def test_a_view_crosses_to_the_bot_tier_and_back_unchanged(name: str, seed: int) -> None:
    rules = variant_rules(name, [])
    views = views_on_turn(rules, seed)
    assert views
    for view in views:
        request = Decide(
            game_id="g", version=1, seat=view.seat, level="strong", view=encode_view(view)
        )
        sent = msgspec.json.decode(msgspec.json.encode(request), type=Decide)
        assert decode_view(sent.view) == view


def test_what_is_sent_holds_no_card_the_seat_may_not_know() -> None:
    rules = engine.Ruleset.from_options({"nil_exchange": True, "blind_nil_deficit": 0})
    events, _ = play_game(rules, 11)
    state = engine.initial_state()
    checked = 0
    for event in events:
        state = engine.apply(state, event)
        if state.turn < 0 or state.phase == "over":
            continue
        sent = encode_view(engine.view(state, state.turn))
        secret = secret_numbers(state, state.turn)
        cards = set(sent["hand"]) | set(sent["trick"]) | set(sent["received"])
        assert not cards & secret
        assert "seed" not in sent
        assert "hands" not in sent
        checked += 1
    assert checked > 40


def test_a_view_that_is_not_one_is_refused() -> None:
    view = views_on_turn(engine.Ruleset(), 3)[0]
    data = encode_view(view)
    with pytest.raises(ValueError, match="fields"):
        decode_view({**data, "hands": [[1, 2]]})
    with pytest.raises(ValueError, match="fields"):
        decode_view({k: v for k, v in data.items() if k != "legal"})
