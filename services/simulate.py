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
    moes: int = 0
    moes_made: int = 0

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


def simulate(rules: Ruleset, games: int, seed: int, progress: Progress | None = None) -> Summary:
    """Return the summary of ``games`` bot games of ``rules`` from seeds ``seed``, ``seed+1``..."""
    summary = Summary(rules)
    task = progress.add_task("playing", total=games) if progress else None
    for i in range(games):
        events, _ = play_game(rules, seed + i)
        summary.add(events)
        if progress and task is not None:
            progress.advance(task)
    return summary


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
    summaries: dict[str, Summary] = {}
    with Progress(console=console, disable=args.no_progress, transient=True) as progress:
        for name, rules in chosen.items():
            summaries[name] = simulate(rules, args.games, args.seed, progress)
    if len(summaries) > 1:
        report_variants(summaries, console)
    else:
        report(next(iter(summaries.values())), console)
    return 0
