"""Whole hands through decide(): the events of the last card, and every way a game ends."""

from __future__ import annotations

from engine import (
    CardPlayed,
    GameFinished,
    GameStarted,
    HandDealt,
    HandScored,
    PlaceBid,
    Ruleset,
    StartGame,
    TrickWon,
    decide,
    initial_state,
    legal_actions,
    replay,
)
from engine.state import GameState
from tests.engine.support import bid_round, hands, play_lowest, run, start

# N holds every spade and leads (dealer W): N takes all 13 tricks, nobody else any.
ONE_SUIT_EACH = hands(
    "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
    "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H",
    "AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D",
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
)


def play_hand(
    bids: dict[int, int], scores: tuple[int, int] = (0, 0), rules: Ruleset | None = None
) -> tuple[GameState, list[object]]:
    state = bid_round(start(rules, ONE_SUIT_EACH, scores=scores), bids)
    return play_lowest(state)  # type: ignore[return-value]


def test_start_game_records_seed_first_dealer_and_the_dealt_hands() -> None:
    events = decide(initial_state(), StartGame(Ruleset(), 42))
    started, dealt = events
    assert isinstance(started, GameStarted)
    assert started.seed == 42
    assert isinstance(dealt, HandDealt)
    assert dealt.hand == 1
    assert dealt.dealer == started.dealer
    assert sorted(c for h in dealt.hands for c in h) == list(range(52))
    assert decide(initial_state(), StartGame(Ruleset(), 42)) == events


def test_deal_is_derived_from_seed_and_hand_number() -> None:
    a = decide(initial_state(), StartGame(Ruleset(), 1))[1]
    b = decide(initial_state(), StartGame(Ruleset(), 2))[1]
    assert isinstance(a, HandDealt)
    assert isinstance(b, HandDealt)
    assert a.hands != b.hands


def test_the_last_card_yields_trick_score_and_next_deal_at_once() -> None:
    state = bid_round(start(None, ONE_SUIT_EACH), {0: 12, 1: 1, 2: 1, 3: 1})
    while sum(len(h) for h in state.hands) > 1:
        state, _ = run(state, legal_actions(state, state.turn)[0])
    # The last card's one decide() returns all four events.
    events = decide(state, legal_actions(state, state.turn)[0])
    state = replay(events, state)
    assert isinstance(events[0], CardPlayed)
    assert isinstance(events[1], TrickWon)
    last = events[1:]
    assert isinstance(last[1], HandScored)
    assert last[1].tricks == (13, 0, 0, 0)
    assert last[1].points == (130, -20)
    assert state.scores == (130, -20)
    assert isinstance(last[2], HandDealt)
    assert last[2].hand == 2
    assert last[2].dealer == 0
    assert state.phase == "bid"
    assert state.turn == 1


def test_the_deal_rotates_clockwise() -> None:
    state, _ = play_hand({0: 12, 1: 1, 2: 1, 3: 1})
    assert state.dealer == 0
    assert state.hand == 2


def test_nil_made_end_to_end() -> None:
    state, _events = play_hand({0: 13, 1: 1, 2: 0, 3: 1})
    assert state.scores == (230, -20)


def test_reaching_the_target_wins() -> None:
    state, events = play_hand({0: 12, 1: 1, 2: 1, 3: 1}, scores=(380, 0))
    assert events[-1] == GameFinished(0, "target", (510, -20))
    assert state.phase == "over"
    assert state.winner == 0
    assert state.reason == "target"


def test_both_over_the_target_the_higher_score_wins() -> None:
    _state, events = play_hand({0: 12, 1: 0, 2: 1, 3: 0}, scores=(480, 495))
    assert events[-1] == GameFinished(1, "target", (610, 695))


def test_an_exact_tie_over_the_target_plays_another_hand() -> None:
    state, events = play_hand({0: 12, 1: 0, 2: 1, 3: 0}, scores=(470, 400))
    assert state.scores == (600, 600)
    assert isinstance(events[-1], HandDealt)


def test_mercy_a_side_at_or_below_the_floor_loses_at_once() -> None:
    _state, events = play_hand({0: 1, 1: 0, 2: 13, 3: 0}, scores=(-60, 0))
    assert events[-1] == GameFinished(1, "mercy", (-200, 200))


def test_mercy_off_plays_on_below_the_floor() -> None:
    _state, events = play_hand({0: 1, 1: 0, 2: 13, 3: 0}, scores=(-60, 0), rules=Ruleset(mercy=0))
    assert isinstance(events[-1], HandDealt)


def test_hand_cap_ends_the_game_higher_score_wins() -> None:
    _state, events = play_hand({0: 12, 1: 1, 2: 1, 3: 1}, rules=Ruleset(hand_cap=1))
    assert events[-1] == GameFinished(0, "hand_cap", (130, -20))


def test_hand_cap_with_a_tie_is_a_draw() -> None:
    state, events = play_hand({0: 12, 1: 0, 2: 1, 3: 0}, scores=(70, 0), rules=Ruleset(hand_cap=1))
    assert events[-1] == GameFinished(-1, "hand_cap", (200, 200))
    assert state.winner == -1


def test_boston_made_wins_the_game_whatever_the_score() -> None:
    _state, events = play_hand(
        {0: 13, 1: 1, 2: 0, 3: 1}, scores=(0, 450), rules=Ruleset(boston=True)
    )
    assert events[-1] == GameFinished(0, "boston", (230, 430))


def test_target_option_200() -> None:
    _state, events = play_hand({0: 12, 1: 1, 2: 1, 3: 1}, scores=(80, 0), rules=Ruleset(target=200))
    assert events[-1] == GameFinished(0, "target", (210, -20))


def test_replay_of_the_recorded_events_reproduces_the_state() -> None:
    events = decide(initial_state(), StartGame(Ruleset(), 3))
    state = replay(events)
    for _ in range(4):
        new = decide(state, PlaceBid(state.turn, 3))
        events += new
        state = replay(new, state)
    state, more = play_lowest(state)
    assert replay([*events, *more]) == state


def test_bags_carry_over_into_the_next_hand_end_to_end() -> None:
    state = bid_round(start(None, ONE_SUIT_EACH, bags=(9, 0)), {0: 10, 1: 1, 2: 1, 3: 1})
    state, events = play_lowest(state)
    scored = next(e for e in events if isinstance(e, HandScored))
    assert scored.points[0] == 110 + 2 - 100
    assert scored.bags == (1, 0)
    assert state.hand == 2
    assert state.bags == (1, 0)
