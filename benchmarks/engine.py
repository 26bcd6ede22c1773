"""Engine benchmark: random and bot play (hands/s, events folded/s), whole-game replay,
the private fast path the search plays on (`engine.fast`), the searching bot's decision
times, and OpenSpiel's C++ ``spades`` played the same way in the same run when pyspiel
imports (`make bench` installs it: the ``bench`` dependency group).

    uv run --frozen --group bench python -m benchmarks engine

Figures are also merged into ``artifacts/bench.json`` (other benchmarks add their keys):
``engine.hands_per_cpu_s`` (random hands through the fast path: deal, random bids, random
legal cards, the engine's scoring), ``engine.public_hands_per_cpu_s`` (the same through
`decide`/`apply`), ``engine.openspiel_hands_per_cpu_s`` and their ratio, and
``bots.strong_decision_ms_p50/p90/p99`` (CPU ms per card at the default budget) beside
``bots.baseline_decision_us_p50/p90/p99`` (µs) on the same cards and their ratio at p50
``bots.strong_over_baseline_p50``: what a seat taken over at a rated table would cost
if it got the strong bot instead of the baseline.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from benchmarks import artifact
from engine import (
    Event,
    GameState,
    HandScored,
    Ruleset,
    StartGame,
    decide,
    fast,
    initial_state,
    legal_actions,
    replay,
    search,
    view,
)
from engine.bot import choose, play_game

SECONDS = 2.0
RULES = Ruleset()
Policy = Callable[[GameState, random.Random], object]


def _random_policy(state: GameState, rng: random.Random) -> object:
    return rng.choice(legal_actions(state, state.turn))


def _bot_policy(state: GameState, rng: random.Random) -> object:
    return choose(view(state, state.turn))


def play_for(policy: Policy, seconds: float) -> tuple[float, float, list[list[Event]]]:
    """Return (hands per wall second, per CPU second, the games' events) of ``policy``."""
    rng = random.Random(1)
    games: list[list[Event]] = []
    hands = 0
    seed = 0
    start, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        events = decide(initial_state(), StartGame(RULES, seed))
        state = replay(events)
        while state.phase != "over":
            new = decide(state, policy(state, rng))  # type: ignore[arg-type]
            events += new
            state = replay(new, state)
            if len(new) > 2:
                hands += sum(isinstance(e, HandScored) for e in new)
        games.append(events)
        seed += 1
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return hands / wall, hands / cpu, games


def fold_rate(games: list[list[Event]]) -> float:
    """Return events folded per second replaying ``games`` (best of three passes)."""
    count = sum(len(g) for g in games)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for events in games:
            replay(events)
        best = min(best, time.perf_counter() - start)
    return count / best


def whole_game_replay() -> tuple[float, int, int, tuple[int, ...]]:
    """Return (best ms, events, hands, scores) replaying a bot game that reached 500."""
    seed = 0
    while True:
        events, state = play_game(RULES, seed)
        if state.reason == "target":
            break
        seed += 1
    best = float("inf")
    for _ in range(50):
        start = time.perf_counter()
        replay(events)
        best = min(best, time.perf_counter() - start)
    return best * 1e3, len(events), state.hand, state.scores


def open_spiel_rate(seconds: float) -> tuple[float, float] | None:
    """Return OpenSpiel ``spades`` random-play hands per wall and CPU second, or None."""
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        return None
    game = pyspiel.load_game("spades")
    rng = random.Random(1)
    hands = 0
    start, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        # One OpenSpiel spades game is one hand: 52 chance deals, 4 bids, 52 cards.
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
        hands += 1
    return hands / (time.perf_counter() - start), hands / (time.process_time() - cpu)


def fast_rate(seconds: float) -> tuple[float, float]:
    """Return random hands per wall and CPU second through the private fast path."""
    rng = random.Random(1)
    hands = 0
    start, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        fast.random_hand(RULES, rng)
        hands += 1
    return hands / (time.perf_counter() - start), hands / (time.process_time() - cpu)


def strong_decisions(count: int = 40) -> tuple[list[float], list[float]]:
    """Return the CPU ms per card of the searching bot at its default budget and of the
    baseline on the same views (the bot a rated table seats after timeouts), each sorted."""
    strong: list[float] = []
    baseline: list[float] = []
    seed = 0
    while len(strong) < count:
        state = replay(decide(initial_state(), StartGame(RULES, seed)))
        rng = random.Random(seed)
        while state.phase != "over" and state.hand == 1:
            v = view(state, state.turn)
            if state.phase == "play" and len(v.legal) > 1 and rng.random() < 0.25:
                start = time.process_time()
                for _ in range(BASELINE_REPEAT):
                    choose(v)
                baseline.append((time.process_time() - start) * 1e3 / BASELINE_REPEAT)
                start = time.process_time()
                command = search.choose(v)  # the playout budget alone: CPU, not wall
                strong.append((time.process_time() - start) * 1e3)
            else:
                command = choose(v)
            state = replay(decide(state, command), state)
        seed += 1
    return sorted(strong[:count]), sorted(baseline[:count])


BASELINE_REPEAT = 50
"""The baseline decides in tens of microseconds: timed over this many calls per view."""


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q / 100 * len(values)))]


