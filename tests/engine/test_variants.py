"""The seed-004 variants of issue 18: one test per rule, and the refused combinations."""

from __future__ import annotations

from collections import Counter

import pytest

from engine import (
    BIG_JOKER,
    LITTLE_JOKER,
    SPECTATOR,
    DeclareBlindNil,
    DeclineBlindNil,
    GameState,
    InvalidRuleset,
    PassCards,
    PlaceBid,
    PlayCard,
    Ruleset,
    RuleViolation,
    StartGame,
    decide,
    initial_state,
    legal_actions,
    legal_bids,
    parse_card,
    replay,
    score_hand,
    view,
)
from engine.bot import play_game
from engine.rules import tables
from engine.state import Trick
from tests.engine.support import bid_round, hands, run, start


def moe_state(
    rules: Ruleset,
    bids: tuple[int, ...],
    moe: tuple[bool, ...],
    winners: list[int],
    *,
    blind: tuple[bool, ...] = (False,) * 4,
    cards: dict[int, int] | None = None,
) -> tuple[GameState, tuple[int, ...], tuple[Trick, ...]]:
    """Return a four-seat state with these bids and the tricks won by ``winners`` in order.

    ``cards`` maps a trick's index to the card its winner won it with (led by the winner).
    """
    t = tables(rules)
    tricks = []
    for i, w in enumerate(winners):
        card = (cards or {}).get(i, 12)
        tricks.append(Trick(w, (card, 1, 2, 3), w))
    taken = tuple(winners.count(s) for s in range(4))
    state = GameState(
        rules=rules,
        tables=t,
        bids=bids,
        blind=blind,
        moe=moe,
        scores=(0, 0),
        bags=(0, 0),
    )
    return state, taken, tuple(tricks)


# -- five players --


def test_five_players_each_for_himself_50_cards_10_tricks() -> None:
    rules = Ruleset(players=5)
    t = tables(rules)
    assert len(t.deck) == 50
    assert parse_card("2C") not in t.deck
    assert parse_card("2D") not in t.deck
    assert rules.tricks_per_hand == 10
    assert rules.teams == 5
    state = start(rules)
    assert [len(h) for h in state.hands] == [10] * 5
    assert sorted(c for h in state.hands for c in h) == sorted(t.deck)
    assert max(legal_bids(state, state.turn)) == 10


def test_five_players_with_jokers_remove_all_four_deuces() -> None:
    t = tables(Ruleset(players=5, jokers=True))
    assert len(t.deck) == 50
    assert not {parse_card(f"2{s}") for s in "CDHS"} & set(t.deck)
    assert {LITTLE_JOKER, BIG_JOKER} <= set(t.deck)


def test_a_five_player_game_ends_and_scores_every_player_on_his_own() -> None:
    events, state = play_game(Ruleset(players=5, target=200), 11)
    assert state.phase == "over"
    assert len(state.scores) == 5
    assert replay(events) == state


# -- three players with jokers --


def test_three_players_with_jokers_keep_every_card_18_each() -> None:
    rules = Ruleset(players=3, jokers=True)
    assert len(tables(rules).deck) == 54
    state = start(rules)
    assert [len(h) for h in state.hands] == [18] * 3
    assert max(legal_bids(state, state.turn)) == 18
    assert Ruleset(players=3).tricks_per_hand == 17


# -- Big and Little Moe --------------------------------------------------------------------------


