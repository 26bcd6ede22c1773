"""The active relay's two ways of publishing the log: pipelined (the default) and awaited.

- `pipelined`: pages go out through `events.relaypipe.Pipeline` (a chain of publishes, each
  expecting the one before it, one acknowledgement per page, several pages in flight). The next
  page is read while earlier ones are still unacknowledged; the checkpoint follows what the
  server confirmed, saved at most every `Pacing.checkpoint_every` seconds (a crash republishes
  at most that much, deduplicated by Nats-Msg-Id). While events keep coming it reads at most
  every `Pacing.batch_wait` seconds (25 ms), and at once after a full page, so a busy relay
  publishes several commits per read instead of one read, one write and one checkpoint per
  commit. A read costs about as much as 40 events published (its round trips to PostgreSQL and
  NATS, an acknowledgement, the loop's wake-ups, each dear on a busy machine: `python -m
  benchmarks relay`) whether it carries 2 events or 200, so at a moderate flow the relay's CPU
  is mostly its reads a second, which the wait caps at 40. It used to be 10 ms after a page of
  32 events or more (25 ms after a smaller one): at 1,300 commits a second pages hovered about
  32 and the relay read 55 to 60 times a second. The bus's consumers (ratings, the queues' live
  players, the bots) are off the play path. It reads, and saves its checkpoint, on its lock
  connection (no pool's acquire and release around each). While every read finds several commits
  notified, read after read, it stops listening (UNLISTEN: it reads on its own clock then, and a
  notification per commit would cost it and PostgreSQL for nothing), and listens again at the
  first read that finds nothing, reading once more at once. A notification that finds nothing to
  read starts the quick re-reads (a transaction held back behind an older one) only when
  something committed is really held back: most such notifications are of commits an earlier
  read already took, and each one used to cost 40 reads in 200 ms (about 1.1 ms of the relay's
  CPU per commit at 200 commits/s). Held back, it reads again, less often the longer it lasts
  (5 ms, doubling to 100 ms), until nothing is: the older transaction may never notify (a
  lease's renewal, an ANALYZE, another database of the cluster), and a relay that waited for a
  notification then sat on committed events until its poll (for ever, with a long one).
- `awaited`: the relay as it was before issue 32, kept for comparison (`python -m benchmarks
  relay`) and as a fallback (SPADES_RELAY_PIPELINE=0): each page's streams published
  concurrently, each event awaiting JetStream's acknowledgement before the next event of its
  stream, and the checkpoint saved after every page.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import signal
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import msgspec
from nats.js import JetStreamContext
from nats.js.errors import NoStreamResponseError

from events.bus import ensure_streams
from events.envelope import StoredEvent
from events.logs import bound_ids, get_logger
from events.pgstore import PostgresEventStore, save_checkpoint
from events.relaypipe import ChainBroken, Pipeline
from events.relayrows import Outgoing, read_page
from events.retry import Backoff
from events.store import Checkpoint, checkpoint_of
from events.subjects import Subjects

__all__ = ["Pacing", "RelayStats", "Session", "Wake", "awaited", "pipelined", "publish_page"]

# After a page failed to publish: publish it again, less often each time, until it goes through.
PUBLISH_BACKOFF = Backoff(first=0.1, factor=2.0, most=2.0)
# While committed events are held back behind an older transaction, read again after this
# wait, doubled at each read that finds them still held back, up to the most.
HELD_BACK_WAIT = 0.005
HELD_BACK_MOST = 0.1
# The channel the log's trigger notifies at each appending commit (migration 5).
EVENTS_CHANNEL = "spades_events"
# While every read finds at least this many commits notified since the one before, this many
# times in a row, the relay stops listening (see `pipelined`).
BUSY_COMMITS = 3
BUSY_READS = 3
# Test hook: the process kills itself (SIGKILL) once it has *sent* this many events, with pages
# still unacknowledged in the pipeline (SPADES_RELAY_CRASH_AFTER: once this many are confirmed).
CRASH_SENT_ENV = "SPADES_RELAY_CRASH_AFTER_SENT"

log = get_logger("relay")
_encoder = msgspec.json.Encoder()
# A page's batch id (the request_id of every line logged about it): this process's random
# prefix and a counter, unique without a uuid4 (a getrandom system call) for every page.
_RUN = uuid.uuid4().hex[:12]
_BATCHES = itertools.count(1)


def _batch_id() -> str:
    return f"batch-{_RUN}-{next(_BATCHES)}"


@dataclass
class RelayStats:
    """What a relay did: events published (acknowledged) and pages retried after a failure."""

    published: int = 0
    retries: int = 0
    restarts: int = 0  # sessions ended by a fault (database or NATS away) and begun again
    idle: bool = False  # caught up and waiting for a commit (or the long poll), not re-reading
    reads: int = 0  # pages read from the log (empty reads included)
    checkpoints: int = 0  # checkpoints saved
    unlistened: int = 0  # times the relay stopped listening for commits, busy reading anyway


@dataclass(frozen=True)
class Pacing:
    """How the active relay publishes: pipelined or awaited, and the pipeline's rhythm."""

    pipelined: bool = True
    batch_wait: float = 0.025  # seconds between reads while events keep coming (pages not full)
    checkpoint_every: float = 0.1  # seconds between checkpoint saves while the relay is busy
    max_in_flight: int = 8  # pages sent and not yet acknowledged
    ack_wait: float = 5.0  # seconds a page's acknowledgement may take before it counts lost
    held_back_most: float = HELD_BACK_MOST  # the longest wait between reads while held back

    @classmethod
    def from_env(cls) -> Pacing:
        """SPADES_RELAY_PIPELINE (1; 0 for the awaited way), SPADES_RELAY_BATCH_WAIT (0.025)."""
        return cls(
            pipelined=os.environ.get("SPADES_RELAY_PIPELINE", "1") != "0",
            batch_wait=float(os.environ.get("SPADES_RELAY_BATCH_WAIT", "0.025")),
        )


