"""Golden playthroughs: state, legal actions and the action applied, step by step.

Each scenario plays one ruleset from a fixed seed, choosing among the legal actions
with ``random.Random(seed)``; the text is compared with ``golden/<name>.txt`` by
test_golden.py. Regenerate on purpose only, then review the diff::

    uv run --frozen python -m tests.engine.golden --update
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections.abc import Callable
from pathlib import Path

from engine import (
    Command,
    Event,
    GameState,
    PlaceBid,
    Ruleset,
    StartGame,
    cards_str,
    decide,
    initial_state,
    legal_actions,
    replay,
    seat_name,
)

GOLDEN = Path(__file__).with_name("golden")
CARD_FIELDS = {"card", "cards", "kept", "discarded", "hands", "stock", "face_up"}

SCENARIOS: dict[str, tuple[Ruleset, int]] = {
    "ladder": (Ruleset(hand_cap=2), 1),
    "blind_nil_exchange": (Ruleset(blind_nil_deficit=0, hand_cap=1), 2),
    "two_player_draw_lowest_club": (
        Ruleset(players=2, deal="draw", blind_nil=False, first_lead="lowest_club", hand_cap=1),
        3,
    ),
    "three_player_cut_throat": (Ruleset(players=3, hand_cap=1), 4),
    "jokers_deuces_high_boston_ten_for_200": (
        Ruleset(jokers=True, deuces_high=True, boston=True, ten_for_two_hundred=True, hand_cap=1),
        5,
    ),
    "suicide_team_min": (Ruleset(suicide=True, team_min_bid=4, hand_cap=1), 6),
    "blind_bids_bags_off": (
        Ruleset(blind_bids=True, blind_bid_deficit=0, blind_nil=False, bags=False, hand_cap=1),
        7,
    ),
    "two_of_clubs_nil_50": (Ruleset(first_lead="two_of_clubs", nil_value=50, hand_cap=1), 8),
    "no_nil_zero_is_a_bid_any_lead": (
        Ruleset(nil_allowed=False, blind_nil=False, min_bid=0, first_lead="any", hand_cap=1),
        9,
    ),
    "five_players_jokers": (Ruleset(players=5, jokers=True, hand_cap=1), 10),
    "five_players_set_scores_zero": (Ruleset(players=5, set_scores_zero=True, hand_cap=1), 11),
    "big_little_moe": (Ruleset(moe=True, hand_cap=2), 28),
    "three_player_jokers": (Ruleset(players=3, jokers=True, hand_cap=1), 13),
    "jjd_little_willie_power_checks": (
        Ruleset(jokers=True, deuces_high=True, little_willie=True, power_checks=2, hand_cap=1),
        14,
    ),
    "suicide_forcing_nil_exchange_partners_order": (
        Ruleset(
            suicide=True,
            suicide_forcing=True,
            nil_exchange=True,
            nil_exchange_peek=False,
            bidding_order="partners",
            hand_cap=1,
        ),
        15,
    ),
    "blind_ten_for_two": (
        Ruleset(
            blind_bids=True,
            blind_bid_deficit=0,
            blind_bid_min=6,
            blind_nil=False,
            ten_for_two_hundred=True,
            ten_for_two_blind=True,
            hand_cap=1,
        ),
        16,
    ),
}


def _moe_bid(command: Command) -> bool:
    return isinstance(command, PlaceBid) and command.moe


def _nil_bid(command: Command) -> bool:
    return isinstance(command, PlaceBid) and command.tricks == 0 and not command.blind


def _blind_bid(command: Command) -> bool:
    return isinstance(command, PlaceBid) and command.blind and command.tricks <= 6


PREFER: dict[str, Callable[[Command], bool]] = {
    "big_little_moe": _moe_bid,
    "suicide_forcing_nil_exchange_partners_order": _nil_bid,
    "blind_ten_for_two": _blind_bid,
}
"""Scenarios whose variant random play would rarely reach: the legal actions this
predicate accepts are chosen among first (still with the scenario's rng)."""


def _value(name: str, value: object) -> str:
    if name in CARD_FIELDS:
        if isinstance(value, int):
            return cards_str([value])
        if isinstance(value, tuple) and value and isinstance(value[0], tuple):
            return " | ".join(cards_str(h) for h in value)
        if isinstance(value, tuple):
            return cards_str(value)  # type: ignore[arg-type]
    if isinstance(value, Ruleset):
        return repr(value.changes())
    return repr(value)


OPTIONAL_FIELDS = {"face_up", "moe", "server_seed", "contributors", "scheme", "commitment"}
"""Fields added after the first golden files: written only when not at their default."""


def item_str(item: Command | Event) -> str:
    """Return a command or event with its cards named, e.g. ``PlayCard(seat=1, card=QS)``."""
    fields = ", ".join(
        f"{f.name}={_value(f.name, getattr(item, f.name))}"
        for f in dataclasses.fields(item)
        if f.name not in OPTIONAL_FIELDS or getattr(item, f.name) != f.default
    )
    return f"{type(item).__name__}({fields})"


def state_str(state: GameState) -> str:
    """Return the full state (hidden cards included) as a few lines of text."""
    n = state.tables.players
    seats = range(n)
    lines = [
        f"phase {state.phase} | hand {state.hand} | dealer {seat_name(state.dealer, n)}"
        f" | turn {seat_name(state.turn, n) if state.turn >= 0 else '-'}",
        "hands: " + " / ".join(f"{seat_name(s, n)} {cards_str(state.hands[s])}" for s in seats),
        "bids: "
        + " ".join(
            f"{seat_name(s, n)}={'-' if state.bids[s] < 0 else state.bids[s]}"
            f"{'b' if state.blind[s] else ''}{'' if state.seen[s] else '?'}"
            for s in seats
        )
        + f" | trick: {cards_str(state.trick) or '-'} (leader {seat_name(state.leader, n)})",
        f"taken {state.taken} | scores {state.scores} | bags {state.bags} | broken {state.broken}",
    ]
    if state.stock:
        lines.append(f"stock: {len(state.stock)} cards, top {cards_str(state.stock[:1])}")
    return "\n".join(lines)


def playthrough(rules: Ruleset, seed: int, prefer: Callable[[Command], bool] | None = None) -> str:
    """Return the golden text of one whole game."""
    rng = random.Random(seed)
    start = StartGame(rules, seed)
    events = decide(initial_state(), start)
    out = [f"# rules {rules.changes()!r} seed {seed}", f"action: {item_str(start)}"]
    out += [f"event: {item_str(e)}" for e in events]
    state = replay(events)
    step = 0
    while state.phase != "over":
        legal = legal_actions(state, state.turn)
        preferred = [c for c in legal if prefer(c)] if prefer else []
        command = rng.choice(preferred or legal)
        new = decide(state, command)
        out.append(f"\n## step {step}")
        out.append(state_str(state))
        out.append("legal: " + ", ".join(item_str(c) for c in legal))
        out.append(f"action: {item_str(command)}")
        out += [f"event: {item_str(e)}" for e in new]
        state = replay(new, state)
        step += 1
    out.append(f"\n## over: winner {state.winner} ({state.reason}), scores {state.scores}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Check (default) or rewrite (--update) every golden file; return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m tests.engine.golden")
    parser.add_argument("--update", action="store_true", help="rewrite the golden files")
    args = parser.parse_args(argv)
    stale = 0
    GOLDEN.mkdir(exist_ok=True)
    for name, (rules, seed) in SCENARIOS.items():
        path = GOLDEN / f"{name}.txt"
        text = playthrough(rules, seed, PREFER.get(name))
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        if args.update:
            path.write_text(text)
            print(f"updated {path}")
        else:
            stale += 1
            print(f"differs: {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
