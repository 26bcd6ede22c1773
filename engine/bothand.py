"""What a hand is worth to the baseline bot: sure tricks, expected tricks at its table, the
chance its nil makes. Fitted models (`CALIBRATION`, `SUICIDE_FIT`, `NIL_FIT`) and the counts
they read; `engine.bot` bids from them, `engine.search` weighs sampled deals by them.
"""

from __future__ import annotations

import math

from engine.botplay import _tables, shown_cards
from engine.cards import SPADES
from engine.rules import Ruleset, Tables
from engine.view import SeatView

ACE, KING, QUEEN, TEN = 12, 11, 10, 8


def estimate(hand: tuple[int, ...], t: Tables) -> float:
    """Return the sure tricks a hand is worth (aces, guarded kings, trumps, ruffs)."""
    by_suit: dict[int, list[int]] = {0: [], 1: [], 2: [], 3: []}
    for c in hand:
        by_suit[t.suit[c]].append(t.power[c])
    tricks = 0.0
    trumps = sorted(by_suit[SPADES], reverse=True)
    top = max(t.power[c] for c in t.deck if t.suit[c] == SPADES)
    for i, p in enumerate(trumps):
        # A trump is sure when no other hand holds a higher one, or when one or two
        # higher ones are out and this hand has as many lower trumps to spare.
        outside = top - p - i
        if outside <= 0 or (outside <= 2 and outside <= len(trumps) - 1 - i):
            tricks += 1
    tricks += max(0, len(trumps) - 4)
    spare_trumps = len(trumps) - tricks
    for s in range(3):
        cards = sorted(by_suit[s], reverse=True)
        n = len(cards)
        if n and cards[0] == ACE:
            # An ace wins its suit's first round; in a suit of seven or more another
            # hand is void in it often enough to ruff it now and then.
            tricks += 1 if n <= 6 else 0.75
        if KING in cards and (2 <= n <= 5 or (n >= 6 and cards[0] == ACE)):
            # A guarded king; in a long suit only behind its ace (the second round).
            tricks += 0.5
        if QUEEN in cards and (3 <= n <= 4 or (n >= 5 and cards[:2] == [ACE, KING])):
            tricks += 0.25
        if spare_trumps >= 1 and n <= 1:
            tricks += 1 if n == 0 else 0.5
            spare_trumps -= 1
    return tricks * t.tricks / 13


SHOWN_KING = {"right": 1.0, "partner": 0.75, "left": 0.25}
"""Power checks: sure tricks a guarded side king (two to five cards) counts when its suit's
top card lies face up in another hand, by where (`estimate` counts 0.5 not knowing): behind
the ace (it sits at the right, which plays before this seat whenever another seat leads)
the king wins once the ace has gone; in front of it (the left) only when the ace is led;
with the partner, the second round after the partner's ace."""


def shown_kings(view: SeatView) -> float:
    """Return the sure tricks face-up cards add to `estimate` (power checks; else 0).

    A side king's worth depends on where its suit's top card is (`SHOWN_KING`); with two
    players the only other hand is both sides of the seat, and nothing changes.
    """
    rules = view.rules
    n = rules.players
    if not view.face_up or n < 3:
        return 0.0
    t = _tables(rules)
    me = view.seat
    where: dict[int, str] = {}
    for s, c in shown_cards(view):
        if s == (me - 1) % n:
            where[c] = "right"
        elif s == (me + 1) % n:
            where[c] = "left"
        elif t.team[s] == t.team[me]:
            where[c] = "partner"
    added = 0.0
    for s in range(4):
        if s == SPADES:
            continue
        ranked = sorted((c for c in t.deck if t.suit[c] == s), key=lambda c: -t.power[c])
        mine = [c for c in view.hand if t.suit[c] == s]
        top, king = ranked[0], ranked[1]
        if king in mine and top in where and 2 <= len(mine) <= 5:
            added += SHOWN_KING[where[top]] - 0.5
    return added


def safe_nil(hand: tuple[int, ...], t: Tables) -> bool:
    """Return whether a hand may bid nil: few low spades, every high card guarded."""
    trumps = [t.power[c] for c in hand if t.suit[c] == SPADES]
    if len(trumps) > 3 or any(p >= 100 + TEN for p in trumps):
        return False
    for s in range(3):
        cards = sorted((t.power[c] for c in hand if t.suit[c] == s), reverse=True)
        low = sum(1 for p in cards if p <= 5)
        # Every high card needs low cards under it to duck with.
        if sum(1 for p in cards if p >= TEN) > low - 1 and cards and cards[0] >= TEN:
            return False
    return True


