"""The baseline bot: legal, deterministic, acting on a view alone, and its named habits."""

from __future__ import annotations

import dataclasses
import inspect

from hypothesis import given
from hypothesis import strategies as st

from engine import (
    Command,
    DeclareBlindNil,
    DeclineBlindNil,
    GameState,
    PassCards,
    PlaceBid,
    PlayCard,
    Ruleset,
    SeatView,
    StartGame,
    bot,
    bothand,
    decide,
    initial_state,
    parse_card,
    parse_cards,
    replay,
    view,
)
from engine.bot import choose, play_game
from engine.bothand import estimate
from engine.botplay import set_chance
from engine.rules import tables
from tests.engine.support import bid_round, hands, run, start
from tests.engine.test_properties import PROFILE, play, rulesets


def test_the_bot_takes_a_view_not_a_state() -> None:
    params = inspect.signature(choose).parameters
    assert list(params) == ["view", "rng"]
    assert "GameState" not in inspect.getsource(bot.choose)


@PROFILE
@given(rulesets(max_hands=3), st.integers(0, 2**32))
def test_the_bot_always_picks_a_legal_action(rules: Ruleset, seed: int) -> None:
    for state, _ in play(rules, seed):
        v = view(state, state.turn)
        assert choose(v) in v.legal


def test_the_bot_is_deterministic_given_the_view() -> None:
    a, _ = play_game(Ruleset(), 11)
    b, _ = play_game(Ruleset(), 11)
    assert a == b


def test_bot_games_end_and_mostly_reach_the_target() -> None:
    reasons = [play_game(Ruleset(), seed)[1].reason for seed in range(8)]
    assert reasons.count("target") >= 5, reasons


STRONG = "AS KS QS JS AH KH AD KD AC KC QC JC TC"
WEAK = "2S 3S 2H 3H 4H 5H 2D 3D 4D 5D 2C 3C 4C"


def test_sure_trick_counting_values_aces_kings_and_top_spades() -> None:
    t = tables(Ruleset())
    strong = estimate(tuple(sorted(hands(STRONG)[0])), t)
    weak = estimate(tuple(sorted(hands(WEAK)[0])), t)
    assert strong >= 8
    assert weak < 1


def test_an_ace_and_king_head_a_long_suit_as_sure_tricks() -> None:
    # The hand: S:Q6 H:AKQ9765 C:Q D:KQ3 bid 1 and took 4 (the ace and king of a
    # seven-card suit counted nothing).
    t = tables(Ruleset())
    long_suit = tuple(sorted(parse_cards("AH KH QH 9H 7H 6H 5H")))
    assert estimate(long_suit, t) >= 1.5
    command = choose(bidding_view("QS 6S AH KH QH 9H 7H 6H 5H QC KD QD 3D"))
    assert isinstance(command, PlaceBid)
    assert command.tricks >= 3


def bidding_view(hand: str) -> SeatView:
    others = [c for c in range(52) if c not in hands(hand)[0]]
    dealt = (hands(hand)[0], tuple(others[:13]), tuple(others[13:26]), tuple(others[26:39]))
    return view(start(None, dealt), 0)


def test_the_bot_bids_nil_with_a_safe_hand() -> None:
    assert choose(bidding_view(WEAK)) == PlaceBid(0, 0)


def test_the_bot_bids_its_counted_tricks_with_a_strong_hand() -> None:
    command = choose(bidding_view(STRONG))
    assert isinstance(command, PlaceBid)
    assert command.tricks >= 8


def test_blind_nil_only_when_far_behind_near_the_end() -> None:
    close = view(start(scores=(0, 150)), 0)
    assert choose(close) == DeclineBlindNil(0)
    desperate = view(start(scores=(100, 420)), 0)
    assert choose(desperate) == DeclareBlindNil(0)


