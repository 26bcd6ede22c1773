"""Subjects: one module names them all, and prefixes keep tests apart."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from events.subjects import Subjects, split_stream_id

REPO = Path(__file__).resolve().parents[2]


def test_names_under_a_prefix_and_without() -> None:
    plain, test = Subjects(), Subjects("t1")
    game = "0b5e-77"
    assert plain.event(f"game-{game}", "CardPlayed") == f"ev.game.{game}.CardPlayed"
    assert test.event(f"game-{game}", "CardPlayed") == f"t1.ev.game.{game}.CardPlayed"
    assert plain.events_stream == "EVENTS"
    assert test.events_stream == "T1_EVENTS"
    assert test.parked("rating") == "t1.parked.rating"
    assert test.events_stream_subjects() == ["t1.ev.>"]
    assert test.durable("rating") == "t1_rating"


def test_split_stream_id_keeps_dashes_of_the_id() -> None:
    assert split_stream_id("game-1-2-3") == ("game", "1-2-3")
    for bad in ("game", "game-", "ga.me-1", "game-a.b", "-1"):
        with pytest.raises(ValueError, match="stream id"):
            split_stream_id(bad)


def test_tokens_with_dots_or_spaces_are_refused() -> None:
    with pytest.raises(ValueError, match="subject token"):
        Subjects().game_events("a.b")
    with pytest.raises(ValueError, match="prefix"):
        Subjects("a.b")


_SUBJECT_LIKE = re.compile(r"^(\w+\.)?(ev|cmd|parked)\.[\w*>{}.\-]+$")


def test_no_subject_literal_outside_the_subjects_module() -> None:
    offenders = []
    for root in ("events", "services"):
        for path in sorted((REPO / root).rglob("*.py")):
            if path.name == "subjects.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                literal = isinstance(node, ast.Constant) and isinstance(node.value, str)
                if literal and _SUBJECT_LIKE.match(node.value):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno} {node.value!r}")
    assert offenders == []
