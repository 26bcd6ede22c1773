"""The wire's card names are looked up, not formatted, and mean exactly what the engine's do:
`card_name` is `engine.card_str` and `card_number` is `engine.parse_card`, refusals included."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import engine
from events.contracts.game import card_name, card_number


def _outcome(convert: object, value: object) -> object:
    try:
        return convert(value)  # type: ignore[operator]
    except engine.InvalidCard as exc:
        return ("refused", str(exc))


@pytest.mark.parametrize("card", range(engine.BIG_JOKER + 1))
def test_every_card_has_the_engines_name_and_back(card: int) -> None:
    assert card_name(card) == engine.card_str(card)
    assert card_number(engine.card_str(card)) == card


@given(card=st.integers(min_value=-1000, max_value=1000))
def test_a_number_is_named_or_refused_as_the_engine_does(card: int) -> None:
    assert _outcome(card_name, card) == _outcome(engine.card_str, card)


@given(text=st.one_of(st.text(max_size=4), st.sampled_from(["10h", " qs", "th", "Bj", "1OH"])))
def test_a_text_is_parsed_or_refused_as_the_engine_does(text: str) -> None:
    assert _outcome(card_number, text) == _outcome(engine.parse_card, text)
