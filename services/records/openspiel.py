"""Each hand of a finished game as OpenSpiel ``spades`` action sequences (research export).

OpenSpiel's ``spades`` is one hand of partnership spades: 52 chance actions deal the deck
(the card of history index ``i`` goes to player ``i mod 4``), then four bids (action
``52 + tricks``, 0 = Nil) from player 0, then 52 card actions, player 0 leading. Cards are
numbered as ours (``suit * 13 + rank``, clubs diamonds hearts spades, 2..A). So OpenSpiel
player ``p`` is our seat ``(dealer + 1 + p) mod 4``, and its partnership 0 (players 0 and 2)
is the side of the dealer's left. Each episode also gives, per OpenSpiel partnership, the
scores before the hand, the hand's points (bag penalties included) and the scores after: the
released ``open_spiel`` (2.0.2) starts every episode at 0-0 with no bags, so its returns equal
``points`` only where no earlier bags count.

It applies to the ladder's standard rules only: four players, the plain 52-card deck dealt
13 each, nil worth 100, bags of 10 costing 100, any non-spade first lead, no blind bids,
team minimum, 10-for-200, Boston or suicide. A game under other rules is skipped whole; in a
game that applies, a hand with a blind nil (and its card exchange) is skipped, since OpenSpiel
has no blind nil, and so is a hand where a seat led a spade after spades were broken while it
held another suit: OpenSpiel's spades (open_spiel 2.0.2, and its source to date) never sets
its "spades broken" flag, so it refuses that lead. Every skip is reported with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import engine
from events.contracts import game as wire

BID_BASE = 52
LED = (
    "a spade led (spades broken) by a seat holding another suit: OpenSpiel's spades never"
    " marks spades broken, so it allows a spade lead only from a hand of spades alone"
)


def rules_skip_reason(rules: engine.Ruleset) -> str | None:
    """Return why OpenSpiel's spades cannot play these rules, or None when it can."""
    standard = engine.Ruleset()
    checks = {
        "players": 4,
        "deal": "deal",
        "jokers": False,
        "deuces_high": False,
        "nil_allowed": True,
        "nil_value": 100,
        "bags": True,
        "bag_limit": 10,
        "bag_penalty": 100,
        "first_lead": standard.first_lead,
        "blind_bids": False,
        "team_min_bid": 0,
        "ten_for_two_hundred": False,
        "boston": False,
        "suicide": False,
    }
    for name, wanted in checks.items():
        if getattr(rules, name) != wanted:
            return f"{name}={getattr(rules, name)!r} (OpenSpiel plays {name}={wanted!r})"
    return None


def hands_of(
    game_id: str, events: Sequence[wire.GameEvent]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return (the game's hands as OpenSpiel episodes, the hands or game skipped and why)."""
    started = next(e for e in events if isinstance(e, wire.GameStarted))
    rules = engine.Ruleset.from_options(dict(started.rules))
    reason = rules_skip_reason(rules)
    if reason is not None:
        return [], [{"game_id": game_id, "hand": None, "reason": f"rules: {reason}"}]
    episodes: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    before = engine.initial_state()
    current: dict[str, Any] | None = None
    order: list[int] = []
    for _, engine_event, after in wire.steps(events):
        match engine_event:
            case engine.HandDealt(hand=hand, dealer=dealer, hands=dealt):
                order = [(dealer + 1 + p) % 4 for p in range(4)]
                side0 = engine.team_of(order[0], 4)
                deal = [dealt[order[i % 4]][i // 4] for i in range(52)]
                current = {
                    "game_id": game_id,
                    "hand": hand,
                    "seats": order,
                    "scores_before": [before.scores[side0], before.scores[1 - side0]],
                    "actions": deal,
                }
            case engine.BlindNilDeclared() | engine.CardsPassed() | engine.BidPlaced(blind=True):
                if current is not None:
                    skipped.append(
                        {"game_id": game_id, "hand": current["hand"], "reason": "a blind bid"}
                    )
                current = None
            case engine.BidPlaced(tricks=tricks) if current is not None:
                current["actions"].append(BID_BASE + tricks)
            case engine.CardPlayed(seat=seat, card=card) if current is not None:
                held = before.hands[seat]
                if (
                    not before.trick
                    and card // 13 == engine.SPADES
                    and any(c // 13 != engine.SPADES for c in held)
                ):
                    skipped.append({"game_id": game_id, "hand": current["hand"], "reason": LED})
                    current = None
                else:
                    current["actions"].append(card)
            case engine.HandScored(tricks=tricks, points=points, scores=scores) if (
                current is not None
            ):
                side0 = engine.team_of(order[0], 4)
                current["tricks"] = [tricks[s] for s in order]
                current["points"] = [points[side0], points[1 - side0]]
                current["scores_after"] = [scores[side0], scores[1 - side0]]
                episodes.append(current)
                current = None
        before = after
    return episodes, skipped
