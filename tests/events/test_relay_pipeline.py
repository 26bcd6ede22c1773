"""The relay's pipelined chain (events/relaypipe.py) under the failures it was built for.

Everything is real: the log is PostgreSQL, the bus NATS JetStream, and the fault tests run the
relay as `python -m events.relay` processes. After each fault the JetStream stream is read back
and compared with the log: every committed event exactly once, each stream in version order,
and the whole bus in the log's own order (the chain keeps the stream a prefix of the log).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from events.bus import close_nats, connect, ensure_streams
from events.envelope import Metadata, NewEvent, StoredEvent
from events.migrations import migrate
from events.pgrows import COLUMNS, row_to_event
from events.pgstore import PostgresEventStore, append_with, create_pool, load_checkpoint
from events.relay import Pacing, RelayStats, run_relay
from events.relaypipe import ChainBroken, Pipeline
from events.relayrows import Outgoing, outgoing_of, read_page
from events.store import START, checkpoint_of
from events.subjects import Subjects
from services.tools.infra import EmbeddedNats, EmbeddedPostgres
from tests.events.helpers import assert_bus_is_the_log, bus_events, new_events, stream
from tests.infra import Processes, eventually, unique_token

pytestmark = pytest.mark.timeout(600)

RELAY = ("-m", "events.relay")
SMALL_PAGES = {"SPADES_RELAY_PAGE_SIZE": "20"}
MAX_MSG = 2048  # bytes: the limit the refusal tests put on the EVENTS stream


async def log_events(pool: asyncpg.Pool) -> list[StoredEvent]:
    """Every event the log holds (committed), in its order."""
    order = "ORDER BY transaction_id, position"
    rows = await pool.fetch(f"SELECT {COLUMNS} FROM spades_events {order}")
    return [row_to_event(row) for row in rows]


@contextlib.asynccontextmanager
async def relay_running(
    database_url: str, nats_url: str, subjects: Subjects, **options: Any
) -> AsyncIterator[RelayStats]:
    """A relay in this process for the block (`run_relay` with `options`): its stats. It is
    stopped, and what it had in flight settled, when the block ends."""
    stop, stats = asyncio.Event(), RelayStats()
    relay = asyncio.create_task(
        run_relay(
            database_url=database_url,
            nats_url=nats_url,
            subjects=subjects,
            stop=stop,
            stats=stats,
            **options,
        )
    )
    try:
        yield stats
    finally:
        stop.set()
        await relay


async def on_bus(js: JetStreamContext, subjects: Subjects, n: int) -> bool:
    """Whether the EVENTS stream holds at least `n` messages."""
    try:
        info = await js.stream_info(subjects.events_stream)
    except Exception:
        return False
    return int(info.state.messages) >= n


def big_event() -> NewEvent:
    """An event JetStream refuses while the stream's messages are limited to MAX_MSG bytes."""
    return NewEvent(
        event_id=uuid.uuid4(),
        type="Tested",
        data=msgspec.Raw(msgspec.json.encode({"blob": "x" * (2 * MAX_MSG)})),
        metadata=Metadata(actor="tester", correlation_id=uuid.uuid4()),
    )


async def limit_messages(js: JetStreamContext, subjects: Subjects, size: int) -> None:
    """Set the EVENTS stream's largest message (-1: no limit)."""
    info = await js.stream_info(subjects.events_stream)
    info.config.max_msg_size = size
    await js.update_stream(info.config)


async def a_log_with_a_refused_event(store: PostgresEventStore) -> tuple[list[str], StoredEvent]:
    """Three streams written in turns; the middle round's second stream gets the big event.
    Returns the stream ids and the big event as stored."""
    ids = [stream("game") for _ in range(3)]
    big: StoredEvent | None = None
    for round_ in range(4):
        for index, sid in enumerate(ids):
            events = [big_event()] if (round_, index) == (2, 1) else new_events(1)
            stored = await store.append(sid, round_, events)
            if (round_, index) == (2, 1):
                big = stored[0]
    assert big is not None
    return ids, big


