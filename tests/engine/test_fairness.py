"""Committed deals (docs/FAIRNESS.md): test vectors, an independent re-implementation, and the
engine's commit-contribute-reveal flow."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import fairness

VECTORS = Path(__file__).resolve().parents[2] / "docs" / "fairness-vectors.json"
SEED = bytes(range(32))
CONTRIBUTION = "ff" * 32


def spec_shuffle(deck: list[int], seed: bytes, contributions: list[str], hand: int) -> list[int]:
    """docs/FAIRNESS.md read literally, written apart from engine.fairness on purpose."""
    message = "spades-deal-v1/hand/" + str(hand) + "".join("/" + c for c in contributions)
    words: list[int] = []
    block = 0

    def word() -> int:
        nonlocal block
        if not words:
            mac = hmac.new(seed, (message + "/" + str(block)).encode(), hashlib.sha256).digest()
            words.extend(int(mac[k : k + 4].hex(), 16) for k in range(0, 32, 4))
            block += 1
        return words.pop(0)

    out = list(deck)
    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        while True:
            w = word()
            if w < 2**32 - 2**32 % n:
                break
        j = w % n
        out[i], out[j] = out[j], out[i]
    return out


def vectors() -> dict[str, object]:
    """Return the published test vectors, computed by the engine."""
    cases = []
    for label, contributions in (
        ("no contributions", ["", "", "", ""]),
        ("seat 1 contributes ff..ff", ["", CONTRIBUTION, "", ""]),
    ):
        for hand in (1, 2):
            deck = fairness.shuffled(range(52), SEED, contributions, hand)
            dealt = engine.game.deal_out(
                engine.Ruleset(), engine.rules.tables(engine.Ruleset()), list(deck), hand, 0
            )
            cases.append(
                {
                    "label": label,
                    "contributions": contributions,
                    "hand": hand,
                    "first_block": hmac.new(
                        SEED,
                        fairness.context(f"hand/{hand}", contributions) + b"/0",
                        hashlib.sha256,
                    ).hexdigest(),
                    "permutation": list(deck),
                    "dealt_by_seat_0": [engine.cards_str(h) for h in dealt.hands],
                }
            )
    return {
        "server_seed": SEED.hex(),
        "commitment": fairness.commitment(SEED),
        "first_dealer_of_4": fairness.first_dealer(SEED, 4),
        "deck": "cards 0..51 = suit * 13 + rank (clubs, diamonds, hearts, spades; 2..A)",
        "cases": cases,
    }


def test_the_published_vectors_are_what_the_engine_computes() -> None:
    published = json.loads(VECTORS.read_text())
    assert published == vectors(), "regenerate: python -m tests.engine.test_fairness --update"
    assert published["commitment"] == hashlib.sha256(SEED).hexdigest()


def test_the_vectors_follow_the_written_spec() -> None:
    for case in json.loads(VECTORS.read_text())["cases"]:
        assert case["permutation"] == spec_shuffle(
            list(range(52)), SEED, case["contributions"], case["hand"]
        )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    contributions=st.lists(
        st.one_of(st.just(""), st.binary(min_size=32, max_size=32).map(bytes.hex)),
        min_size=2,
        max_size=4,
    ),
    hand=st.integers(1, 60),
    size=st.integers(1, 54),
)
def test_the_engine_shuffle_is_the_spec_shuffle(
    seed: bytes, contributions: list[str], hand: int, size: int
) -> None:
    deck = list(range(size))
    got = fairness.shuffled(deck, seed, contributions, hand)
    assert list(got) == spec_shuffle(deck, seed, contributions, hand)
    assert sorted(got) == deck


def test_rejection_keeps_the_draw_unbiased() -> None:
    # a word at or above the limit is skipped, never folded into the range
    # (for 3 the limit is 2**32 - 1: only the very top word is biased)
    assert fairness.below(iter([2**32 - 1, 7]), 3) == 7 % 3
    assert fairness.below(iter([2**32 - 2]), 3) == (2**32 - 2) % 3
    assert fairness.below(iter([0xFFFFFFFF, 5]), 2**31 + 1) == 5


def test_every_position_is_reachable_and_roughly_uniform() -> None:
    counts = [0] * 4
    for hand in range(1, 4001):
        counts[fairness.shuffled((0, 1, 2, 3), SEED, (), hand).index(0)] += 1
    assert all(850 < c < 1150 for c in counts), counts


def start(contributors: tuple[int, ...] = (0, 1, 2, 3)) -> engine.GameState:
    return engine.replay(
        engine.decide(
            engine.initial_state(),
            engine.StartGame(
                engine.Ruleset(), 0, server_seed=SEED.hex(), contributors=contributors
            ),
        )
    )


def test_the_start_publishes_the_commitment_and_waits_for_contributions() -> None:
    state = start()
    assert state.commitment == hashlib.sha256(SEED).hexdigest()
    assert (state.phase, state.hand) == ("dealing", 0)
    view = engine.view(state, 0)
    assert SEED.hex() not in repr(view)


@given(seat=st.integers(0, 3), value=st.binary(min_size=32, max_size=32))
@settings(max_examples=30, deadline=None)
def test_a_contribution_changes_the_deals(seat: int, value: bytes) -> None:
    state = start((seat,))
    closed = engine.decide(state, engine.CloseSeeding())[0]
    contributed = engine.decide(state, engine.Contribute(seat, value.hex()))
    assert [type(e).__name__ for e in contributed] == ["SeedContributed", "HandDealt"]
    assert contributed[1] != closed


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (engine.Contribute(0, "ab"), "contribution_refused"),
        (engine.Contribute(0, "AB" * 32), "contribution_refused"),
        (engine.Contribute(3, "ab" * 32), "contribution_refused"),
    ],
)
def test_a_bad_contribution_is_refused_and_changes_nothing(
    command: engine.Command, code: str
) -> None:
    state = start((0, 1))
    with pytest.raises(engine.RuleViolation) as refused:
        engine.decide(state, command)
    assert refused.value.code == code
    assert str(refused.value)


def test_a_second_or_late_contribution_is_refused() -> None:
    state = start((0, 1))
    state = engine.replay(engine.decide(state, engine.Contribute(0, "ab" * 32)), state)
    with pytest.raises(engine.ContributionRefused, match="already"):
        engine.decide(state, engine.Contribute(0, "cd" * 32))
    state = engine.replay(engine.decide(state, engine.CloseSeeding()), state)
    assert state.phase == "bid"
    with pytest.raises(engine.ContributionRefused, match="before the first deal"):
        engine.decide(state, engine.Contribute(1, "cd" * 32))
    with pytest.raises(engine.WrongPhase):
        engine.decide(state, engine.CloseSeeding())


def test_the_seed_is_revealed_with_the_end_and_not_before() -> None:
    from services.records.fairness import bot_game

    events = bot_game(engine.Ruleset(target=200), SEED.hex(), {2: CONTRIBUTION}, random.Random(1))
    revealed = [i for i, e in enumerate(events) if isinstance(e, engine.SeedRevealed)]
    assert revealed == [len(events) - 2]
    assert isinstance(events[-1], engine.GameFinished)
    assert events[revealed[0]] == engine.SeedRevealed(SEED.hex())


def test_legacy_games_deal_as_before() -> None:
    events = engine.decide(engine.initial_state(), engine.StartGame(engine.Ruleset(), seed=7))
    started = events[0]
    assert isinstance(started, engine.GameStarted)
    assert (started.scheme, started.commitment) == (fairness.LEGACY, "")
    assert events[1] == engine.deal(
        engine.Ruleset(), engine.rules.tables(engine.Ruleset()), 7, 1, started.dealer
    )


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    VECTORS.write_text(json.dumps(vectors(), indent=2) + "\n")
