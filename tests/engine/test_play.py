"""Rules of play: following suit, breaking spades, trick winners, first-lead variants."""

from __future__ import annotations

import pytest

from engine import (
    BIG_JOKER,
    LITTLE_JOKER,
    CardNotInHand,
    FirstLeadRule,
    GameNotStarted,
    GameOver,
    MustFollowSuit,
    NotYourSeat,
    OutOfTurn,
    PlaceBid,
    PlayCard,
    Ruleset,
    SpadesNotBroken,
    TrickWon,
    UnknownCommand,
    WrongPhase,
    apply,
    decide,
    initial_state,
    legal_actions,
    parse_card,
)
from engine.game import legal_cards
from tests.engine.support import bid_round, hands, run, start

BIDS = {0: 3, 1: 3, 2: 3, 3: 3}
# N leads (dealer W). N has spades and hearts, E clubs/hearts, S all suits, W spades only.
DEAL = hands(
    "AS KS 2S AH KH QH JH TH 9H 8H 7H 6H 5H",
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2H",
    "QS JS TS AD KD QD JD TD 9D 8D 4H 3H 2C",
    "9S 8S 7S 6S 5S 4S 3S 7D 6D 5D 4D 3D 2D",
)


def c(name: str) -> int:
    return parse_card(name)


def playing(rules: Ruleset | None = None, dealt: tuple[tuple[int, ...], ...] = DEAL):
    return bid_round(start(rules, dealt), BIDS)


def test_dealer_left_leads_the_first_trick() -> None:
    state = playing()
    assert state.phase == "play"
    assert state.turn == 0


def test_spades_may_not_be_led_before_they_are_broken() -> None:
    state = playing()
    with pytest.raises(SpadesNotBroken, match="spades not broken") as info:
        decide(state, PlayCard(0, c("AS")))
    assert info.value.code == "spades_not_broken"
    assert all(card not in legal_cards(state, 0) for card in (c("AS"), c("KS"), c("2S")))


def test_a_leader_holding_only_spades_may_lead_them_unbroken() -> None:
    only_spades = hands(
        "9S 8S 7S 6S 5S 4S 3S 2S AS KS QS JS TS",
        "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
        "AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D",
        "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H",
    )
    state = playing(dealt=only_spades)
    assert len(legal_cards(state, 0)) == 13


def test_players_must_follow_suit_if_able() -> None:
    state, _ = run(playing(), PlayCard(0, c("5H")))
    with pytest.raises(MustFollowSuit, match="must follow suit") as info:
        decide(state, PlayCard(1, c("AC")))
    assert info.value.code == "must_follow_suit"
    assert legal_cards(state, 1) == (c("2H"),)


def test_a_player_unable_to_follow_may_play_any_card() -> None:
    state, _ = run(playing(), PlayCard(0, c("5H")), PlayCard(1, c("2H")), PlayCard(2, c("3H")))
    assert set(legal_cards(state, 3)) == set(DEAL[3])


def test_playing_a_spade_on_another_suit_breaks_spades() -> None:
    state, _ = run(playing(), PlayCard(0, c("5H")), PlayCard(1, c("2H")), PlayCard(2, c("3H")))
    assert not state.broken
    state, events = run(state, PlayCard(3, c("3S")))
    assert state.broken
    assert events[-1] == TrickWon(3, (c("5H"), c("2H"), c("3H"), c("3S")))
    # W won and may now lead a spade.
    assert c("9S") in legal_cards(state, 3)


def test_highest_card_of_the_suit_led_wins_without_trumps() -> None:
    state, events = run(
        playing(),
        PlayCard(0, c("5H")),
        PlayCard(1, c("2H")),
        PlayCard(2, c("4H")),
        PlayCard(3, c("2D")),
    )
    assert events[-1] == TrickWon(0, (c("5H"), c("2H"), c("4H"), c("2D")))
    assert state.turn == 0
    assert state.leader == 0
    assert state.taken == (1, 0, 0, 0)