@dataclass
class Wake:
    """Why the relay should look again: a commit was notified (`notified`), or an
    acknowledgement came back; either sets `event`. A notification sets `event` only while
    `armed`: a relay already due to read at a set time need not be woken by every commit.
    `commits` counts the notifications (how busy the log is)."""

    event: asyncio.Event = field(default_factory=asyncio.Event)
    notified: bool = False
    armed: bool = True
    commits: int = 0

    def notify(self, *_: Any) -> None:
        """The LISTEN callback: a transaction that appends committed."""
        self.notified = True
        self.commits += 1
        if self.armed:
            self.event.set()


@dataclass
class Session:
    """What an active relay's loop works with: its connections, settings and state.

    Both ways of publishing (`pipelined`, `awaited`) take one; `checkpoint` is where the
    session began (the stored checkpoint), and each loop moves its own copy along."""

    nc: Any
    js: JetStreamContext
    lock_conn: asyncpg.Connection  # holds the advisory lock and LISTENs for commits
    pool: asyncpg.Pool
    store: PostgresEventStore
    subjects: Subjects
    stop: asyncio.Event
    name: str  # the checkpoint's key
    page_size: int
    idle_wait: float  # seconds between reads when nothing is notified
    stats: RelayStats
    crash_after: int  # test hook: SIGKILL once this many events are confirmed (0: never)
    pacing: Pacing
    wake: Wake
    checkpoint: Checkpoint

    async def listen(self) -> None:
        """LISTEN for commits on the lock connection (`Wake.notify` hears each one)."""
        await self.lock_conn.add_listener(EVENTS_CHANNEL, self.wake.notify)

    async def unlisten(self) -> None:
        """Stop hearing of commits (UNLISTEN): the relay reads on its own clock meanwhile."""
        await self.lock_conn.remove_listener(EVENTS_CHANNEL, self.wake.notify)

    def check_lock(self) -> None:
        """Raise when the lock connection is gone: another relay may hold the lock by now."""
        if self.lock_conn.is_closed():
            raise RuntimeError("lost the relay lock connection")


