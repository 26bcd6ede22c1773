"""The strong bot's rollout: how it expects every seat to play out a sampled deal.

`rollout` is the policy (one card for one seat, on `engine.fast`'s table): the baseline's
habits, nil bidders duck, partners cover, opponents attack a nil, contracts are chased
and bags ducked. `play_out` plays a whole hand with it for every seat, the same cards as
``table.play_out(rollout)`` card for card (tests/engine/test_botrollout.py compares them
on every variant), with the table's moves, the legal cards and the policy inlined in one
loop: a decision plays some 10,000 cards of rollout, and the calls between
`Table.play_out`, `Table.legal`, `rollout` and `Table.play` were most of its time.

What it saved (issue #28: the strong bot's decision p95 over 200 ms). 666 strong-bot
decisions recorded from one seed-1 strong-v-baseline game each of ladder, jokers and
cut-throat, each decided by main before this change and by this code in one run (chunks
alternated, process CPU, load 13-18): the same card or bid in all 666; CPU 58.7 s -> 35.6 s
(0.61), mean 88 -> 53 ms, p95 183 -> 126 ms. Of the cut: the fused loop about a quarter,
the habits kept by tricks done and taken (`play_out`'s ``modes_seen``) most of the rest
(`_modes` ran once per trick of every playout). `python -m benchmarks bots` (8 games, seed 1,
the same games and figures as before, only faster): strong decision p95 ladder 111 ms, jokers
113, cut-throat 127 (181-223 before), max 185-203.
"""

from __future__ import annotations

from engine.cards import SPADES
from engine.fast import Table
from engine.rules import Tables
from engine.state import Trick

NIL, COVER, WANT, DUCK, ATTACK = range(5)


def _modes(table: Table) -> list[int]:
    """Return each seat's rollout habit for the current trick (recomputed per trick)."""
    return modes_of(table.t, table.taken, table.nil, table.bids, table.done)


def modes_of(t: Tables, taken: list[int], nil: list[bool], bids: list[int], done: int) -> list[int]:
    """Return each seat's rollout habit with ``done`` tricks played (`_modes`)."""
    left = t.tricks - done
    needs = [sum(bids[s] - taken[s] for s in members if not nil[s]) for members in t.members]
    # A side wants tricks while it needs some, or while another side can still be set.
    settable = [0 < n <= left for n in needs]
    count = settable.count(True)
    want = [n > 0 or count > settable[side] for side, n in enumerate(needs)]
    team = t.team
    four = t.players == 4
    # Intact nils: setting one is worth more than any trick, so the other sides attack it.
    intact = [s for s in range(t.players) if nil[s] and taken[s] == 0]
    if not intact:
        return [WANT if want[side] else DUCK for side in team]
    modes = []
    for seat in range(t.players):
        if nil[seat] and taken[seat] == 0:
            modes.append(NIL)
        elif four and nil[(seat + 2) % 4] and taken[(seat + 2) % 4] == 0:
            modes.append(COVER)
        elif any(team[s] != team[seat] for s in intact):
            modes.append(ATTACK)
        else:
            modes.append(WANT if want[team[seat]] else DUCK)
    return modes


def rollout(table: Table, seat: int, legal: list[int]) -> int:
    """Return the rollout's card: the baseline's habits on the fast table."""
    if table.memo_done != table.done:
        table.memo = _modes(table)
        table.memo_done = table.done
    mode = table.memo[seat]
    trick = table.trick
    power = table.power
    key = power.__getitem__
    if not trick:
        if mode == WANT:
            # Lead the highest card, a side suit's before a trump of the same rank.
            return max(legal, key=lambda c: (power[c] % 100, -c))
        if mode == COVER:
            return max(legal, key=key)
        # A nil, a side ducking bags, or one leading low through an opponent's nil.
        return min(legal, key=key)
    suit = table.suit
    led = suit[trick[0]]
    best, best_i = -1, 0
    for i, c in enumerate(trick):
        s = suit[c]
        if (s == led or s == SPADES) and power[c] > best:  # noqa: SIM109
            best, best_i = power[c], i
    if suit[legal[0]] == led:
        # Following suit (all of legal is the led suit).
        win = [c for c in legal if power[c] > best]
        lose = [c for c in legal if power[c] < best]
    else:
        win = [c for c in legal if suit[c] == SPADES and power[c] > best]
        lose = [c for c in legal if not (suit[c] == SPADES and power[c] > best)]
    if mode == NIL:
        # Nil: the highest card that still loses.
        return max(lose or legal, key=key)
    n = table.players
    if mode == ATTACK:
        # Attack an opponent's nil: stay under it while it has to play, and never take
        # a trick off it once it is winning; otherwise play for tricks.
        leader, taken, nil, team = table.leader, table.taken, table.nil, table.t.team
        mine = team[seat]
        for o in range(n):
            if nil[o] and taken[o] == 0 and team[o] != mine:
                if (o - leader) % n >= len(trick):
                    return min(legal, key=key)
                if (leader + best_i) % n == o:
                    return max(lose, key=key) if lose else min(legal, key=key)
        mode = WANT
    if mode == COVER:
        partner = (seat + 2) % 4
        # Cover partner's nil: high before him, overtake him after.
        if len(trick) < 2:
            return max(legal, key=key)
        if (table.leader + best_i) % n == partner:
            return min(win or legal, key=key)
        mode = WANT
    if mode == WANT:
        if n == 4 and len(trick) == 3 and best_i == 1:
            return min(legal, key=key)  # partner wins it
        return min(win or legal, key=key)
    return max(lose or legal, key=key)