def test_moe_is_bid_by_the_first_partner_and_seconded_by_the_other() -> None:
    rules = Ruleset(moe=True)
    state = start(rules)  # dealer W: N bids first
    moes = [c for c in legal_actions(state, 0) if isinstance(c, PlaceBid) and c.moe]
    assert [c.tricks for c in moes] == [6, 8]
    state, events = run(state, PlaceBid(0, 8, moe=True))
    assert events[0].moe  # type: ignore[union-attr]
    state, _ = run(state, PlaceBid(1, 3))
    # S's partner bid Big Moe: seconding it is S's only bid.
    assert legal_actions(state, 2) == [PlaceBid(2, 8, moe=True)]
    with pytest.raises(RuleViolation) as info:
        decide(state, PlaceBid(2, 4))
    assert info.value.code == "moe_not_allowed"
    state, _ = run(state, PlaceBid(2, 8, moe=True))
    # W's partner E has bid a number: W may not bid a Moe any more.
    assert not any(isinstance(c, PlaceBid) and c.moe for c in legal_actions(state, 3))
    with pytest.raises(RuleViolation, match="only the first partner"):
        decide(state, PlaceBid(3, 6, moe=True))
    assert state.moe == (True, False, True, False)


def test_moe_needs_the_option_and_sight_of_the_hand() -> None:
    state = start()
    with pytest.raises(RuleViolation) as info:
        decide(state, PlaceBid(0, 8, moe=True))
    assert info.value.code == "moe_not_allowed"
    with pytest.raises(RuleViolation, match="6 \\(Little Moe\\) or 8"):
        decide(start(Ruleset(moe=True)), PlaceBid(0, 7, moe=True))


def test_big_moe_made_by_eight_in_a_row_scores_300_and_no_bags() -> None:
    rules = Ruleset(moe=True)
    # N+S take tricks 2..9 in a row (N, S, N, ...), E+W the rest: a run of 8, 9 tricks.
    winners = [1, 0, 2, 0, 2, 0, 2, 0, 2, 3, 1, 3, 1]
    state, taken, tricks = moe_state(rules, (8, 2, 8, 2), (True, False, True, False), winners)
    points, _, bags, _ = score_hand(state, taken, tricks)
    assert points[0] == 300
    assert bags[0] == 0


def test_an_opponents_trick_resets_the_moe_run() -> None:
    rules = Ruleset(moe=True)
    # Ten tricks for N+S but never more than five in a row: Little Moe (6) is set.
    winners = [0, 2, 0, 2, 0, 1, 0, 2, 0, 2, 0, 3, 1]
    state, taken, tricks = moe_state(rules, (6, 2, 6, 1), (True, False, True, False), winners)
    points, *_ = score_hand(state, taken, tricks)
    assert points[0] == -150
    zero = Ruleset(moe=True, set_scores_zero=True)
    state, taken, tricks = moe_state(zero, (6, 2, 6, 1), (True, False, True, False), winners)
    assert score_hand(state, taken, tricks)[0][0] == 0


def test_little_moe_made_scores_150() -> None:
    rules = Ruleset(moe=True)
    winners = [1, 3, 1, 0, 2, 2, 0, 0, 2, 3, 3, 1, 1]
    state, taken, tricks = moe_state(rules, (2, 6, 2, 6), (False, True, False, True), winners)
    # E+W never take six in a row; N+S bid 4 and took 6 (2 bags).
    points, _, bags, _ = score_hand(state, taken, tricks)
    assert points == (42, -150)
    assert bags == (2, 0)


# -- Little Willie -------------------------------------------------------------------------------


def test_little_willie_counts_two_toward_the_contract_never_as_a_bag() -> None:
    rules = Ruleset(jokers=True, deuces_high=True, little_willie=True)
    two_clubs = parse_card("2C")
    # N+S bid 4 and took 3 tricks, one of them won with 2C: made, 40, no bag.
    winners = [0, 2, 0, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3]
    state, taken, tricks = moe_state(
        rules, (2, 5, 2, 5), (False,) * 4, winners, cards={2: two_clubs}
    )
    points, _, bags, _ = score_hand(state, taken, tricks)
    assert points[0] == 40
    assert bags[0] == 0
    # Without the option the same hand is set.
    plain = Ruleset(jokers=True, deuces_high=True)
    state, taken, tricks = moe_state(
        plain, (2, 5, 2, 5), (False,) * 4, winners, cards={2: two_clubs}
    )
    assert score_hand(state, taken, tricks)[0][0] == -40