async def pipelined(s: Session) -> None:
    """Publish the log through a pipeline until `s.stop` (see the module docstring)."""
    stop, stats, pacing, wake = s.stop, s.stats, s.pacing, s.wake
    checkpoint, page_size = s.checkpoint, s.page_size
    crash_sent = int(os.environ.get(CRASH_SENT_ENV, "0") or 0)
    pipe = Pipeline(
        s.nc,
        s.subjects,
        checkpoint,
        ack_wait=pacing.ack_wait,
        changed=wake.event,
        ack_every=pacing.checkpoint_every,
    )
    await pipe.start()
    saved, saved_at = checkpoint, time.monotonic()
    sent = 0
    careful = False
    failed_in_a_row = 0
    held_wait = 0.0  # while events are held back: the wait before the next read, else 0
    next_read = 0.0  # monotonic time before which a notified commit is not read yet
    poll_at = 0.0  # when to read even if nothing was notified
    listening = True  # the session LISTENs before the loop starts
    busy_reads = 0  # reads in a row that found at least BUSY_COMMITS commits notified
    commits_seen = wake.commits

    async def broken(exc: ChainBroken) -> None:
        """A link failed (refused, unconfirmed, or the connection down while sending): the
        chain is abandoned, and the next look reads and publishes carefully from the confirmed
        checkpoint, after a pause that grows with the failures in a row."""
        nonlocal careful, failed_in_a_row, checkpoint
        careful = True
        failed_in_a_row += 1
        stats.retries += 1
        checkpoint = pipe.confirmed
        wake.event.set()  # the careful read follows at once, whatever collect() saw
        log.warning(
            "publish failed; publishing again from the confirmed checkpoint",
            reason=exc.reason,
            confirmed=list(pipe.confirmed),
        )
        await _pause(stop, PUBLISH_BACKOFF.delay(failed_in_a_row))
        if exc.no_stream:  # the server came back without the stream
            with contextlib.suppress(Exception):
                await ensure_streams(s.js, s.subjects)

    try:
        while not stop.is_set():
            s.check_lock()
            wake.event.clear()  # before looking: anything after this wakes the next wait
            try:
                if careful:
                    page, _ = await read_page(s.lock_conn, pipe.confirmed, page_size, pipe.subject)
                    stats.reads += 1
                    before = stats.published
                    try:
                        if page:
                            with bound_ids(request_id=_batch_id()):
                                await pipe.careful(page)
                    finally:
                        stats.published = before + _between(page, checkpoint, pipe.confirmed)
                        checkpoint = pipe.confirmed
                    careful, failed_in_a_row, poll_at = False, 0, 0.0  # read on at once
                    continue
                confirmed = pipe.collect()
                checkpoint = pipe.confirmed
            except ChainBroken as exc:
                await broken(exc)
                continue
            if confirmed:
                stats.published += confirmed
                if s.crash_after and stats.published >= s.crash_after:
                    os.kill(os.getpid(), signal.SIGKILL)  # acknowledged, checkpoint not saved
            now = time.monotonic()
            room = pipe.in_flight < pacing.max_in_flight
            reading = wake.notified or held_wait > 0 or now >= poll_at or not listening
            save = checkpoint != saved and now - saved_at >= pacing.checkpoint_every
            if save and not (room and reading and now >= next_read):
                await save_checkpoint(s.lock_conn, s.name, checkpoint)
                saved, saved_at, save = checkpoint, now, False
                stats.checkpoints += 1
            if not (room and reading and now >= next_read):
                # Woken by: a commit only when no read is due anyway; an answer only when the
                # pipeline is full. Answers otherwise wait for the next look (at most
                # `checkpoint_every` away), and the oldest page's deadline is always watched.
                due = [] if pipe.deadline is None else [pipe.deadline]
                if room:
                    due.append(next_read if reading else poll_at)
                    if pipe.in_flight:
                        due.append(now + pacing.checkpoint_every)
                if checkpoint != saved:
                    due.append(saved_at + pacing.checkpoint_every)
                wake.armed, pipe.wake_on_ack = room and not reading, not room
                stats.idle = (
                    listening and not pipe.in_flight and checkpoint == saved and not held_wait
                )
                await _wait(wake.event, min(due, default=math.inf) - now)
                wake.armed = pipe.wake_on_ack = True
                continue
            wake.notified = False
            # A checkpoint due as a read is is saved by the read's statement: one round trip.
            page, held = await read_page(
                s.lock_conn,
                pipe.sent,
                page_size,
                pipe.subject,
                (s.name, checkpoint) if save else None,
            )
            if save:
                saved, saved_at = checkpoint, now
                stats.checkpoints += 1
            stats.reads += 1
            poll_at = now + s.idle_wait
            if not page:
                busy_reads = 0
                if pipe.unconfirmed_tail:  # the flow paused: have the last page confirmed
                    with bound_ids(request_id=_batch_id()):
                        try:
                            await pipe.confirm_tail()
                        except ChainBroken as exc:
                            await broken(exc)
                            continue
                if not listening:
                    # The flow paused: hear of commits again, and read once more at once for
                    # any that committed before the LISTEN took effect.
                    await s.listen()
                    listening, wake.notified, next_read = True, True, now
                    commits_seen = wake.commits
                    continue
                # Quick re-reads only when something committed is really held back: a
                # notification whose events an earlier read already took needs none.
                held = await _held_back(s.lock_conn, pipe.sent)
                held_wait = _held_wait(held_wait, pacing.held_back_most) if held else 0.0
                next_read = now + (held_wait or HELD_BACK_WAIT)
                continue
            stats.idle = False
            held_wait = _held_wait(held_wait, pacing.held_back_most) if held else 0.0
            wait = max(pacing.batch_wait, held_wait)
            next_read = now if len(page) >= page_size else now + wait
            if listening:
                # Busy (several commits a read, read after read): the relay reads every
                # `batch_wait` anyway, so a notification per commit is only cost, in this
                # process and in the PostgreSQL backend that delivers it. Stop listening
                # until a read finds nothing.
                busy = wake.commits - commits_seen >= BUSY_COMMITS
                busy_reads = busy_reads + 1 if busy else 0
                commits_seen = wake.commits
                if busy_reads >= BUSY_READS:
                    await s.unlisten()
                    listening = False
                    stats.unlistened += 1
            with bound_ids(request_id=_batch_id()):
                try:
                    # Listening (a trickle, a moderate flow), each page asks for an answer;
                    # busy, one in `ack_every` seconds or `ack_pages` pages does, each answer a
                    # wake-up saved (a later answer confirms the pages before it).
                    await pipe.send(page, ask=listening or pipe.ask_due())
                except ChainBroken as exc:
                    await broken(exc)
                    continue
                log.debug("page sent", events=len(page), in_flight=pipe.in_flight)
            sent += len(page)
            if crash_sent and sent >= crash_sent:
                os.kill(os.getpid(), signal.SIGKILL)  # pages in flight, unacknowledged
        # Stopping in good order: what is in flight is confirmed (or not) within a second.
        with contextlib.suppress(Exception):
            await pipe.confirm_tail()
            deadline = time.monotonic() + 1.0
            while pipe.in_flight and time.monotonic() < deadline:
                stats.published += pipe.collect()
                await _wait(wake.event, 0.05)
                wake.event.clear()
        if pipe.confirmed != saved:
            with contextlib.suppress(Exception):
                await save_checkpoint(s.lock_conn, s.name, pipe.confirmed)
                stats.checkpoints += 1
    finally:
        await pipe.close()


