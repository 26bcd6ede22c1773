"""`spades serve bots`: a bot worker. It answers `events.contracts.bots` requests.

Each request is decided from what it carries: a seat's view (never a game's state), or a
transcript's text. The search runs in a worker thread, one decision at a time per replica, so
the replica's event loop stays free for its NATS connection and its ops server; capacity is
added with replicas (the queue group shares the requests, the HorizontalPodAutoscaler adds
replicas on CPU).

A bot that fails costs one decision, never the process: an exception of the requested level
is logged with the game and version, counted (`spades_bot_decisions_total{outcome="fallback"}`),
and the worker answers the baseline's move for the same view instead.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgspec
from nats.aio.msg import Msg

import engine
import engine.bot
import engine.search
from engine import ddcore
from events.contracts import game as wire
from events.contracts.analysis import QueueAnalysis, QueueReply
from events.contracts.bots import (
    AnalyseTranscript,
    AnalysisReply,
    Decide,
    DecideReply,
    Hint,
    ReplayTranscript,
    TranscriptReply,
    decode_view,
)
from services.bots.analysis import analyse_transcript
from services.bots.analyst import (
    BUDGET_ENV,
    CONSUMER,
    RETRY_AFTER,
    RETRY_ENV,
    Analyst,
    queue_finished_game,
)
from services.records import transcript as transcripts
from services.records.public import replay_of
from services.runtime import logs, ops
from services.runtime.service import Runtime

__all__ = ["decide", "main", "replay_transcript"]

_decide = msgspec.json.Decoder(Decide)
_hint = msgspec.json.Decoder(Hint)
_transcript = msgspec.json.Decoder(ReplayTranscript)
_analyse = msgspec.json.Decoder(AnalyseTranscript)
_queue = msgspec.json.Decoder(QueueAnalysis)
_encoder = msgspec.json.Encoder()

CONCURRENCY_ENV = "SPADES_ANALYSIS_CONCURRENCY"
"""Stored reviews one replica works on at once (default 1: a core each)."""

CRASH_ENV = "SPADES_BOTS_CRASH_LEVEL"
"""Test hook: a bot level named here raises on every decision (the fallback path is then
what answers). Never set in production."""


def decide(
    kind: str,
    game_id: str,
    version: int,
    seat: int,
    level: str,
    view_data: dict[str, Any],
    seconds: float,
    log: Any,
    crash_level: str = "",
) -> DecideReply:
    """Return the bot's move for a view (run in a worker thread): the requested level's, or
    the baseline's when that level fails."""
    try:
        view = decode_view(view_data)
    except (ValueError, TypeError, KeyError, IndexError, msgspec.ValidationError) as exc:
        ops.BOT_DECISIONS.labels(kind, level, "refused").inc()
        return DecideReply(ok=False, code="malformed", message=f"not a seat's view: {exc}")
    if view.seat != seat or view.turn != seat or not view.legal:
        ops.BOT_DECISIONS.labels(kind, level, "refused").inc()
        return DecideReply(ok=False, code="not_your_turn", message="the seat is not on turn")
    rng = random.Random(f"{game_id}:{version}")
    started = time.process_time()
    fallback = False
    try:
        if level == crash_level:
            raise RuntimeError(f"{CRASH_ENV} makes the {level} bot fail")
        command = engine.search.player(level, seconds=seconds)(view, rng)
        if command not in view.legal:
            raise RuntimeError("the bot chose a command that is not legal")
    except Exception as exc:  # one decision lost, never the worker: the baseline answers
        log.error(
            "bot failed, baseline answers",
            kind=kind,
            level=level,
            game_id=game_id,
            version=version,
            seat=seat,
            error=type(exc).__name__,
        )
        fallback = True
        command = engine.bot.choose(view, random.Random(f"{game_id}:{version}"))
    cpu = time.process_time() - started
    ops.BOT_DECISIONS.labels(kind, level, "fallback" if fallback else "ok").inc()
    ops.BOT_DECISION_SECONDS.labels(kind, level).observe(cpu)
    return DecideReply(
        ok=True, command=wire.command_to_wire(command), fallback=fallback, cpu_seconds=cpu
    )


def replay_transcript(text: str) -> TranscriptReply:
    """Return a transcript replayed (the gateway's answer), or its refusal."""
    started = time.process_time()
    try:
        read = transcripts.parse(text)
    except transcripts.TranscriptError as exc:
        ops.BOT_DECISIONS.labels("transcript", "-", "refused").inc()
        return TranscriptReply(ok=False, code=exc.code, message=str(exc))
    body = msgspec.Raw(_encoder.encode(replay_of(read)))
    ops.BOT_DECISIONS.labels("transcript", "-", "ok").inc()
    ops.BOT_DECISION_SECONDS.labels("transcript", "-").observe(time.process_time() - started)
    return TranscriptReply(ok=True, body=body)


