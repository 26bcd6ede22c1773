"""The bot tier's game review (`cmd.bots.analyse`): a finished game, given as its transcript,
reviewed by `engine.review` in the worker thread, never on a serving process.

A game still in play is refused (``game_not_finished``): its review would tell a seat what
the cards it cannot see were. Each decision's ``at`` is its event's step in the transcript's
stream (the replay's ``#/replay/GAME?at=N`` shows the position before it).
"""

from __future__ import annotations

import json
import time

import msgspec

import engine
from engine.par import game_par
from engine.review import review_game
from events.contracts import game as wire
from events.contracts.bots import AnalysisReply
from services.records import transcript as transcripts
from services.runtime import ops

_encoder = msgspec.json.Encoder()


def analyse_transcript(
    text: str, *, seed: str = "", worlds: int = 24, dd_tricks: int = 4, par_runs: int = 0
) -> AnalysisReply:
    """Return the review of the finished game ``text`` records, or the refusal."""
    started = time.process_time()
    try:
        read = transcripts.parse(text)
    except transcripts.TranscriptError as exc:
        ops.BOT_DECISIONS.labels("analysis", "-", "refused").inc()
        if exc.code == "face_down":  # a live game's transcript: its hands are not shown
            return _not_finished()
        return AnalysisReply(ok=False, code=exc.code, message=str(exc))
    if not transcripts.finished(read.events):
        ops.BOT_DECISIONS.labels("analysis", "-", "refused").inc()
        return _not_finished()
    if not 1 <= worlds <= 200 or dd_tricks < -1 or not 0 <= par_runs <= 10:
        ops.BOT_DECISIONS.labels("analysis", "-", "refused").inc()
        return AnalysisReply(
            ok=False,
            code="malformed",
            message="worlds must be 1..200, dd_tricks -1 (whole hands) or more, par_runs 0..10",
        )
    events: list[engine.Event] = []
    steps: list[int] = []
    for step, event in enumerate(read.events):
        carried = wire.to_engine(event)
        if carried is not None:
            events.append(carried)
            steps.append(step)
    review = review_game(
        events,
        seed=seed or read.opened.game_id,
        worlds=worlds,
        dd_tricks=None if dd_tricks < 0 else dd_tricks,
        steps=steps,
    )
    data = review.to_dict()
    if par_runs > 0:
        data["par"] = [
            {"hand": p.hand, "par": p.par, "scored": p.scored, "play": p.play}
            for p in game_par(events, seed=seed or read.opened.game_id, runs=par_runs)
        ]
    body = msgspec.Raw(json.dumps(data, sort_keys=True, separators=(",", ":")).encode())
    ops.BOT_DECISIONS.labels("analysis", "-", "ok").inc()
    ops.BOT_DECISION_SECONDS.labels("analysis", "-").observe(time.process_time() - started)
    return AnalysisReply(ok=True, body=body)


def _not_finished() -> AnalysisReply:
    return AnalysisReply(
        ok=False,
        code="game_not_finished",
        message="the game is still being played: it is reviewed once it is over",
    )