def test_a_willie_is_no_extra_overtrick() -> None:
    rules = Ruleset(jokers=True, deuces_high=True, little_willie=True)
    winners = [0, 2, 0, 0, 1, 1, 1, 1, 3, 3, 3, 3, 3]
    state, taken, tricks = moe_state(
        rules, (1, 5, 2, 5), (False,) * 4, winners, cards={0: parse_card("2C")}
    )
    points, _, bags, _ = score_hand(state, taken, tricks)
    # Bid 3, took 4 real tricks (one a Willie): one bag, not two.
    assert points[0] == 31
    assert bags[0] == 1


# -- blind bids: minimum and ten for two blind ----------------------------------------------------


def test_a_partnership_blind_bid_has_the_tables_minimum() -> None:
    rules = Ruleset(blind_bids=True, blind_bid_min=6, blind_nil=False)
    state = start(rules, scores=(0, 150))
    blind = [c.tricks for c in legal_actions(state, 0) if isinstance(c, PlaceBid) and c.blind]
    assert blind == list(range(6, 14))
    with pytest.raises(RuleViolation) as info:
        decide(state, PlaceBid(0, 5, blind=True))
    assert info.value.code == "blind_bid_not_allowed"
    assert "at least 6" in str(info.value)
    state, _ = run(state, PlaceBid(0, 6, blind=True))
    assert state.blind[0]


def test_ten_for_two_bid_blind_is_worth_400() -> None:
    rules = Ruleset(ten_for_two_hundred=True, blind_bids=True, ten_for_two_blind=True)
    state, taken, tricks = moe_state(
        rules,
        (6, 1, 4, 1),
        (False,) * 4,
        [0] * 6 + [2] * 5 + [1, 3],
        blind=(True, False, True, False),
    )
    points, _, bags, _ = score_hand(state, taken, tricks)
    assert points[0] == 400
    assert bags[0] == 0
    # Only partly blind: not 400, and never less than the same ten bid seen (200).
    state, taken, tricks = moe_state(
        rules,
        (6, 1, 4, 1),
        (False,) * 4,
        [0] * 6 + [2] * 4 + [1, 3, 1],
        blind=(True,) + (False,) * 3,
    )
    assert score_hand(state, taken, tricks)[0][0] == 200
    # Not blind at all: the plain ten for two hundred.
    state, taken, tricks = moe_state(
        rules, (6, 1, 4, 1), (False,) * 4, [0] * 6 + [2] * 4 + [1, 3, 1]
    )
    assert score_hand(state, taken, tricks)[0][0] == 200


# -- where the rule book is silent (issue 28): one test per decision, as the Ruleset says ------


def test_ten_for_two_with_a_blind_half_scores_no_less_than_bid_seen() -> None:
    # N bids 5 blind, S 5 seen, they take 10: the blind rule alone gave 150 (5 x 20 +
    # 5 x 10), less than the 200 of the same ten bid seen; the better of the two counts.
    rules = Ruleset(ten_for_two_hundred=True, blind_bids=True)
    winners = [0] * 5 + [2] * 5 + [1, 3, 1]
    blind = (True, False, False, False)
    state, taken, tricks = moe_state(rules, (5, 1, 5, 1), (False,) * 4, winners, blind=blind)
    points, _, bags, _ = score_hand(state, taken, tricks)
    assert points[0] == 200
    assert bags[0] == 0
    # More of it blind, the blind rule is worth more: 9 blind and 4 seen, made, 220.
    winners = [0] * 9 + [2] * 4
    state, taken, tricks = moe_state(rules, (9, 0, 4, 0), (False,) * 4, winners, blind=blind)
    assert score_hand(state, taken, tricks)[0][0] == 220
    # Games recorded before the decision keep the blind rule alone.
    old = Ruleset(ten_for_two_hundred=True, blind_bids=True, ten_for_two_part_blind="blind_rule")
    winners = [0] * 5 + [2] * 5 + [1, 3, 1]
    state, taken, tricks = moe_state(old, (5, 1, 5, 1), (False,) * 4, winners, blind=blind)
    assert score_hand(state, taken, tricks)[0][0] == 150
    # Set, it costs the usual 10 a trick bid.
    winners = [0] * 5 + [2] * 4 + [1, 3, 1, 3]
    state, taken, tricks = moe_state(rules, (5, 1, 5, 1), (False,) * 4, winners, blind=blind)
    assert score_hand(state, taken, tricks)[0][0] == -100
    with pytest.raises(InvalidRuleset, match="needs ten_for_two_hundred and blind_bids"):
        Ruleset(ten_for_two_part_blind="blind_rule")


