"""`spades simulate`: every named variant of the rule book plays whole bot games to an end."""

from __future__ import annotations

import pytest

from engine import Ruleset
from services import cli
from services.simulate import VARIANTS, simulate, variant_rules


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_plays_bot_games_to_their_end(name: str) -> None:
    rules = variant_rules(name, [])
    summary = simulate(rules, games=2, seed=3)
    assert summary.games == 2
    assert sum(summary.reasons.values()) == 2
    assert set(summary.reasons) <= {"target", "mercy", "boston", "hand_cap"}
    assert summary.hands >= 2


def test_the_variants_cover_every_option_of_issue_18() -> None:
    named = {key for options in VARIANTS.values() for key in options}
    for option in (
        "moe",
        "little_willie",
        "blind_bid_min",
        "ten_for_two_blind",
        "set_scores_zero",
        "bidding_order",
        "nil_exchange",
        "nil_exchange_peek",
        "suicide_forcing",
        "power_checks",
    ):
        assert option in named
    assert {VARIANTS["five"]["players"], VARIANTS["three-jokers"]["players"]} == {5, 3}


def test_rules_apply_on_top_of_a_variant() -> None:
    assert variant_rules("five", ["target=200"]) == Ruleset(players=5, target=200)


def test_an_unknown_variant_is_refused_with_the_names(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["simulate", "--variant", "nope", "--games", "1", "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "no variant 'nope'" in err
    assert "five-jokers" in err


def test_all_variants_print_one_row_each(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--variant", "moe", "--variant", "five", "--games", "1", "--no-progress"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "moe" in out
    assert "five" in out