def test_no_blind_nil_whose_failure_would_end_the_game_by_the_mercy_floor() -> None:
    # As far behind as the desperate side above, but a failed blind nil (-200) and the
    # partner's set beside it would take it to the mercy floor (-200): the game would end
    # by mercy instead of the target (issue #28: 14 of the 15 mercy ends of 96 duplicate
    # strong-v-baseline games followed the baseline's failed blind nil).
    assert choose(view(start(scores=(-20, 400)), 0)) == DeclineBlindNil(0)
    assert choose(view(start(scores=(40, 420)), 0)) == DeclineBlindNil(0)
    # Near a bag penalty the failure costs one more hundred.
    assert choose(view(start(scores=(100, 420), bags=(8, 0)), 0)) == DeclineBlindNil(0)
    # Without the mercy rule there is no floor to fall to.
    far_behind = view(start(Ruleset(mercy=0), scores=(-20, 400)), 0)
    assert choose(far_behind) == DeclareBlindNil(0)


def unseen_above(card: int, hand: tuple[int, ...], t: object) -> int:
    suit, power, deck = t.suit, t.power, t.deck  # type: ignore[attr-defined]
    return sum(
        1 for d in deck if suit[d] == suit[card] and power[d] > power[card] and d not in hand
    )


def test_the_blind_nil_bidder_passes_his_most_dangerous_cards() -> None:
    state, _ = run(start(scores=(100, 420)), DeclareBlindNil(0))
    state = bid_round(state, {1: 3, 2: 4, 3: 3})
    command = choose(view(state, 0))
    assert isinstance(command, PassCards)
    hand, t = state.hands[0], state.tables
    # No card kept has fewer unseen cards above it than a card given.
    assert max(unseen_above(c, hand, t) for c in command.cards) <= min(
        unseen_above(c, hand, t) for c in hand if c not in command.cards
    )


def test_the_nil_exchange_gives_the_card_that_endangers_the_nil_most() -> None:
    # N bids nil with a bare ace of diamonds: it wins the first diamond led, whatever N
    # does. The exchange gives it to the partner (it used to give the lowest card, 2C).
    deal = hands(
        "AD KH 2H 3H 2S 3S 2C 3C 4C 5C 6C 7C 8C",
        "AS KS QS JS TS 9S 8S 7S 6S 5S 4S AH QH",
        "KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D JH",
        "AC KC QC JC TC 9C TH 9H 8H 7H 6H 5H 4H",
    )
    state, _ = run(start(Ruleset(nil_exchange=True), deal), PlaceBid(0, 0))
    assert choose(view(state, 0)) == PassCards(0, (parse_card("AD"),))


# N (nil) leads into E; S covers. Dealer W, so N leads.
COVER = hands(
    "2H 3C 4C 5C 6C 7C 8C 9C 2D 3D 4D 5D 6D",
    "3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH 2S",
    "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S TC",
    "JC QC KC AC TD JD QD KD AD 7D 8D 9D 3H",
)


def test_the_nil_bidder_ducks_with_his_highest_losing_card() -> None:
    state = bid_round(start(None, COVER), {0: 0, 1: 4, 2: 5, 3: 4})
    state, _ = run(state, PlayCard(0, parse_card("2H")), PlayCard(1, parse_card("AH")))
    state, _ = run(state, PlayCard(2, parse_card("AS")), PlayCard(3, parse_card("3H")))
    # S won and leads; E W follow; N must duck a club under the highest one played.
    state, _ = run(state, PlayCard(2, parse_card("TC")), PlayCard(3, parse_card("JC")))
    assert choose(view(state, 0)) == PlayCard(0, parse_card("9C"))


def after_east_leads_a_heart(bids: dict[int, int], taken: tuple[int, ...]) -> SeatView:
    # Dealer N, so E leads; S (void in hearts) plays second, N last.
    state = bid_round(start(None, COVER, dealer=0), bids)
    state, _ = run(state._replace(taken=taken), PlayCard(1, parse_card("3H")))
    return view(state, 2)


def test_the_partner_covers_a_nil_by_heading_the_trick_before_him() -> None:
    # Void in hearts, S ruffs: his lowest spade heads the trick as well as his ace.
    v = after_east_leads_a_heart({0: 0, 1: 4, 2: 5, 3: 4}, (0, 0, 0, 0))
    assert choose(v) == PlayCard(2, parse_card("3S"))


# N is nil, last to play to E's heart lead with only the two top hearts.
SHED = hands(
    "AH KH 3C 4C 5C 6C 7C 8C 9C 2D 3D 4D 5D",
    "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH 2S 3S",
    "AS KS QS JS TS 9S 8S 7S 6S 5S 4S TC 6D",
    "JC QC KC AC 2C TD JD QD KD AD 7D 8D 9D",
)


