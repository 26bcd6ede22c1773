"""`spades export --format openspiel`: each hand as OpenSpiel spades actions, skips explained.
The replay in pyspiel itself runs where open-spiel is installed (the bench group)."""

from __future__ import annotations

import random
import re

import pytest

import engine
from events.contracts import game as wire
from services.records.fairness import bot_game
from services.records.openspiel import BID_BASE, LED, hands_of


def game(seed: int, rules: engine.Ruleset | None = None) -> list[wire.GameEvent]:
    rng = random.Random(seed)
    played = bot_game(rules or engine.Ruleset(), rng.randbytes(32).hex(), {}, rng)
    return [wire.to_wire(e) for e in played]


def test_every_hand_is_exported_or_skipped_with_a_reason_and_deals_map_seat_for_seat() -> None:
    for seed in range(6):
        events = game(seed)
        episodes, skipped = hands_of("g", events)
        deals = {e.hand: e for e in events if isinstance(e, wire.HandDealt)}
        assert sorted([e["hand"] for e in episodes] + [s["hand"] for s in skipped]) == sorted(deals)
        assert all(s["reason"] for s in skipped)
        for episode in episodes:
            actions = episode["actions"]
            assert len(actions) == 52 + 4 + 52
            dealt = deals[episode["hand"]]
            assert episode["seats"][0] == (dealt.dealer + 1) % 4  # dealer's left is player 0
            for player, seat in enumerate(episode["seats"]):
                cards = {engine.card_str(c) for c in actions[player:52:4]}
                assert cards == set(dealt.hands[seat])
            assert all(BID_BASE <= a <= BID_BASE + 13 for a in actions[52:56])
            assert sorted(actions[56:]) == list(range(52))
            assert sum(episode["tricks"]) == 13


def test_other_rules_and_blind_nil_hands_are_skipped_and_say_why() -> None:
    _, skipped = hands_of("j", game(1, engine.Ruleset(jokers=True, target=150)))
    assert skipped == [
        {
            "game_id": "j",
            "hand": None,
            "reason": "rules: jokers=True (OpenSpiel plays jokers=False)",
        }
    ]
    reasons = set()
    for seed in range(30):
        reasons |= {
            s["reason"] for s in hands_of("g", game(seed, engine.Ruleset(blind_nil_deficit=0)))[1]
        }
    assert "a blind bid" in reasons
    assert LED in reasons


def test_the_episodes_replay_in_open_spiel_to_the_same_tricks_and_scores() -> None:
    pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is in the optional bench group")
    replayed = 0
    for seed in range(12):
        for episode in hands_of("g", game(seed))[0]:
            state = pyspiel.load_game("spades").new_initial_state()
            for action in episode["actions"]:
                assert action in state.legal_actions()
                state.apply_action(action)
            assert state.is_terminal()
            taken = re.search(r"North East  South  West\n(.*)", str(state))
            assert taken is not None
            assert [int(t) for t in taken[1].split()] == episode["tricks"]
            if episode["scores_before"] == [0, 0]:  # OpenSpiel starts each hand at 0-0
                assert list(state.returns()[:2]) == episode["points"]
            replayed += 1
    assert replayed > 20
