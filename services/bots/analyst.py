"""The bot tier's stored reviews: stream ``analysis-<game>`` (`events.contracts.analysis`).

Queued two ways, each an `AnalysisQueued` at version 0 (so a game is queued once, however
often and by whomever it is asked):

- automatically, for every rated game, by the durable JetStream consumer ``bots-analysis`` of
  GameFinished (exactly once, like rating's: a game finished while the tier was down is
  queued when it comes back);
- on request (`QueueAnalysis` from a gateway) for any finished game.

Each queued review is also a row of ``bots_analysis_queue``, written in the transaction that
appends its `AnalysisQueued` and deleted in the one that appends its `AnalysisFinished`: the
queue's size is the work waiting, not the history. A review that failed (or was given up) is
queued anew when someone asks for it again, at least ``retry_after`` seconds
(`SPADES_ANALYSIS_RETRY_AFTER`, default `RETRY_AFTER`) after it failed and at most
`MAX_ROUNDS` times in all: a second `AnalysisQueued` in the same stream opens a new round,
the same budget and seed, so a review that succeeds is the one the first round would have made.

The work: `Analyst.run` scans the queue every `SCAN_SECONDS`, and at once when this replica
queued one. It claims a game with a PostgreSQL
advisory lock held on one connection for the whole review (another replica skips it; a
worker killed mid-review loses its connection, so the lock frees and the next scan of any
worker starts it again: `AnalysisStarted.attempt` counts; after `MAX_ATTEMPTS` starts it is
given up, and a review that raises is stored as failed at once, since it would fail again).
At most ``concurrency`` reviews run at once per replica (`SPADES_ANALYSIS_CONCURRENCY`,
default 1), each in a thread of their own pool, never the pool that answers bot moves.
Progress is appended as it happens (`HandAnalysed`, best effort), the result last
(`AnalysisFinished`, the review's canonical JSON).

Budget (`budget_of`): 24 sampled deals per decision, whole hands solved double-dummy by the C
kernel; a rated game also gets its par, 3 runs of strong bots in every seat at 60 playouts a
decision (`engine.par`). Measured (`python -m benchmarks analysis`, a bot game to 500 of 11
hands, one core): 32.7 CPU s, of which the par 10.2: ready within a minute of the game's end
with a core free.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import asyncpg
import msgspec

from events.consumer import Received, Unprocessable
from events.contracts import game as wire
from events.contracts.analysis import (
    AnalysisFinished,
    AnalysisQueued,
    AnalysisStarted,
    Budget,
    HandAnalysed,
    QueueAnalysis,
    QueueReply,
    analysis_stream,
    fold,
)
from events.contracts.bots import AnalysisReply
from events.envelope import REGISTRY, Metadata, StoredEvent
from events.pgstore import Conn, PostgresEventStore, append_with
from events.store import ConcurrencyConflict
from events.subjects import split_stream_id
from services.bots.analysis import analyse_transcript
from services.records.public import Game
from services.runtime import ops

__all__ = ["CONSUMER", "SCAN_SECONDS", "Analyst", "budget_of", "queue_finished_game"]

CONSUMER = "bots-analysis"
SCAN_SECONDS = 5.0
MAX_ATTEMPTS = 3
"""Starts of one review (each by a worker that then died) before it is given up."""
MAX_ROUNDS = 3
"""Times one game's review is queued in all: the first, and two asked again after a failure."""
RETRY_AFTER = 600.0
"""Seconds after a failed review before asking for it again queues it anew."""
RETRY_ENV = "SPADES_ANALYSIS_RETRY_AFTER"
RATED = Budget(worlds=24, dd_tricks=-1, par_runs=3)
ASKED = Budget(worlds=24, dd_tricks=-1, par_runs=0)
BUDGET_ENV = "SPADES_ANALYSIS_BUDGET"
"""``worlds,dd_tricks,par_runs`` of a rated game's review (an asked one's: no par): whole hands
solved double-dummy (-1) by the C kernel (`engine.ddcore`, each search within
`engine.review.DD_NODES`); tests set a small one. Recorded in each `AnalysisQueued`, so a
stored review stays reproducible."""


