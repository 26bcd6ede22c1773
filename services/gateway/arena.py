"""Arena events, pure: who meets whom among the free pairs, and what a game is worth.

An arena runs for a fixed time (its ``minutes``) as lichess arenas do, for partnership Spades:
while it runs, any entered pair that is free (not at a table of the event, not paused) is
paired with another free pair as soon as one is, and a game of the event's rules opens for
them (an ordinary unrated game, dealt as every game is, from the committed server seed and
the players' contributions). No new game opens after the end time; the games still being
played then finish and count, and the event ends with the last of them. Nothing here touches
a database or a clock.

- **Pairing** (`pair_free`): the free pairs in arena order (points, highest first, then pair
  number); with an odd count the pair that came free last waits (the others have waited
  longer). Then top-down: each pair meets the nearest in the order (the closest score) that
  is not its last opponent; only when no pairing of the free pairs avoids an immediate
  rematch is one allowed (two pairs that just met and nobody else free play again).
- **Points** (`award`): a win 2, a draw 1, a loss 0. A pair *on fire* (its two games before
  were both wins) scores double: 4 for a win, 2 for a draw. The streak ends with any game
  not won. A game the table closed unplayed (every person left, or nobody acted: reason
  ``abandoned`` or ``idle``) has no result (`NO_RESULT`): nobody scores, as for a loss.
- **Absent pairs** (`absent`): a pair whose every person left his seat to a bot in a game
  is paused when that game is over (it comes back with `resume`), so the arena does not
  keep opening games for people who are gone.
- **Standings** (`standings`): points (highest first), then wins, then pair number; equal
  points and wins share a rank.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import msgspec

WIN, DRAW, LOSS = 2, 1, 0
FIRE = 2
"""A pair on fire (two wins in a row just before) scores this many times a game's points."""
MIN_MINUTES, MAX_MINUTES = 1, 600
NO_RESULT = -1
"""A game's ``winner`` when the table closed it unplayed: nobody scores."""
UNPLAYED = ("abandoned", "idle")
"""The `GameFinished` reasons of a game closed unplayed."""


@dataclass(frozen=True, slots=True)
class Free:
    """A free pair: its number, its points, its last opponent (None before its first game)
    and since when it is free (a sequence number or a time: only the order matters)."""

    pair: int
    points: int
    last: int | None
    since: float


@dataclass(frozen=True, slots=True)
class Game:
    """An arena game between two pairs, in the order it opened; ``winner`` the pair that won,
    0 for a draw, `NO_RESULT` for a game closed unplayed, None while it is played."""

    number: int
    ns: int
    ew: int
    winner: int | None = None


class ArenaStanding(msgspec.Struct, frozen=True, kw_only=True):
    """A pair's place in an arena: its points, games, wins, draws, losses, the wins in a row
    it is on (two or more: on fire, the next game counts double)."""

    rank: int
    pair: int
    points: int
    games: int
    wins: int
    draws: int
    losses: int
    streak: int
    on_fire: bool


def arena_order(free: Iterable[Free]) -> list[Free]:
    """Return free pairs by points (highest first), then pair number."""
    return sorted(free, key=lambda f: (-f.points, f.pair))


def _rematch(a: Free, b: Free) -> bool:
    return a.last == b.pair or b.last == a.pair


def _pair_all(order: Sequence[Free], rematches: bool) -> list[tuple[int, int]] | None:
    if not order:
        return []
    top, rest = order[0], order[1:]
    for i, other in enumerate(rest):
        if not rematches and _rematch(top, other):
            continue
        tail = _pair_all([*rest[:i], *rest[i + 1 :]], rematches)
        if tail is not None:
            return [(top.pair, other.pair), *tail]
        if rematches:
            break
    return None


def pair_free(free: Iterable[Free]) -> list[tuple[int, int]]:
    """Return the games to open now among ``free`` pairs: (higher-placed, other) each.

    >>> pair_free([Free(1, 4, 2, 0), Free(2, 2, 1, 0), Free(3, 2, 4, 0), Free(4, 0, 3, 1)])
    [(1, 3), (2, 4)]
    >>> pair_free([Free(1, 2, 2, 0), Free(2, 0, 1, 0)])
    [(1, 2)]
    """
    pairs = list(free)
    if len({f.pair for f in pairs}) != len(pairs):
        raise ValueError("a pair is free twice")
    if len(pairs) % 2:
        waits = max(pairs, key=lambda f: (f.since, f.pair))
        pairs.remove(waits)
    order = arena_order(pairs)
    for rematches in (False, True):
        tables = _pair_all(order, rematches)
        if tables is not None:
            return tables
    raise AssertionError("unreachable: with rematches allowed every even field pairs")