def test_the_nil_bidder_last_with_no_losing_card_sheds_his_highest() -> None:
    # Whatever he plays the trick is his: keeping the ace would lose a second trick.
    state = bid_round(start(None, SHED, dealer=0), {0: 0, 1: 4, 2: 5, 3: 4})
    state, _ = run(state, PlayCard(1, parse_card("2H")), PlayCard(2, parse_card("6D")))
    state, _ = run(state, PlayCard(3, parse_card("2C")))
    assert choose(view(state, 0)) == PlayCard(0, parse_card("AH"))


# S leads to his nil partner N; spades are broken. His spades are all below N's.
LEAD = hands(
    "AS KS QS 3C 4C 5C 6C 7C 8C 9C 2D 3D 4D",
    "AH KH 2H 3H 4H 5H 6H JS TS 9S 8S 5D 6D",
    "7S 6S 5S 4S 3S 2S QH 2C TC 7D 8D 9D TD",
    "7H 8H 9H TH JH JC QC KC AC JD QD KD AD",
)


def test_the_nil_partner_leads_his_side_card_with_fewest_unseen_above() -> None:
    # Leading his highest card, the 7S, left the nil only spades that win (the most
    # common failed suicide nil); the QH has two unseen cards above it, any other four.
    state = bid_round(start(None, LEAD, dealer=1), {0: 0, 1: 4, 2: 5, 3: 4})
    state = state._replace(broken=True)
    assert choose(view(state, 2)) == PlayCard(2, parse_card("QH"))


def test_the_bot_ducks_bags_once_both_contracts_are_made() -> None:
    v = after_east_leads_a_heart({0: 1, 1: 1, 2: 1, 3: 1}, (1, 1, 1, 1))
    assert choose(v) == PlayCard(2, parse_card("TC"))


def test_the_bot_keeps_winning_while_the_opponents_can_be_set() -> None:
    v = after_east_leads_a_heart({0: 1, 1: 4, 2: 1, 3: 4}, (1, 0, 1, 0))
    assert choose(v) == PlayCard(2, parse_card("3S"))


def test_the_bot_chases_no_set_the_opponents_are_all_but_sure_to_make() -> None:
    # E+W bid 8 and hold 6 with every trick to play: setting them means taking 12 of the
    # 13 left. The old chase (2 needed of 13, times a 160-point swing) spent a trump on it.
    v = after_east_leads_a_heart({0: 1, 1: 4, 2: 1, 3: 4}, (1, 3, 1, 3))
    assert choose(v) == PlayCard(2, parse_card("TC"))


def test_the_set_chance_is_the_opponents_missing_their_need() -> None:
    assert set_chance(1, 1, 0.5) == 0.5
    assert set_chance(3, 3, 0.6) > 0.5 > set_chance(1, 6, 0.6)
    assert set_chance(2, 13, 0.6) < 0.001


# S leads the second trick having made the side's contract, the opponents theirs.
DUCK = hands(
    "3H 2C 3C 4C 5C 6C 2S 3S 4S 5S 6S 7S 8S",
    "5H 6H 7H 8H 9H TH JH QH KH 9S TS JS QS",
    "AH 4H 3D KD QD JD KC QC JC TC 9C 8C 7C",
    "2H 2D 4D 5D 6D 7D 8D 9D TD AD AC KS AS",
)


def ducking_state() -> GameState:
    state = bid_round(start(None, DUCK, dealer=1), {0: 1, 1: 1, 2: 1, 3: 1})
    plays = [(2, "AH"), (3, "2H"), (0, "3H"), (1, "5H")]
    state, _ = run(state, *(PlayCard(s, parse_card(c)) for s, c in plays))
    return state._replace(taken=(1, 1, 2, 1))


def ducking_lead() -> SeatView:
    return view(ducking_state(), 2)


def test_a_side_ducking_bags_leads_the_card_nobody_can_play_under() -> None:
    # The 3D is the lowest card but the unseen 2D can duck under it and hand S a bag;
    # under the 4H every heart is gone and eight unseen hearts are above it.
    v = ducking_lead()
    assert v.trick == ()
    assert v.turn == 2
    assert choose(v) == PlayCard(2, parse_card("4H"))


