"""A whole rated game's review, as the bot tier stores it: CPU seconds on one core.

    uv run --frozen python -m benchmarks analysis
    SPADES_BENCH_ANALYSIS_GAMES=1 uv run --frozen python -m benchmarks analysis   # fewer games

Each of ``SPADES_BENCH_ANALYSIS_GAMES`` (default 3) bot games of the standard rules to 500
(`engine.bot.play_game`, seeds 0, 1, ...) is reviewed with the rated budget of
`services.bots.analyst` (24 sampled deals a decision, whole hands solved double-dummy by the
C kernel, the par's 3 runs of strong bots a hand), through the very function the worker
runs (`services.bots.analysis.analyse_transcript`), timed with ``time.process_time`` (one
thread: one core). The grading alone (with the double-dummy figures, no par) is timed too, so
the par's share shows.

Figures (``artifacts/bench.json``): ``analysis.cpu_s_mean`` / ``_max`` (the whole review),
``analysis.grading_cpu_s_mean``, ``analysis.par_cpu_s_mean`` (the difference),
``analysis.hands_mean``, and ``analysis.games_per_core_hour`` (the tier's throughput per
core: 3,600 over the mean). The goal: ready within a minute of the game's end on one core.
"""

from __future__ import annotations

import os
import statistics
import time

import engine
from benchmarks import artifact
from engine.bot import play_game
from events.contracts import game as wire
from services.bots.analysis import analyse_transcript
from services.bots.analyst import RATED
from services.records import transcript as transcripts

GAMES = int(os.environ.get("SPADES_BENCH_ANALYSIS_GAMES", "3"))


def game_text(seed: int) -> tuple[str, int]:
    """Return a finished rated bot game's transcript and its number of hands."""
    played, _ = play_game(engine.Ruleset(), seed)
    opened = wire.TableOpened(
        game_id=f"bench-{seed}", ladder="standard", rated=True, players=("a", "b", "c", "d")
    )
    events = [opened, *(wire.to_wire(e) for e in played)]
    return transcripts.export(events), sum(isinstance(e, engine.HandScored) for e in played)


def cpu(text: str, par_runs: int) -> float:
    """Return the CPU seconds of one review of ``text``."""
    started = time.process_time()
    reply = analyse_transcript(
        text, worlds=RATED.worlds, dd_tricks=RATED.dd_tricks, par_runs=par_runs
    )
    assert reply.ok, reply
    return time.process_time() - started


def main() -> None:
    meta = artifact.run_metadata()
    whole, grading, hands = [], [], []
    for seed in range(GAMES):
        text, count = game_text(seed)
        whole.append(cpu(text, RATED.par_runs))
        grading.append(cpu(text, 0))
        hands.append(count)
        print(
            f"game {seed}: {count} hands, review {whole[-1]:.1f} CPU s"
            f" (grading {grading[-1]:.1f}, par {whole[-1] - grading[-1]:.1f})",
            flush=True,
        )
    mean = statistics.fmean(whole)
    figures = {
        "analysis.games": GAMES,
        "analysis.hands_mean": round(statistics.fmean(hands), 1),
        "analysis.cpu_s_mean": round(mean, 1),
        "analysis.cpu_s_max": round(max(whole), 1),
        "analysis.grading_cpu_s_mean": round(statistics.fmean(grading), 1),
        "analysis.par_cpu_s_mean": round(mean - statistics.fmean(grading), 1),
        "analysis.games_per_core_hour": round(3600 / mean, 1),
    }
    print(
        f"{GAMES} games to 500: review CPU s mean {mean:.1f}, max {max(whole):.1f};"
        f" {3600 / mean:.0f} games per core-hour",
        flush=True,
    )
    print(f"wrote {artifact.record('analysis', figures, meta)}")


if __name__ == "__main__":
    main()
