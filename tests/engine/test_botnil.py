"""The baseline's nil side in suicide searches the last tricks (`engine.botnil`)."""

from __future__ import annotations

import pytest

from engine import (
    GameState,
    HandScored,
    PlayCard,
    Ruleset,
    Trick,
    botnil,
    decide,
    parse_card,
    replay,
    view,
)
from engine.bot import _rule, choose, choose_quickly
from engine.cards import parse_cards
from tests.engine.support import bid_round, hands, start

SUICIDE = Ruleset(suicide=True)
# Ten tricks played (suicide, seed 5007): E and S took five each; W (nil) has shown void in
# hearts and clubs. E, the partner of W's nil, is to lead the eleventh trick.
HISTORY = (
    (0, "2C KC 6C JC", 1),
    (1, "AD 2D KD TD", 1),
    (1, "AH 2H QH 9H", 1),
    (1, "KH TH JH 8H", 1),
    (1, "6H 3S AC 7H", 2),
    (2, "QC 3C 8C 4C", 2),
    (2, "QD JD 4D 5D", 2),
    (2, "TC 7D 7C 9C", 2),
    (2, "9D 6D 3D 8D", 2),
    (2, "JS 6S 9S KS", 1),
)
LEFT = ("5C 3H 2S", "4H 5H AS", "7S 8S TS", "4S 5S QS")


def east_to_lead() -> GameState:
    """E (6, partner of W's nil) to lead the eleventh trick: N nil, E 6, S 4, W nil."""
    played: list[list[int]] = [[], [], [], []]
    tricks = []
    for leader, cards, winner in HISTORY:
        seq = parse_cards(cards)
        for i, c in enumerate(seq):
            played[(leader + i) % 4].append(c)
        tricks.append(Trick(leader, seq, winner))
    dealt = tuple(tuple(sorted(played[s] + list(parse_cards(LEFT[s])))) for s in range(4))
    state = bid_round(start(SUICIDE, dealt, dealer=3), {0: 0, 1: 6, 2: 4, 3: 0})
    return state._replace(
        hands=hands(*LEFT),
        tricks=tuple(tricks),
        taken=(0, 5, 5, 0),
        leader=1,
        turn=1,
        broken=True,
    )


def nil_tricks(state: GameState) -> int:
    """Play the hand out with the baseline; return the tricks W's nil took."""
    while True:
        events = decide(state, choose(view(state, state.turn)))
        for event in events:
            if isinstance(event, HandScored):
                return event.tricks[3]
            state = replay([event], state)


def test_the_nil_partner_leads_his_top_spade_not_a_suit_the_nil_must_ruff(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # By rule E leads a side card, the 5H: W, void in hearts, holds only spades and takes
    # the trick with one. The search finds that leading the AS lets the nil play under.
    state = east_to_lead()
    seen = view(state, 1)
    assert _rule(seen) == PlayCard(1, parse_card("5H"))
    assert choose(seen) == PlayCard(1, parse_card("AS"))
    assert botnil.searches(seen)
    assert choose_quickly(seen) == PlayCard(1, parse_card("5H"))  # the table's fallback
    assert nil_tricks(state) == 0
    monkeypatch.setattr(botnil, "NIL_SEARCH_LEFT", 0)  # the card rules alone, as before
    assert choose(seen) == PlayCard(1, parse_card("5H"))
    assert nil_tricks(state) >= 1


def test_the_search_stays_out_of_other_games_and_early_tricks() -> None:
    state = east_to_lead()
    ladder = view(state._replace(rules=Ruleset(), tables=start().tables), 1)
    assert botnil.nil_side_card(ladder, _rule) is None
    assert not botnil.searches(ladder)
    early = view(state._replace(tricks=state.tricks[:5]), 1)
    assert botnil.nil_side_card(early, _rule) is None
    assert not botnil.searches(early)


def test_the_search_reads_the_view_only() -> None:
    # The same view with the unseen cards dealt otherwise: the same card.
    state = east_to_lead()
    swapped = hands(*LEFT[:2], "4S 8S TS", "7S 5S QS")
    assert choose(view(state, 1)) == choose(view(state._replace(hands=swapped), 1))
