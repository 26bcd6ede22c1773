"""Rules of bidding: ranges, nil, blind nil and its exchange, blind bids, suicide, minimums."""

from __future__ import annotations

import pytest

from engine import (
    BidOutOfRange,
    BidPlaced,
    BlindBidNotAllowed,
    BlindChoicePending,
    BlindNilDeclared,
    BlindNilDeclined,
    BlindNilNotAllowed,
    CardsPassed,
    DeclareBlindNil,
    DeclineBlindNil,
    InvalidPass,
    NilNotAllowed,
    OutOfTurn,
    PassCards,
    PlaceBid,
    Ruleset,
    SuicideBid,
    TeamMinimumBid,
    decide,
    legal_actions,
    view,
)
from engine.game import legal_bids
from tests.engine.support import bid_round, run, start


def test_bidding_starts_at_dealer_left_and_goes_clockwise() -> None:
    state = start(dealer=1)
    assert state.turn == 2
    state, _ = run(state, PlaceBid(2, 3))
    assert state.turn == 3


def test_every_bid_is_a_whole_number_from_0_to_13() -> None:
    state = start()
    assert legal_bids(state, 0) == tuple(range(14))
    for bad in (14, -1):
        with pytest.raises(BidOutOfRange, match="bid out of range") as info:
            decide(state, PlaceBid(0, bad))
        assert info.value.code == "bid_out_of_range"


def test_a_bid_of_zero_is_nil() -> None:
    state, events = run(start(), PlaceBid(0, 0))
    assert events == [BidPlaced(0, 0, False)]
    assert state.bids[0] == 0


def test_bids_cannot_be_changed() -> None:
    state, _ = run(start(), PlaceBid(0, 4))
    with pytest.raises(OutOfTurn):
        decide(state, PlaceBid(0, 5))


def test_min_bid_binds_non_nil_bids() -> None:
    state = start(Ruleset(min_bid=2))
    assert legal_bids(state, 0) == (0, *range(2, 14))
    with pytest.raises(BidOutOfRange, match="minimum bid is 2"):
        decide(state, PlaceBid(0, 1))


def test_nil_not_allowed_makes_zero_unbiddable_with_min_bid_1() -> None:
    state = start(Ruleset(nil_allowed=False, blind_nil=False))
    assert 0 not in legal_bids(state, 0)
    with pytest.raises(NilNotAllowed) as info:
        decide(state, PlaceBid(0, 0))
    assert info.value.code == "nil_not_allowed"


def test_nil_not_allowed_with_min_bid_0_makes_zero_a_plain_bid() -> None:
    state = start(Ruleset(nil_allowed=False, blind_nil=False, min_bid=0))
    assert legal_bids(state, 0)[0] == 0


def test_team_min_bid_the_second_partner_brings_the_contract_up() -> None:
    state, _ = run(start(Ruleset(team_min_bid=4)), PlaceBid(0, 1), PlaceBid(1, 2))
    assert legal_bids(state, 2) == tuple(range(3, 14))
    with pytest.raises(TeamMinimumBid) as info:
        decide(state, PlaceBid(2, 0))
    assert info.value.code == "team_minimum_bid"


def test_team_min_bid_after_partner_nil_the_other_bids_at_least_four() -> None:
    state, _ = run(start(Ruleset(team_min_bid=4)), PlaceBid(0, 0), PlaceBid(1, 2))
    assert legal_bids(state, 2) == tuple(range(4, 14))


def test_suicide_first_partner_bids_nil_or_at_least_four() -> None:
    state = start(Ruleset(suicide=True))
    assert legal_bids(state, 0) == (0, *range(4, 14))
    with pytest.raises(SuicideBid) as info:
        decide(state, PlaceBid(0, 3))
    assert info.value.code == "suicide_bid"


def test_suicide_second_partner_bids_the_opposite() -> None:
    state, _ = run(start(Ruleset(suicide=True)), PlaceBid(0, 0), PlaceBid(1, 5))
    assert legal_bids(state, 2) == tuple(range(4, 14))
    state, _ = run(state, PlaceBid(2, 4))
    assert legal_bids(state, 3) == (0,)


def behind(rules: Ruleset | None = None, scores: tuple[int, ...] = (0, 150)) -> object:
    return start(rules, scores=scores)


def test_blind_nil_is_offered_before_the_hand_is_seen_only_when_trailing() -> None:
    state = start(scores=(0, 150))
    assert state.seen == (False, True, False, True)
    assert legal_actions(state, 0) == [DeclareBlindNil(0), DeclineBlindNil(0)]
    assert view(state, 0).hand == ()
    assert view(state, 0).hand_hidden
    assert len(view(state, 1).hand) == 13


def test_blind_nil_is_not_offered_when_not_trailing_enough() -> None:
    state = start(scores=(0, 99))
    assert all(state.seen)
    with pytest.raises(BlindNilNotAllowed) as info:
        decide(state, DeclareBlindNil(0))
    assert info.value.code == "blind_nil_not_allowed"