def play_out(table: Table, modes_seen: dict[tuple[int, ...], list[int]] | None = None) -> list[int]:
    """Play the rest of the hand with `rollout` for every seat; return the tricks taken.

    The same cards as ``table.play_out(rollout)``, and the table is left as it leaves it
    (every trick done, its history kept for the rules that score from it).
    ``modes_seen``, shared by hands of the same bids, keeps each seat's habits by the
    tricks done and taken (they depend on nothing else): a search meets the same few
    hundred of them in thousands of tricks.
    """
    t = table.t
    suit, power = table.suit, table.power
    key = power.__getitem__
    hands, taken, nil, bids = table.hands, table.taken, table.nil, table.bids
    history = table.history
    n, total = table.players, t.tricks
    team = t.team
    four = n == 4
    special_first = table.first_lead != "no_spade"
    trick, leader, done, broken = table.trick, table.leader, table.done, table.broken
    modes: list[int] = []
    modes_done = -1
    while done < total:
        seat = (leader + len(trick)) % n
        hand = hands[seat]
        # Table.legal, inlined.
        if done == 0 and special_first:
            table.trick = trick
            legal = table._first_trick(hand)
        elif trick:
            legal = hand[suit[trick[0]]] or hand[0] + hand[1] + hand[2] + hand[3]
        elif broken:
            legal = hand[0] + hand[1] + hand[2] + hand[3]
        else:
            legal = hand[0] + hand[1] + hand[2] or hand[3]
        if len(legal) == 1:
            card = legal[0]
        else:
            # rollout, inlined (its comments there).
            if modes_done != done:
                if modes_seen is None:
                    modes = modes_of(t, taken, nil, bids, done)
                else:
                    seen = (done, *taken)
                    found = modes_seen.get(seen)
                    if found is None:
                        found = modes_seen[seen] = modes_of(t, taken, nil, bids, done)
                    modes = found
                modes_done = done
            mode = modes[seat]
            if not trick:
                if mode == WANT:
                    card = max(legal, key=lambda c: (power[c] % 100, -c))
                elif mode == COVER:
                    card = max(legal, key=key)
                else:
                    card = min(legal, key=key)
            else:
                led = suit[trick[0]]
                best, best_i = -1, 0
                for i, c in enumerate(trick):
                    s = suit[c]
                    if (s == led or s == SPADES) and power[c] > best:  # noqa: SIM109
                        best, best_i = power[c], i
                follow = suit[legal[0]] == led
                if mode == ATTACK:
                    mode = WANT
                    mine = team[seat]
                    for o in range(n):
                        if nil[o] and taken[o] == 0 and team[o] != mine:
                            if (o - leader) % n >= len(trick):
                                mode = -1
                                card = min(legal, key=key)
                                break
                            if (leader + best_i) % n == o:
                                mode = -1
                                if follow:
                                    lose = [c for c in legal if power[c] < best]
                                else:
                                    lose = [
                                        c
                                        for c in legal
                                        if not (suit[c] == SPADES and power[c] > best)
                                    ]
                                card = max(lose, key=key) if lose else min(legal, key=key)
                                break
                elif mode == COVER:
                    if len(trick) < 2:
                        mode = -1
                        card = max(legal, key=key)
                    elif (leader + best_i) % n == (seat + 2) % 4:
                        mode = -1
                        if follow:
                            win = [c for c in legal if power[c] > best]
                        else:
                            win = [c for c in legal if suit[c] == SPADES and power[c] > best]
                        card = min(win or legal, key=key)
                    else:
                        mode = WANT
                if mode == WANT:
                    if four and len(trick) == 3 and best_i == 1:
                        card = min(legal, key=key)
                    else:
                        if follow:
                            win = [c for c in legal if power[c] > best]
                        else:
                            win = [c for c in legal if suit[c] == SPADES and power[c] > best]
                        card = min(win or legal, key=key)
                elif mode in (NIL, DUCK):
                    if follow:
                        lose = [c for c in legal if power[c] < best]
                    else:
                        lose = [c for c in legal if not (suit[c] == SPADES and power[c] > best)]
                    card = max(lose or legal, key=key)
        # Table.play, inlined.
        s = suit[card]
        hand[s].remove(card)
        if s == SPADES:
            broken = True
        trick.append(card)
        if len(trick) == n:
            led = suit[trick[0]]
            best, best_i = -1, 0
            for i, c in enumerate(trick):
                cs = suit[c]
                if cs == led or cs == SPADES:  # noqa: SIM109
                    p = power[c]
                    if p > best:
                        best, best_i = p, i
            winner = (leader + best_i) % n
            if history is not None:
                history.append(Trick(leader, tuple(trick), winner))
            leader = winner
            taken[winner] += 1
            done += 1
            trick = []
    table.trick, table.leader, table.done, table.broken = trick, leader, done, broken
    return taken


def copy_table(table: Table) -> Table:
    """Return a copy of ``table`` to play on: the same position, nothing shared that play
    changes (a sampled deal is set up once and played once per candidate card)."""
    new = Table.__new__(Table)
    new.rules, new.t, new.suit, new.power = table.rules, table.t, table.suit, table.power
    new.players, new.first_lead = table.players, table.first_lead
    new.hands = [[cards[:] for cards in hand] for hand in table.hands]
    new.leader, new.trick, new.done, new.broken = (
        table.leader,
        table.trick[:],
        table.done,
        table.broken,
    )
    new.taken = table.taken[:]
    new.bids, new.blind, new.nil = table.bids, table.blind, table.nil
    new.memo, new.memo_done = [], -1
    new.history = None if table.history is None else table.history[:]
    return new
