"""Golden playthroughs: the engine replays every checked-in file exactly."""

from __future__ import annotations

import difflib

import pytest

from tests.engine.golden import GOLDEN, PREFER, SCENARIOS, playthrough

UPDATE = "uv run --frozen python -m tests.engine.golden --update"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_playthrough_matches_its_golden_file(name: str) -> None:
    rules, seed = SCENARIOS[name]
    path = GOLDEN / f"{name}.txt"
    assert path.exists(), f"no golden file {path}; create it with: {UPDATE}"
    expected = path.read_text().splitlines()
    actual = playthrough(rules, seed, PREFER.get(name)).splitlines()
    diff = list(difflib.unified_diff(expected, actual, "golden", "engine", n=2, lineterm=""))
    assert not diff, "\n".join([*diff[:40], f"if the change is intended: {UPDATE}"])


def test_every_golden_file_has_a_scenario() -> None:
    names = {p.stem for p in GOLDEN.glob("*.txt")}
    assert names == set(SCENARIOS)
