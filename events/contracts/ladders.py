"""Ladders: a named, validated ruleset with its clock, rating and seasons, from one file.

An operator defines every ladder in one TOML file (`SPADES_LADDERS` names it; the default is
`events/contracts/ladders.toml`, shipped beside this module). Matchmaking (a queue and a lease
per ladder), the table (a match's rules and turn clock), rating (ratings, seasons and
leaderboards per ladder) and the gateway (`GET /api/ladders`) all read it through this
module, so adding a ladder is an edit of that file and a restart, no code. Each ladder::

    [[ladder]]
    name = "cut-throat"          # 1..32 of a-z 0-9 - _ ; unique; not "practice"/"casual"
    title = "Cut-throat"          # shown to people (default: the name)
    variant = "cut-throat"        # a rule book variant (engine.presets), default "standard"
    rated = true                  # ratings move (default true)
    turn_seconds = 25             # the turn clock (default: the table's SPADES_TURN_SECONDS)
    season_days = 30              # season length; 0 (default): one season that never ends
    season_start = "2026-01-01"   # when season 1 began (UTC midnight)
    season_reset = "soft"         # at a season's end: "continue" (default) or "soft"
    [ladder.rules]                # any option of the rule book, over the variant's
    target = 300

A file that does not parse, a ladder whose rules are no valid table (`engine.Ruleset`: the
bounds and every dependency), an unknown key or a duplicate name makes `load` raise
`LadderFileError` whose one line names the file, the ladder and the problem; every service
checks the file before it starts (`services.runtime.service.run_service`) and exits with it.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from events.errors import Refusal

__all__ = [
    "DEFAULT_FILE",
    "LADDERS_ENV",
    "Ladder",
    "LadderFileError",
    "UnknownLadder",
    "configure",
    "configured",
    "ladder_of",
    "load",
    "rule_book",
    "rule_problem",
    "rules_in_words",
    "ruleset_of",
]

LADDERS_ENV = "SPADES_LADDERS"
DEFAULT_FILE = Path(__file__).with_name("ladders.toml")
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
RESERVED = frozenset({"practice", "casual"})
"""`TableOpened.ladder` of unrated tables opened outside the queues: never a ladder's name."""
RESETS = ("continue", "soft")
SOFT_KEEP = 0.5
"""A soft reset keeps this share of a rating's distance from the start (mu 25)."""
_KEYS = frozenset(
    {
        "name",
        "title",
        "description",
        "variant",
        "rated",
        "turn_seconds",
        "season_days",
        "season_start",
        "season_reset",
        "rules",
    }
)


class LadderFileError(Refusal, ValueError):
    """The ladders file cannot be used; the message is one line naming the problem."""

    def __init__(self, message: str) -> None:
        super().__init__("bad_ladders_file", message)


class UnknownLadder(LookupError):
    """No ranked ladder has this name."""

    code = "unknown_ladder"