def test_blind_nil_deficit_option_raises_the_threshold() -> None:
    state = start(Ruleset(blind_nil_deficit=200), scores=(0, 150))
    assert all(state.seen)
    state = start(Ruleset(blind_nil_deficit=200), scores=(0, 200))
    assert not state.seen[0]


def test_blind_nil_off_never_offers_it() -> None:
    state = start(Ruleset(blind_nil=False), scores=(0, 400))
    assert all(state.seen)


def test_a_blind_candidate_must_choose_before_bidding() -> None:
    state = start(scores=(0, 150))
    with pytest.raises(BlindChoicePending) as info:
        decide(state, PlaceBid(0, 3))
    assert info.value.code == "blind_choice_pending"


def test_declining_blind_nil_shows_the_hand_and_the_seat_bids_normally() -> None:
    state, events = run(start(scores=(0, 150)), DeclineBlindNil(0))
    assert events == [BlindNilDeclined(0)]
    assert len(view(state, 0).hand) == 13
    assert state.turn == 0
    with pytest.raises(BlindNilNotAllowed):
        decide(state, DeclareBlindNil(0))
    state, _ = run(state, PlaceBid(0, 3))
    assert state.bids[0] == 3


def test_blind_nil_exchange_gives_two_cards_each_way() -> None:
    state, events = run(start(scores=(0, 150)), DeclareBlindNil(0))
    assert events == [BlindNilDeclared(0)]
    assert state.blind[0]
    assert state.bids[0] == 0
    state = bid_round(state, {1: 3, 2: 4, 3: 3})
    assert state.phase == "pass"
    assert state.turn == 0
    assert all(len(a.cards) == 2 for a in legal_actions(state, 0))  # type: ignore[union-attr]
    given = state.hands[0][-2:]
    state, events = run(state, PassCards(0, given))
    assert events == [CardsPassed(0, 2, given)]
    assert state.turn == 2
    assert set(given) <= set(state.hands[2])
    assert len(state.hands[2]) == 15
    back = state.hands[2][:2]
    state, _ = run(state, PassCards(2, back))
    assert set(back) <= set(state.hands[0])
    assert len(state.hands[0]) == 13
    assert state.phase == "play"
    assert state.turn == 0


def test_blind_nil_exchange_rejects_wrong_cards() -> None:
    state, _ = run(start(scores=(0, 150)), DeclareBlindNil(0))
    state = bid_round(state, {1: 3, 2: 4, 3: 3})
    foreign = state.hands[1][0]
    for cards in ((state.hands[0][0],), (state.hands[0][0], foreign), (state.hands[0][0],) * 2):
        with pytest.raises(InvalidPass) as info:
            decide(state, PassCards(0, cards))
        assert info.value.code == "invalid_pass"


def test_blind_nil_exchange_of_one_card() -> None:
    state, _ = run(start(Ruleset(blind_nil_exchange=1), scores=(0, 150)), DeclareBlindNil(0))
    state = bid_round(state, {1: 3, 2: 4, 3: 3})
    assert all(len(a.cards) == 1 for a in legal_actions(state, 0))  # type: ignore[union-attr]


def test_blind_nil_exchange_of_zero_cards_goes_straight_to_play() -> None:
    state, _ = run(start(Ruleset(blind_nil_exchange=0), scores=(0, 150)), DeclareBlindNil(0))
    state = bid_round(state, {1: 3, 2: 4, 3: 3})
    assert state.phase == "play"


def test_blind_bids_a_trailing_seat_may_bid_tricks_before_seeing_the_hand() -> None:
    rules = Ruleset(blind_bids=True, blind_nil=False)
    state = start(rules, scores=(0, 100))
    assert legal_actions(state, 0)[0] == DeclineBlindNil(0)
    assert PlaceBid(0, 5, True) in legal_actions(state, 0)
    state, events = run(state, PlaceBid(0, 5, True))
    assert events == [BidPlaced(0, 5, True)]
    assert state.blind[0]


def test_blind_bids_are_refused_when_off_or_not_trailing() -> None:
    state = start(Ruleset(blind_bids=True, blind_nil=False), scores=(0, 50))
    with pytest.raises(BlindBidNotAllowed) as info:
        decide(state, PlaceBid(0, 5, True))
    assert info.value.code == "blind_bid_not_allowed"
    with pytest.raises(BlindBidNotAllowed):
        decide(start(scores=(0, 150)), PlaceBid(0, 5, True))


def test_three_player_blind_nil_trails_the_best_other_player() -> None:
    state = start(Ruleset(players=3), scores=(0, 150, 20), dealer=2)
    assert state.seen == (False, True, False)
    state, _ = run(state, DeclareBlindNil(0))
    state = bid_round(state, {1: 5, 2: 5})
    assert state.phase == "play"  # no partner: no exchange


def test_a_malformed_exchange_is_rejected_not_crashed() -> None:
    state, _ = run(start(scores=(0, 150)), DeclareBlindNil(0))
    state = bid_round(state, {1: 3, 2: 4, 3: 3})
    with pytest.raises(InvalidPass):
        decide(state, PassCards(0, 7))  # type: ignore[arg-type]
    with pytest.raises(InvalidPass):
        decide(state, PassCards(0, ([1], [2])))  # type: ignore[arg-type]
