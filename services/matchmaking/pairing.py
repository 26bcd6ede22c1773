"""Pairing: who sits down together, as a pure function of the queue and the clock.

A queued player accepts opponents and partners whose mu lies within his *window*, which
starts tight and widens with his waiting time, so a busy ladder makes close games and a
quiet one still seats everybody eventually. A table forms around the longest-waiting
player (fairness: nobody is starved by a stream of newcomers who match each other) from the
players that are inside his window *and* whose own window includes him. Of the three ways
to split four players into two partnerships, the one whose predicted win probability is
closest to one half is chosen. A table of 2, 3 or 5 seats plays each for himself: its
players sit in queue order, the longest-waiting at seat 0.

Fair play: two accounts linked by the gateway's fair-play record (seen at one address or
device within its window) never sit at one table, as partners or opponents; each waits.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from events.contracts.skill import Rating, field_win_probabilities, win_probability

WINDOW_START = 2.0  # mu units either side at the moment of joining
WINDOW_GROWTH = 0.25  # mu units per second waited
WINDOW_MAX = 50.0  # wide enough to seat anybody with anybody


@dataclass(frozen=True, slots=True)
class Waiting:
    """A player in a ladder's queue."""

    player_id: str
    rating: Rating
    joined_at: float
    avoid: frozenset[str] = frozenset()
    """Accounts never to share a table with (fair play: one address or device)."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """A table to form: the player ids of each side (one player per side but in the
    four-seat partnership game, whose two sides hold two each)."""

    teams: tuple[tuple[str, ...], ...]
    win_probability: float  # of teams[0], as predicted when formed


def seats_of(pairing: Pairing) -> tuple[str, ...]:
    """Return the player per seat: (a, b) v (c, d) sits a=0, c=1, b=2, d=3 (team = seat % 2);
    every other table one player a side, seat = side."""
    if len(pairing.teams) == 2 and len(pairing.teams[0]) == 2:
        (a, b), (c, d) = pairing.teams
        return (a, c, b, d)
    return tuple(team[0] for team in pairing.teams)


def window(waited: float) -> float:
    """Return the half-width in mu of the rating window after waiting ``waited`` seconds."""
    return min(WINDOW_MAX, WINDOW_START + WINDOW_GROWTH * max(0.0, waited))


def _accepts(a: Waiting, b: Waiting, now: float) -> bool:
    """Return whether a and b both have the other inside their window, and neither must
    avoid the other (accounts of one address or device never share a ranked table)."""
    if a.player_id in b.avoid or b.player_id in a.avoid:
        return False
    gap = abs(a.rating.mu - b.rating.mu)
    return gap <= window(now - a.joined_at) and gap <= window(now - b.joined_at)


def best_split(
    players: Sequence[Waiting],
    predict: Callable[[list[Rating], list[Rating]], float] = win_probability,
) -> Pairing:
    """Return the split of the players into sides with the most even prediction: four are
    two partnerships; 2, 3 or 5 play each for himself (seated in the order given)."""
    if len(players) in (2, 3, 5):
        chances = field_win_probabilities([p.rating for p in players])
        return Pairing(tuple((p.player_id,) for p in players), chances[0])
    if len(players) != 4:
        raise ValueError(f"a table seats 2 to 5 players, not {len(players)}")
    first, *rest = players
    best: Pairing | None = None
    for partner in rest:
        others = [p for p in rest if p is not partner]
        prob = predict([first.rating, partner.rating], [o.rating for o in others])
        candidate = Pairing(
            ((first.player_id, partner.player_id), tuple(o.player_id for o in others)), prob
        )
        if best is None or abs(prob - 0.5) < abs(best.win_probability - 0.5):
            best = candidate
    assert best is not None
    return best


def pair(
    queue: Sequence[Waiting],
    seats: int,
    now: float,
    predict: Callable[[list[Rating], list[Rating]], float] = win_probability,
) -> list[Pairing]:
    """Return the tables to form now from ``queue``; each player appears at most once."""
    if seats not in (2, 3, 4, 5):
        raise ValueError(f"a table seats 2 to 5 players, not {seats}")
    waiting = sorted(queue, key=lambda w: (w.joined_at, w.player_id))
    tables: list[Pairing] = []
    while len(waiting) >= seats:
        anchor = waiting[0]
        mates = [w for w in waiting[1:] if _accepts(anchor, w, now)]
        # closest in rating first; among them prefer those waiting longest
        mates.sort(key=lambda w: (abs(w.rating.mu - anchor.rating.mu), w.joined_at))
        group = _mutual_group(anchor, mates, seats - 1, now)
        if group is None:
            waiting = waiting[1:]  # the anchor waits; others may still match each other
            continue
        tables.append(best_split([anchor, *group], predict))
        chosen = {w.player_id for w in group} | {anchor.player_id}
        waiting = [w for w in waiting if w.player_id not in chosen]
    return tables


def _mutual_group(
    anchor: Waiting, mates: list[Waiting], size: int, now: float
) -> list[Waiting] | None:
    """Return ``size`` mates who all accept each other, closest to the anchor first."""
    for combo in itertools.combinations(mates[:8], size):
        if all(_accepts(a, b, now) for a, b in itertools.combinations(combo, 2)):
            return list(combo)
    return None