@dataclass(frozen=True, slots=True)
class Ladder:
    """One ladder of the file: its rules, clock, rating and seasons."""

    name: str
    title: str
    description: str
    variant: str
    rules: engine.Ruleset
    rated: bool = True
    turn_seconds: float | None = None
    """The turn clock; None: the table's own setting (SPADES_TURN_SECONDS)."""
    season_days: int = 0
    season_start: float = 0.0
    """Unix seconds season 1 began."""
    season_reset: str = "continue"

    def season_at(self, now: float) -> int:
        """Return the season running at ``now`` (1 before or without seasons)."""
        if self.season_days <= 0 or now < self.season_start:
            return 1
        return int((now - self.season_start) // (self.season_days * 86_400.0)) + 1

    def season_bounds(self, season: int) -> tuple[float, float]:
        """Return when ``season`` starts and ends (unix seconds; end inf without seasons)."""
        if self.season_days <= 0:
            return (self.season_start, math.inf)
        length = self.season_days * 86_400.0
        return (self.season_start + (season - 1) * length, self.season_start + season * length)

    def words(self) -> list[str]:
        """Return the ladder's rules in words, one sentence each."""
        return rules_in_words(self.rules)


def _problem(where: str, what: str) -> LadderFileError:
    return LadderFileError(f"{where}: {what}")


def _ladder(where: str, raw: Any, index: int) -> Ladder:
    if not isinstance(raw, dict):
        raise _problem(where, f"ladder {index} is not a table ([[ladder]])")
    name = raw.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise _problem(where, f"ladder {index}: name must be 1..32 of a-z 0-9 - _, not {name!r}")
    at = f"ladder {name!r}"
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise _problem(where, f"{at}: unknown key {unknown[0]!r}; keys: {', '.join(sorted(_KEYS))}")
    if name in RESERVED:
        raise _problem(where, f"{at}: the name is reserved for unrated tables")
    from engine import presets

    variants = {p.name: p for p in presets.PRESETS}
    variant = raw.get("variant", "standard")
    if variant not in variants:
        raise _problem(where, f"{at}: unknown variant {variant!r}; variants: {', '.join(variants)}")
    options = raw.get("rules", {})
    if not isinstance(options, dict):
        raise _problem(where, f"{at}: rules must be a table of options")
    try:
        rules = engine.Ruleset.from_options({**variants[variant].options, **options})
    except (engine.InvalidRuleset, TypeError) as exc:
        raise _problem(where, f"{at}: invalid ruleset: {exc}") from None
    rated, turn = raw.get("rated", True), raw.get("turn_seconds")
    if not isinstance(rated, bool):
        raise _problem(where, f"{at}: rated takes true or false, not {rated!r}")
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int | float)):
        raise _problem(where, f"{at}: turn_seconds takes a number, not {turn!r}")
    if turn is not None and not 1 <= turn <= 3600:
        raise _problem(where, f"{at}: turn_seconds must be between 1 and 3600, not {turn}")
    days, reset = raw.get("season_days", 0), raw.get("season_reset", "continue")
    if isinstance(days, bool) or not isinstance(days, int) or not 0 <= days <= 3660:
        raise _problem(where, f"{at}: season_days must be a whole number 0..3660, not {days!r}")
    if reset not in RESETS:
        raise _problem(where, f"{at}: season_reset must be one of {', '.join(RESETS)}")
    start = raw.get("season_start", "2026-01-01")
    if isinstance(start, str):
        try:
            start = dt.date.fromisoformat(start)
        except ValueError:
            raise _problem(where, f"{at}: season_start is no date: {start!r}") from None
    if isinstance(start, dt.datetime):
        began = (start if start.tzinfo else start.replace(tzinfo=dt.UTC)).timestamp()
    elif isinstance(start, dt.date):
        began = dt.datetime(start.year, start.month, start.day, tzinfo=dt.UTC).timestamp()
    else:
        raise _problem(where, f"{at}: season_start is no date: {start!r}")
    title, description = raw.get("title", name), raw.get("description", "")
    if not isinstance(title, str) or not isinstance(description, str):
        raise _problem(where, f"{at}: title and description are text")
    return Ladder(
        name=name,
        title=title,
        description=description,
        variant=variant,
        rules=rules,
        rated=rated,
        turn_seconds=None if turn is None else float(turn),
        season_days=days,
        season_start=began,
        season_reset=reset,
    )


