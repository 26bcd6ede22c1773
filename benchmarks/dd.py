"""Double-dummy benchmark: whole deals solved exactly, CPU time per deal, the C kernel
(`engine.ddcore`) and the Python reference (`engine.dd`) in the same run.

    uv run --frozen python -m benchmarks dd
    SPADES_BENCH_DD_DEALS=1000 uv run --frozen python -m benchmarks dd   # the issue's count
    SPADES_BENCH_DD_PLAYERS=4,5 uv run --frozen python -m benchmarks dd   # some table sizes
    SPADES_BENCH_DD_BRIDGE=200 uv run --frozen python -m benchmarks dd    # DDS cross-check

For each table size (four players, then two, three and five, each at its default rules) it
deals ``SPADES_BENCH_DD_DEALS`` (default 100; the count is printed and recorded) random deals
(seeds 0, 1, ...) and solves each from the first lead with the kernel: with four and two
players the tricks of one side (the other's follow, zero-sum), with three and five every
seat's tricks against all the others (one search per seat, not zero-sum). A deal whose search
passes ``SPADES_BENCH_DD_BUDGET`` nodes (default 300 million, about a minute) is stopped and
counted in ``over_budget``, its time kept as measured (so the percentiles are then lower
bounds). Figures (``artifacts/bench.json``): ``dd.players_N.cpu_ms_p50`` / ``_p95`` /
``_max``, ``nodes_p50`` / ``nodes_p95`` (nodes do not depend on the machine's load, CPU
time does), ``deals``, ``over_budget``, and what the kernel's table did
(`engine.ddcore.Solver.stats`, summed over the deals within the budget): ``tt_hit_rate``
(lookups it settled), ``tt_evicted`` (entries dropped from a full class), ``tt_resets``
(times a full table was emptied).

The Python reference solves the first ``SPADES_BENCH_DD_PY_DEALS`` (default 2) of those deals
whose kernel search was small enough for it (under 3 million nodes: a minute or so of
CPython); ``dd.players_N.python_ratio`` is its CPU time over the kernel's on the same deals,
and its values must equal the kernel's.

Another build of the kernel beside this one (``SPADES_BENCH_DD_VERSUS``, the path of its
shared library, e.g. main's, built from a worktree: ``cc -O2 -std=c99 -shared -fPIC -o
/tmp/old.so engine/ddcore.c``): every deal is then solved by both in turn in the same process
(which goes first alternates from deal to deal), their values must agree, and the other's
figures are recorded beside this one's as ``dd.players_N.versus.cpu_ms_p50`` / ``_p95`` /
``_max`` / ``nodes_p50`` / ``nodes_p95``, with ``dd.players_N.versus.cpu_p95_ratio`` (this
kernel's p95 over the other's): on a loaded machine that ratio means more than either figure.

The cross-check against the bridge solver DDS (`endplay`, in the dev group):
``SPADES_BENCH_DD_BRIDGE`` (default 20) full four-player deals with spades broken from the
start, where bridge with spades trumps and Spades play alike: ``dd.bridge.deals`` /
``dd.bridge.agree``.
"""

from __future__ import annotations

import ctypes
import os
import random
import time
from pathlib import Path

from benchmarks import artifact
from engine import dd, ddcore
from engine.dd import Position
from engine.fast import deal_hands
from engine.rules import Ruleset, tables, two_player_default
from engine.state import first_leader

DEALS = int(os.environ.get("SPADES_BENCH_DD_DEALS", "100"))
PY_DEALS = int(os.environ.get("SPADES_BENCH_DD_PY_DEALS", "2"))
BUDGET = int(os.environ.get("SPADES_BENCH_DD_BUDGET", str(300_000_000)))
BRIDGE = int(os.environ.get("SPADES_BENCH_DD_BRIDGE", "20"))
VERSUS = os.environ.get("SPADES_BENCH_DD_VERSUS", "")
"""Another build of the kernel to solve every deal beside this one (its library's path)."""
PY_NODES = 3_000_000
"""Deals whose kernel search passed this many nodes are not given to the Python reference."""
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