async def test_a_refused_link_keeps_every_later_link_of_the_chain_out(
    event_store: PostgresEventStore,
    nc: NATS,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    """JetStream refuses one message in the middle of a page sent without waiting: nothing sent
    after it gets in, of its own stream or any other, and the careful retry confirms exactly
    the events before it; once the server takes it, the rest follows in the log's order."""
    await ensure_streams(js, subjects)
    await limit_messages(js, subjects, MAX_MSG)
    _, big = await a_log_with_a_refused_event(event_store)
    page = await event_store.read_all(START, limit=100)
    refused_at = [e.event_id for e in page].index(big.event_id)
    assert 0 < refused_at < len(page) - 3  # links of every stream follow the refused one

    pipe = Pipeline(nc, subjects, START, ack_wait=10)
    await pipe.start()

    def out(events: list[StoredEvent]) -> list[Outgoing]:
        return [outgoing_of(event, subjects) for event in events]

    try:
        await pipe.send(out(page))

        async def broken() -> str | None:
            try:
                pipe.collect()
            except ChainBroken as exc:
                return exc.reason
            return None

        reason = await eventually(broken, what="the page's acknowledgement")
        assert reason.startswith("refused")
        assert pipe.confirmed == START  # one answer per page: nothing of it is confirmed
        assert [e.event_id for e in await bus_events(js, subjects)] == [
            e.event_id for e in page[:refused_at]
        ]

        # The careful retry asks an answer of every message: the leading run is confirmed.
        with pytest.raises(ChainBroken, match="refused"):
            await pipe.careful(out(page))
        assert pipe.confirmed == checkpoint_of(page[refused_at - 1])
        assert_bus_is_the_log(await bus_events(js, subjects), page[:refused_at])

        await limit_messages(js, subjects, -1)
        rest = await event_store.read_all(pipe.confirmed, limit=100)
        assert rest[0].event_id == big.event_id
        assert await pipe.careful(out(rest)) == len(rest)
        assert pipe.confirmed == checkpoint_of(page[-1])
        version = await event_store.stream_version(big.stream_id)
        more = await event_store.append(big.stream_id, version, new_events(2))
        await pipe.send(out(more))  # the chain goes on from the last confirmed link
        await eventually(lambda: pipe.collect() or pipe.confirmed == checkpoint_of(more[-1]))
    finally:
        await pipe.close()
    assert_bus_is_the_log(await bus_events(js, subjects), page + more)


async def test_pages_sent_without_asking_are_confirmed_by_a_later_answer_and_only_a_true_one(
    event_store: PostgresEventStore,
    nc: NATS,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    """A busy relay's pages ask for no acknowledgement but every few: nothing of them counts as
    confirmed until an answer comes (none is overdue meanwhile), and `confirm_tail`'s answer
    (the last message published again, asking) confirms them all; when a message among them
    was refused, that answer is a refusal too (the copy expects the same missing
    predecessor), so the chain is never taken for stored beyond a gap."""
    await ensure_streams(js, subjects)
    first = await event_store.append(stream("game"), 0, new_events(6))
    pipe = Pipeline(nc, subjects, START, ack_wait=10)
    await pipe.start()

    def out(events: list[StoredEvent]) -> list[Outgoing]:
        return [outgoing_of(event, subjects) for event in events]

    try:
        for part in (first[:2], first[2:4], first[4:]):
            await pipe.send(out(part), ask=False)
        await eventually(lambda: on_bus(js, subjects, 6), what="the unasked pages stored")
        assert pipe.collect() == 0
        assert pipe.confirmed == START
        assert pipe.deadline is None
        assert pipe.in_flight == 3
        assert pipe.unconfirmed_tail
        await pipe.confirm_tail()
        assert not pipe.unconfirmed_tail
        await eventually(lambda: pipe.collect() == 6, what="the tail's answer")
        assert pipe.confirmed == checkpoint_of(first[-1])
        assert pipe.in_flight == 0
        assert_bus_is_the_log(await bus_events(js, subjects), first)

        # Now a refused message among unasked pages: the tail's answer refuses too.
        await limit_messages(js, subjects, MAX_MSG)
        _, big = await a_log_with_a_refused_event(event_store)
        page = await event_store.read_all(pipe.confirmed, limit=100)
        refused_at = [e.event_id for e in page].index(big.event_id)
        await pipe.send(out(page[: refused_at + 1]), ask=False)
        await pipe.send(out(page[refused_at + 1 :]), ask=False)
        await pipe.confirm_tail()

        async def broken() -> str | None:
            try:
                pipe.collect()
            except ChainBroken as exc:
                return exc.reason
            return None

        reason = await eventually(broken, what="the tail's refusal")
        assert reason.startswith("refused")
        assert pipe.confirmed == checkpoint_of(first[-1])
        assert_bus_is_the_log(await bus_events(js, subjects), first + page[:refused_at])
    finally:
        await pipe.close()


async def test_the_relay_holds_back_everything_after_a_refused_event_until_it_goes_through(
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    nats_url: str,
    database_url: str,
    subjects: Subjects,
) -> None:
    await ensure_streams(js, subjects)
    await limit_messages(js, subjects, MAX_MSG)
    _, big = await a_log_with_a_refused_event(event_store)
    logged = await log_events(pg_pool)
    before = logged[: [e.event_id for e in logged].index(big.event_id)]
    async with relay_running(database_url, nats_url, subjects, page_size=5) as stats:
        await eventually(lambda: stats.retries >= 3, what="the relay retrying the refused event")
        assert stats.published == len(before)
        assert_bus_is_the_log(await bus_events(js, subjects), before)
        assert await pg_pool.fetchval("SELECT count(*) FROM spades_checkpoints") <= 1
        await limit_messages(js, subjects, -1)
        await eventually(lambda: stats.published >= len(logged), what="the rest published")
    assert_bus_is_the_log(await bus_events(js, subjects), logged)


class Writer:
    """Appends one event to each of `streams` streams, round after round, until stopped;
    rides out a database restart (an append whose fate is unknown is found in the log)."""

    def __init__(self, url: str, streams: int = 30) -> None:
        self.url = url
        self.ids = [f"game-{uuid.uuid4()}" for _ in range(streams)]
        self.rounds = 0
        self.stop = asyncio.Event()

    async def run(self) -> None:
        pool = await create_pool(self.url, min_size=1, max_size=4)
        try:
            store = PostgresEventStore(pool)
            while not self.stop.is_set():
                try:
                    versions = [await store.stream_version(sid) for sid in self.ids]
                    rounds = zip(self.ids, versions, strict=True)
                    await asyncio.gather(*(store.append(s, v, new_events(1)) for s, v in rounds))
                    self.rounds += 1
                except Exception:  # the database is away: try again shortly
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.stop.wait(), 0.2)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), 0.01)
        finally:
            pool.terminate()