# Expected tricks = a + b * sure tricks (counted as for 13 cards) + c * trumps held,
# fitted by least squares on 1,500 random deals per row, each played out with every
# seat trying to win tricks (engine.search's rollout). Keyed by (players, deck): the
# deck is "plain", "jokers", "deuces" (deuces high) or "draw" (two-player draw deal,
# fitted on hands drawn by `_draw`).
CALIBRATION: dict[tuple[int, str], tuple[float, float, float]] = {
    (2, "plain"): (4.012, 0.454, 0.424),
    (2, "jokers"): (3.731, 0.472, 0.396),
    # Two-player draw deal: hands kept by this bot's own draw habit (spades, tens up).
    (2, "draw"): (2.932, 0.562, 0.209),
    (3, "plain"): (2.815, 0.671, 0.116),
    (3, "jokers"): (3.255, 0.670, 0.014),
    (4, "plain"): (0.752, 0.716, 0.239),
    (4, "jokers"): (0.558, 0.692, 0.220),
    (4, "deuces"): (0.597, 0.694, 0.165),
    (5, "plain"): (-0.177, 0.643, 0.339),
    (5, "jokers"): (-0.259, 0.641, 0.327),
}
SUICIDE_FIT = (1.68, 0.96)
"""Suicide: tricks a bidder beside a nil takes = a + b * the hand's expected tricks
(fitted on 254 bidders of baseline suicide games): with one nil per side only two
seats take tricks, so a hand's four-player expectation undercounts it by a third."""
NIL_FIT = (
    0.815,
    (-5.558, -1.199, -0.612, -0.642),
    -0.763,
    -0.181,
    0.246,
    0.735,
    -0.98,
    -0.575,
    -0.398,
)
"""Log-odds that a nil makes: bias; holding the 1st..4th highest trump; each trump past
three; side queens; side cards of rank six or lower; side voids; an ace in a side suit of
three or fewer; a king in a side suit of two or fewer; the hand's expected tricks.
Fitted by logistic regression on 11,734 nils of baseline suicide games in which the
first partner went nil at random (so hands of every kind are nils): calibrated within
0.03 in each tenth of the predicted chance."""


def _deck(rules: Ruleset) -> str:
    """Return the deck's calibration key: "jokers", "deuces", "draw" or "plain"."""
    if rules.deal == "draw":
        return "draw"
    return "jokers" if rules.jokers else "deuces" if rules.deuces_high else "plain"


def _fit(rules: Ruleset) -> tuple[float, float, float]:
    """Return the table's `CALIBRATION` row."""
    players = rules.players
    return (
        CALIBRATION.get((players, _deck(rules)))
        or CALIBRATION.get((players, "plain"))
        or CALIBRATION[(4, "plain")]
    )


def expected_tricks(hand: tuple[int, ...], rules: Ruleset) -> float:
    """Return the tricks a hand is expected to take at its table (players and deck)."""
    t = _tables(rules)
    a, b, c = _fit(rules)
    sure = estimate(hand, t) * 13 / t.tricks
    trumps = sum(1 for card in hand if t.suit[card] == SPADES)
    return a + b * sure + c * trumps


def nil_chance(hand: tuple[int, ...], rules: Ruleset) -> float:
    """Return the chance that ``hand`` makes a nil (the `NIL_FIT` model, four players)."""
    t = _tables(rules)
    bias, tops, extra, queen, low, void, short_ace, short_king, per_trick = NIL_FIT
    trumps = sorted((p for c in t.deck if t.suit[c] == SPADES for p in [t.power[c]]), reverse=True)
    held = {t.power[c] for c in hand if t.suit[c] == SPADES}
    z = bias + sum(w for w, p in zip(tops, trumps, strict=False) if p in held)
    z += extra * max(0, len(held) - 3)
    for s in range(3):
        ranks = [t.power[c] % 100 for c in hand if t.suit[c] == s]
        n = len(ranks)
        z += void * (n == 0) + low * sum(1 for r in ranks if r <= 4)
        z += queen * (QUEEN in ranks) + short_ace * (ACE in ranks and n <= 3)
        z += short_king * (KING in ranks and n <= 2)
    z += per_trick * expected_tricks(hand, rules)
    return 1 / (1 + math.exp(-z))