def award(before: Sequence[int | None], outcome: int) -> int:
    """Return what a game is worth to a pair: ``outcome`` is WIN, DRAW or LOSS (its base
    points), ``before`` the pair's finished games' outcomes so far, in order.

    >>> award([], WIN), award([WIN, WIN], WIN), award([WIN, WIN], DRAW), award([WIN], WIN)
    (2, 4, 2, 2)
    """
    return outcome * (FIRE if streak_of(before) >= 2 else 1)


def streak_of(outcomes: Sequence[int | None]) -> int:
    """Return how many wins in a row end ``outcomes``."""
    n = 0
    for o in reversed(outcomes):
        if o != WIN:
            break
        n += 1
    return n


def outcome_of(game: Game, pair: int) -> int:
    """Return a finished game's base points for ``pair`` (WIN, DRAW or LOSS; no result is
    LOSS: nobody scores)."""
    if game.winner == 0:
        return DRAW
    return WIN if game.winner == pair else LOSS


def awards(games: Sequence[Game]) -> dict[tuple[int, int], int]:
    """Return (game number, pair) -> the points that pair scored in that finished game, each
    pair's games taken in the order they opened (a pair plays one at a time)."""
    history: dict[int, list[int | None]] = {}
    out: dict[tuple[int, int], int] = {}
    for game in sorted(games, key=lambda g: g.number):
        if game.winner is None:
            continue
        for pair in (game.ns, game.ew):
            mine = history.setdefault(pair, [])
            outcome = outcome_of(game, pair)
            out[game.number, pair] = award(mine, outcome)
            mine.append(outcome)
    return out


def points_of(games: Sequence[Game]) -> dict[int, int]:
    """Return each pair's points over the finished games."""
    out: dict[int, int] = {}
    for (_, pair), points in awards(games).items():
        out[pair] = out.get(pair, 0) + points
    return out


def standings(pairs: Iterable[int], games: Sequence[Game]) -> list[ArenaStanding]:
    """Return the pairs ranked by points, then wins, then number (equal: the same rank)."""
    got = awards(games)
    rows: list[ArenaStanding] = []
    for pair in pairs:
        mine = [g for g in sorted(games, key=lambda g: g.number) if pair in (g.ns, g.ew)]
        done = [outcome_of(g, pair) for g in mine if g.winner is not None]
        streak = streak_of(done)
        rows.append(
            ArenaStanding(
                rank=0,
                pair=pair,
                points=sum(got.get((g.number, pair), 0) for g in mine),
                games=len(done),
                wins=done.count(WIN),
                draws=done.count(DRAW),
                losses=done.count(LOSS),
                streak=streak,
                on_fire=streak >= 2,
            )
        )
    rows.sort(key=lambda s: (-s.points, -s.wins, s.pair))
    out: list[ArenaStanding] = []
    for i, s in enumerate(rows):
        rank = i + 1
        if out and (out[-1].points, out[-1].wins) == (s.points, s.wins):
            rank = out[-1].rank
        out.append(msgspec.structs.replace(s, rank=rank))
    return out


def winner_of(side: int, reason: str, ns: int, ew: int) -> int:
    """Return an arena game's ``winner`` from its `GameFinished`: the pair of the winning
    ``side`` (0 North-South, 1 East-West), 0 for a draw (-1), `NO_RESULT` for a game the
    table closed unplayed (``reason`` in `UNPLAYED`).

    >>> winner_of(1, "target", 3, 4), winner_of(-1, "hand_cap", 3, 4), winner_of(-1, "idle", 3, 4)
    (4, 0, -1)
    """
    if reason in UNPLAYED:
        return NO_RESULT
    return {0: ns, 1: ew}.get(side, 0)


def absent(persons: Mapping[int, Sequence[str]], left: Iterable[str]) -> list[int]:
    """Return the pairs (of ``persons``: pair -> its people, bots left out) every person of
    which is in ``left`` (the players whose seats went to a bot in a game).

    >>> absent({1: ["ann", "bob"], 2: ["cy"]}, ["ann", "cy"])
    [2]
    """
    gone = set(left)
    return sorted(p for p, people in persons.items() if people and set(people) <= gone)


def last_opponents(games: Sequence[Game]) -> Mapping[int, int]:
    """Return each pair's opponent in its latest game."""
    last: dict[int, int] = {}
    for g in sorted(games, key=lambda g: g.number):
        last[g.ns], last[g.ew] = g.ew, g.ns
    return last


__all__ = [
    "DRAW",
    "FIRE",
    "LOSS",
    "MAX_MINUTES",
    "MIN_MINUTES",
    "NO_RESULT",
    "UNPLAYED",
    "WIN",
    "ArenaStanding",
    "Free",
    "Game",
    "absent",
    "arena_order",
    "award",
    "awards",
    "last_opponents",
    "pair_free",
    "points_of",
    "standings",
    "streak_of",
    "winner_of",
]
