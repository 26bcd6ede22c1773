"""`benchmarks.botsurvey`: a variant is called short exactly where a target is missed."""

from __future__ import annotations

from benchmarks import botsurvey


def figures(tricks_minus_bid: float, target_share: float) -> dict[str, float]:
    return {"tricks_minus_bid": tricks_minus_bid, "target_share": target_share}


def test_a_variant_is_short_of_each_target_it_misses_and_of_no_other() -> None:
    assert botsurvey.short_of(figures(0.0, 0.9)) == []
    assert botsurvey.short_of(figures(0.5, 1.0)) == []
    assert botsurvey.short_of(figures(0.51, 0.95)) == ["tricks_minus_bid"]
    assert botsurvey.short_of(figures(-0.01, 0.95)) == ["tricks_minus_bid"]
    assert botsurvey.short_of(figures(0.2, 0.899)) == ["target_share"]
    assert botsurvey.short_of(figures(0.6, 0.5)) == ["tricks_minus_bid", "target_share"]


def test_a_small_survey_lists_as_short_the_variants_whose_figures_miss() -> None:
    result = botsurvey.survey(["ladder", "suicide"], 4)
    assert set(result["variants"]) == {"ladder", "suicide"}
    for name, found in result["variants"].items():
        assert found["games"] == 4
        assert (found["target_share"] * 4).is_integer()
        assert result["short"].get(name, []) == botsurvey.short_of(found)