def test_five_players_without_jokers_remove_the_two_of_clubs_and_of_diamonds() -> None:
    deck = set(tables(Ruleset(players=5)).deck)
    removed = {c for c in range(52) if c not in deck}
    assert removed == {parse_card("2C"), parse_card("2D")}


def test_a_failed_moe_costs_its_value_little_150_big_300() -> None:
    # N+S never take more than three tricks in a row.
    winners = [0, 2, 0, 1, 0, 2, 0, 3, 2, 0, 2, 1, 3]
    for need, value in ((6, -150), (8, -300)):
        bids = (need, 2, need, 2)
        state, taken, tricks = moe_state(
            Ruleset(moe=True), bids, (True, False, True, False), winners
        )
        points, _, bags, _ = score_hand(state, taken, tricks)
        assert points[0] == value
        assert bags[0] == 0


def test_the_blind_bid_minimum_binds_each_blind_bidder_not_the_side() -> None:
    rules = Ruleset(blind_bids=True, blind_bid_min=6, blind_nil=False)
    state = start(rules, scores=(0, 150), dealer=3)
    # N bids 4 seen: the side's contract counts for nothing; S bidding blind needs 6 himself.
    state, _ = run(state, DeclineBlindNil(0), PlaceBid(0, 4), PlaceBid(1, 3))
    blind = [c.tricks for c in legal_actions(state, 2) if isinstance(c, PlaceBid) and c.blind]
    assert blind == list(range(6, 14))
    with pytest.raises(RuleViolation, match="at least 6"):
        decide(state, PlaceBid(2, 2, blind=True))
    # Both partners blind: each bid is held to the minimum on its own.
    state = start(rules, scores=(0, 150), dealer=3)
    state, _ = run(state, PlaceBid(0, 6, blind=True), PlaceBid(1, 3))
    with pytest.raises(RuleViolation, match="at least 6"):
        decide(state, PlaceBid(2, 5, blind=True))
    state, _ = run(state, PlaceBid(2, 6, blind=True))
    assert state.blind[:3] == (True, False, True)


def test_with_set_scores_zero_a_failed_nil_still_costs_the_nil_value() -> None:
    rules = Ruleset(set_scores_zero=True)
    # N nil takes a trick, S bid 5 takes 4: the set scores 0, the nil -100 (+1 bag).
    winners = [0] + [2] * 4 + [1] * 4 + [3] * 4
    state, taken, tricks = moe_state(rules, (0, 4, 5, 4), (False,) * 4, winners)
    points, _, bags, _ = score_hand(state, taken, tricks)
    assert points[0] == -100 + 1
    assert bags[0] == 1


def test_a_spade_only_leaders_spade_breaks_spades() -> None:
    # N holds only spades and leads one before any spade was played: after it every
    # leader may lead spades.
    deal = hands(
        "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
        "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H",
        "AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D",
        "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
    )
    state = bid_round(start(Ruleset(), deal, dealer=3), {0: 13, 1: 1, 2: 1, 3: 1})
    assert not state.broken
    state, _ = run(
        state,
        PlayCard(0, parse_card("2S")),
        PlayCard(1, parse_card("2H")),
        PlayCard(2, parse_card("2D")),
        PlayCard(3, parse_card("2C")),
    )
    assert state.broken
    assert view(state, 1).spades_broken


# -- set scores zero --


