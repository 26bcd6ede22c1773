"""Hidden information: a view holds one seat's knowledge and nothing more."""

from __future__ import annotations

import dataclasses

from engine import (
    SPECTATOR,
    DeclareBlindNil,
    DrawCard,
    PassCards,
    Ruleset,
    SeatView,
    view,
)
from tests.engine.support import bid_round, run, start


def test_a_seat_sees_its_own_hand_and_nobody_elses() -> None:
    state = start()
    v = view(state, 1)
    assert v.hand == state.hands[1]
    assert v.hand_sizes == (13, 13, 13, 13)
    for other in (0, 2, 3):
        assert not set(state.hands[other]) & set(v.hand)


def test_a_spectator_sees_no_hand_and_no_moves() -> None:
    v = view(start(), SPECTATOR)
    assert v.seat == SPECTATOR
    assert v.hand == ()
    assert v.legal == ()


def test_a_view_never_carries_the_seed_or_the_stock() -> None:
    names = {f.name for f in dataclasses.fields(SeatView)}
    assert not names & {"seed", "stock", "hands", "tables"}


def test_the_blind_nil_candidate_sees_no_hand_until_he_declines() -> None:
    state = start(scores=(0, 150))
    assert view(state, 0).hand == ()
    assert view(state, 0).hand_hidden
    assert view(state, 0).blind_nil_open
    assert len(view(state, 1).hand) == 13


def test_the_exchange_partner_sees_only_the_cards_passed_to_him() -> None:
    state, _ = run(start(scores=(0, 150)), DeclareBlindNil(0))
    state = bid_round(state, {1: 3, 2: 4, 3: 3})
    given = state.hands[0][:2]
    state, _ = run(state, PassCards(0, given))
    partner = view(state, 2)
    assert partner.received == given
    assert set(partner.hand) - set(given) == set(state.hands[2]) - set(given)
    assert not set(partner.hand) & set(state.hands[0])
    opponent = view(state, 1)
    assert opponent.received == ()
    assert opponent.given == ()
    assert not set(opponent.hand) & set(given)


def test_two_player_draw_only_the_drawer_sees_the_top_card() -> None:
    rules = Ruleset(players=2, deal="draw", blind_nil=False)
    state = start(rules)
    assert state.phase == "draw"
    drawer = state.turn
    assert view(state, drawer).drawn == state.stock[0]
    assert view(state, 1 - drawer).drawn == -1
    state, events = run(state, DrawCard(drawer, True))
    assert view(state, drawer).hand == (events[0].kept,)  # type: ignore[union-attr]
    assert view(state, drawer).discards == (events[0].discarded,)  # type: ignore[union-attr]
    assert view(state, 1 - drawer).discards == ()
    assert view(state, 1 - drawer).hand == ()


def test_two_player_draw_deals_13_kept_and_13_discarded_each() -> None:
    rules = Ruleset(players=2, deal="draw", blind_nil=False)
    state = start(rules)
    while state.phase == "draw":
        state, _ = run(state, DrawCard(state.turn, state.turn == 0))
    assert [len(h) for h in state.hands] == [13, 13]
    assert [len(d) for d in state.discards] == [13, 13]
    assert len({c for h in (*state.hands, *state.discards) for c in h}) == 52
    assert state.phase == "bid"
    assert state.turn == (state.dealer + 1) % 2