_HELD_BACK = """
SELECT EXISTS (SELECT 1 FROM spades_events WHERE (transaction_id, position) > ($1::xid8, $2::int8))
"""


async def _held_back(conn: asyncpg.Connection, after: Checkpoint) -> bool:
    """Whether events after `after` are committed but not readable yet (`read_all` holds them
    back behind an older transaction still running); False for a notification that came after
    its events were read."""
    return bool(await conn.fetchval(_HELD_BACK, after.transaction_id, after.position))


def _held_wait(last: float, most: float = HELD_BACK_MOST) -> float:
    """The wait before the next read while events stay held back (`last` the one before)."""
    return min(most, last * 2) if last else min(most, HELD_BACK_WAIT)


def _between(page: Sequence[Outgoing], after: Checkpoint, upto: Checkpoint) -> int:
    """How many events of `page` lie after `after` and up to `upto`."""
    return sum(1 for event in page if after < event.checkpoint <= upto)


async def _wait(event: asyncio.Event, seconds: float) -> None:
    """Wait until `event` is set, at most `seconds`: a timer sets it (the loop clears it before
    each look, so a wake-up by the timer is just one more look). Cheaper than `wait_for`, which
    wraps the wait in a task and a timeout context on each of the loop's turns."""
    if event.is_set():
        return
    if seconds == math.inf:
        await event.wait()
        return
    timer = asyncio.get_running_loop().call_later(max(0.0, seconds), event.set)
    try:
        await event.wait()
    finally:
        timer.cancel()


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)