def test_a_broken_contract_scores_zero_in_the_solo_variant() -> None:
    rules = Ruleset(players=3, set_scores_zero=True)
    state = GameState(
        rules=rules,
        tables=tables(rules),
        bids=(5, 4, 6),
        blind=(False,) * 3,
        scores=(0, 0, 0),
        bags=(0, 0, 0),
    )
    points, *_ = score_hand(state, (4, 6, 7))
    assert points == (0, 42, 61)
    boston = Ruleset(boston=True, set_scores_zero=True)
    state, taken, tricks = moe_state(boston, (7, 0, 6, 0), (False,) * 4, [0] * 12 + [1])
    assert score_hand(state, taken, tricks)[0][0] == -250


# -- partnership bidding order --


def test_partnership_bidding_order_left_his_partner_dealers_partner_dealer() -> None:
    rules = Ruleset(bidding_order="partners")
    state = start(rules, dealer=1)  # dealer E: S, N, W, E
    order = []
    while state.phase == "bid":
        order.append(state.turn)
        with pytest.raises(RuleViolation) as info:
            decide(state, PlaceBid((state.turn + 1) % 4, 3))
        assert info.value.code == "out_of_turn"
        state, _ = run(state, PlaceBid(state.turn, 3))
    assert order == [2, 0, 3, 1]
    assert state.turn == 2  # dealer's left still leads


# -- nil card exchange --


DEAL = hands(
    "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
    "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H",
    "AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D",
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
)


def test_nil_card_exchange_nil_bidder_gives_first_partner_sees_it_then_bids() -> None:
    rules = Ruleset(nil_exchange=True)
    state, _ = run(start(rules, DEAL), PlaceBid(0, 0))
    assert (state.phase, state.turn) == ("pass", 0)
    assert legal_actions(state, 0)[0] == PassCards(0, (parse_card("2S"),))
    with pytest.raises(RuleViolation, match="exactly 1 different card"):
        decide(state, PassCards(0, state.hands[0][:2]))
    state, _ = run(state, PassCards(0, (parse_card("2S"),)))
    assert view(state, 2).received == (parse_card("2S"),)
    assert (state.phase, state.turn) == ("pass", 2)
    state, _ = run(state, PassCards(2, (parse_card("AD"),)))
    # The bidding goes on with E, then S (the partner) bids having seen the swap.
    assert (state.phase, state.turn) == ("bid", 1)
    assert parse_card("AD") in state.hands[0]
    assert parse_card("2S") in state.hands[2]
    state = bid_round(state, {1: 3, 2: 4, 3: 3})
    assert state.phase == "play"


def test_nil_card_exchange_without_peek_the_partner_gives_first() -> None:
    rules = Ruleset(nil_exchange=True, nil_exchange_peek=False)
    state, _ = run(start(rules, DEAL), PlaceBid(0, 0))
    assert (state.phase, state.turn) == ("pass", 2)
    assert view(state, 2).received == ()


def test_nil_card_exchange_needs_the_deficit_and_a_partner_yet_to_bid() -> None:
    rules = Ruleset(nil_exchange=True, nil_exchange_deficit=1)
    state, _ = run(start(rules, DEAL, scores=(10, 0)), PlaceBid(0, 0))
    assert state.phase == "bid"  # N+S lead: no exchange
    state, _ = run(start(rules, DEAL, scores=(0, 10)), PlaceBid(0, 0))
    assert state.phase == "pass"
    # W's partner E has already bid: W's nil starts no exchange.
    state = start(Ruleset(nil_exchange=True), DEAL)
    state, _ = run(state, PlaceBid(0, 3), PlaceBid(1, 3), PlaceBid(2, 3), PlaceBid(3, 0))
    assert state.phase == "play"