def solve_deal(
    rules: Ruleset,
    pos: Position,
    solver: type[ddcore.Solver] | type[dd.Solver] = ddcore.Solver,
    stats: dict[str, int] | None = None,
    library: ctypes.CDLL | None = None,
) -> tuple[tuple[int, ...], int]:
    """Return every side's double-dummy tricks from ``pos`` and the nodes searched (the
    kernel's searches stop at `BUDGET` nodes: `ddcore.OverBudget`); the kernel's table
    counters (`ddcore.STATS`) are added to ``stats``; ``library``: another build of the
    kernel (`ddcore.load_from`)."""
    t = tables(rules)

    def count(each: ddcore.Solver | dd.Solver) -> None:
        if stats is not None and isinstance(each, ddcore.Solver):
            for name, value in each.stats().items():
                stats[name] = stats.get(name, 0) + value

    def make(seats: tuple[int, ...]) -> ddcore.Solver | dd.Solver:
        if solver is ddcore.Solver:
            return ddcore.Solver(rules, seats, seats, budget=BUDGET, library=library)
        return solver(rules, seats, seats)

    if t.players in (2, 4):
        one = make(t.members[0])
        first = one.value(pos)
        count(one)
        return (first, pos.left - first), one.nodes
    values, nodes = [], 0
    for seat in range(t.players):
        each = make((seat,))
        values.append(each.value(pos))
        nodes += each.nodes
        count(each)
    return tuple(values), nodes


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bridge_check(count: int) -> dict[str, int]:
    """Return how many of ``count`` full four-player deals, spades broken, DDS agrees on."""
    from tests.engine.bridge import dds_tricks

    rules = RULES[4]
    t = tables(rules)
    agree = 0
    for seed in range(count):
        pos = deal(rules, seed)
        pos = Position(pos.hands, pos.leader, broken=True)
        side = t.members[t.team[pos.leader]]
        mine = ddcore.Solver(rules, side, side).value(pos)
        theirs = dds_tricks(pos.hands, pos.leader)
        agree += mine == theirs
        if mine != theirs:
            print(f"  deal {seed}: engine.ddcore {mine}, DDS {theirs}")
    return {"deals": count, "agree": agree}


def _versus(
    rules: Ruleset, pos: Position, library: ctypes.CDLL, times: list[float], nodes: list[float]
) -> tuple[int, ...]:
    """Solve ``pos`` with another build of the kernel, adding its CPU ms and nodes."""
    start = time.process_time()
    try:
        values, searched = solve_deal(rules, pos, library=library)
    except ddcore.OverBudget:
        values, searched = (), BUDGET
    times.append((time.process_time() - start) * 1000)
    nodes.append(searched)
    return values


