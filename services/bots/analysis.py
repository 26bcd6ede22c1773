"""The bot tier's game review (`cmd.bots.analyse`): a finished game, given as its transcript,
reviewed by `engine.review` in the worker thread, never on a serving process.

A game still in play is refused (``game_not_finished``): its review would tell a seat what
the cards it cannot see were. Each decision's ``at`` is its event's step in the transcript's
stream (the replay's ``#/replay/GAME?at=N`` shows the position before it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence

import msgspec

import engine
from engine.par import HandPar, game_par
from engine.review import review_game
from events.contracts import game as wire
from events.contracts.bots import AnalysisReply
from services.records import transcript as transcripts
from services.runtime import ops

_encoder = msgspec.json.Encoder()


def analyse_transcript(
    text: str,
    *,
    seed: str = "",
    worlds: int = 24,
    dd_tricks: int = 4,
    par_runs: int = 0,
    progress: Callable[[str, int], None] | None = None,
) -> AnalysisReply:
    """Return the review of the finished game ``text`` records, or the refusal.

    ``progress(stage, hand)`` is told each hand once graded ("graded") and once its par is
    known ("par"). With ``par_runs``, the review has ``par`` (per hand) and ``luck`` (per
    side, summed over the game: `luck_of`)."""
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
        on_hand=None if progress is None else (lambda hand: progress("graded", hand)),
    )
    data = review.to_dict()
    if par_runs > 0:
        pars = game_par(
            events,
            seed=seed or read.opened.game_id,
            runs=par_runs,
            on_hand=None if progress is None else (lambda hand: progress("par", hand)),
        )
        data["par"] = [
            {"hand": p.hand, "par": p.par, "scored": p.scored, "play": p.play} for p in pars
        ]
        data["luck"] = luck_of(pars)
    body = msgspec.Raw(json.dumps(data, sort_keys=True, separators=(",", ":")).encode())
    ops.BOT_DECISIONS.labels("analysis", "-", "ok").inc()
    ops.BOT_DECISION_SECONDS.labels("analysis", "-").observe(time.process_time() - started)
    return AnalysisReply(ok=True, body=body)


def luck_of(pars: Sequence[HandPar]) -> list[dict[str, float]]:
    """Return, per side, the game's margin split into the cards and the play.

    ``result``: the side's points over the hands minus the mean of the other sides';
    ``cards``: the same margin had strong bots played every seat (the pars): what the cards
    were worth to the side; ``play``: ``result - cards``, what the side's play made of them
    ("you lost by 120; the cards were worth -80 to you, your play -40")."""
    if not pars:
        return []
    sides = len(pars[0].scored)
    scored = [sum(p.scored[s] for p in pars) for s in range(sides)]
    par = [sum(p.par[s] for p in pars) for s in range(sides)]

    def margin(values: Sequence[float], side: int) -> float:
        others = [v for s, v in enumerate(values) if s != side]
        return values[side] - sum(others) / len(others) if others else float(values[side])

    out = []
    for side in range(sides):
        result, cards = round(margin(scored, side), 2), round(margin(par, side), 2)
        out.append(
            {"side": side, "result": result, "cards": cards, "play": round(result - cards, 2)}
        )
    return out


def _not_finished() -> AnalysisReply:
    return AnalysisReply(
        ok=False,
        code="game_not_finished",
        message="the game is still being played: it is reviewed once it is over",
    )