def test_last_to_a_trick_every_card_wins_a_ducking_side_sheds_its_highest() -> None:
    # S leads the 4H; W, N and E follow: E last holds only hearts above the trick.
    state = ducking_state()
    state, _ = run(state, PlayCard(2, parse_card("4H")), PlayCard(3, parse_card("2D")))
    state, _ = run(state, PlayCard(0, parse_card("2C")))
    assert choose(view(state, 1)) == PlayCard(1, parse_card("KH"))


def test_a_partners_nil_or_an_opponents_adds_to_the_tricks_bid() -> None:
    # Covering a partner's nil means playing high; an opponent's nil leaves its tricks
    # to the other three seats.
    alone = bidding_view("QS 6S AH KH 9H 7H QC JC 5C KD QD 3D 2D")
    bids = list(alone.bids)
    assert bids[2] < 0
    assert bids[1] < 0
    plain = bot.wanted_bid(alone)
    bids[2] = 0
    assert bot.wanted_bid(dataclasses.replace(alone, bids=tuple(bids))) == plain + 1
    bids[2], bids[1], bids[3] = -1, 0, 0
    assert bot.wanted_bid(dataclasses.replace(alone, bids=tuple(bids))) == plain + 1


def test_a_blind_nil_partner_bids_the_high_cards_the_exchange_will_bring() -> None:
    # A blind nil gives its partner its most dangerous (high) cards after the bids: with
    # jokers the partner of a blind nil took +1.83 tricks over its bid in self-play (a seen
    # nil's partner +0.16), +3.13 beside the strong bot (`bot.BLIND_NIL_CARD_TRICKS`).
    plain = bidding_view("QS 6S AH KH 9H 7H QC JC 5C KD QD 4D 3D")
    bids = list(plain.bids)
    bids[2] = 0
    jokers = Ruleset(jokers=True)
    seen = dataclasses.replace(plain, bids=tuple(bids), rules=jokers)
    blind = dataclasses.replace(seen, blind=(False, False, True, False))
    assert bot.wanted_bid(blind) >= bot.wanted_bid(seen) + 1
    # No exchange at the table: nothing comes, nothing is added.
    none = dataclasses.replace(blind, rules=dataclasses.replace(jokers, blind_nil_exchange=0))
    assert bot.wanted_bid(none) == bot.wanted_bid(seen)
    # Nor with the plain deck: there the ladder's self-play ended fewer games by the target.
    ladder = dataclasses.replace(blind, rules=Ruleset())
    assert bot.wanted_bid(ladder) == bot.wanted_bid(dataclasses.replace(seen, rules=Ruleset()))


def test_with_jokers_an_opponents_nil_adds_a_whole_trick() -> None:
    # Beside the strong bot's nils (made 91-97%) the jokers baseline took +0.85 over its
    # bids after an opponent's nil (`bot.DECK_OPPONENT_NIL_TRICKS`); the plain deck keeps 0.5.
    plain = bidding_view("QS 6S AH KH 9H 7H QC JC 5C KD QD 4D 3D")
    alone = dataclasses.replace(plain, rules=Ruleset(jokers=True))
    nils = dataclasses.replace(alone, bids=(-1, 0, -1, 0))
    assert bot.wanted_bid(nils) == bot.wanted_bid(alone) + 2
    ladder = dataclasses.replace(nils, rules=Ruleset())
    assert bot.wanted_bid(ladder) == bot.wanted_bid(plain) + 1


def test_heads_up_and_cut_throat_bot_games_end_by_the_target() -> None:
    # Bids calibrated per player count: bot-only games reach the target, not the mercy
    # floor (before: every two-player game and 96% of three-player games ended by mercy).
    for players in (2, 3):
        reasons = [play_game(Ruleset(players=players), seed)[1].reason for seed in range(10)]
        assert reasons.count("target") >= 9, (players, reasons)


def test_heads_up_bids_add_up_to_about_the_tricks_of_a_hand() -> None:
    rules = Ruleset(players=2)
    totals = []
    for seed in range(30):
        state = replay(decide(initial_state(), StartGame(rules, seed)))
        while state.phase == "bid":
            state = replay(decide(state, choose(view(state, state.turn))), state)
        totals.append(sum(state.bids))
    assert 9 <= sum(totals) / len(totals) <= 13, totals