def budget_of(rated: bool, spec: str = "") -> Budget:
    """Return the review's budget: a rated game's includes its par (see the docstring);
    ``spec`` (`BUDGET_ENV`'s form) overrides the default."""
    if not spec:
        return RATED if rated else ASKED
    worlds, dd_tricks, par_runs = (int(part) for part in spec.split(","))
    return Budget(worlds=worlds, dd_tricks=dd_tricks, par_runs=par_runs if rated else 0)


def _queued(
    game_id: str, rated: bool, players: tuple[str, ...], asked_by: str, spec: str = ""
) -> Any:
    event = AnalysisQueued(
        game_id=game_id,
        rated=rated,
        budget=budget_of(rated, spec),
        seed=game_id,
        players=players,
        asked_by=asked_by,
    )
    return REGISTRY.new_event(event, Metadata(actor="bots"))


async def queue_finished_game(conn: Conn, received: Received, spec: str = "") -> bool:
    """The consumer's handler: queue a rated game's review (in the consumer's transaction);
    return whether this call queued it."""
    finished = received.payload
    if not isinstance(finished, wire.GameFinished):
        raise Unprocessable(f"expected GameFinished, got {received.event.type}")
    category, game_id = split_stream_id(received.event.stream_id)
    if category != "game":
        raise Unprocessable(f"GameFinished from stream {received.event.stream_id!r}")
    if not finished.rated:
        return False
    try:
        async with conn.transaction():  # a savepoint in the consumer's transaction
            await append_with(
                conn,
                analysis_stream(game_id),
                0,
                [_queued(game_id, True, finished.players, "", spec)],
            )
            await _enqueue(conn, game_id, 1)
    except ConcurrencyConflict:
        return False  # asked for before the consumer came to it
    return True


async def _enqueue(conn: Conn, game_id: str, queued: int) -> None:
    """Queue the round whose `AnalysisQueued` is at version ``queued`` (a newer round
    replaces an older one's row)."""
    await conn.execute(
        "INSERT INTO bots_analysis_queue (game_id, queued) VALUES ($1, $2)"
        " ON CONFLICT (game_id) DO UPDATE SET queued = excluded.queued, queued_at = now()"
        " WHERE bots_analysis_queue.queued < excluded.queued",
        game_id,
        queued,
    )


async def _dequeue(conn: Conn | asyncpg.Pool, game_id: str, queued: int) -> None:
    """Take the round queued at version ``queued`` (or an older one) off the queue."""
    await conn.execute(
        "DELETE FROM bots_analysis_queue WHERE game_id = $1 AND queued <= $2", game_id, queued
    )


def _round(events: list[Any]) -> list[Any]:
    """Return the events of the stream's last round: from its last `AnalysisQueued` on."""
    starts = [i for i, e in enumerate(events) if isinstance(e, AnalysisQueued)]
    return events[starts[-1] :] if starts else []


