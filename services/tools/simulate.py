"""`spades simulate`: bots play whole games and the results are summarised.

``--seats strong,baseline,strong,baseline`` names each seat's bot level; the seats
rotate by one every ``games / players`` games (so each level plays every seat and,
with four players, both partnerships), and the summary gives each side's win rate
by the levels sitting there, with a 95% Wilson interval, how the games ended, and
the decision times of each level (CPU time, percentiles). ``--variant NAME`` plays
a named variant of the rule book (several: one row each).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TextIO

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from engine import (
    Command,
    Event,
    GameFinished,
    GameState,
    HandScored,
    InvalidRuleset,
    Ruleset,
    replay,
    seat_name,
)
from engine.bot import Player, play_game
from engine.rules import tables
from engine.search import LEVELS, PLAYOUTS, player
from engine.state import is_nil
from engine.view import SeatView


@dataclass
class Summary:
    """Totals over the simulated games."""

    rules: Ruleset
    games: int = 0
    hands: int = 0
    wins: Counter[int] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    nils: int = 0
    nils_made: int = 0
    bags: int = 0
    moes: int = 0
    moes_made: int = 0
    seats: tuple[str, ...] = ()
    lineups: Counter[str] = field(default_factory=Counter)
    """Games played by each level name (a side's levels joined by '+')."""
    lineup_wins: Counter[str] = field(default_factory=Counter)
    times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def add_lineup(self, levels: tuple[str, ...], winner: int) -> None:
        """Count one game for each side's lineup, and the win for the winner's."""
        team = tables(self.rules).team
        for side in range(self.rules.teams):
            seats = [s for s in range(self.rules.players) if team[s] == side]
            name = "+".join(sorted({levels[s] for s in seats}))
            self.lineups[name] += 1
            self.lineup_wins[name] += side == winner

    def add(self, events: list[Event]) -> None:
        """Add one game's events."""
        self.games += 1
        state = replay([])
        for event in events:
            if isinstance(event, HandScored):
                self.hands += 1
                self._score(state, event)
            elif isinstance(event, GameFinished):
                self.wins[event.winner] += 1
                self.reasons[event.reason] += 1
            state = replay([event], state)

    def _score(self, state: GameState, event: HandScored) -> None:
        t = state.tables
        for side in range(t.teams):
            seats = [s for s in range(t.players) if t.team[s] == side]
            if any(state.moe[s] for s in seats):
                # A Moe contract: no bags, made when it scored its bonus.
                self.moes += 1
                self.moes_made += event.points[side] > 0
                continue
            bidders = [s for s in seats if not is_nil(self.rules, state.bids[s])]
            contract = sum(state.bids[s] for s in bidders)
            made = sum(event.tricks[s] for s in bidders)
            blind = any(state.blind[s] for s in bidders)
            if bidders and made >= contract and not blind:
                self.bags += made - contract
            for s in seats:
                if s not in bidders:
                    self.nils += 1
                    self.nils_made += event.tricks[s] == 0
                    self.bags += event.tricks[s]


VARIANTS: dict[str, dict[str, str | int | bool]] = {
    "ladder": {},
    "two-player": {"players": 2, "blind_nil": False},
    "two-player-draw": {"players": 2, "deal": "draw", "blind_nil": False},
    "cut-throat": {"players": 3},
    "three-jokers": {"players": 3, "jokers": True},
    "five": {"players": 5},
    "five-jokers": {"players": 5, "jokers": True},
    "five-set-zero": {"players": 5, "set_scores_zero": True},
    "jokers": {"jokers": True},
    "jjd-little-willie": {"jokers": True, "deuces_high": True, "little_willie": True},
    "moe": {"moe": True},
    "blind-bids-min-6": {"blind_bids": True, "blind_bid_min": 6},
    "ten-for-two-blind": {
        "ten_for_two_hundred": True,
        "blind_bids": True,
        "ten_for_two_blind": True,
    },
    "boston": {"boston": True},
    "partners-order": {"bidding_order": "partners"},
    "nil-exchange": {"nil_exchange": True, "nil_exchange_deficit": 1},
    "nil-exchange-blind": {"nil_exchange": True, "nil_exchange_peek": False},
    "suicide": {"suicide": True},
    "suicide-forcing": {"suicide": True, "suicide_forcing": True},
    "power-checks": {"power_checks": 3},
    "min-two-each": {"min_bid": 2},
    "team-min-four": {"team_min_bid": 4},
}
"""Named rule sets for `spades simulate --variant NAME`: one per variant of the rule book
(RULES.md's option table), each the ranked ladder changed by these options."""


def variant_rules(name: str, pairs: list[str]) -> Ruleset:
    """Return the ruleset of a named variant with KEY=VALUE options applied on top."""
    if name not in VARIANTS:
        raise InvalidRuleset(f"no variant {name!r}; variants: {', '.join(VARIANTS)}, all")
    return parse_rules(pairs, VARIANTS[name])


def parse_rules(pairs: list[str], base: dict[str, str | int | bool] | None = None) -> Ruleset:
    """Return the ruleset named by KEY=VALUE options (the ranked ladder by default)."""
    options: dict[str, str | int | bool] = dict(base or {})
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise InvalidRuleset(f"expected KEY=VALUE, got {pair!r}")
        options[key] = value
    return Ruleset.from_options(options)


def report(summary: Summary, console: Console) -> None:
    """Print the summary tables."""
    rules = summary.rules
    games = max(summary.games, 1)
    title = f"{summary.games} games, rules {rules.changes() or 'ranked ladder'}"
    table = Table(title=title)
    table.add_column("seat / side")
    table.add_column("win rate", justify="right")
    for side in range(rules.teams):
        if rules.players == 4:
            name = "N+S" if side == 0 else "E+W"
            for seat in (side, side + 2):
                table.add_row(f"seat {seat_name(seat)}", f"{summary.wins[side] / games:.1%}")
        else:
            name = seat_name(side, rules.players)
        table.add_row(f"side {name}", f"{summary.wins[side] / games:.1%}")
    table.add_row("draws", f"{summary.wins[-1] / games:.1%}")
    console.print(table)
    hands = max(summary.hands, 1)
    nil_rate = summary.nils_made / summary.nils if summary.nils else 0.0
    console.print(f"average hands per game: {summary.hands / games:.2f}")
    console.print(f"nil success rate: {nil_rate:.1%} ({summary.nils_made}/{summary.nils})")
    console.print(f"bags per hand (all sides): {summary.bags / hands:.2f}")
    if rules.moe:
        console.print(f"Moe contracts made: {summary.moes_made}/{summary.moes}")
    console.print("game ends: " + ", ".join(f"{k} {v}" for k, v in summary.reasons.most_common()))
    if len(set(summary.seats)) > 1:
        lineup = Table(title="win rate by the levels at a side (seats rotated)")
        for column in ("side's levels", "side-games", "wins", "win rate", "95% interval"):
            lineup.add_column(column, justify="right")
        lineup.add_column("even share", justify="right")
        for name, played in sorted(summary.lineups.items()):
            won = summary.lineup_wins[name]
            lo, hi = wilson(won, played)
            lineup.add_row(
                name,
                str(played),
                str(won),
                f"{won / played:.1%}",
                f"{lo:.1%}-{hi:.1%}",
                f"{1 / rules.teams:.1%}",
            )
        console.print(lineup)
    for level, times in sorted(summary.times.items()):
        ms = sorted(t * 1e3 for t in times)
        console.print(
            f"decision time {level} (CPU ms over {len(ms)} decisions): "
            f"p50 {pct(ms, 50):.2f}, p90 {pct(ms, 90):.2f}, p99 {pct(ms, 99):.2f}, max {ms[-1]:.2f}"
        )


def wilson(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """Return the 95% Wilson score interval of a win rate."""
    if not games:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def pct(sorted_values: list[float], q: float) -> float:
    """Return the q-th percentile (nearest rank) of sorted values."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def parse_seats(text: str, players: int) -> tuple[str, ...]:
    """Return the level of each seat from 'strong,baseline,...' (one name = every seat)."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if len(names) == 1:
        names *= players
    unknown = [n for n in names if n not in LEVELS]
    if unknown:
        raise ValueError(f"unknown bot level {unknown[0]!r}: choose from {', '.join(LEVELS)}")
    if len(names) != players:
        raise ValueError(f"--seats names {len(names)} levels for a {players}-player game")
    return names


def _with_rng(act: object, rng: random.Random) -> Player:
    def bound(v: SeatView) -> Command:
        return act(v, rng)  # type: ignore[operator,no-any-return]

    return bound


def _timed(act: Player, times: list[float]) -> Player:
    def timed(v: SeatView) -> Command:
        start = time.process_time()
        command = act(v)
        if len(v.legal) > 1:
            times.append(time.process_time() - start)
        return command

    return timed


def period(seats: tuple[str, ...]) -> int:
    """Return the smallest seat rotation that gives back the same seating (1..players)."""
    n = len(seats)
    return next(k for k in range(1, n + 1) if all(seats[(s - k) % n] == seats[s] for s in range(n)))


def seating(seats: tuple[str, ...], i: int, seed: int) -> tuple[tuple[str, ...], int]:
    """Return game ``i``'s levels per seat and its seed (duplicate rotation).

    Each seed is played once per distinct rotation of the seats, one after the other:
    the same deals with the levels moved round the table, so the luck of the cards
    cancels out between the games of a seed, and any run of whole seeds is balanced.
    """
    n = len(seats)
    k = period(seats)
    shift = i % k
    return tuple(seats[(s - shift) % n] for s in range(n)), seed + i // k


_BOTS: dict[tuple[str, int, float | None], Player] = {}


def play_one(
    rules: Ruleset,
    i: int,
    seed: int,
    seats: tuple[str, ...],
    playouts: int,
    seconds: float | None,
) -> tuple[list[Event], tuple[str, ...], int, dict[str, list[float]]]:
    """Return one game's events, levels per seat, winner and decision times per level."""
    levels, game_seed = seating(seats, i, seed)
    rng = random.Random(f"{seed + i}/bots")
    times: dict[str, list[float]] = defaultdict(list)
    players = []
    for level in levels:
        key = (level, playouts, seconds)
        if key not in _BOTS:
            _BOTS[key] = player(level, playouts=playouts, seconds=seconds)  # type: ignore[assignment]
        players.append(_timed(_with_rng(_BOTS[key], rng), times[level]))
    events, state = play_game(rules, game_seed, players)
    return events, levels, state.winner, dict(times)


def _play_star(
    args: tuple[Ruleset, int, int, tuple[str, ...], int, float | None],
) -> tuple[list[Event], tuple[str, ...], int, dict[str, list[float]]]:
    return play_one(*args)


def simulate(
    rules: Ruleset,
    games: int,
    seed: int,
    progress: Progress | None = None,
    *,
    seats: tuple[str, ...] = (),
    playouts: int = PLAYOUTS,
    seconds: float | None = None,
    jobs: int = 1,
    log: TextIO | None = None,
) -> Summary:
    """Return the summary of ``games`` bot games of ``rules``.

    ``seats`` names each seat's bot level (default: the baseline everywhere). Each seed
    from ``seed`` on is played once per distinct rotation of the seats (`seating`), so
    with four players ``strong,baseline,strong,baseline`` plays every deal once from
    each side. ``jobs`` > 1 plays games in that many processes (results are added in
    game order, so the summary does not depend on it); ``log`` gets one JSON line per
    finished game, so a long run read while it goes gives every prefix's result.
    """
    seats = seats or ("baseline",) * rules.players
    summary = Summary(rules, seats=seats)
    task = progress.add_task("playing", total=games) if progress else None
    work = [(rules, i, seed, seats, playouts, seconds) for i in range(games)]
    pool = multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else None
    try:
        results = pool.imap(_play_star, work) if pool else map(_play_star, work)
        for i, (events, levels, winner, times) in enumerate(results):
            summary.add(events)
            summary.add_lineup(levels, winner)
            for level, values in times.items():
                summary.times[level] += values
            if log is not None:
                _log_game(log, summary, i, levels, winner)
            if progress and task is not None:
                progress.advance(task)
    finally:
        if pool:
            pool.terminate()
    return summary


def _log_game(log: TextIO, summary: Summary, i: int, levels: tuple[str, ...], winner: int) -> None:
    rates = {name: [summary.lineup_wins[name], played] for name, played in summary.lineups.items()}
    times = {}
    for level, values in summary.times.items():
        ms = sorted(t * 1e3 for t in values)
        times[level] = [round(pct(ms, q), 2) for q in (50, 90, 99)]
    line = {
        "game": i,
        "levels": levels,
        "winner": winner,
        "wins_games": rates,
        "decision_ms_p50_p90_p99": times,
    }
    log.write(json.dumps(line) + "\n")
    log.flush()


def report_variants(summaries: dict[str, Summary], console: Console) -> None:
    """Print one row per variant: games, hands per game and how the games ended."""
    table = Table(title="bot games per variant")
    for column in ("variant", "games", "hands/game", "ends", "bags/hand"):
        table.add_column(column)
    for name, summary in summaries.items():
        games = max(summary.games, 1)
        ends = ", ".join(f"{k} {v}" for k, v in sorted(summary.reasons.items()))
        table.add_row(
            name,
            str(summary.games),
            f"{summary.hands / games:.1f}",
            ends,
            f"{summary.bags / max(summary.hands, 1):.2f}",
        )
    console.print(table)


def run(args: argparse.Namespace) -> int:
    """Play ``args.games`` bot games from ``args.seed`` and print the summary."""
    console = Console()
    names: list[str] = list(getattr(args, "variant", []) or [])
    if "all" in names:
        names = list(VARIANTS)
    try:
        if names:
            chosen = {name: variant_rules(name, args.rules) for name in names}
        else:
            chosen = {"": parse_rules(args.rules)}
    except InvalidRuleset as error:
        print(f"spades simulate: {error}", file=sys.stderr)
        return 2
    try:
        seats = {name: parse_seats(args.seats, rules.players) for name, rules in chosen.items()}
    except ValueError as error:
        print(f"spades simulate: {error}", file=sys.stderr)
        return 2
    summaries: dict[str, Summary] = {}
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115
    with (
        log or contextlib.nullcontext(),
        Progress(console=console, disable=args.no_progress, transient=True) as progress,
    ):
        for name, rules in chosen.items():
            summaries[name] = simulate(
                rules,
                args.games,
                args.seed,
                progress,
                seats=seats[name],
                playouts=args.playouts or PLAYOUTS,
                seconds=args.seconds,
                jobs=max(1, args.jobs),
                log=log,
            )
    if len(summaries) > 1:
        report_variants(summaries, console)
    else:
        report(next(iter(summaries.values())), console)
    return 0
