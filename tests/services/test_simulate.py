"""`spades simulate`: every named variant plays bot games to an end; levels per seat, rotated
seats, win rates with intervals, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import Ruleset
from services.tools import cli
from services.tools.cli import build_parser
from services.tools.simulate import (
    VARIANTS,
    parse_seats,
    pct,
    run,
    seating,
    simulate,
    variant_rules,
    wilson,
)


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


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    args = build_parser().parse_args(["simulate", "--no-progress", *argv])
    code = run(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_two_levels_heads_up_print_win_rates_ends_and_decision_times(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(
        capsys, "--games", "2", "--seed", "3", "--rules", "players=2", "--rules", "target=200",
        "--seats", "strong,baseline", "--playouts", "8",
    )  # fmt: skip
    assert code == 0
    assert "win rate by the levels at a side" in out
    # Each level sat at a side in both games (seats rotate after games/players games).
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 5}
    assert "strong" in rows
    assert "baseline" in rows
    assert rows["strong"].split("│")[2].strip() == "2"
    assert "game ends:" in out
    assert "decision time strong" in out
    assert "decision time baseline" in out


def test_unknown_levels_and_wrong_seat_counts_are_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli(capsys, "--games", "1", "--seats", "strong,grandmaster,strong,x")
    assert code == 2
    assert "unknown bot level 'grandmaster'" in err
    code, _, err = run_cli(capsys, "--games", "1", "--seats", "strong,baseline")
    assert code == 2
    assert "2 levels for a 4-player game" in err


def test_one_level_fills_every_seat() -> None:
    assert parse_seats("strong", 3) == ("strong", "strong", "strong")


def test_the_wilson_interval_holds_the_rate_and_narrows_with_games() -> None:
    lo, hi = wilson(60, 100)
    assert lo < 0.6 < hi
    lo_big, hi_big = wilson(600, 1000)
    assert hi_big - lo_big < hi - lo
    assert wilson(0, 10)[0] == 0.0
    assert abs(wilson(240, 400)[0] - 0.551) < 0.002  # 60% of 400: lower bound 55.1%


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert pct(values, 50) == 50.0
    assert pct(values, 99) == 99.0
    assert pct(values, 100) == 100.0


def test_each_seed_is_played_from_every_side_before_the_next() -> None:
    seats = ("strong", "baseline", "strong", "baseline")
    games = [seating(seats, i, 10) for i in range(4)]
    # Partnerships repeat every two seats: each deal once per side, then the next deal.
    assert [seed for _, seed in games] == [10, 10, 11, 11]
    assert games[0][0] == seats
    assert games[1][0] == ("baseline", "strong", "baseline", "strong")
    three = [seating(("strong", "baseline", "baseline"), i, 0) for i in range(3)]
    assert [levels.index("strong") for levels, _ in three] == [0, 1, 2]
    assert {seed for _, seed in three} == {0}


def test_processes_and_the_log_do_not_change_the_result(tmp_path: Path) -> None:
    rules = Ruleset(players=2, blind_nil=False, target=200)
    seats = ("baseline", "baseline")
    alone = simulate(rules, games=4, seed=5, seats=seats)
    path = tmp_path / "games.jsonl"
    with path.open("w") as log:
        shared = simulate(rules, games=4, seed=5, seats=seats, jobs=2, log=log)
    assert shared.wins == alone.wins
    assert shared.reasons == alone.reasons
    assert shared.hands == alone.hands
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["game"] for line in lines] == [0, 1, 2, 3]
    assert lines[-1]["wins_games"]["baseline"][1] == 8  # two sides a game, four games
    p50, p90, p99 = lines[-1]["decision_ms_p50_p90_p99"]["baseline"]
    assert 0 < p50 <= p90 <= p99