def test_nil_card_exchange_runs_when_the_partner_is_still_a_blind_candidate() -> None:
    # N+S trail by 100 at 100/200: both are offered blind nil before seeing their hands.
    # N declines and bids nil; the exchange still opens (it used to be skipped while
    # S had not seen his hand, so a deficit at or above blind nil's never swapped), and
    # S, who gives a card from his hand, sees it: his blind choice is over.
    rules = Ruleset(nil_exchange=True)
    state = start(rules, DEAL, scores=(100, 200), dealer=3)
    assert not state.seen[0]
    assert not state.seen[2]
    state, _ = run(state, DeclineBlindNil(0), PlaceBid(0, 0))
    assert (state.phase, state.turn) == ("pass", 0)
    assert state.seen[2]
    assert not view(state, 2).hand_hidden
    state, _ = run(state, PassCards(0, (parse_card("2S"),)), PassCards(2, (parse_card("AD"),)))
    assert (state.phase, state.turn) == ("bid", 1)
    state, _ = run(state, PlaceBid(1, 3))
    assert DeclareBlindNil(2) not in legal_actions(state, 2)
    with pytest.raises(RuleViolation) as info:
        decide(state, DeclareBlindNil(2))
    assert info.value.code == "blind_nil_not_allowed"
    state = bid_round(state, {2: 4, 3: 3})
    assert state.phase == "play"
    assert parse_card("AD") in state.hands[0]
    assert parse_card("2S") in state.hands[2]


# -- suicide, forcing -----------------------------------------------------------------------------


def test_suicide_forcing_copying_a_number_makes_the_partner_nil() -> None:
    rules = Ruleset(suicide=True, suicide_forcing=True)
    state, _ = run(start(rules, DEAL), PlaceBid(0, 5), PlaceBid(1, 0))
    assert legal_bids(state, 2) == (0, 5)
    state, _ = run(state, PlaceBid(2, 5))
    assert state.bids[:3] == (0, 0, 5)
    assert state.turn == 3


def test_suicide_forcing_copying_nil_sends_the_first_partner_back_to_bid_four_or_more() -> None:
    rules = Ruleset(suicide=True, suicide_forcing=True)
    state, _ = run(start(rules, DEAL), PlaceBid(0, 0), PlaceBid(1, 4))
    assert 0 in legal_bids(state, 2)
    assert 4 in legal_bids(state, 2)
    state, _ = run(state, PlaceBid(2, 0))
    assert (state.turn, state.bids[0]) == (0, -1)
    assert legal_bids(state, 0) == tuple(range(4, 14))
    with pytest.raises(RuleViolation) as info:
        decide(state, PlaceBid(0, 0))
    assert info.value.code == "suicide_bid"
    state, _ = run(state, PlaceBid(0, 6))
    assert state.turn == 3
    assert legal_bids(state, 3) == (0, 4)
    state, _ = run(state, PlaceBid(3, 0))
    assert state.bids == (6, 4, 0, 0)


def test_without_forcing_a_copy_is_refused() -> None:
    state, _ = run(start(Ruleset(suicide=True), DEAL), PlaceBid(0, 5), PlaceBid(1, 0))
    with pytest.raises(RuleViolation) as info:
        decide(state, PlaceBid(2, 5))
    assert info.value.code == "suicide_bid"


# -- power checks --


def test_power_checks_are_shown_to_every_seat_and_nothing_else() -> None:
    rules = Ruleset(power_checks=3, blind_nil_deficit=100)
    state = start(rules, scores=(0, 150))
    assert [len(up) for up in state.face_up] == [3, 3, 3, 3]
    for seat, up in enumerate(state.face_up):
        assert set(up) <= set(state.hands[seat])
    for seat in (0, 1, 2, 3, SPECTATOR):
        v = view(state, seat)
        assert v.face_up == state.face_up
        others = {c for s, h in enumerate(state.hands) if s != seat for c in h}
        public = {c for up in state.face_up for c in up}
        assert not (set(v.hand) & others)
        assert not (set(v.hand) - public) & others
    # N is a blind candidate: no hand, but every face-up card, his own too.
    assert view(state, 0).hand == ()
    assert view(state, 0).face_up[0] == state.face_up[0]


