"""`spades simulate`: baseline bots play whole games and the results are summarised."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from engine import (
    Event,
    GameFinished,
    GameState,
    HandScored,
    InvalidRuleset,
    Ruleset,
    replay,
    seat_name,
)
from engine.bot import play_game
from engine.state import is_nil


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


def parse_rules(pairs: list[str]) -> Ruleset:
    """Return the ruleset named by KEY=VALUE options (the ranked ladder by default)."""
    options: dict[str, str | int | bool] = {}
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
    console.print("game ends: " + ", ".join(f"{k} {v}" for k, v in summary.reasons.most_common()))


def run(args: argparse.Namespace) -> int:
    """Play ``args.games`` bot games from ``args.seed`` and print the summary."""
    console = Console()
    try:
        rules = parse_rules(args.rules)
    except InvalidRuleset as error:
        print(f"spades simulate: {error}", file=sys.stderr)
        return 2
    summary = Summary(rules)
    with Progress(console=console, disable=args.no_progress, transient=True) as progress:
        task = progress.add_task("playing", total=args.games)
        for i in range(args.games):
            events, _ = play_game(rules, args.seed + i)
            summary.add(events)
            progress.advance(task)
    report(summary, console)
    return 0