def measure(players: int, rules: Ruleset) -> dict[str, float | int]:
    """Return one table size's figures (and print them)."""
    times: list[float] = []
    nodes: list[float] = []
    over = 0
    stats: dict[str, int] = {}
    small: list[tuple[int, tuple[int, ...], float]] = []
    other = ddcore.load_from(Path(VERSUS)) if VERSUS else None
    other_times: list[float] = []
    other_nodes: list[float] = []
    for seed in range(DEALS):
        pos = deal(rules, seed)
        if other is not None and seed % 2 == 0:
            other_values = _versus(rules, pos, other, other_times, other_nodes)
        start = time.process_time()
        try:
            values, searched = solve_deal(rules, pos, stats=stats)
        except ddcore.OverBudget:
            over += 1
            values, searched = (), BUDGET
        elapsed = time.process_time() - start
        times.append(elapsed * 1000)
        nodes.append(searched)
        if other is not None:
            if seed % 2:
                other_values = _versus(rules, pos, other, other_times, other_nodes)
            if values and other_values and values != other_values:
                raise AssertionError(f"deal {seed}: this kernel {values}, {VERSUS} {other_values}")
        if values and searched <= PY_NODES and len(small) < PY_DEALS:
            small.append((seed, values, elapsed))
    py_time = kernel_time = 0.0
    for seed, values, elapsed in small:
        start = time.process_time()
        reference, _ = solve_deal(rules, deal(rules, seed), dd.Solver)
        py_time += time.process_time() - start
        kernel_time += elapsed
        if reference != values:
            raise AssertionError(f"deal {seed}: Python {reference}, kernel {values}")
    ratio = round(py_time / kernel_time, 1) if kernel_time else 0.0
    key = f"dd.players_{players}"
    print(
        f"{players} players, {DEALS} deals: kernel CPU ms p50 {_pct(times, 0.5):.0f}"
        f" p95 {_pct(times, 0.95):.0f} max {max(times):.0f}, nodes p50 {_pct(nodes, 0.5):.0f}"
        f" p95 {_pct(nodes, 0.95):.0f},"
        f" over the budget {over}; Python reference on {len(small)} deals:"
        f" {py_time:.1f} s, {ratio}x the kernel's",
        flush=True,
    )
    lookups = stats.get("lookups", 0) or 1
    print(
        f"  table (deals within the budget): {stats.get('hits', 0) / lookups:.0%} of lookups"
        f" settled, {stats.get('sure', 0) / lookups:.0%} by sure tricks, entries walked a lookup"
        f" {stats.get('walked', 0) / lookups:.0f}, evicted {stats.get('evicted', 0)}, emptied"
        f" {stats.get('resets', 0)} times",
        flush=True,
    )
    versus: dict[str, float | int] = {}
    if other_times:
        p95 = _pct(other_times, 0.95)
        versus = {
            f"{key}.versus.cpu_ms_p50": round(_pct(other_times, 0.5), 1),
            f"{key}.versus.cpu_ms_p95": round(p95, 1),
            f"{key}.versus.cpu_ms_max": round(max(other_times), 1),
            f"{key}.versus.nodes_p50": int(_pct(other_nodes, 0.5)),
            f"{key}.versus.nodes_p95": int(_pct(other_nodes, 0.95)),
            f"{key}.versus.cpu_p95_ratio": round(_pct(times, 0.95) / p95, 3) if p95 else 0.0,
        }
        print(
            f"  beside {VERSUS} (same deals, in turn): its CPU ms p50"
            f" {_pct(other_times, 0.5):.0f} p95 {p95:.0f} max {max(other_times):.0f}, nodes p50"
            f" {_pct(other_nodes, 0.5):.0f} p95 {_pct(other_nodes, 0.95):.0f}; this kernel's"
            f" p95 over its: {versus[f'{key}.versus.cpu_p95_ratio']}",
            flush=True,
        )
    return {
        **versus,
        f"{key}.deals": DEALS,
        f"{key}.cpu_ms_p50": round(_pct(times, 0.5), 1),
        f"{key}.cpu_ms_p95": round(_pct(times, 0.95), 1),
        f"{key}.cpu_ms_max": round(max(times), 1),
        f"{key}.nodes_p50": int(_pct(nodes, 0.5)),
        f"{key}.nodes_p95": int(_pct(nodes, 0.95)),
        f"{key}.over_budget": over,
        f"{key}.python_deals": len(small),
        f"{key}.python_ratio": ratio,
        f"{key}.tt_hit_rate": round(stats.get("hits", 0) / lookups, 3),
        f"{key}.tt_evicted": stats.get("evicted", 0),
        f"{key}.tt_resets": stats.get("resets", 0),
    }


def main() -> None:
    meta = artifact.run_metadata()
    figures: dict[str, float | int] = {}
    ddcore.load()  # a missing kernel stops here, naming the build
    for players, rules in SIZES.items():
        figures.update(measure(players, rules))
    try:
        import endplay  # noqa: F401
    except ImportError:
        print("endplay not installed (it is in the dev group: make install): no DDS cross-check")
    else:
        if 4 in SIZES and BRIDGE:
            checked = bridge_check(BRIDGE)
            figures["dd.bridge.deals"] = checked["deals"]
            figures["dd.bridge.agree"] = checked["agree"]
            print(f"DDS (spades broken): {checked['agree']}/{checked['deals']} deals agree")
    print(f"wrote {artifact.record('dd', figures, meta)}")
