"""Engine benchmark: random and bot play (hands/s, events folded/s), whole-game replay,
and OpenSpiel's C++ ``spades`` played the same way in the same run when pyspiel imports.

    uv run --frozen python -m benchmarks engine
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from engine import (
    Event,
    GameState,
    HandScored,
    Ruleset,
    StartGame,
    decide,
    initial_state,
    legal_actions,
    replay,
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


def main() -> None:
    """Print the engine's figures (per wall second and per CPU second of this process)."""
    wall, cpu, random_games = play_for(_random_policy, SECONDS)
    print(f"random play:  {wall:7,.0f} hands/s wall, {cpu:7,.0f} per CPU s (ladder rules)")
    print(f"  fold:       {fold_rate(random_games):9,.0f} events/s (replay of those games)")
    bot_wall, bot_cpu, bot_games = play_for(_bot_policy, SECONDS)
    print(f"baseline bot: {bot_wall:7,.0f} hands/s wall, {bot_cpu:7,.0f} per CPU s (view+choose)")
    print(f"  fold:       {fold_rate(bot_games):9,.0f} events/s")
    ms, count, hands, scores = whole_game_replay()
    print(f"replay of a whole game to 500: {ms:.2f} ms ({count} events, {hands} hands, {scores})")
    theirs = open_spiel_rate(SECONDS)
    if theirs is None:
        print("open_spiel: not installed (pip install open-spiel to compare)")
        return
    print(f"open_spiel:   {theirs[0]:7,.0f} hands/s wall, {theirs[1]:7,.0f} per CPU s (spades)")
    print(f"ratio engine/open_spiel: {wall / theirs[0]:.2f}x wall, {cpu / theirs[1]:.2f}x CPU")


if __name__ == "__main__":
    main()