def test_five_player_games_end_by_the_target() -> None:
    # Five hands share ten tricks: bidding one with a weak hand scored +10 a hand and
    # games ran into the 50-hand cap (five with jokers: 24 of 40). A weak hand bids nil.
    for jokers in (False, True):
        rules = Ruleset(players=5, jokers=jokers)
        reasons = [play_game(rules, seed)[1].reason for seed in range(20)]
        # 95% and 97% over 60 games (`spades simulate --variant five --games 60`).
        assert reasons.count("target") >= 17, (jokers, reasons)


# Suicide: a hand with no high card and few low spades, and one holding the top trump.
NIL_HAND = "2S 3S 2H 3H 4H 7H 2D 3D 5D 8D 2C 4C 6C"
ACE_OF_SPADES = "AS 9S 5S KH 8H 6H QD TD 4D 9C 7C 5C 3C"


def suicide_view(hand: str, rules: Ruleset, bids: dict[int, int]) -> SeatView:
    """N holds ``hand``; dealer W, so N bids first; S bids ``bids`` before N's turn."""
    others = [c for c in range(52) if c not in hands(hand)[0]]
    dealt = (hands(hand)[0], tuple(others[:13]), tuple(others[13:26]), tuple(others[26:39]))
    # Dealer W: N bids first. Dealer E: S bids first, then W, then N (second of his side).
    state = start(rules, dealt, dealer=1 if bids else 3)
    while state.turn != 0:
        state, _ = run(state, PlaceBid(state.turn, bids[state.turn]))
    return view(state, 0)


def test_the_nil_chance_tells_a_nil_hand_from_a_hopeless_one() -> None:
    rules = Ruleset(suicide=True)
    good = bothand.nil_chance(hands(NIL_HAND)[0], rules)
    hopeless = bothand.nil_chance(hands(ACE_OF_SPADES)[0], rules)
    assert good > 0.7
    assert hopeless < 0.03
    # The top trump always wins its trick: no other card weighs as much.
    assert bothand.NIL_FIT[1][0] == min(bothand.NIL_FIT[1])


def test_suicide_first_partner_goes_nil_with_the_safe_hand_only() -> None:
    rules = Ruleset(suicide=True)
    assert choose(suicide_view(NIL_HAND, rules, {})) == PlaceBid(0, 0)
    command = choose(suicide_view(ACE_OF_SPADES, rules, {}))
    assert isinstance(command, PlaceBid)
    assert command.tricks >= 4


def test_suicide_forcing_second_partner_takes_the_contract_with_the_top_trump() -> None:
    rules = Ruleset(suicide=True, suicide_forcing=True)
    # S bid 4 first: N's nil holding the ace of spades cannot make, N copies the 4.
    v = suicide_view(ACE_OF_SPADES, rules, {2: 4, 3: 4})
    assert PlaceBid(0, 4) in v.legal
    assert choose(v) == PlaceBid(0, 4)
    # With a safe nil hand N takes the nil as usual.
    assert choose(suicide_view(NIL_HAND, rules, {2: 4, 3: 4})) == PlaceBid(0, 0)


def test_suicide_forcing_second_partner_sends_back_a_riskier_nil() -> None:
    rules = Ruleset(suicide=True, suicide_forcing=True)
    # S bid nil first; N's hand is the surer nil: N copies the nil, S bids a number.
    assert choose(suicide_view(NIL_HAND, rules, {2: 0, 3: 4})) == PlaceBid(0, 0)
    v = suicide_view(ACE_OF_SPADES, rules, {2: 0, 3: 4})
    command = choose(v)
    assert isinstance(command, PlaceBid)
    assert command.tricks >= 4


# Options the baseline used to ignore (issue #28: `--variant moe` gave the ladder's figures).
MOE_HAND = "AS KS QS JS TS 9S AH KH QH AD KD AC 2C"


