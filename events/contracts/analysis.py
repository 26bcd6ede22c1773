"""The analysis context: a finished game's review, stored as its own events.

The bot tier owns stream ``analysis-<game id>`` (`analysis_stream`): it computes the review
(`engine.review`, `engine.par`) and it alone appends. Why the bot tier and not a consumer
elsewhere: the review is the tier's work, and an event appended by the process that did the
work needs no second hop; the tier already runs with the store's pool (`services.runtime`).

1. `AnalysisQueued` at version 0 opens the stream: appended by the tier's consumer of
   GameFinished for a rated game (automatic), or by any worker when a gateway asks for a
   finished game (`QueueAnalysis` on `Subjects.bots_queue_analysis`). Version 0 makes the
   queue idempotent: asked twice, by two gateways, or redelivered, the game is queued once.
   It records the budget (worlds, double-dummy tricks, par runs) and the seed, so the review
   is reproducible from the stream alone.
2. `AnalysisStarted` when a worker claims it (a PostgreSQL advisory lock held for the work:
   a worker killed mid-review frees it, and the next scan of any worker resumes it).
3. `HandAnalysed` per hand graded (``stage`` "graded") and per hand's par ("par"): the
   progress the gateway shows (``done`` of ``of`` steps).
4. `AnalysisFinished` ends the stream: ``ok`` and the review (canonical JSON, byte-identical
   for the same game, budget and seed), or ``code``/``message`` when it could not be made.

`fold` reads a stream into what `GET /api/games/{id}/analysis` answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from events.envelope import REGISTRY

__all__ = [
    "ANALYSIS",
    "AnalysisEvent",
    "AnalysisFinished",
    "AnalysisQueued",
    "AnalysisStarted",
    "AnalysisState",
    "Budget",
    "HandAnalysed",
    "QueueAnalysis",
    "QueueReply",
    "analysis_stream",
    "fold",
]

CATEGORY = "analysis"


def analysis_stream(game_id: str) -> str:
    """Return the stream id of a game's analysis."""
    return f"{CATEGORY}-{game_id}"


class Budget(msgspec.Struct, frozen=True, kw_only=True):
    """What a review costs: sampled deals per decision, the last tricks of each hand solved
    double-dummy (-1: whole hands), and runs of strong bots per hand for its par (0: none)."""

    worlds: int = 24
    dd_tricks: int = 4
    par_runs: int = 0


class AnalysisEvent(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of the analysis context's events; the tag is the class name."""


class AnalysisQueued(AnalysisEvent, frozen=True, kw_only=True):
    """``game_id`` is to be reviewed with ``budget`` and ``seed``; ``rated`` games are queued
    automatically (with their par), others because ``asked_by`` (an account, or "" for an
    anonymous reader) asked. ``players``: each seat's player id (who is told it is ready)."""

    game_id: str
    rated: bool
    budget: Budget
    seed: str
    players: tuple[str, ...] = ()
    asked_by: str = ""


class AnalysisStarted(AnalysisEvent, frozen=True, kw_only=True):
    """A worker took the review up (``attempt`` 1, or more after a worker died in it)."""

    game_id: str
    attempt: int
    hands: int
    """Hands played: the progress counts ``hands`` (graded) plus ``hands`` more with a par."""


class HandAnalysed(AnalysisEvent, frozen=True, kw_only=True):
    """Hand ``hand`` passed ``stage`` ("graded", "par"): ``done`` of ``of`` steps."""

    game_id: str
    hand: int
    stage: str
    done: int
    of: int


class AnalysisFinished(AnalysisEvent, frozen=True, kw_only=True, omit_defaults=True):
    """The review (``ok``: ``review`` is its canonical JSON), or why there is none."""

    game_id: str
    ok: bool
    review: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))
    code: str = ""
    message: str = ""
    players: tuple[str, ...] = ()
    asked_by: str = ""
    cpu_seconds: float = 0.0
    """The worker's CPU for the review (not part of the review: it differs run to run)."""


AnalysisEvents = AnalysisQueued | AnalysisStarted | HandAnalysed | AnalysisFinished

ANALYSIS = REGISTRY.register(CATEGORY, AnalysisEvents)


class AnalysisState(msgspec.Struct, kw_only=True):
    """A stream folded: ``status`` "pending" (queued or in progress: ``done`` of ``of``),
    "ready" (``review``) or "failed" (``code``, ``message``)."""

    status: str = "pending"
    done: int = 0
    of: int = 0
    review: msgspec.Raw | None = None
    code: str = ""
    message: str = ""
    rated: bool = False


def fold(events: Iterable[Any]) -> AnalysisState | None:
    """Return the state of an analysis stream's events (decoded), None for no stream."""
    state: AnalysisState | None = None
    for event in events:
        if isinstance(event, AnalysisQueued):
            state = AnalysisState(rated=event.rated)
        elif state is None:
            continue
        elif isinstance(event, AnalysisStarted):
            state.done, state.of = 0, event.hands
        elif isinstance(event, HandAnalysed):
            state.done, state.of = event.done, event.of
        elif isinstance(event, AnalysisFinished):
            if event.ok:
                state.status, state.review, state.done = "ready", event.review, state.of
            else:
                state.status, state.code, state.message = "failed", event.code, event.message
    return state


# -- the request (core NATS request/reply, JSON) --------------------------------------------


class QueueAnalysis(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Gateway to bot tier: queue the review of finished game ``game_id`` (once: asking
    again answers the state of the one queued)."""

    game_id: str
    asked_by: str = ""
    again: bool = False
    """Queue a failed review anew (when its cool-down is over and rounds are left); without
    it, a failed review's answer only says from when (``retry_at``) it may be."""


class QueueReply(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Queued (or already queued), or refused: "game_not_finished", "unknown_game". For a
    review that failed: ``retry_at`` (epoch seconds) from when it may be queued anew, 0 when
    never (``code`` "retries_spent"); asked ``again``, queued anew or refused ("retry_later",
    "retries_spent")."""

    ok: bool
    code: str = ""
    message: str = ""
    retry_at: float = 0.0