def main() -> None:
    """Print the engine's figures (per wall second and per CPU second of this process)."""
    meta = artifact.run_metadata()
    figures: dict[str, float] = {}
    fast_wall, fast_cpu = fast_rate(SECONDS)
    print(
        f"fast path:    {fast_wall:7,.0f} hands/s wall, {fast_cpu:7,.0f} per CPU s"
        " (random hands, engine.fast: what the search plays on)"
    )
    figures["engine.hands_per_cpu_s"] = fast_cpu
    wall, cpu, random_games = play_for(_random_policy, SECONDS)
    figures["engine.public_hands_per_cpu_s"] = cpu
    print(f"random play:  {wall:7,.0f} hands/s wall, {cpu:7,.0f} per CPU s (ladder rules)")
    print(f"  fold:       {fold_rate(random_games):9,.0f} events/s (replay of those games)")
    bot_wall, bot_cpu, bot_games = play_for(_bot_policy, SECONDS)
    print(f"baseline bot: {bot_wall:7,.0f} hands/s wall, {bot_cpu:7,.0f} per CPU s (view+choose)")
    print(f"  fold:       {fold_rate(bot_games):9,.0f} events/s")
    ms, count, hands, scores = whole_game_replay()
    print(f"replay of a whole game to 500: {ms:.2f} ms ({count} events, {hands} hands, {scores})")
    times, cheap = strong_decisions()
    p50, p90, p99 = (_pct(times, q) for q in (50, 90, 99))
    print(
        f"strong bot:   p50 {p50:.1f} ms, p90 {p90:.1f} ms, p99 {p99:.1f} ms, max {times[-1]:.1f}"
        f" CPU per card ({len(times)} cards, {search.PLAYOUTS} playouts each;"
        f" services also cap it at {search.SECONDS * 1e3:.0f} ms wall)"
    )
    b50, b90, b99 = (_pct(cheap, q) for q in (50, 90, 99))
    print(
        f"baseline bot: p50 {b50 * 1e3:.0f} us, p90 {b90 * 1e3:.0f} us, p99 {b99 * 1e3:.0f} us"
        " CPU per card"
        f" (same cards; strong/baseline at p50: {p50 / b50:,.0f}x)"
    )
    figures.update(
        {
            "bots.strong_decision_ms_p50": p50,
            "bots.strong_decision_ms_p90": p90,
            "bots.strong_decision_ms_p99": p99,
            "bots.baseline_decision_us_p50": b50 * 1e3,
            "bots.baseline_decision_us_p90": b90 * 1e3,
            "bots.baseline_decision_us_p99": b99 * 1e3,
            "bots.strong_over_baseline_p50": p50 / b50,
        }
    )
    theirs = open_spiel_rate(SECONDS)
    if theirs is None:
        print("open_spiel: not installed (make bench installs it: uv sync --group bench)")
        print(f"wrote {artifact.record('engine', figures, meta)}")
        return
    print(f"open_spiel:   {theirs[0]:7,.0f} hands/s wall, {theirs[1]:7,.0f} per CPU s (spades)")
    print(
        f"ratio fast path/open_spiel: {fast_cpu / theirs[1]:.2f}x CPU;"
        f" public API/open_spiel: {cpu / theirs[1]:.2f}x CPU"
    )
    figures["engine.openspiel_hands_per_cpu_s"] = theirs[1]
    figures["engine.openspiel_ratio"] = fast_cpu / theirs[1]
    figures["engine.public_openspiel_ratio"] = cpu / theirs[1]
    print(f"wrote {artifact.record('engine', figures, meta)}")


if __name__ == "__main__":
    main()
