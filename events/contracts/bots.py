"""The bot tier's contract: a seat's view in, the bot's command out; hints; transcript replays.

The bot tier (`services/bots`) does the platform's expensive thinking so that no serving
process does: the strong bot's search for a bot seat or a hint, and the replay of an uploaded
transcript. Its replicas share one NATS queue group, so capacity is added by adding replicas.

A decision travels as the seat's view only (`engine.SeatView`, never the game state): the bot
decides from what the seat may know, exactly as it does in process. Cards stay small ints on
this internal channel (no player reads it); the ruleset travels as its options, the legal
commands as their wire form (the seat is the asker's). `encode_view`/`decode_view` are exact
inverses (`tests/events/test_bots_contract.py` checks it on random games of every variant).

Requests (core NATS request/reply, JSON):

- `Decide` on `Subjects.bots_decide()`: the move of a bot seat (practice bots, a timed-out
  seat, an abandoned one); the table asks, then plays the answer through the same
  `Table.decide` path as a person's command. When no worker answers within the budget plus
  `ANSWER_MARGIN`, the table plays the baseline's move itself (about 20 µs of CPU a move,
  66 µs at the worst of 1,000 measured: `python -m benchmarks bots`).
- `Hint` on `Subjects.bots_hint()`: the strong bot's suggestion for a seat at a practice
  table; the table caches it per (game, version, seat), so a seat's turn costs one search
  however often its view is asked for.
- `ReplayTranscript` on `Subjects.bots_transcript()`: a transcript parsed and replayed
  through the engine (the gateway's `POST /api/transcripts`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec

import engine
from engine.search import LEVELS
from events.contracts import game as wire

__all__ = [
    "ANSWER_MARGIN",
    "DECIDE_SECONDS",
    "LEVELS",
    "Decide",
    "DecideReply",
    "Hint",
    "ReplayTranscript",
    "TranscriptReply",
    "decode_view",
    "encode_view",
]

DECIDE_SECONDS = 0.15
"""The strong bot's time budget per decision (CPU of a bot worker, never of a table)."""

ANSWER_MARGIN = 1.0
"""Seconds a table waits for a worker beyond the budget before it plays the baseline's move."""


def encode_view(view: engine.SeatView) -> dict[str, Any]:
    """Return a seat's view as plain JSON-able values (see the module docstring)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(view):
        value = getattr(view, f.name)
        if f.name == "rules":
            value = value.to_dict()
        elif f.name == "legal":
            value = [
                msgspec.to_builtins(wire.command_to_wire(c))
                for c in value
                if not isinstance(c, engine.StartGame)
            ]
        elif f.name == "tricks":
            value = [[t.leader, list(t.cards), t.winner] for t in value]
        out[f.name] = value
    return out


_TUPLES = {"face_up": 2}
"""Fields that are tuples of tuples (every other list becomes one tuple)."""

_command = msgspec.json.Decoder(wire.AnySeatCommand)


def decode_view(data: dict[str, Any]) -> engine.SeatView:
    """Return the `engine.SeatView` that `encode_view` encoded; ValueError when it is not one."""
    fields = {f.name for f in dataclasses.fields(engine.SeatView)}
    if set(data) != fields:
        raise ValueError(f"a view has the fields {sorted(fields)}")
    seat = data["seat"]
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name == "rules":
            value = wire.stored_rules(value)
        elif name == "legal":
            value = tuple(
                wire.command_to_engine(msgspec.convert(c, wire.AnySeatCommand), seat) for c in value
            )
        elif name == "tricks":
            value = tuple(engine.Trick(t[0], tuple(t[1]), t[2]) for t in value)
        elif _TUPLES.get(name) == 2:
            value = tuple(tuple(inner) for inner in value)
        elif isinstance(value, list):
            value = tuple(value)
        values[name] = value
    return engine.SeatView(**values)


class Decide(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Table to bot tier: the move of the bot playing ``seat`` of ``game_id`` at ``version``."""

    game_id: str
    version: int
    seat: int
    level: str
    """`engine.search.LEVELS`: "baseline" or "strong"."""
    view: dict[str, Any]
    """`encode_view` of the seat's view: all the bot may know."""
    seconds: float = DECIDE_SECONDS


class Hint(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Table to bot tier: the strong bot's suggestion for a person's seat (practice only)."""

    game_id: str
    version: int
    seat: int
    view: dict[str, Any]
    seconds: float = DECIDE_SECONDS


class DecideReply(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The bot's command (wire form: the seat is the one asked for), or why there is none.

    ``fallback`` is true when the requested level failed and the worker answered with the
    baseline's move instead (the failure is logged and counted by the worker)."""

    ok: bool
    command: wire.AnySeatCommand | None = None
    code: str = ""
    message: str = ""
    fallback: bool = False
    cpu_seconds: float = 0.0


class ReplayTranscript(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Gateway to bot tier: parse and replay a transcript."""

    text: str


class TranscriptReply(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The replayed transcript as the gateway answers it (``body``: the JSON it sends), or
    the refusal: ``code``, ``message`` and the ``line`` it names."""

    ok: bool
    body: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))
    code: str = ""
    message: str = ""


class AnalyseTranscript(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """To the bot tier: review a finished game given as its transcript (`engine.review`):
    every bid and card graded from its seat's view, and the last ``dd_tricks`` tricks of
    each hand solved double-dummy (-1: whole hands, slow: seconds to a minute a deal)."""

    text: str
    seed: str = ""
    worlds: int = 24
    dd_tricks: int = 4
    par_runs: int = 0
    """Runs of strong bots in every seat per hand for its par (`engine.par`; 0: none)."""


class AnalysisReply(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The review (``body``: `engine.review.Review` as JSON, each decision's ``at`` the
    replay's step of its event), or the refusal: ``code`` ("game_not_finished" for a game
    still in play, a transcript's own codes for a text that does not read) and ``message``."""

    ok: bool
    body: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))
    code: str = ""
    message: str = ""