async def publish_page(
    js: JetStreamContext, subjects: Subjects, page: Sequence[StoredEvent], *, ack_wait: float = 5.0
) -> None:
    """Publish a page of events the awaited way: in order within each stream (each event after
    the previous one's acknowledgement), streams concurrently.

    Raises the first failure after every stream's chain has finished or stopped, so the caller
    can publish the whole page again (acknowledged events are then deduplicated).
    """
    chains: dict[str, list[StoredEvent]] = defaultdict(list)
    for event in page:
        chains[event.stream_id].append(event)

    async def publish_chain(events: list[StoredEvent]) -> None:
        for event in events:
            await js.publish(
                subjects.event(event.stream_id, event.type),
                _encoder.encode(event),
                timeout=ack_wait,
                headers={"Nats-Msg-Id": str(event.event_id)},
            )

    outcomes = await asyncio.gather(
        *(publish_chain(chain) for chain in chains.values()), return_exceptions=True
    )
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


async def _publish_or_pause(
    js: JetStreamContext,
    subjects: Subjects,
    page: Sequence[StoredEvent],
    stats: RelayStats,
    pause: float,
) -> bool:
    """Publish the page (True), or log why not and pause `pause` seconds (False)."""
    try:
        await publish_page(js, subjects, page)
    except Exception as exc:
        stats.retries += 1
        log.warning(
            "publish failed; page will be published again",
            error=type(exc).__name__,
            first_event=str(page[0].event_id),
            events=len(page),
        )
        await asyncio.sleep(pause)
        if isinstance(exc, NoStreamResponseError):
            # The server came back without the stream (new cluster, lost storage).
            with contextlib.suppress(Exception):
                await ensure_streams(js, subjects)
        return False
    return True


async def awaited(s: Session) -> None:
    """Publish the log page by page, awaiting each acknowledgement, until `s.stop`."""
    stop, stats, wake, checkpoint = s.stop, s.stats, s.wake, s.checkpoint
    held_wait = 0.0
    failed_in_a_row = 0
    while not stop.is_set():
        s.check_lock()
        wake.event.clear()  # before reading: a commit after this read wakes the next wait
        page = await s.store.read_all(after=checkpoint, limit=s.page_size)
        stats.reads += 1
        if not page:
            held = await _held_back(s.lock_conn, checkpoint)
            held_wait = _held_wait(held_wait) if held else 0.0
            stats.idle = not held_wait
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.event.wait(), timeout=held_wait or s.idle_wait)
            stats.idle = False
            continue
        # Every line logged about this page carries its batch id as request_id.
        with bound_ids(request_id=_batch_id()):
            pause = PUBLISH_BACKOFF.delay(failed_in_a_row + 1)  # should this page fail too
            if not await _publish_or_pause(s.js, s.subjects, page, stats, pause):
                failed_in_a_row += 1
                continue
            failed_in_a_row = 0
            stats.published += len(page)
            if s.crash_after and stats.published >= s.crash_after:
                os.kill(os.getpid(), signal.SIGKILL)
            checkpoint = checkpoint_of(page[-1])
            await save_checkpoint(s.pool, s.name, checkpoint)
            stats.checkpoints += 1
            log.debug("page published", events=len(page))