def test_highest_spade_wins_a_trick_with_spades() -> None:
    state, _ = run(playing(), PlayCard(0, c("5H")), PlayCard(1, c("2H")), PlayCard(2, c("3H")))
    state, events = run(state, PlayCard(3, c("9S")))
    assert isinstance(events[-1], TrickWon)
    assert events[-1].seat == 3


def test_playing_a_card_not_held_is_rejected() -> None:
    with pytest.raises(CardNotInHand) as info:
        decide(playing(), PlayCard(0, c("AC")))
    assert info.value.code == "card_not_in_hand"


def test_playing_out_of_turn_is_rejected() -> None:
    with pytest.raises(OutOfTurn, match="out of turn") as info:
        decide(playing(), PlayCard(1, c("AC")))
    assert info.value.code == "out_of_turn"


def test_a_seat_that_does_not_exist_is_rejected() -> None:
    with pytest.raises(NotYourSeat) as info:
        decide(playing(), PlayCard(4, c("AC")))
    assert info.value.code == "not_your_seat"


def test_a_card_during_the_bidding_is_the_wrong_phase() -> None:
    with pytest.raises(WrongPhase):
        decide(start(None, DEAL), PlayCard(0, c("5H")))


def test_a_bid_during_play_is_the_wrong_phase() -> None:
    with pytest.raises(WrongPhase, match="wrong phase"):
        decide(playing(), PlaceBid(0, 3))


def test_moves_before_the_start_are_rejected() -> None:
    with pytest.raises(GameNotStarted):
        decide(initial_state(), PlaceBid(0, 3))


def test_moves_after_the_end_are_rejected() -> None:
    state = playing()._replace(phase="over", reason="target")
    with pytest.raises(GameOver) as info:
        decide(state, PlayCard(0, c("5H")))
    assert info.value.code == "game_over"


def test_unknown_commands_are_rejected() -> None:
    with pytest.raises(UnknownCommand):
        decide(playing(), "play the ace")  # type: ignore[arg-type]


def test_first_lead_any_allows_a_spade_lead_on_the_first_trick() -> None:
    state = playing(Ruleset(first_lead="any"))
    assert c("AS") in legal_cards(state, 0)
    state, _ = run(state, PlayCard(0, c("AS")))
    assert state.broken


def test_first_lead_two_of_clubs_its_holder_leads_it() -> None:
    state = playing(Ruleset(first_lead="two_of_clubs"))
    assert state.turn == 2
    assert legal_cards(state, 2) == (c("2C"),)
    with pytest.raises(FirstLeadRule) as info:
        decide(state, PlayCard(2, c("AD")))
    assert info.value.code == "first_lead"


def test_first_lead_two_of_clubs_only_binds_the_first_trick() -> None:
    state, _ = run(
        playing(Ruleset(first_lead="two_of_clubs")),
        PlayCard(2, c("2C")),
        PlayCard(3, c("2D")),
        PlayCard(0, c("5H")),
        PlayCard(1, c("AC")),
    )
    assert state.turn == 1
    assert len(legal_cards(state, 1)) == 12


TWO_PLAYER = hands(
    "5C 9C AS 2D 3D 4D 5D 6D 7D 8D 9D TD JD",
    "3C KC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
)


def test_two_player_lowest_club_everyone_plays_the_lowest_club() -> None:
    rules = Ruleset(players=2, blind_nil=False, first_lead="lowest_club")
    state = bid_round(start(rules, TWO_PLAYER, dealer=1), {0: 3, 1: 3})
    assert state.turn == 0
    assert legal_cards(state, 0) == (c("5C"),)
    with pytest.raises(FirstLeadRule):
        decide(state, PlayCard(0, c("9C")))
    state, events = run(state, PlayCard(0, c("5C")))
    assert legal_cards(state, 1) == (c("3C"),)
    state, events = run(state, PlayCard(1, c("3C")))
    assert events[-1] == TrickWon(0, (c("5C"), c("3C")))


