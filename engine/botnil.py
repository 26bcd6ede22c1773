"""The baseline's nil side in suicide, late in the hand: a small search of the cards left.

Suicide forces a nil on each side every hand, and a failed nil is what sinks a side to the
mercy floor (`benchmarks.suicide`). Late in the hand, with few cards left, the nil and its
partner no longer play by rule (`engine.botplay`): for each legal card they sample deals
of the unseen cards consistent with the view (`engine.search.Sampler`), and in each deal
ask whether the nil side still has a line that keeps the nil at no trick, the other seats
playing the baseline's card rules (`nil_saved`); the card that keeps the nil alive in the
most deals is played, the rule's card on a tie. It reads nothing but the seat's view: the
deals are drawn from it, seeded by it (the same view, the same card).

Why a search and not one more rule: with every card seen, the nil side keeps at least 73%
of the nils the baseline makes 49% of, and the cards after which no saving line is left are
mostly the partner's late leads and discards; every rule drawn from them (a top spade to
draw the nil's, never a suit the nil is void in, ...) lost games by the target
(`benchmarks.suicide`). Suicide self-play, 200 games from seed 5000 interleaved with the
rules alone: nils made 50.6% -> 52.5%, games by the target 49.0% -> 54.0%; the 300 games
of `python -m benchmarks suicide` (seeds 1000+): 49.6% -> 51.5%, 43.0% -> 47.3%; 150 games
from seed 8000: 50.0% -> 51.0%, 46.0% -> 47.3%; suicide with forcing, 150 games from seed
5000: 52.1% -> 55.1%, 48.7% -> 56.7%. It costs about 0.5 s of CPU a game where
the rules alone take 0.014 s; other variants never search. From five tricks left instead
of four (the same 150 games): 52.6%, 50.0% by the target, at four times the CPU (1.9 s a
game).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engine.botplay import _tables
from engine.game import decide
from engine.model import Command, HandScored, PlayCard
from engine.state import PLAY, GameState, replay
from engine.view import SeatView, view

NIL_SEARCH_LEFT = 4
"""Tricks left (this one included) from which the nil side searches."""
NIL_SEARCH_WORLDS = 8
"""Sampled deals per decision."""
NIL_SEARCH_NODES = 3000
"""Positions searched per deal and card before the answer counts as unknown (half a save)."""


class _OutOfNodes(Exception):
    pass


def nil_saved(
    state: GameState, nil: int, nodes: int, plays: Callable[[SeatView], Command]
) -> bool | None:
    """Return whether the nil of seat ``nil`` can take no trick this hand when it and its
    partner choose their cards seeing every card and the other seats play ``plays``.

    ``state`` is in the play, the nil intact; None when ``nodes`` positions were searched
    without an answer. With the deal the real one this is a measuring device (an upper
    bound on the nil side's play, `benchmarks.suicide`); with a sampled deal, one world of
    `nil_side_card`'s search.
    """
    side = nil % 2
    count = 0

    def after(st: GameState, command: Command) -> tuple[GameState, bool]:
        for event in decide(st, command):
            if isinstance(event, HandScored):
                return st, True
            st = replay([event], st)
        return st, False

    def search(st: GameState) -> bool:
        nonlocal count
        count += 1
        if count > nodes:
            raise _OutOfNodes
        seat = st.turn
        seat_view = view(st, seat)
        mine = plays(seat_view)
        options = [mine]
        if seat % 2 == side:
            # The rule's own card first, then the nil's low cards and the partner's high.
            sign = 1 if seat == nil else -1
            rest = [c for c in seat_view.legal if isinstance(c, PlayCard) and c != mine]
            rest.sort(key=lambda c: sign * st.tables.power[c.card])
            options += rest
        for command in options:
            child, done = after(st, command)
            if child.taken[nil] == 0 and (done or search(child)):
                return True
        return False

    try:
        return search(state)
    except _OutOfNodes:
        return None


def world(seen: SeatView, hands: list[list[int]]) -> GameState:
    """Return the hand in play as ``seen`` shows it, the unseen cards dealt as ``hands``."""
    rules = seen.rules
    return GameState(
        rules=rules,
        tables=_tables(rules),
        phase=PLAY,
        hand=seen.hand_number,
        dealer=seen.dealer,
        turn=seen.turn,
        hands=tuple(tuple(sorted(h)) for h in hands),
        discards=((),) * rules.players,
        seen=(True,) * rules.players,
        bids=seen.bids,
        blind=seen.blind,
        leader=seen.leader,
        trick=seen.trick,
        tricks=seen.tricks,
        taken=seen.taken,
        broken=seen.spades_broken,
        scores=seen.scores,
        bags=seen.bags,
        moe=seen.moe or (False,) * rules.players,
    )


def _intact_nils(seen: SeatView) -> list[int]:
    """The seat's side's intact nils where its card is searched (else none): suicide, four
    players, at most `NIL_SEARCH_LEFT` tricks left, more than one legal card."""
    rules = seen.rules
    t = _tables(rules)
    me = seen.seat
    if not rules.suicide or t.players != 4 or t.tricks - len(seen.tricks) > NIL_SEARCH_LEFT:
        return []
    if sum(isinstance(c, PlayCard) for c in seen.legal) < 2:
        return []
    return [s for s in (me, (me + 2) % 4) if seen.bids[s] == 0 and seen.taken[s] == 0]


def searches(seen: SeatView) -> bool:
    """Whether the baseline's card for the seat of ``seen`` is searched (`nil_side_card`):
    up to tenths of a second of CPU, too dear for a table replica's event loop, which asks
    the bot tier for such a move instead (`services.table.tier`)."""
    return bool(_intact_nils(seen))


def nil_side_card(seen: SeatView, plays: Callable[[SeatView], Command]) -> int | None:
    """Return the card the nil side's search picks for the seat of ``seen`` over the card
    rule ``plays`` (which it also models every seat with), or None: where it agrees with the
    rule, or does not search (not suicide, no intact nil in this seat or its partner's,
    more than `NIL_SEARCH_LEFT` tricks left, one legal card)."""
    nils = _intact_nils(seen)
    if not nils:
        return None
    rules = seen.rules
    t = _tables(rules)
    me = seen.seat
    cards = [c.card for c in seen.legal if isinstance(c, PlayCard)]
    nil = nils[0]
    rule = plays(seen)
    assert isinstance(rule, PlayCard)
    from engine.search import Sampler  # the sampler only (engine.search imports engine.bot)

    sampler = Sampler(seen, t)
    played = tuple(c for tr in seen.tricks for c in tr.cards)
    rng = random.Random(hash((me, seen.hand_number, seen.hand, played, seen.trick)))
    saves = dict.fromkeys(cards, 0.0)
    for _ in range(NIL_SEARCH_WORLDS):
        state = world(seen, sampler.sample(rng))
        for card in cards:
            child = state
            done = False
            for event in decide(state, PlayCard(me, card)):
                if isinstance(event, HandScored):
                    done = True
                    break
                child = replay([event], child)
            if child.taken[nil]:
                continue
            answer = True if done else nil_saved(child, nil, NIL_SEARCH_NODES, plays)
            saves[card] += 1.0 if answer else 0.5 if answer is None else 0.0
    best = max(cards, key=lambda c: (saves[c], c == rule.card))
    return None if best == rule.card else best