def test_a_hand_of_ten_sure_tricks_bids_little_moe_and_a_lesser_one_a_number() -> None:
    rules = Ruleset(moe=True)
    assert estimate(tuple(sorted(hands(MOE_HAND)[0])), tables(rules)) >= 10
    others = [c for c in range(52) if c not in hands(MOE_HAND)[0]]
    dealt = (hands(MOE_HAND)[0], tuple(others[:13]), tuple(others[13:26]), tuple(others[26:39]))
    assert choose(view(start(rules, dealt), 0)) == PlaceBid(0, 6, moe=True)
    # The same rules, a hand of eight sure tricks: a plain bid (a Moe made 63% there).
    strong = hands(STRONG)[0]
    others = [c for c in range(52) if c not in strong]
    dealt = (strong, tuple(others[:13]), tuple(others[13:26]), tuple(others[26:39]))
    command = choose(view(start(rules, dealt), 0))
    assert isinstance(command, PlaceBid)
    assert not command.moe
    assert command.tricks >= 8


def test_the_partner_of_a_moe_seconds_it() -> None:
    rules = Ruleset(moe=True)
    others = [c for c in range(52) if c not in hands(MOE_HAND)[0]]
    dealt = (hands(MOE_HAND)[0], tuple(others[:13]), tuple(others[13:26]), tuple(others[26:39]))
    state, _ = run(start(rules, dealt), PlaceBid(0, 6, moe=True))
    while state.turn != 2:
        state, _ = run(state, choose(view(state, state.turn)))
    assert choose(view(state, 2)) == PlaceBid(2, 6, moe=True)


def test_a_blind_bid_only_for_a_side_about_to_lose_that_a_failure_leaves_above_the_floor() -> None:
    rules = Ruleset(blind_bids=True, blind_nil=False)  # (blind nil, when on, comes first)
    late = view(start(rules, scores=(150, 420)), 0)
    assert late.hand_hidden
    assert choose(late) == PlaceBid(0, 4, True)
    # Trailing as far but with the leader far from the target: see the hand first.
    assert choose(view(start(rules, scores=(-50, 250)), 0)) == DeclineBlindNil(0)
    # A failed blind four would end the game by the mercy floor (-200): no.
    assert choose(view(start(rules, scores=(-100, 420)), 0)) == DeclineBlindNil(0)
    # A table whose blind minimum is six: a blind six fails too often to pay.
    six = Ruleset(blind_bids=True, blind_bid_min=6, blind_nil=False)
    assert choose(view(start(six, scores=(150, 420)), 0)) == DeclineBlindNil(0)


def test_jokers_four_handed_games_end_by_the_target() -> None:
    # The issue's target is 90%. With the jokers' margin (DECK_MARGIN 0.9) instead of the
    # plain deck's 0.5, 94 of these 100 games ended by the target, 90 before (sides set into
    # the mercy floor); over 200 other seeds 92.5% against 84%. Bidding up the tricks the
    # table leaves unbid (`bot.TABLE_SPARE_SHARE`) moves these 100 to 91 and 300 games from
    # seed 1000 from 92.0% to 92.7%: the assertion is the target itself.
    reasons = [play_game(Ruleset(jokers=True), seed)[1].reason for seed in range(100)]
    assert reasons.count("target") >= 90, reasons


# Power checks. N deals, E leads; W (S's left-hand opponent, last but one) shows the AH.
SHOWN = hands(
    "2H 4H 6H 2C 3C 4C 5C 6C 2D 3D 4D 5D 6D",
    "5H 7H 8H 7C 8C 9C TC 7D 8D 9D TD 2S 3S",
    "KH 3H JC QC KC AC JD QD KD AD AS KS QS",
    "AH 9H TH JH QH 4S 5S 6S 7S 8S 9S TS JS",
)


def after_east_leads_into_a_shown_ace(power_checks: int) -> SeatView:
    rules = Ruleset(power_checks=power_checks)
    state = bid_round(start(rules, SHOWN, dealer=0), {0: 3, 1: 3, 2: 4, 3: 3})
    if power_checks:
        face_up = ("2C 3C 4C", "7C 8C 9C", "JC QC KC", "AH 9H TH")
        state = state._replace(face_up=hands(*face_up))
    state, _ = run(state, PlayCard(1, parse_card("5H")))
    return view(state, 2)