def test_two_player_lowest_club_without_clubs_plays_no_spade() -> None:
    rules = Ruleset(players=2, blind_nil=False, first_lead="lowest_club")
    dealt = hands(
        "AS 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD", "3C KC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH"
    )
    state = bid_round(start(rules, dealt, dealer=1), {0: 3, 1: 3})
    assert c("AS") not in legal_cards(state, 0)
    assert len(legal_cards(state, 0)) == 12


def test_two_player_non_dealer_leads() -> None:
    rules = Ruleset(players=2, blind_nil=False)
    state = bid_round(start(rules, TWO_PLAYER, dealer=0), {0: 3, 1: 3})
    assert state.turn == 1
    assert c("2H") in legal_cards(state, 1)


def test_two_player_first_lead_any_may_lead_a_spade() -> None:
    rules = Ruleset(players=2, blind_nil=False, first_lead="any")
    state = bid_round(start(rules, TWO_PLAYER, dealer=1), {0: 3, 1: 3})
    assert c("AS") in legal_cards(state, 0)


def test_jokers_big_joker_beats_little_joker_beats_ace_of_spades() -> None:
    rules = Ruleset(jokers=True)
    dealt = hands(
        "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H",
        "AS AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C",
        "BJ KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
        "LJ AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D",
    )
    state = bid_round(start(rules, dealt), BIDS)
    state, events = run(
        state,
        PlayCard(0, c("2H")),
        PlayCard(1, c("AS")),
        PlayCard(2, BIG_JOKER),
        PlayCard(3, LITTLE_JOKER),
    )
    assert events[-1] == TrickWon(2, (c("2H"), c("AS"), BIG_JOKER, LITTLE_JOKER))


def test_jokers_are_spades_for_following_and_breaking() -> None:
    rules = Ruleset(jokers=True)
    dealt = hands(
        "BJ AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H",
        "AS AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C",
        "2H KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
        "LJ AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D",
    )
    state = bid_round(start(rules, dealt), BIDS)
    assert BIG_JOKER not in legal_cards(state, 0)


def test_deuces_high_the_two_of_hearts_is_the_top_trump() -> None:
    rules = Ruleset(deuces_high=True)
    dealt = hands(
        "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 3C",
        "AS AC KC QC JC TC 9C 8C 7C 6C 5C 4C 2C",
        "2H KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
        "2D AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D",
    )
    state = bid_round(start(rules, dealt), BIDS)
    # 2C is a trump now: E cannot follow clubs with it.
    state, _ = run(state, PlayCard(0, c("3C")))
    assert c("2C") not in legal_cards(state, 1)
    state, events = run(state, PlayCard(1, c("AC")), PlayCard(2, c("2H")), PlayCard(3, c("2D")))
    assert events[-1] == TrickWon(2, (c("3C"), c("AC"), c("2H"), c("2D")))


def test_three_player_cut_throat_deals_17_cards_and_plays_17_tricks() -> None:
    rules = Ruleset(players=3)
    state = start(rules)
    assert [len(h) for h in state.hands] == [17, 17, 17]
    state = bid_round(state, {0: 5, 1: 5, 2: 5})
    while state.phase == "play":
        state, _events = run(state, legal_actions(state, state.turn)[0])
    assert sum(state.taken) == 17 or state.hand == 2


def test_legal_actions_are_sorted_and_empty_for_other_seats() -> None:
    state = playing()
    actions = legal_actions(state, 0)
    assert actions == sorted(actions, key=lambda a: a.card)  # type: ignore[union-attr]
    assert legal_actions(state, 1) == []


def test_nobody_may_act_between_the_last_card_of_a_trick_and_its_winner() -> None:
    state, _ = run(playing(), PlayCard(0, c("5H")), PlayCard(1, c("2H")), PlayCard(2, c("3H")))
    new = decide(state, PlayCard(3, c("3S")))
    between = apply(state, new[0])
    assert between.turn == -1
    assert legal_actions(between, -1) == []
    assert legal_cards(between, -1) == ()
