"""Issue 13, item 1: every numeric rule option has bounds, and a value beyond them is refused
with a reason naming the option and its range (a table that could never end is no option)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import InvalidRuleset, Ruleset
from engine.rules import BOUNDS, OTHER_BOUND

INT_FIELDS = [f.name for f in dataclasses.fields(Ruleset) if f.type in (int, "int")]


def bounds_of(name: str) -> tuple[int, int]:
    return BOUNDS.get(name, OTHER_BOUND)


def test_the_endless_table_of_the_report_is_refused() -> None:
    with pytest.raises(InvalidRuleset, match="target must be between 100 and 1000"):
        Ruleset.from_options({"hand_cap": 1_000_000_000, "target": 1_000_000_000, "mercy": -1})
    with pytest.raises(InvalidRuleset, match="hand_cap must be between 1 and 100"):
        Ruleset.from_options({"hand_cap": 1_000_000_000})
    with pytest.raises(InvalidRuleset, match="mercy must be between -1000 and 0"):
        Ruleset.from_options({"mercy": -1_000_000_000})


@settings(deadline=None)
@given(name=st.sampled_from(sorted(BOUNDS)), data=st.data())
def test_a_value_beyond_its_bounds_is_refused_naming_them(name: str, data: st.DataObject) -> None:
    low, high = BOUNDS[name]
    value = data.draw(
        st.one_of(st.integers(max_value=low - 1), st.integers(min_value=high + 1)), label="value"
    )
    with pytest.raises(InvalidRuleset, match=name):
        Ruleset.from_options({name: value})
    with pytest.raises(InvalidRuleset, match=name):
        Ruleset.from_options({name: str(value)})  # as the CLI gives it


@settings(deadline=None)
@given(name=st.sampled_from(sorted(BOUNDS)), data=st.data())
def test_a_value_within_its_bounds_is_taken(name: str, data: st.DataObject) -> None:
    low, high = BOUNDS[name]
    value = data.draw(st.integers(min_value=low, max_value=high), label="value")
    assert getattr(Ruleset.from_options({name: value}), name) == value


@settings(deadline=None)
@given(
    name=st.sampled_from(INT_FIELDS),
    value=st.one_of(st.booleans(), st.floats(allow_nan=True), st.none()),
)
def test_a_number_option_takes_only_a_whole_number(name: str, value: object) -> None:
    with pytest.raises(InvalidRuleset, match=name):
        Ruleset.from_options({name: value})  # type: ignore[dict-item]


def test_a_recorded_game_beyond_todays_bounds_still_replays() -> None:
    """Bounds guard new tables; a game in the log keeps the rules it was played with."""
    assert Ruleset(target=5000, hand_cap=500).target == 5000


def test_every_whole_number_option_is_bounded() -> None:
    for name in INT_FIELDS:
        low, high = bounds_of(name)
        assert -1000 <= low <= high <= 1000, name
        default = getattr(Ruleset(), name)
        assert low <= default <= high, name
