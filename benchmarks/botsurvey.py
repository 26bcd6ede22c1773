"""The baseline bot in every variant: does it bid what it takes, and do its games end by the target?

`python -m benchmarks botsurvey` plays SPADES_BENCH_BOT_SURVEY_GAMES (200) baseline self-play
games of every variant of `spades simulate` (`services.tools.simulate.VARIANTS`; or those named
by SPADES_BENCH_BOT_VARIANTS), from the bot report's seeds (`benchmarks.bots.selfplay`,
SPADES_BENCH_BOT_SEED), and checks each against issue #28's targets for both bots: mean tricks
minus bid per player between 0 and +0.5 (`BID_TARGET`), and at least 90% of games ended by the
target (`TARGET_SHARE`). It is cheap (the baseline decides in microseconds: about 10 CPU
minutes in all), so it covers what the strong bot's report (`benchmarks.bots`, minutes per
game) can only sample. Figures go under ``bot_survey.<variant>.*`` in `artifacts/bench.json`,
and the variants outside a target under ``bot_survey.short``.

200 games a variant, seed 1, with the forced nil of a minimum of two (`engine.bot.
FORCED_NIL_FROM`), the jokers bids after a nil and the nil side's end-game search in suicide
(`engine.botnil`): every variant within both targets but suicide (48.5% by the target, tricks
- bid +0.56; 44.5% and +0.53 before the search) and suicide with forcing (56.0%, +0.66; 53.0%
and +0.61 before); the closest others moe and boston (91.5%); jokers 93.5% (+0.32),
jjd-little-willie 92.5% (90.0% before the jokers bids); min-two-each 97.5% (89.4% before the
forced nil, over 900 games of `spades simulate`).

With no blind nil whose failure would sink the side to the mercy floor
(`engine.botblind.BLIND_NIL_ROOM`) and the jokers side bidding closer while it trails
(`engine.bot.TRAIL_MARGIN`), before -> after, seed 1 (before: the recorded survey) and
seed 7 (SPADES_BENCH_BOT_SEED=7, both run): every four-handed variant but suicide ends more
by the target: ladder 92.0% -> 95.5% and 90.0% -> 95.0%; jokers 93.5% -> 95.5% (+0.32 ->
+0.25 over the bid) and 93.0% -> 96.5% (+0.30 -> +0.24); jjd-little-willie 92.5% -> 96.0%
and 91.0% -> 95.5%; moe and boston 91.5% -> 95.5%/95.0% and 90.5%/90.0% -> 95.5%/95.0%;
seed 7's four short of 90% before (partners-order 88.5%, nil-exchange, nil-exchange-blind
and ten-for-two-blind 89.5%) 93.5% to 96.0% after. Every variant within both targets but
suicide (48.5%/54.5%) and suicide with forcing (56.0%/58.5%), unchanged; the closest
three-jokers (90.5% at seed 7, untouched: three players).
"""

from __future__ import annotations

import os
from typing import Any

from benchmarks import artifact
from benchmarks.bots import SEED, selfplay
from services.tools.simulate import VARIANTS, variant_rules

GAMES = int(os.environ.get("SPADES_BENCH_BOT_SURVEY_GAMES", "200"))
BID_TARGET = (0.0, 0.5)
"""Issue #28: mean tricks minus bid per player, per bot and variant, within this range."""
TARGET_SHARE = 0.9
"""Issue #28: the share of bot games, per variant, that end by the target score."""


def short_of(figures: dict[str, Any]) -> list[str]:
    """Return which of the targets a variant's self-play figures miss."""
    missed = []
    low, high = BID_TARGET
    if not low <= figures["tricks_minus_bid"] <= high:
        missed.append("tricks_minus_bid")
    if figures["target_share"] < TARGET_SHARE:
        missed.append("target_share")
    return missed


def survey(names: list[str], games: int) -> dict[str, Any]:
    """Return each named variant's self-play figures and the variants short of a target."""
    found: dict[str, Any] = {}
    short: dict[str, list[str]] = {}
    for name in names:
        figures = selfplay(variant_rules(name, []), games)
        found[name] = {
            key: figures[key]
            for key in (
                "games",
                "tricks_minus_bid",
                "target_share",
                "nil_rate",
                "nil_made",
                "contracts_made",
            )
        }
        if missed := short_of(figures):
            short[name] = missed
    return {"variants": found, "short": short}


def main() -> None:
    """Play the survey, print a line per variant and record it in the artifact."""
    wanted = [n.strip() for n in os.environ.get("SPADES_BENCH_BOT_VARIANTS", "").split(",")]
    names = [n for n in wanted if n and n != "all"] or list(VARIANTS)
    result = survey(names, GAMES)
    for name, f in result["variants"].items():
        mark = ", ".join(result["short"].get(name, [])) or "within both targets"
        print(
            f"{name:20} tricks-bid {f['tricks_minus_bid']:+.2f}  by the target"
            f" {f['target_share']:.1%}  nils {f['nil_rate']:.1%} made {f['nil_made']:.0%}"
            f"  contracts made {f['contracts_made']:.0%}  [{mark}]"
        )
    meta = artifact.run_metadata()
    meta.update(games=GAMES, seed=SEED)
    figures = {f"bot_survey.{name}": f for name, f in result["variants"].items()}
    figures["bot_survey.short"] = result["short"]
    path = artifact.record("bot_survey", figures, meta)
    print(f"written to {path}")
