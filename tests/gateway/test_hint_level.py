"""Hints over the WebSocket: practice tables only, from the searching bot."""

from __future__ import annotations

import pytest

import engine
import engine.search
from events import game as wire
from services.gateway.ws import Watch


def watch_on_turn(ladder: str) -> Watch:
    opened = wire.TableOpened(
        game_id="g-1",
        ladder=ladder,
        rated=ladder != "practice",
        players=("ann", "bot:1", "bot:2", "bot:3"),
        bots=(1, 2, 3) if ladder == "practice" else (),
    )
    watch = Watch("g-1", opened, "ann")
    state = engine.replay(
        engine.decide(engine.initial_state(), engine.StartGame(engine.Ruleset(), 4))
    )
    while state.turn != 0:
        state = engine.replay(
            engine.decide(state, engine.bot.choose(engine.view(state, state.turn))), state
        )
    watch.state = state
    watch.version = 5
    return watch


def test_rated_and_casual_tables_get_no_hint_whatever_is_asked() -> None:
    assert wire.hints_allowed(watch_on_turn("practice").opened)
    assert not wire.hints_allowed(watch_on_turn("standard").opened)


@pytest.mark.parametrize(("ladder", "level"), [("practice", "strong")])
def test_the_hint_comes_from_the_searching_bot(
    monkeypatch: pytest.MonkeyPatch, ladder: str, level: str
) -> None:
    asked: list[str] = []
    real = engine.search.player

    def recording(name: str, **budget: object) -> object:
        asked.append(name)
        return real(name, **budget)  # type: ignore[arg-type]

    monkeypatch.setattr(engine.search, "player", recording)
    turn = watch_on_turn(ladder).your_turn(hints=True)
    assert turn is not None
    assert turn.suggestion is not None
    assert turn.suggestion in turn.legal
    assert asked == [level]


def test_no_hint_is_computed_without_hints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.search, "player", lambda *a, **k: pytest.fail("asked"))
    turn = watch_on_turn("practice").your_turn(hints=False)
    assert turn is not None
    assert turn.suggestion is None
