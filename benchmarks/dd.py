"""Double-dummy benchmark: whole deals solved exactly by `engine.dd`, CPU time per deal.

    uv run --frozen python -m benchmarks dd
    SPADES_BENCH_DD_DEALS=20 uv run --frozen python -m benchmarks dd   # fewer deals
    SPADES_BENCH_DD_PLAYERS=4,5 uv run --frozen python -m benchmarks dd   # some table sizes

For each table size (four players, then two, three and five, each at its default rules) it
deals ``SPADES_BENCH_DD_DEALS`` (default 1,000) random deals (seeds 0, 1, ...) and solves each
from the first lead: with four and two players the tricks of one side (the other's follow,
zero-sum), with three and five every seat's tricks against all the others (one search per
seat, not zero-sum). Figures (``artifacts/bench.json``): ``dd.players_N.cpu_ms_p50`` /
``_p95`` / ``_max`` and ``dd.players_N.nodes_p50``. The goal is p95 under 1 s on one core.

When `endplay` imports (the optional ``dd`` dependency group) the four-player deals are also
solved by the bridge solver DDS with spades broken from the start (bridge with spades
trumps, where the rules coincide) and compared: ``dd.bridge.deals`` / ``dd.bridge.agree``.
"""

from __future__ import annotations

import os
import random
import time

from benchmarks import artifact
from engine.dd import Position, Solver
from engine.fast import deal_hands
from engine.rules import Ruleset, tables, two_player_default
from engine.state import first_leader

DEALS = int(os.environ.get("SPADES_BENCH_DD_DEALS", "1000"))
RULES: dict[int, Ruleset] = {
    4: Ruleset(),
    2: two_player_default(),
    3: Ruleset(players=3),
    5: Ruleset(players=5),
}
SIZES = {
    int(n): RULES[int(n)] for n in os.environ.get("SPADES_BENCH_DD_PLAYERS", "4,2,3,5").split(",")
}
"""The table sizes measured (SPADES_BENCH_DD_PLAYERS, e.g. "4" or "2,5")."""


def deal(rules: Ruleset, seed: int) -> Position:
    """Return deal ``seed`` at the first lead (the engine's own deal and first leader)."""
    t = tables(rules)
    hands = deal_hands(t, random.Random(seed))
    leader = first_leader(rules, tuple(tuple(h) for h in hands), 0)
    return Position(tuple(tuple(h) for h in hands), leader)


def solve_deal(rules: Ruleset, pos: Position) -> tuple[tuple[int, ...], int]:
    """Return every side's double-dummy tricks from ``pos`` and the nodes searched."""
    t = tables(rules)
    if t.players in (2, 4):
        solver = Solver(rules, t.members[0], t.members[0])
        first = solver.value(pos)
        return (first, pos.left - first), solver.nodes
    values, nodes = [], 0
    for seat in range(t.players):
        solver = Solver(rules, (seat,), (seat,))
        values.append(solver.value(pos))
        nodes += solver.nodes
    return tuple(values), nodes


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bridge_check(count: int) -> dict[str, int]:
    """Return how many of ``count`` four-player deals, spades broken, DDS agrees on."""
    from tests.engine.bridge import dds_tricks

    rules = RULES[4]
    agree = 0
    for seed in range(count):
        pos = deal(rules, seed)
        pos = Position(pos.hands, pos.leader, broken=True)
        side = tables(rules).members[tables(rules).team[pos.leader]]
        mine = Solver(rules, side, side).value(pos)
        theirs = dds_tricks(pos.hands, pos.leader)
        agree += mine == theirs
        if mine != theirs:
            print(f"  deal {seed}: engine.dd {mine}, DDS {theirs}")
    return {"deals": count, "agree": agree}


def main() -> None:
    meta = artifact.run_metadata()
    figures: dict[str, float | int] = {}
    for players, rules in SIZES.items():
        times: list[float] = []
        nodes: list[float] = []
        for seed in range(DEALS):
            pos = deal(rules, seed)
            start = time.process_time()
            _, searched = solve_deal(rules, pos)
            times.append((time.process_time() - start) * 1000)
            nodes.append(searched)
        key = f"dd.players_{players}"
        figures[f"{key}.deals"] = DEALS
        figures[f"{key}.cpu_ms_p50"] = round(_pct(times, 0.5), 1)
        figures[f"{key}.cpu_ms_p95"] = round(_pct(times, 0.95), 1)
        figures[f"{key}.cpu_ms_max"] = round(max(times), 1)
        figures[f"{key}.nodes_p50"] = int(_pct(nodes, 0.5))
        print(
            f"{players} players, {DEALS} deals: CPU ms p50 {_pct(times, 0.5):.0f}"
            f" p95 {_pct(times, 0.95):.0f} max {max(times):.0f}, nodes p50 {_pct(nodes, 0.5):.0f}",
            flush=True,
        )
    try:
        import endplay  # noqa: F401
    except ImportError:
        print("endplay not installed (it is in the dev group: make install): no DDS cross-check")
    else:
        if 4 not in SIZES:
            print(f"wrote {artifact.record('dd', figures, meta)}")
            return
        checked = bridge_check(min(DEALS, 100))
        figures["dd.bridge.deals"] = checked["deals"]
        figures["dd.bridge.agree"] = checked["agree"]
        print(f"DDS (spades broken): {checked['agree']}/{checked['deals']} deals agree")
    print(f"wrote {artifact.record('dd', figures, meta)}")
