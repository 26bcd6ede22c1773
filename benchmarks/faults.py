"""Take-over and stall under each fault the operator guide names: `python -m benchmarks faults`.

Each fault is one of the fault tests of `tests/services/test_failover.py`, run as it is (real
processes: `spades serve table` replicas, relay, matchmaking, embedded PostgreSQL and NATS; the
test's players resend an unanswered request as the gateway does) in a pytest of its own, so
the scenario measured is the one the suite checks. Each test prints one ``FAULT {json}`` line
(`tests.services.test_failover.report`): games, games finished, seats abandoned, refusals,
turns timed out, the longest stall of a game across the fault, and the fault's own times
(take-over, recovery after the fault ended). A run whose test failed is reported as failed,
with the tail of its output, and its figures (if it printed any) are kept beside that.

Knobs: SPADES_BENCH_FAULTS (comma-separated names of `FAULTS`, default all),
SPADES_BENCH_FAULT_RUNS (runs of each, default 1). Figures go to `artifacts/bench.json` under
``faults.<fault>.*`` (a single run: its figures; several: ``min``/``max`` of each and the sum
of the counts).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from benchmarks import artifact

TESTS = "tests/services/test_failover.py"
FAULTS = {
    "nats_paused_3s": "test_a_paused_nats_server_leaves_no_service_deaf_and_readyz_says_so",
    "replica_cut_off_from_nats_30s": (
        "test_a_replica_cut_off_from_nats_only_hands_its_games_over_and_none_is_abandoned"
    ),
    "replica_paused_12s": "test_a_replica_paused_past_its_lease_costs_no_player_a_turn",
    "kill_9_replica": "test_a_killed_replica_s_games_resume_on_the_other_two",
    "postgres_restart_8s": "test_a_database_crash_under_two_replicas_leaves_every_game_finishing",
    "nats_restart_3s": "test_a_nats_restart_under_two_replicas_leaves_every_game_finishing",
}
"""Fault name (as its test reports it) -> the test that produces it."""
COUNTS = ("games", "finished", "abandoned", "refusals", "timeouts")


def run_one(fault: str) -> dict[str, Any]:
    """Run one fault's test; return its reported figures, ``passed`` and the wall seconds."""
    started = time.monotonic()
    test = f"{TESTS}::{FAULTS[fault]}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", test],
        cwd=artifact.REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("FAULT ")]
    figures: dict[str, Any] = json.loads(lines[-1].removeprefix("FAULT ")) if lines else {}
    figures.pop("fault", None)
    figures["passed"] = done.returncode == 0
    figures["wall_s"] = round(time.monotonic() - started, 1)
    if done.returncode != 0:
        print(f"[{fault}] test failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return figures


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Return one fault's figures: a single run's own, or each time's min and max and the
    counts summed over several runs."""
    if len(runs) == 1:
        return runs[0]
    out: dict[str, Any] = {"runs": len(runs), "passed": sum(bool(r["passed"]) for r in runs)}
    for key in sorted({k for r in runs for k in r} - {"passed"}):
        values = [r[key] for r in runs if key in r]
        if key in COUNTS:
            out[key] = sum(values)
        else:
            out[key] = {"min": min(values), "max": max(values)}
    return out


def main() -> None:
    """Run the faults, print the table, record the figures."""
    meta = artifact.run_metadata()
    wanted = [f for f in os.environ.get("SPADES_BENCH_FAULTS", ",".join(FAULTS)).split(",") if f]
    unknown = sorted(set(wanted) - set(FAULTS))
    if unknown:
        raise SystemExit(f"unknown faults {unknown}: choose among {sorted(FAULTS)}")
    runs = int(os.environ.get("SPADES_BENCH_FAULT_RUNS", "1"))
    results: dict[str, dict[str, Any]] = {}
    for fault in wanted:
        results[fault] = summary([run_one(fault) for _ in range(runs)])
        print(f"{fault}: {json.dumps(results[fault], sort_keys=True)}", flush=True)
    print("\n| fault | games finished | abandoned | refusals | turns timed out | stall s | times |")
    print("|---|---|---|---|---|---|---|")
    for fault, r in results.items():
        times = ", ".join(
            f"{k} {v}"
            for k, v in sorted(r.items())
            if k not in (*COUNTS, "passed", "stall_s", "wall_s", "runs")
        )
        print(
            f"| {fault} | {r.get('finished', '?')} of {r.get('games', '?')} |"
            f" {r.get('abandoned', '?')} | {r.get('refusals', '?')} | {r.get('timeouts', '?')} |"
            f" {r.get('stall_s', '?')} | {times} |"
        )
    figures = {f"faults.{fault}.{k}": v for fault, r in results.items() for k, v in r.items()}
    print(f"wrote {artifact.record('faults', figures, meta)}")


if __name__ == "__main__":
    main()