def test_a_winner_is_not_spent_under_a_higher_card_an_opponent_to_play_shows() -> None:
    # Not knowing where the AH is, S heads the trick with his KH; with the AH face up
    # behind him the king would only feed it: he plays low and keeps the king.
    assert choose(after_east_leads_into_a_shown_ace(0)) == PlayCard(2, parse_card("KH"))
    assert choose(after_east_leads_into_a_shown_ace(3)) == PlayCard(2, parse_card("3H"))


def bidding_with_aces_shown_by(holder: int) -> SeatView:
    """N holds guarded kings of hearts and diamonds; ``holder`` shows both their aces."""
    hand = hands("KH 5H 4H KD 6D 3D 9C 8C 7C 5C 4C 3S 2S")[0]
    aces = parse_cards("AH AD")
    others = [c for c in range(52) if c not in hand and c not in aces]
    dealt = [list(hand), others[:13], others[13:26], others[26:39]]
    dealt[holder] = dealt[holder][:11] + list(aces)
    state = start(Ruleset(power_checks=2), tuple(tuple(sorted(h)) for h in dealt))
    face_up = tuple(tuple(sorted(h[-2:])) for h in dealt)
    return view(state._replace(face_up=face_up), 0)


def test_a_king_behind_a_shown_ace_bids_more_than_one_in_front_of_it() -> None:
    # W (3) plays before N whenever another seat leads: the kings win once the aces fall.
    # E (1) plays after N: he takes them. Unknown, each counts half a trick.
    behind, in_front = bidding_with_aces_shown_by(3), bidding_with_aces_shown_by(1)
    assert bothand.shown_kings(behind) == 2 * (bothand.SHOWN_KING["right"] - 0.5)
    assert bothand.shown_kings(in_front) == 2 * (bothand.SHOWN_KING["left"] - 0.5)
    assert bothand.shown_kings(dataclasses.replace(behind, face_up=())) == 0
    assert bot.wanted_bid(behind) > bot.wanted_bid(in_front)


# E leads the AH; S covers his nil partner N, who plays last.
TOPPED = hands(
    "2H 4H 6H 2C 3C 4C 5C 6C 2D 3D 4D 5D 6D",
    "AH 7H 8H 7C 8C 9C TC 7D 8D 9D TD 2S 3S",
    "KH 3H JC QC KC AC JD QD KD AD AS KS QS",
    "5H 9H TH JH QH 4S 5S 6S 7S 8S 9S TS JS",
)


def test_the_nil_partner_keeps_his_high_card_under_a_trick_the_top_card_heads() -> None:
    # Nothing N holds can beat the ace: the king would be spent for nothing (it would
    # head a later heart the nil must duck under).
    state = bid_round(start(None, TOPPED, dealer=0), {0: 0, 1: 3, 2: 5, 3: 3})
    state, _ = run(state, PlayCard(1, parse_card("AH")))
    assert choose(view(state, 2)) == PlayCard(2, parse_card("3H"))
    # Below the ace he still goes high before his partner.
    state = bid_round(start(None, TOPPED, dealer=0), {0: 0, 1: 3, 2: 5, 3: 3})
    state, _ = run(state, PlayCard(1, parse_card("7H")))
    assert choose(view(state, 2)) == PlayCard(2, parse_card("KH"))


# S is void in hearts, N (nil) plays last to E's heart lead.
VOID = hands(
    "2H 4H 6H 2C 3C 4C 5C 6C 2D 3D 4D 5D 6D",
    "AH 7H 8H 7C 8C 9C TC 7D 8D 9D TD 2S 3S",
    "4S 5S JC QC KC AC JD QD KD AD AS KS QS",
    "KH 3H 5H 9H TH JH QH 6S 7S 8S 9S TS JS",
)


def test_the_nil_partner_void_in_the_led_suit_ruffs_low_before_the_nil() -> None:
    # Any trump leaves N only hearts that lose: the ace of spades would be wasted on it.
    state = bid_round(start(None, VOID, dealer=0), {0: 0, 1: 3, 2: 5, 3: 3})
    state, _ = run(state, PlayCard(1, parse_card("7H")))
    assert choose(view(state, 2)) == PlayCard(2, parse_card("4S"))


