"""`services.records.fairness.verify`: accepts every finished committed game, rejects any
one change."""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from events.contracts import game as wire
from services.records import transcript as transcripts
from services.records.fairness import NotVerified, bot_game, verify

RULES = engine.Ruleset(target=150)


def wire_game(seed: int, contributors: int) -> list[wire.GameEvent]:
    rng = random.Random(seed)
    server_seed = rng.randbytes(32).hex()
    contributions = {s: rng.randbytes(32).hex() for s in rng.sample(range(4), contributors)}
    return [wire.to_wire(e) for e in bot_game(RULES, server_seed, contributions, rng)]


games = st.builds(wire_game, st.integers(0, 2**32), st.integers(0, 4))
_settings = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(games)
def test_verify_accepts_every_finished_committed_game(events: list[wire.GameEvent]) -> None:
    checked = verify(events)
    assert checked.hands == sum(isinstance(e, wire.HandDealt) for e in events)
    assert checked.scheme == engine.fairness.SCHEME


@_settings
@given(games, st.data())
def test_verify_rejects_any_single_altered_card(
    events: list[wire.GameEvent], data: st.DataObject
) -> None:
    deals = [i for i, e in enumerate(events) if isinstance(e, wire.HandDealt)]
    i = data.draw(st.sampled_from(deals))
    dealt = events[i]
    assert isinstance(dealt, wire.HandDealt)
    a, b = data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=2, unique=True))
    hands = [list(h) for h in dealt.hands]
    x, y = data.draw(st.integers(0, 12)), data.draw(st.integers(0, 12))
    hands[a][x], hands[b][y] = hands[b][y], hands[a][x]  # one card each way: still a deck
    events[i] = msgspec.structs.replace(dealt, hands=tuple(tuple(sorted(h)) for h in hands))
    with pytest.raises(NotVerified) as refused:
        verify(events)
    assert refused.value.code == "deal_mismatch"
    assert f"hand {dealt.hand}" in str(refused.value)


@_settings
@given(games, st.integers(0, 63))
def test_verify_rejects_an_altered_commitment_or_seed(
    events: list[wire.GameEvent], digit: int
) -> None:
    def flip(text: str) -> str:
        return text[:digit] + ("0" if text[digit] != "0" else "1") + text[digit + 1 :]

    started = events[0]
    assert isinstance(started, wire.GameStarted)
    changed = [*events]
    changed[0] = msgspec.structs.replace(started, commitment=flip(started.commitment))
    with pytest.raises(NotVerified, match="commitment"):
        verify(changed)
    i, revealed = next((i, e) for i, e in enumerate(events) if isinstance(e, wire.SeedRevealed))
    changed = [*events]
    changed[i] = msgspec.structs.replace(revealed, server_seed=flip(revealed.server_seed))
    with pytest.raises(NotVerified):
        verify(changed)


@_settings
@given(st.integers(0, 2**32), st.integers(1, 4), st.integers(0, 63))
def test_verify_rejects_an_altered_contribution(seed: int, contributors: int, digit: int) -> None:
    events = wire_game(seed, contributors)
    i, given_ = next((i, e) for i, e in enumerate(events) if isinstance(e, wire.SeedContributed))
    value = given_.value
    other = value[:digit] + ("0" if value[digit] != "0" else "1") + value[digit + 1 :]
    events[i] = msgspec.structs.replace(given_, value=other)
    with pytest.raises(NotVerified) as refused:
        verify(events)
    assert refused.value.code == "deal_mismatch"


def test_a_game_in_progress_is_not_verified_and_legacy_games_are() -> None:
    events = wire_game(3, 2)
    end = next(i for i, e in enumerate(events) if isinstance(e, wire.SeedRevealed))
    with pytest.raises(NotVerified) as refused:
        verify(events[:end])
    assert refused.value.code == "not_finished"
    legacy, _ = engine.bot.play_game(RULES, 11)
    assert verify([wire.to_wire(e) for e in legacy]).scheme == engine.fairness.LEGACY


def test_a_committed_game_round_trips_through_its_transcript() -> None:
    opened = wire.TableOpened(
        game_id="g", ladder="casual", rated=False, players=("a", "b", "c", "d")
    )
    events = [opened, *wire_game(5, 3)]
    read = transcripts.parse(transcripts.export(events))
    # the transcript leaves out the secret field of the start (the reveal carries the seed)
    # and GameFinished's consumer fields come from the table line
    assert list(read.events)[:-1] == [
        msgspec.structs.replace(e, server_seed="") if isinstance(e, wire.GameStarted) else e
        for e in events[:-1]
    ]
    assert verify(list(read.events)).hands == sum(isinstance(e, wire.HandDealt) for e in events)