def load(path: str | Path) -> dict[str, Ladder]:
    """Return the ladders of the file at ``path`` by name, in the file's order; raise
    `LadderFileError` (one line: file, ladder, problem) on anything wrong with it."""
    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise _problem(where, f"cannot read it: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _problem(where, f"not TOML: {exc}") from None
    extra = sorted(set(data) - {"ladder"})
    if extra:
        raise _problem(where, f"unknown key {extra[0]!r}: ladders are [[ladder]] tables")
    raws = data.get("ladder", [])
    if not isinstance(raws, list) or not raws:
        raise _problem(where, "no ladder: define at least one [[ladder]]")
    ladders: dict[str, Ladder] = {}
    for index, raw in enumerate(raws, 1):
        ladder = _ladder(where, raw, index)
        if ladder.name in ladders:
            raise _problem(where, f"duplicate ladder name {ladder.name!r} (ladder {index})")
        ladders[ladder.name] = ladder
    return ladders


_configured: dict[str, Ladder] | None = None


def configure(path: str | Path | None = None) -> dict[str, Ladder]:
    """Load the ladders from ``path`` (default: $SPADES_LADDERS, else the shipped file) and
    make them this process's ladders; raise `LadderFileError` and keep none on a bad file."""
    global _configured
    chosen = path or os.environ.get(LADDERS_ENV) or DEFAULT_FILE
    _configured = load(chosen)
    return _configured


def configured() -> dict[str, Ladder]:
    """Return this process's ladders by name (loaded at the first call if not yet)."""
    return _configured if _configured is not None else configure()


def ladder_of(name: str) -> Ladder:
    """Return the ladder named ``name``; raise `UnknownLadder`."""
    ladders = configured()
    try:
        return ladders[name]
    except KeyError:
        raise UnknownLadder(
            f"no ladder named {name!r}; ladders: {', '.join(sorted(ladders))}"
        ) from None


def ruleset_of(ladder: str) -> engine.Ruleset:
    """Return the ruleset of ladder ``ladder``."""
    return ladder_of(ladder).rules


_LEADS = {
    "no_spade": "the first lead is any card but a spade",
    "two_of_clubs": "the holder of the 2♣ leads it",
    "any": "the first lead is any card",
    "lowest_club": "everyone plays his lowest club to the first trick",
}


def rules_in_words(rules: engine.Ruleset) -> list[str]:
    """Return a ruleset in words: who plays, how the game ends, bidding, scoring, the deck."""
    r = rules
    if r.players == 4:
        seats = "Four players in two partnerships (North-South against East-West)."
    elif r.players == 2:
        seats = "Two players, heads-up" + (", drawing from the stock." if r.deal == "draw" else ".")
    else:
        seats = f"{r.players} players, each for himself ({r.tricks_per_hand} cards each)."
    words = [
        seats,
        f"First to {r.target} points wins"
        + (f"; at {r.mercy} a side loses at once" if r.mercy else "")
        + f"; after {r.hand_cap} hands the higher score wins.",
    ]
    if r.nil_allowed:
        nil = f"Nil scores ±{r.nil_value}"
        if r.blind_nil:
            nil += f"; blind nil ±{2 * r.nil_value} when {r.blind_nil_deficit} or more behind"
            if r.blind_nil_exchange and r.players == 4:
                nil += f", with {r.blind_nil_exchange} cards exchanged"
        words.append(nil + ".")
    else:
        words.append("No nil: a bid of 0 is a plain contract.")
    if r.bags:
        words.append(f"Every {r.bag_limit} bags cost {r.bag_penalty} points.")
    else:
        words.append("Bags off: overtricks score a point each, no penalty.")
    deck = []
    if r.jokers:
        deck.append("Big and Little Joker are the top trumps")
    if r.deuces_high:
        deck.append("the deuces are high trumps")
    if deck:
        words.append("; ".join(deck).capitalize() + ".")
    words.append(_LEADS.get(r.first_lead, r.first_lead).capitalize() + ".")
    extras = {
        "suicide": "Suicide: in each partnership one partner bids nil, the other at least 4.",
        "moe": "Big and Little Moe may be bid (8 or 6 tricks in a row).",
        "ten_for_two_hundred": "A partnership contract of ten or more, made, scores 200.",
        "boston": "Boston: all 13 tricks bid and made wins the game.",
        "blind_bids": "Blind bids score double when made.",
        "little_willie": "Little Willie: a trick won with the 2♣ counts two.",
        "set_scores_zero": "A set contract scores 0.",
        "nil_exchange": "A nil bidder swaps a card with his partner.",
    }
    words += [text for option, text in extras.items() if getattr(r, option)]
    if r.team_min_bid:
        words.append(f"A partnership bids at least {r.team_min_bid}.")
    if r.min_bid > 1:
        words.append(f"Every bid but nil is at least {r.min_bid}.")
    if r.power_checks:
        words.append(f"Each player's first {r.power_checks} cards are dealt face up.")
    return words


def rule_problem(options: dict[str, object]) -> str:
    """Return why practice ``options`` make no valid table, "" when they do: the check the
    table itself applies (`engine.Ruleset.from_options`: bounds, then every dependency)."""
    try:
        engine.Ruleset.from_options(options)  # type: ignore[arg-type]
    except (engine.InvalidRuleset, TypeError) as exc:
        return str(exc)
    return ""


def rule_book() -> dict[str, object]:
    """Return what a rules form needs from the engine: every option's default, the bounds of
    the whole-number ones, and the rule book's named variants (`engine.presets.PRESETS`)."""
    from engine import presets, rules

    return {
        "defaults": engine.ranked_default().to_dict(),
        "bounds": {name: list(bound) for name, bound in rules.BOUNDS.items()},
        "other_bound": list(rules.OTHER_BOUND),
        "presets": [
            {
                "name": p.name,
                "label": p.label,
                "description": p.description,
                "rules": dict(p.options),
            }
            for p in presets.PRESETS
        ],
    }