def test_tricks_the_table_leaves_unbid_raise_the_bid() -> None:
    # Three numbers bid before this hand: 2+2+2 leave it more than its share, 4+3+3 none.
    # Beside the strong bot, which bids its tricks and sheds the rest, the baseline took
    # the tricks nobody bid (`bot.TABLE_SPARE_SHARE`).
    alone = bidding_view("QS 6S AH KH 9H 7H QC JC 5C KD QD 3D 2D")
    low = dataclasses.replace(alone, bids=(-1, 2, 2, 2))
    high = dataclasses.replace(alone, bids=(-1, 4, 3, 3))
    assert bot.unbid(low, 3.0) == 13 - 6 - 3.0
    assert bot.wanted_bid(low) >= bot.wanted_bid(high) + 1
    # Not for a side near the mercy floor, nor one whose next bags cost a penalty (it
    # bids up to its expectation already): there a set costs more than the bags.
    for changed in ({"scores": (-50, 0)}, {"bags": (8, 0)}):
        assert bot.wanted_bid(dataclasses.replace(low, **changed)) == bot.wanted_bid(
            dataclasses.replace(high, **changed)
        )


def test_cut_throat_bids_closer_while_a_set_leaves_the_seat_far_above_the_floor() -> None:
    # Beside the strong bot (which bids its tricks) the cut-throat baseline took +0.65 over
    # its bid: the margin is 0.5, not 0.7, while the seat stands 150 or more above the
    # mercy floor (`bot.CLOSE_MARGIN`); near the floor a set costs the game, and 0.7 stays.
    hand = "9C TC KC AC 3D 4D 8D JD QD 2H 3H 5H 8H QH 4S 8S JS"
    others = [c for c in range(52) if c not in hands(hand)[0] and c != parse_card("2C")]
    dealt = (hands(hand)[0], tuple(others[:17]), tuple(others[17:]))
    rules = Ruleset(players=3)
    # 170 and 140 points above the floor of -200 (too close for `bot.TABLE_SPARE_ABOVE`).
    far = view(start(rules, dealt, dealer=2, scores=(-30, 0, 0)), 0)
    near = view(start(rules, dealt, dealer=2, scores=(-60, 0, 0)), 0)
    assert bot.wanted_bid(far) == bot.wanted_bid(near) + 1


def test_a_hand_the_table_minimum_forces_over_its_worth_bids_nil_instead() -> None:
    # min_bid 2: a one-trick hand forced to bid two sets its side's whole contract; with a
    # good nil chance it bids nil (`bot.FORCED_NIL_FROM`), and so the strong bot's model of
    # the baseline says. At the ladder's minimum of one the same hand bids one.
    hand = "5C 6C 7C TC KC 2D 4D 8D 9D 2H TH KH 9S"
    others = [c for c in range(52) if c not in hands(hand)[0]]
    dealt = (hands(hand)[0], tuple(others[:13]), tuple(others[13:26]), tuple(others[26:]))
    forced = view(start(Ruleset(min_bid=2), dealt, dealer=3), 0)
    free = view(start(Ruleset(), dealt, dealer=3), 0)
    assert bot.wanted_bid(forced) == 1
    assert choose(forced) == PlaceBid(0, 0)
    assert bot.model_bid(forced, 0, list(forced.hand), list(forced.bids)) == 0
    assert choose(free) == PlaceBid(0, 1)


def test_a_jokers_side_trailing_far_from_the_floor_bids_closer() -> None:
    # Four-handed jokers: trailing by 50 or more while 200 or more above the mercy floor,
    # the margin is half a trick smaller (`bot.TRAIL_MARGIN`): beside the strong bot the
    # baseline trails most of its hands and took its overtricks there (issue #28).
    def first_bid(rules: Ruleset, scores: tuple[int, int]) -> Command:
        state = start(rules, scores=scores, hand=1)
        return choose(view(state, state.turn))

    jokers = Ruleset(jokers=True)
    assert first_bid(jokers, (100, 100)) == PlaceBid(0, 2)
    assert first_bid(jokers, (100, 160)) == PlaceBid(0, 3)
    # As far behind, but only 150 above the floor: a set could end the game, no closer.
    assert first_bid(jokers, (-50, 10)) == PlaceBid(0, 2)
    # The plain deck's margin is its own (`bot.MARGIN`): trailing changes nothing there.
    assert first_bid(Ruleset(), (100, 160)) == first_bid(Ruleset(), (100, 100))
