"""Scoring a finished hand: each side's points, running score, bags and a Boston.

Kept apart from `engine.game` (which decides commands) because scoring is the part of the rule
book with the most options (nil and blind nil, blind bids, ten for two, Boston, Moe runs, Little
Willie, bags) and the part other readers need alone: the fast play path (`engine.fast`) and the
tests of every scoring option call it directly.
"""

from __future__ import annotations

from engine.cards import TWO_OF_CLUBS
from engine.rules import MOES, Ruleset, Tables
from engine.state import GameState, Trick

__all__ = ["score_hand"]


def _runs_and_willies(
    r: Ruleset, t: Tables, tricks: tuple[Trick, ...]
) -> tuple[list[int], list[int]]:
    """Return per side the longest run of tricks taken in a row and the tricks won with 2C."""
    runs = [0] * t.teams
    willies = [0] * t.players
    current_side, current = -1, 0
    n = t.players
    for trick in tricks:
        side = t.team[trick.winner]
        current = current + 1 if side == current_side else 1
        current_side = side
        runs[side] = max(runs[side], current)
        if r.little_willie and trick.cards[(trick.winner - trick.leader) % n] == TWO_OF_CLUBS:
            willies[trick.winner] += 1
    return runs, willies


def score_hand(
    state: GameState, taken: tuple[int, ...], tricks: tuple[Trick, ...] | None = None
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int]:
    """Return (points, scores, bags, Boston-winning side or -1) for a finished hand.

    ``tricks`` is the hand's tricks (default ``state.tricks``); Moe runs and Little
    Willies are read from them.
    """
    r = state.rules
    t = state.tables
    all_bids, all_blind = state.bids, state.blind
    runs: list[int] = []
    willies: list[int] = []
    if r.moe or r.little_willie:
        runs, willies = _runs_and_willies(r, t, state.tricks if tricks is None else tricks)
    nil_allowed = r.nil_allowed
    points: list[int] = []
    scores: list[int] = []
    bags: list[int] = []
    boston_side = -1
    for side, members in enumerate(t.members):
        gained = 0
        new_bags = 0
        contract = made = blind_part = bonus = 0
        bidders = False
        if r.moe and any(state.moe[s] for s in members):
            # A Moe: the side's whole contract is a run of tricks; no bags, no overtricks.
            need = max(all_bids[s] for s in members)
            value = MOES[need]
            gained = value if runs[side] >= need else (0 if r.set_scores_zero else -value)
            points.append(gained)
            scores.append(state.scores[side] + gained)
            bags.append(state.bags[side])
            continue
        for s in members:
            bid = all_bids[s]
            if bid == 0 and nil_allowed:
                # A nil (is_nil): scored on its own; its tricks never help the
                # partner's bid, but they are bags.
                value = r.nil_value * (2 if all_blind[s] else 1)
                gained += value if taken[s] == 0 else -value
                gained += taken[s]
                new_bags += taken[s]
            else:
                bidders = True
                contract += bid
                made += taken[s]
                if willies:
                    # Little Willie: a trick won with 2C counts twice toward the contract.
                    bonus += willies[s]
                if all_blind[s]:
                    blind_part += bid
        if bidders:
            boston = r.boston and contract == t.tricks
            if made + bonus >= contract:
                ten = r.ten_for_two_hundred and contract >= 10
                if boston:
                    boston_side = side
                    gained += 10 * contract
                elif ten and blind_part == contract and r.ten_for_two_blind:
                    # Ten for two, bid blind: 400, and blind bids count no overtricks.
                    gained += 400
                elif blind_part:
                    # Blind bids: 20 per blind trick, no points and no bags for overtricks;
                    # a ten for two with a blind part never scores below the seen one.
                    value = 10 * contract + 10 * blind_part
                    if ten and r.ten_for_two_part_blind == "best":
                        value = max(
                            value, 200 if r.ten_for_two_scoring == "flat" else 20 * contract
                        )
                    gained += value
                elif ten:
                    # The rule book: a partnership bid of ten or more, made, scores 200.
                    gained += 200 if r.ten_for_two_scoring == "flat" else 20 * contract
                else:
                    gained += 10 * contract
                if not blind_part:
                    # Overtricks are real tricks only: a Willie's extra trick is no bag.
                    over = max(0, made - contract)
                    gained += over
                    new_bags += over
            elif boston:
                gained -= 250
            elif not r.set_scores_zero:
                gained -= 10 * contract
        total_bags = state.bags[side]
        if r.bags:
            total_bags += new_bags
            while total_bags >= r.bag_limit:
                gained -= r.bag_penalty
                total_bags -= r.bag_limit
        points.append(gained)
        scores.append(state.scores[side] + gained)
        bags.append(total_bags)
    return tuple(points), tuple(scores), tuple(bags), boston_side