def _answering(
    rt: Runtime, work: Callable[[bytes], Awaitable[msgspec.Struct]]
) -> Callable[[Msg], Awaitable[None]]:
    """Return a subscription callback: answer each request, and never leave one hanging."""

    async def handle(msg: Msg) -> None:
        with logs.work(logs.request_id_of(msg.headers)):
            try:
                reply: msgspec.Struct = await work(msg.data)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                reply = DecideReply(ok=False, code="malformed", message=f"cannot read: {exc}")
            except Exception as exc:
                rt.log.exception("bot request failed", error=type(exc).__name__)
                reply = DecideReply(ok=False, code="internal", message="the worker failed")
            if msg.reply:
                await msg.respond(_encoder.encode(reply))

    return handle


def check_kernel() -> None:
    """Stop the tier at its start, in one line naming the build, when the double-dummy kernel
    (`engine.ddcore`) is missing: its reviews solve deals with it, and no slow fallback hides
    that."""
    try:
        ddcore.load()
    except ddcore.KernelMissing as exc:
        raise SystemExit(f"spades bots: {exc}") from None


async def main(rt: Runtime) -> None:
    """Answer the bot tier's requests until `rt.stop`; then finish the ones in hand."""
    check_kernel()
    crash_level = os.environ.get(CRASH_ENV, "")
    # One search at a time per replica: a second request waits for the thread, and the
    # replica's event loop (NATS pings, /readyz) never waits for a search.
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bot")
    loop = asyncio.get_running_loop()

    async def on_decide(data: bytes) -> DecideReply:
        r = _decide.decode(data)
        return await loop.run_in_executor(
            pool,
            decide,
            "decide",
            r.game_id,
            r.version,
            r.seat,
            r.level,
            r.view,
            r.seconds,
            rt.log,
            crash_level,
        )

    async def on_hint(data: bytes) -> DecideReply:
        r = _hint.decode(data)
        return await loop.run_in_executor(
            pool,
            decide,
            "hint",
            r.game_id,
            r.version,
            r.seat,
            "strong",
            r.view,
            r.seconds,
            rt.log,
            crash_level,
        )

    async def on_transcript(data: bytes) -> TranscriptReply:
        r = _transcript.decode(data)
        return await loop.run_in_executor(pool, replay_transcript, r.text)

    async def on_analyse(data: bytes) -> AnalysisReply:
        r = _analyse.decode(data)
        return await loop.run_in_executor(
            pool,
            lambda: analyse_transcript(
                r.text, seed=r.seed, worlds=r.worlds, dd_tricks=r.dd_tricks, par_runs=r.par_runs
            ),
        )

    spec = os.environ.get(BUDGET_ENV, "")
    analyst = Analyst(
        rt.store,
        rt.pool,
        rt.log,
        concurrency=int(os.environ.get(CONCURRENCY_ENV, "1") or 1),
        spec=spec,
        retry_after=float(os.environ.get(RETRY_ENV, "") or RETRY_AFTER),
    )

    async def on_queue(data: bytes) -> QueueReply:
        return await analyst.queue(_queue.decode(data))

    async def on_finished(conn: Any, received: Any) -> None:
        if await queue_finished_game(conn, received, spec):
            analyst.wake.set()

    group = rt.subjects.bots_queue_group()
    subs = [
        await rt.nc.subscribe(subject, queue=group, cb=_answering(rt, work))
        for subject, work in (
            (rt.subjects.bots_decide(), on_decide),
            (rt.subjects.bots_hint(), on_hint),
            (rt.subjects.bots_transcript(), on_transcript),
            (rt.subjects.bots_analyse(), on_analyse),
            (rt.subjects.bots_queue_analysis(), on_queue),
        )
    ]
    work = [
        asyncio.create_task(analyst.run(rt.stop)),
        asyncio.create_task(rt.consume(CONSUMER, rt.subjects.game_finished(), on_finished)),
    ]
    rt.log.info("bot worker answering", queue_group=group)
    await rt.stop.wait()
    for sub in subs:
        await sub.drain()  # type: ignore[no-untyped-call]
    await asyncio.gather(*work, return_exceptions=True)
    pool.shutdown(wait=True)