@contextlib.asynccontextmanager
async def writing(url: str) -> AsyncIterator[Writer]:
    writer = Writer(url)
    task = asyncio.create_task(writer.run())
    try:
        yield writer
    finally:
        writer.stop.set()
        await task


async def test_a_relay_killed_with_pages_in_flight_loses_and_doubles_nothing(
    processes: Processes,
    database_url: str,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    async with writing(database_url) as writer:
        await eventually(lambda: writer.rounds >= 10, what="appends under way")
        # 1. It kills itself once 150 events are sent, with pages still unacknowledged.
        first = processes.start(*RELAY, env={**SMALL_PAGES, "SPADES_RELAY_CRASH_AFTER_SENT": "150"})
        await eventually(lambda: first.poll() is not None, within=90, what="the self-kill")
        assert first.returncode == -signal.SIGKILL, processes.log(first)[-2000:]
        # 2. Killed from outside while it publishes what the writer keeps appending.
        second = processes.start(*RELAY, env=SMALL_PAGES)
        await eventually(lambda: on_bus(js, subjects, 400), within=90, what="relay 2 publishing")
        second.send_signal(signal.SIGKILL)
        await eventually(lambda: second.poll() is not None, what="kill -9")
        killed_at = writer.rounds
        # 3. A third one takes over while the writer goes on.
        third = processes.start(*RELAY, env=SMALL_PAGES)
        await eventually(lambda: writer.rounds >= killed_at + 10, what="appends after the kill")
    logged = await log_events(pg_pool)
    await eventually(lambda: on_bus(js, subjects, len(logged)), within=90, what="all on the bus")
    assert_bus_is_the_log(await bus_events(js, subjects), logged)
    assert third.poll() is None, processes.log(third)[-2000:]


async def test_a_nats_restart_with_pages_in_flight_loses_and_doubles_nothing(
    processes: Processes,
    database_url: str,
    pg_pool: asyncpg.Pool,
    private_nats: EmbeddedNats,
    subjects: Subjects,
) -> None:
    relay = processes.start(*RELAY, env={**SMALL_PAGES, "SPADES_NATS_URL": private_nats.url})
    nc = await connect(private_nats.url, name="test")
    try:
        js = nc.jetstream()
        async with writing(database_url) as writer:
            await eventually(lambda: on_bus(js, subjects, 300), within=90, what="publishing")
            await asyncio.to_thread(private_nats.stop)
            stopped_at = writer.rounds
            await eventually(lambda: writer.rounds >= stopped_at + 5, what="appends while away")
            await asyncio.to_thread(private_nats.start)
            await eventually(lambda: writer.rounds >= stopped_at + 15, what="appends after")
        logged = await log_events(pg_pool)
        await eventually(
            lambda: on_bus(js, subjects, len(logged)), within=120, what="all on the bus"
        )
        assert_bus_is_the_log(await bus_events(js, subjects), logged)
        assert relay.poll() is None, processes.log(relay)[-2000:]
    finally:
        await close_nats(nc)


@pytest.fixture
def private_pg(scratch: Path) -> Iterator[EmbeddedPostgres]:
    """A durable PostgreSQL of this test's own, which it crashes and starts again."""
    server = EmbeddedPostgres(scratch / unique_token("pg-"), durable=True)
    server.start()
    try:
        yield server
    finally:
        server.stop("immediate")


async def test_a_database_crash_under_the_pipelined_relay_loses_and_doubles_nothing(
    private_pg: EmbeddedPostgres,
    processes: Processes,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    url = private_pg.url()
    conn = await asyncpg.connect(url)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    relay = processes.start(*RELAY, env={**SMALL_PAGES, "SPADES_DATABASE_URL": url})
    pool = await create_pool(url, min_size=1, max_size=2)
    try:
        async with writing(url) as writer:
            await eventually(lambda: on_bus(js, subjects, 300), within=90, what="publishing")
            pool.terminate()
            await asyncio.to_thread(private_pg.stop, "immediate")
            await asyncio.to_thread(private_pg.start)
            pool = await create_pool(url, min_size=1, max_size=2)
            crashed_at = writer.rounds
            await eventually(lambda: writer.rounds >= crashed_at + 15, what="appends after")
        logged = await log_events(pool)
        await eventually(
            lambda: on_bus(js, subjects, len(logged)), within=120, what="all on the bus"
        )
        assert_bus_is_the_log(await bus_events(js, subjects), logged)
        assert relay.poll() is None, processes.log(relay)[-2000:]
    finally:
        pool.terminate()


async def test_only_a_held_back_commit_sets_the_relay_re_reading(
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    nats_url: str,
    database_url: str,
    subjects: Subjects,
) -> None:
    """A notification whose events were already read costs one read, not a burst of quick
    re-reads; a commit held back behind an older open transaction is re-read until it shows,
    however long that takes (it once stopped after 40 re-reads: a relay then sat on the commit
    until its poll). The relay's poll is an hour: only notifications and the re-reads can make
    it publish."""
    pacing = Pacing(held_back_most=0.01)  # re-reads every 10 ms at most: the test is quick
    async with relay_running(
        database_url, nats_url, subjects, idle_wait=3600, pacing=pacing
    ) as stats:
        first = await event_store.append(stream("game"), 0, new_events(2))
        await eventually(lambda: stats.published == 2 and stats.idle, what="idle after a page")
        # A notification with nothing behind it: one read, and idle again.
        reads = stats.reads
        await pg_pool.execute("SELECT pg_notify('spades_events', '')")
        await eventually(lambda: stats.reads > reads and stats.idle, what="the stale wake-up read")
        assert stats.reads - reads == 1
        # A commit held back behind an older transaction that never appends nor notifies.
        older = await pg_pool.acquire()
        try:
            opened = older.transaction()
            await opened.start()
            await older.fetchval("SELECT pg_current_xact_id()")  # it holds an xid: xmin stays
            held = await event_store.append(stream("game"), 0, new_events(1))
            reads = stats.reads
            await eventually(lambda: stats.reads > reads + 60, what="re-reads of the held commit")
            assert stats.published == 2
            assert not stats.idle
            await opened.rollback()
        finally:
            await pg_pool.release(older)
        await eventually(lambda: stats.published == 3, what="the held commit published")
    assert_bus_is_the_log(await bus_events(js, subjects), first + held)


async def test_a_busy_relay_stops_listening_and_hears_commits_again_once_the_flow_pauses(
    event_store: PostgresEventStore,
    js: JetStreamContext,
    nats_url: str,
    database_url: str,
    subjects: Subjects,
) -> None:
    """While commits keep coming (several a read, read after read) the relay UNLISTENs and reads
    on its own clock; once a read finds nothing it LISTENs again, so a lone commit after the
    pause is still published by its notification: the poll is an hour, nothing else could.
    Every event reaches the bus once, in the log's order."""

    window: list[float] = []  # once unlistened: reads, time; a second later: reads, time

    async def writer() -> None:
        sid = stream("game")
        version = 0
        while version < 4_000:
            if stats.unlistened and not window:
                window.extend([stats.reads, time.monotonic()])
            if window and time.monotonic() - window[1] >= 1.0:
                if len(window) == 2:
                    window.extend([stats.reads, time.monotonic()])
                break
            await event_store.append(sid, version, new_events(1))
            version += 1

    pacing = Pacing(batch_wait=0.05)  # several commits a read even on a slow machine
    # pages never full: a full page is read after at once (a backlog), and on a quiet machine
    # six writers fill 500 events in less than a batch_wait; the busy clock is what is tested
    async with relay_running(
        database_url, nats_url, subjects, idle_wait=3600, pacing=pacing, page_size=100_000
    ) as stats:
        await asyncio.gather(*(writer() for _ in range(6)))
        assert stats.unlistened == 1, "the relay kept listening under a flow of commits"
        # On its own clock it reads at most once a `batch_wait`, however big the pages (a
        # read costs as much as dozens of events; the margin is for the read in progress).
        reads, seconds = window[2] - window[0], window[3] - window[1]
        assert reads <= seconds / 0.05 + 3, f"{reads} reads in {seconds:.2f} s"
        logged = await event_store.read_all(START, limit=100_000)
        await eventually(lambda: stats.published == len(logged), what="the flow published")
        await eventually(lambda: stats.idle, what="the relay idle (listening again)")
        reads = stats.reads
        lone = await event_store.append(stream("game"), 0, new_events(1))
        await eventually(
            lambda: stats.published == len(logged) + 1, what="the lone commit, by its notification"
        )
        assert stats.reads - reads <= 2  # woken once (and a held-back check at most)
    assert_bus_is_the_log(await bus_events(js, subjects), logged + lone)


async def test_a_page_with_commits_held_back_behind_it_is_followed_by_a_read_unbidden(
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    nats_url: str,
    database_url: str,
    subjects: Subjects,
) -> None:
    """A read that finds a page while a later commit is held back behind an older transaction
    (one that never notifies: a lease's renewal, an ANALYZE, another database of the cluster)
    reads again until that commit shows, notified or not. CI once saw a relay publish a page,
    then sit on the commit behind it for a minute: its poll is an hour here."""
    pacing = Pacing(held_back_most=0.01)
    first, holder = await pg_pool.acquire(), await pg_pool.acquire()
    try:
        async with relay_running(
            database_url, nats_url, subjects, idle_wait=3600, pacing=pacing
        ) as stats:
            await eventually(lambda: stats.idle, what="the relay idle")
            appending, holding = first.transaction(), holder.transaction()
            await appending.start()  # the oldest transaction: it appends, and notifies at commit
            early = await append_with(first, stream("game"), 0, new_events(2))
            await holding.start()  # then one that holds an xid and never notifies
            await holder.fetchval("SELECT pg_current_xact_id()")
            late = await event_store.append(stream("game"), 0, new_events(1))  # held behind both
            await appending.commit()  # notified: the page of `early`, with `late` held behind it
            await eventually(lambda: stats.published == 2, what="the page before the held commit")
            reads = stats.reads
            await eventually(lambda: stats.reads > reads + 60, what="re-reads of the held commit")
            assert stats.published == 2
            assert not stats.idle
            await holding.rollback()  # ends unnotified: only a re-read can find `late`
            await eventually(lambda: stats.published == 3, what="the held commit published")
            await eventually(lambda: stats.idle, what="the relay idle again")
    finally:
        await pg_pool.release(first)
        await pg_pool.release(holder)
    assert_bus_is_the_log(await bus_events(js, subjects), early + late)


def test_the_relay_waits_the_same_between_reads_whatever_a_page_held() -> None:
    """Reads are the relay's main cost at a moderate flow: its wait between reads is 25 ms by
    default and SPADES_RELAY_BATCH_WAIT sets it; there is no shorter wait after a big page."""
    assert Pacing().batch_wait == 0.025
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SPADES_RELAY_BATCH_WAIT", "0.04")
        assert Pacing.from_env().batch_wait == 0.04


async def test_what_the_relay_publishes_decodes_to_the_event_the_log_holds(
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    nats_url: str,
    database_url: str,
    subjects: Subjects,
) -> None:
    """The relay builds each message from the row's text (the payload and metadata passed
    through as the log holds them, never decoded and encoded again): decoded as a
    `StoredEvent`, every message equals the logged event in every field, whatever its
    metadata holds and whatever characters its data has."""
    full = Metadata(
        command_id=uuid.uuid4(),
        causation_id=uuid.uuid4(),
        correlation_id=uuid.uuid4(),
        actor='a "quoted" \\ actor é',
        epoch=7,
        deadline=1_764_361_000.25,
    )
    odd = msgspec.Raw(msgspec.json.encode({"text": 'quote " back \\ é ♠ \u2028', "n": [1, 2.5]}))
    events = [
        NewEvent(event_id=uuid.uuid4(), type="Tested", data=odd, metadata=full),
        NewEvent(event_id=uuid.uuid4(), type="Tested", data=msgspec.Raw(b"{}")),
        *new_events(3),
    ]
    await event_store.append(stream("game"), 0, events)
    logged = await log_events(pg_pool)
    async with pg_pool.acquire() as conn:
        page, held = await read_page(
            conn, START, 100, lambda sid, t: subjects.event(sid, t).encode()
        )
    assert not held
    assert [o.event_id for o in page] == [str(e.event_id).encode() for e in logged]
    for built, event in zip(page, logged, strict=True):
        assert msgspec.json.decode(built.payload, type=StoredEvent) == event
        assert built.checkpoint == checkpoint_of(event)
        assert built.subject == subjects.event(event.stream_id, event.type).encode()
    async with relay_running(database_url, nats_url, subjects) as stats:
        await eventually(lambda: stats.published == len(logged), what="the events published")
    on_bus = await bus_events(js, subjects)
    assert on_bus == logged
    assert on_bus[0].metadata == full


async def test_a_read_that_saves_the_checkpoint_reads_the_same_page_and_saves_it(
    event_store: PostgresEventStore, pg_pool: asyncpg.Pool, subjects: Subjects
) -> None:
    """A busy relay saves its checkpoint in the statement of its next read: the page is the
    plain read's, and the checkpoint is stored (and moved again by the next such read)."""
    stored = await event_store.append(stream("game"), 0, new_events(5))

    def subject(sid: str, type_: str) -> bytes:
        return subjects.event(sid, type_).encode()

    async with pg_pool.acquire() as conn:
        plain, _ = await read_page(conn, checkpoint_of(stored[0]), 3, subject)
        both, _ = await read_page(
            conn, checkpoint_of(stored[0]), 3, subject, ("relay-test", checkpoint_of(stored[1]))
        )
        assert both == plain
        assert [o.event_id for o in both] == [str(e.event_id).encode() for e in stored[1:4]]
        assert await load_checkpoint(conn, "relay-test") == checkpoint_of(stored[1])
        await read_page(conn, START, 1, subject, ("relay-test", checkpoint_of(stored[3])))
        assert await load_checkpoint(conn, "relay-test") == checkpoint_of(stored[3])
