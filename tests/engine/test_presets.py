"""The rule book's named variants (`engine.presets.PRESETS`) are valid rulesets, each named once,
and each changes what its name says from the ranked ladder."""

from __future__ import annotations

import engine
from engine.presets import PRESETS


def test_every_preset_is_a_valid_ruleset_named_once() -> None:
    names = [p.name for p in PRESETS]
    assert len(names) == len(set(names))
    for preset in PRESETS:
        rules = engine.Ruleset.from_options(dict(preset.options))
        assert rules.changes() == preset.options, preset.name
        assert preset.label
        assert preset.description


def test_the_presets_cover_the_rule_books_variants() -> None:
    by_name = {p.name: engine.Ruleset.from_options(dict(p.options)) for p in PRESETS}
    assert by_name["standard"] == engine.ranked_default()
    assert by_name["two-player"] == engine.two_player_default()
    assert by_name["cut-throat"].players == 3
    assert by_name["five-players"].players == 5
    assert by_name["jokers"].jokers
    willie = by_name["joker-joker-deuce"]
    assert willie.little_willie
    assert willie.jokers
    assert willie.deuces_high
    assert by_name["suicide"].suicide
    assert by_name["moe"].moe
    assert by_name["two-player-draw"].deal == "draw"