class Analyst:
    """Queues reviews on request and works the queue (see the module docstring)."""

    def __init__(
        self,
        store: PostgresEventStore,
        pool: asyncpg.Pool,
        log: Any,
        concurrency: int = 1,
        spec: str = "",
        retry_after: float = RETRY_AFTER,
    ) -> None:
        self.store = store
        self.spec = spec
        self.retry_after = retry_after
        self.pool = pool
        self.log = log
        self.concurrency = max(1, concurrency)
        self.wake = asyncio.Event()
        self._threads = ThreadPoolExecutor(self.concurrency, thread_name_prefix="analysis")
        self._running: dict[str, asyncio.Task[None]] = {}

    async def queue(self, request: QueueAnalysis) -> QueueReply:
        """Queue a finished game's review once; refuse a game in play or unknown."""
        try:
            uuid.UUID(request.game_id)
        except ValueError:
            return QueueReply(ok=False, code="unknown_game", message="no such game")
        stored = await self.store.read(wire.stream_of(request.game_id))
        if not stored:
            return QueueReply(ok=False, code="unknown_game", message="no such game")
        game = Game(request.game_id, stored)
        if not game.finished:
            return QueueReply(
                ok=False,
                code="game_not_finished",
                message="the game is still being played: it is reviewed once it is over",
            )
        stream_id = analysis_stream(request.game_id)
        stored = await self.store.read(stream_id)
        if not stored:
            opened = game.opened
            event = _queued(
                request.game_id, opened.rated, opened.players, request.asked_by, self.spec
            )
            await self._enqueue(request.game_id, 0, event)
            return QueueReply(ok=True)
        return await self._again(request, stored)

    async def _again(self, request: QueueAnalysis, stored: list[StoredEvent]) -> QueueReply:
        """A review already queued: say from when a failed one may be queued anew, and queue
        it anew when ``request.again`` and it may."""
        events = [REGISTRY.decode(s) for s in stored]
        state = fold(events)
        if state is None or state.status != "failed":
            return QueueReply(ok=True)  # pending or ready: nothing to do
        rounds = [e for e in events if isinstance(e, AnalysisQueued)]
        if len(rounds) >= MAX_ROUNDS:
            return QueueReply(
                ok=not request.again,
                code="retries_spent",
                message=f"the review failed {len(rounds)} times: it is not tried again",
            )
        due = round(stored[-1].recorded_at.timestamp() + self.retry_after, 3)
        if not request.again:
            return QueueReply(ok=True, retry_at=due)
        wait = due - time.time()
        if wait > 0:
            return QueueReply(
                ok=False,
                code="retry_later",
                message=f"the review failed: it can be asked for again in {math.ceil(wait)} s",
                retry_at=due,
            )
        first = rounds[0]
        again = msgspec.structs.replace(first, asked_by=request.asked_by)
        event = REGISTRY.new_event(again, Metadata(actor="bots"))
        await self._enqueue(request.game_id, stored[-1].version, event)
        self.log.info("analysis queued again", game_id=request.game_id, round=len(rounds) + 1)
        return QueueReply(ok=True)

    async def _enqueue(self, game_id: str, version: int, event: Any) -> None:
        """Append ``event`` (an `AnalysisQueued`) after ``version`` and queue the game, in one
        transaction; a concurrent request that got there first already did both."""
        with contextlib.suppress(ConcurrencyConflict):
            async with self.pool.acquire() as conn, conn.transaction():
                (stored,) = await append_with(conn, analysis_stream(game_id), version, [event])
                await _enqueue(conn, game_id, stored.version)
        self.wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Work the queue until ``stop``; then let the reviews in hand finish."""
        while not stop.is_set():
            try:
                await self._scan()
            except Exception as exc:  # the store away: the next scan tries again
                self.log.warning("analysis scan failed", error=type(exc).__name__)
            self.wake.clear()
            waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(self.wake.wait())]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED), SCAN_SECONDS
                )
            for waiter in waiters:
                waiter.cancel()
        if self._running:
            await asyncio.gather(*self._running.values(), return_exceptions=True)
        self._threads.shutdown(wait=True)

    async def _scan(self) -> None:
        queued = await self.pool.fetch(
            "SELECT game_id FROM bots_analysis_queue ORDER BY queued_at, game_id"
        )
        for row in queued:  # oldest queued first
            if len(self._running) >= self.concurrency:
                return
            game_id = row["game_id"]
            stream_id = analysis_stream(game_id)
            if game_id in self._running:
                continue
            conn = await self.pool.acquire()
            try:
                claimed = await conn.fetchval(
                    "SELECT pg_try_advisory_lock(hashtext($1))", stream_id
                )
            except BaseException:
                await self.pool.release(conn)
                raise
            if not claimed:
                await self.pool.release(conn)
                continue
            task = asyncio.create_task(self._review(game_id, conn))
            self._running[game_id] = task
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        for game_id, running in list(self._running.items()):
            if running is task:
                del self._running[game_id]
        self.wake.set()  # a slot is free

    async def _review(self, game_id: str, conn: Any) -> None:
        stream_id = analysis_stream(game_id)
        try:
            await self._work(game_id, stream_id)
        except Exception as exc:  # the store away mid-review: it stays queued, tried again
            self.log.error("analysis interrupted", game_id=game_id, error=type(exc).__name__)
        finally:
            with contextlib.suppress(Exception):
                await conn.execute("SELECT pg_advisory_unlock(hashtext($1))", stream_id)
            await self.pool.release(conn)

    async def _work(self, game_id: str, stream_id: str) -> None:
        stored = await self.store.read(stream_id)
        events = _round([REGISTRY.decode(s) for s in stored])
        if not events or any(isinstance(e, AnalysisFinished) for e in events):
            # finished (or never queued): off the queue, unless a round was queued since
            last = stored[-1].version if stored else 0
            await _dequeue(self.pool, game_id, last)
            return
        queued = events[0]
        assert isinstance(queued, AnalysisQueued)
        game = Game(game_id, await self.store.read(wire.stream_of(game_id)))
        hands = sum(1 for e in game.decoded if isinstance(e, wire.HandScored))
        attempt = 1 + sum(1 for e in events if isinstance(e, AnalysisStarted))
        version = stored[-1].version
        if attempt > MAX_ATTEMPTS:  # workers died in it again and again: give it up, said so
            given_up = AnalysisFinished(
                game_id=game_id,
                ok=False,
                code="given_up",
                message=f"the review was started {MAX_ATTEMPTS} times and never finished",
                players=queued.players,
                asked_by=queued.asked_by,
            )
            await self._finish(stream_id, game_id, version, given_up)
            self.log.error("analysis given up", game_id=game_id, attempts=MAX_ATTEMPTS)
            return
        version = await self._append(
            stream_id,
            version,
            AnalysisStarted(game_id=game_id, attempt=attempt, hands=hands),
        )
        self.log.info("analysis started", game_id=game_id, attempt=attempt, hands=hands)
        loop = asyncio.get_running_loop()
        of = hands * (2 if queued.budget.par_runs > 0 else 1)
        done = 0

        def progress(stage: str, hand: int) -> None:  # in the review's thread
            nonlocal done, version
            done = min(done + 1, of)
            step = HandAnalysed(game_id=game_id, hand=hand, stage=stage, done=done, of=of)
            try:  # progress is a courtesy: a failed append costs the review nothing
                version = asyncio.run_coroutine_threadsafe(
                    self._append(stream_id, version, step), loop
                ).result()
            except Exception as exc:
                self.log.warning("progress not stored", game_id=game_id, error=type(exc).__name__)

        text = game.transcript()
        budget = queued.budget
        try:
            reply, cpu = await loop.run_in_executor(
                self._threads, _timed(text, queued.seed, budget, progress)
            )
        except Exception as exc:  # deterministic: the same review would fail again
            self.log.exception("analysis failed", game_id=game_id, error=type(exc).__name__)
            reply = AnalysisReply(
                ok=False, code="internal", message=f"the review failed ({type(exc).__name__})"
            )
            cpu = 0.0
        finished = AnalysisFinished(
            game_id=game_id,
            ok=reply.ok,
            review=reply.body if reply.ok else msgspec.Raw(b"null"),
            code=reply.code,
            message=reply.message,
            players=queued.players,
            asked_by=queued.asked_by,
            cpu_seconds=round(cpu, 3),
        )
        await self._finish(stream_id, game_id, version, finished)
        ops.BOT_DECISION_SECONDS.labels("stored-analysis", "-").observe(cpu)
        self.log.info("analysis finished", game_id=game_id, ok=reply.ok, cpu_seconds=cpu)

    async def _finish(
        self, stream_id: str, game_id: str, version: int, event: AnalysisFinished
    ) -> None:
        """Append the round's `AnalysisFinished` and take the game off the queue, at once."""
        async with self.pool.acquire() as conn, conn.transaction():
            await append_with(
                conn, stream_id, version, [REGISTRY.new_event(event, Metadata(actor="bots"))]
            )
            await _dequeue(conn, game_id, version)

    async def _append(self, stream_id: str, version: int, event: msgspec.Struct) -> int:
        stored: list[StoredEvent] = await self.store.append(
            stream_id, version, [REGISTRY.new_event(event, Metadata(actor="bots"))]
        )
        return stored[-1].version


def _timed(
    text: str, seed: str, budget: Budget, progress: Callable[[str, int], None]
) -> Callable[[], tuple[Any, float]]:
    def work() -> tuple[Any, float]:
        started = time.thread_time()
        reply = analyse_transcript(
            text,
            seed=seed,
            worlds=budget.worlds,
            dd_tricks=budget.dd_tricks,
            par_runs=budget.par_runs,
            progress=progress,
        )
        return reply, time.thread_time() - started

    return work