def test_a_played_power_check_leaves_the_face_up_row() -> None:
    rules = Ruleset(power_checks=1, first_lead="any")
    state = start(rules)
    state = bid_round(state, {0: 3, 1: 3, 2: 3, 3: 3})
    card = state.face_up[0][0]
    state, _ = run(state, PlayCard(0, card))
    assert view(state, 1).face_up[0] == ()
    assert view(state, 1).face_up[1] == state.face_up[1]


def test_power_check_deal_is_the_first_cards_each_seat_gets() -> None:
    one = decide(initial_state(), StartGame(Ruleset(power_checks=2), 5))[1]
    plain = decide(initial_state(), StartGame(Ruleset(), 5))[1]
    assert one.hands == plain.hands  # type: ignore[union-attr]
    counts = Counter(len(up) for up in one.face_up)  # type: ignore[union-attr]
    assert counts == {2: 4}


# -- per-player minimum of two --


def test_per_player_minimum_of_two_in_partnerships() -> None:
    state = start(Ruleset(min_bid=2))
    assert legal_bids(state, state.turn) == (0, *range(2, 14))
    with pytest.raises(RuleViolation) as info:
        decide(state, PlaceBid(state.turn, 1))
    assert info.value.code == "bid_out_of_range"


# -- blind nil is untouched by the new options --


def test_blind_nil_with_partners_order_exchanges_in_bidding_order() -> None:
    rules = Ruleset(bidding_order="partners")
    state = start(rules, scores=(0, 150))
    state, _ = run(state, DeclareBlindNil(0))
    assert state.turn == 2
    state, _ = run(state, DeclineBlindNil(2))
    state = bid_round(state, {1: 3, 2: 4, 3: 3})
    assert (state.phase, state.turn) == ("pass", 0)


# -- refused combinations --


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"players": 5, "deuces_high": True}, "five players remove the deuces"),
        ({"players": 3, "moe": True}, "moe is a partnership rule"),
        ({"moe": True, "suicide": True}, "moe with suicide"),
        ({"little_willie": True}, "Joker-Joker-Deuce"),
        ({"little_willie": True, "jokers": True}, "Joker-Joker-Deuce"),
        ({"blind_bid_min": 6}, "blind_bid_min needs blind_bids"),
        ({"blind_bid_min": 14, "blind_bids": True}, "above the 13 tricks"),
        ({"ten_for_two_blind": True, "blind_bids": True}, "needs ten_for_two_hundred"),
        ({"ten_for_two_blind": True, "ten_for_two_hundred": True}, "and blind_bids"),
        ({"bidding_order": "anticlockwise"}, "bidding_order must be one of"),
        ({"bidding_order": "partners", "players": 2}, "partnership rule"),
        ({"nil_exchange": True, "players": 3}, "partnership rule"),
        ({"nil_exchange": True, "nil_allowed": False, "blind_nil": False}, "needs nil_allowed"),
        ({"nil_exchange_deficit": 100}, "needs nil_exchange"),
        ({"suicide_forcing": True}, "needs suicide"),
        ({"power_checks": 4}, "0..3"),
        ({"power_checks": 1, "players": 2, "deal": "draw", "blind_nil": False}, "draw deal"),
        ({"players": 6}, "2, 3, 4 or 5"),
    ],
)
def test_an_inconsistent_variant_combination_is_refused_with_the_reason(
    options: dict[str, object], reason: str
) -> None:
    with pytest.raises(InvalidRuleset, match=reason):
        Ruleset(**options)  # type: ignore[arg-type]


def test_every_new_option_defaults_to_the_old_behaviour() -> None:
    ladder = Ruleset()
    assert ladder.changes() == {}
    for name in (
        "moe",
        "little_willie",
        "ten_for_two_blind",
        "set_scores_zero",
        "nil_exchange",
        "suicide_forcing",
    ):
        assert getattr(ladder, name) is False
    assert (ladder.blind_bid_min, ladder.power_checks, ladder.bidding_order) == (0, 0, "clockwise")
    assert ladder.nil_exchange_deficit == 0
