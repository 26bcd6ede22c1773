"""The relay and the consumer helper against real PostgreSQL and NATS JetStream."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg
import msgspec
import nats.js.errors
import pytest
import structlog
from nats.js import JetStreamContext
from structlog.testing import capture_logs

from events import consumer as consumer_module
from events.bookkeeping import MessageParked
from events.bus import StreamMismatch, close_nats, connect, ensure_streams, stream_configs
from events.consumer import Handler, Received, Unprocessable, consume
from events.envelope import REGISTRY, Metadata, NewEvent, StoredEvent
from events.pgstore import Conn, PostgresEventStore, append_with
from events.relay import RelayStats, run_relay
from events.subjects import Subjects
from services.tools.infra import EmbeddedNats
from tests.events.helpers import consumer_idle, new_events, stream
from tests.infra import Processes, eventually

EFFECTS = """
CREATE TABLE test_effects (
    event_id uuid PRIMARY KEY,
    stream_id text NOT NULL,
    version bigint NOT NULL,
    seq bigserial
)
"""


async def record_effect(conn: Conn, received: Received) -> None:
    """An effect that fails loudly if it ever runs twice for one event."""
    event = received.event
    await conn.execute(
        "INSERT INTO test_effects (event_id, stream_id, version) VALUES ($1, $2, $3)",
        event.event_id,
        event.stream_id,
        event.version,
    )


@contextlib.asynccontextmanager
async def running(coro, stop: asyncio.Event) -> AsyncIterator[asyncio.Task]:  # type: ignore[no-untyped-def]
    """Run `coro` (which returns once `stop` is set) as a task for the block; stop it after."""
    task = asyncio.create_task(coro)
    try:
        yield task
    finally:
        stop.set()
        await asyncio.wait({task}, timeout=30)
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def stream_count(js: JetStreamContext, subjects: Subjects) -> int:
    """Messages in the test's EVENTS stream (0 when it does not exist yet)."""
    try:
        info = await js.stream_info(subjects.events_stream)
    except Exception:
        return 0
    return int(info.state.messages)


async def effects(pool: asyncpg.Pool) -> list[asyncpg.Record]:
    return await pool.fetch("SELECT event_id, stream_id, version FROM test_effects ORDER BY seq")


def assert_exactly_once_in_order(rows: list[asyncpg.Record], committed: list[StoredEvent]) -> None:
    assert sorted(r["event_id"] for r in rows) == sorted(e.event_id for e in committed)
    by_stream: dict[str, list[int]] = {}
    for row in rows:
        by_stream.setdefault(row["stream_id"], []).append(row["version"])
    for versions in by_stream.values():
        assert versions == list(range(1, len(versions) + 1))


@pytest.fixture
async def effects_table(pg_pool: asyncpg.Pool) -> None:
    await pg_pool.execute(EFFECTS)


Running = Callable[..., contextlib.AbstractAsyncContextManager[Any]]


@pytest.fixture
def consumer_running(js: JetStreamContext, pg_pool: asyncpg.Pool, subjects: Subjects) -> Running:
    """Return ``start(handler, **options)``: for its ``async with`` block, the consumer
    "effects" runs over every event of this test's streams (``options`` go to `consume`,
    ``jet=`` another JetStream context); on exit it is stopped and awaited."""

    @contextlib.asynccontextmanager
    async def start(
        handler: Handler = record_effect, *, jet: JetStreamContext | None = None, **options: Any
    ) -> AsyncIterator[None]:
        stop = asyncio.Event()
        options.setdefault("consumer", "effects")
        options.setdefault("filter_subject", subjects.all_events())
        work = consume(jet or js, pg_pool, subjects=subjects, handler=handler, stop=stop, **options)
        async with running(work, stop):
            yield

    return start


@pytest.fixture
def relay_running(database_url: str, nats_url: str, subjects: Subjects) -> Running:
    """Return ``start(**options)``: for its ``async with`` block, a relay publishes this test's
    store to JetStream (``options`` go to `run_relay`); the block gets its RelayStats."""

    @contextlib.asynccontextmanager
    async def start(**options: Any) -> AsyncIterator[RelayStats]:
        stop = asyncio.Event()
        stats = options.pop("stats", None) or RelayStats()
        options.setdefault("nats_url", nats_url)
        work = run_relay(
            database_url=database_url, subjects=subjects, stop=stop, stats=stats, **options
        )
        async with running(work, stop):
            yield stats

    return start


async def append_many(
    store: PostgresEventStore, streams: int, per_stream: int, batch: int = 3
) -> list[StoredEvent]:
    """Append `per_stream` events to each of `streams` new streams, a few at a time."""
    ids = [stream("game") for _ in range(streams)]
    out: list[StoredEvent] = []
    for version in range(0, per_stream, batch):
        rounds = await asyncio.gather(
            *(
                store.append(sid, version, new_events(min(batch, per_stream - version)))
                for sid in ids
            )
        )
        for stored in rounds:
            out += stored
    return out


@pytest.mark.usefixtures("effects_table")
async def test_relay_publishes_every_committed_event_once_and_consumer_applies_once(
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
    relay_running: Running,
    consumer_running: Running,
) -> None:
    committed = await append_many(event_store, streams=6, per_stream=10)
    async with relay_running(page_size=7), consumer_running():
        committed += await append_many(event_store, streams=3, per_stream=4)
        await eventually(lambda: _count(pg_pool, len(committed)), what="all effects")
    assert await stream_count(js, subjects) == len(committed)
    assert_exactly_once_in_order(await effects(pg_pool), committed)
    msg = await js.get_last_msg(subjects.events_stream, subjects.all_events())
    assert msg.headers is not None
    last = msgspec.json.decode(msg.data, type=StoredEvent)
    assert msg.headers["Nats-Msg-Id"] == str(last.event_id)


async def _count(pool: asyncpg.Pool, expected: int) -> bool:
    return await pool.fetchval("SELECT count(*) FROM test_effects") >= expected


async def test_only_one_relay_is_active(
    event_store: PostgresEventStore,
    js: JetStreamContext,
    subjects: Subjects,
    relay_running: Running,
) -> None:
    committed = await append_many(event_store, streams=4, per_stream=5)
    async with relay_running() as one, relay_running() as two:
        stats = [one, two]
        await eventually(lambda: stream_count(js, subjects), what="first publish")
        await eventually(
            lambda: sum(s.published for s in stats) >= len(committed), what="all published"
        )
    assert sorted(s.published for s in stats) == [0, len(committed)]
    assert await stream_count(js, subjects) == len(committed)


@pytest.mark.usefixtures("effects_table")
async def test_relay_killed_between_publish_and_checkpoint_loses_and_duplicates_nothing(
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
    processes: Processes,
    consumer_running: Running,
) -> None:
    committed = await append_many(event_store, streams=8, per_stream=25)  # 200 events
    # 1. Dies by its own SIGKILL right after JetStream acknowledged 120 events, before saving
    #    the checkpoint: the exact window between publish and checkpoint.
    first = processes.start(
        "-m",
        "events.relay",
        env={"SPADES_RELAY_CRASH_AFTER": "120", "SPADES_RELAY_PAGE_SIZE": "40"},
    )
    await eventually(lambda: first.poll() is not None, within=60, what="self-kill")
    assert first.returncode == -signal.SIGKILL, processes.log(first)
    assert await stream_count(js, subjects) >= 120
    checkpoint = await pg_pool.fetchval("SELECT count(*) FROM spades_checkpoints")
    assert checkpoint in (0, 1)

    # 2. Killed from outside (kill -9) while events are still being committed.
    second = processes.start("-m", "events.relay", env={"SPADES_RELAY_PAGE_SIZE": "10"})
    writer = asyncio.create_task(append_many(event_store, streams=5, per_stream=20))
    await eventually(lambda: _published_more_than(js, subjects, 130), what="relay 2 publishing")
    second.send_signal(signal.SIGKILL)
    await eventually(lambda: second.poll() is not None, what="kill -9")
    committed += await writer

    # 3. A fresh relay finishes the job; an idempotent consumer sees each event exactly once.
    processes.start("-m", "events.relay")
    async with consumer_running():
        await eventually(lambda: _count(pg_pool, len(committed)), within=90, what="all effects")
    assert await stream_count(js, subjects) == len(committed)  # duplicates absorbed on the bus
    assert_exactly_once_in_order(await effects(pg_pool), committed)


async def _published_more_than(js: JetStreamContext, subjects: Subjects, n: int) -> bool:
    return await stream_count(js, subjects) > n


@pytest.mark.usefixtures("effects_table")
async def test_nats_restart_during_publishing_loses_nothing(
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    private_nats: EmbeddedNats,
    subjects: Subjects,
    relay_running: Running,
    consumer_running: Running,
) -> None:
    nc = await connect(private_nats.url, name="test")
    js = nc.jetstream()
    committed: list[StoredEvent] = []
    unpublished_during_outage = 0
    try:
        async with relay_running(nats_url=private_nats.url, page_size=20) as stats:
            for round_ in range(12):
                committed += await append_many(event_store, streams=5, per_stream=3)
                if round_ == 4:
                    await eventually(lambda: stream_count(js, subjects), what="publishing")
                    await asyncio.to_thread(private_nats.stop)
                if round_ == 7:
                    unpublished_during_outage = len(committed) - stats.published
                    await asyncio.to_thread(private_nats.start)
                await asyncio.sleep(0.05)
            await eventually(
                lambda: _stream_has(js, subjects, len(committed)), within=90, what="republish"
            )
            async with consumer_running(jet=js):
                await eventually(lambda: _count(pg_pool, len(committed)), what="all effects")
        # The outage really hit the relay mid-work: events committed while NATS was down had to
        # wait for it (through the client's reconnect buffer or a republished page).
        assert unpublished_during_outage > 0
        assert await stream_count(js, subjects) == len(committed)
        assert_exactly_once_in_order(await effects(pg_pool), committed)
    finally:
        await close_nats(nc)


async def _stream_has(js: JetStreamContext, subjects: Subjects, n: int) -> bool:
    return await stream_count(js, subjects) >= n


@pytest.mark.usefixtures("effects_table")
async def test_redelivered_and_duplicated_events_have_one_effect(
    pg_pool: asyncpg.Pool, js: JetStreamContext, subjects: Subjects, consumer_running: Running
) -> None:
    await ensure_streams(js, subjects)
    event = _stored("game-1", 1)
    for copy in range(3):  # three distinct msg ids: the dedupe window cannot help here
        await js.publish(
            subjects.event(event.stream_id, event.type),
            msgspec.json.encode(event),
            headers={"Nats-Msg-Id": f"x{copy}"},
        )
    calls = 0

    async def flaky(conn: Conn, received: Received) -> None:
        nonlocal calls
        calls += 1
        await record_effect(conn, received)
        if calls == 1:
            raise ConnectionError("effect failed after writing: the transaction rolls back")

    async with consumer_running(flaky, retry_delay=0.05):
        await eventually(lambda: _count(pg_pool, 1), what="effect")
        await eventually(lambda: consumer_idle(js, subjects, "effects"), what="all acked")
    assert len(await effects(pg_pool)) == 1
    assert calls == 2  # the failed attempt, then one success; the duplicates never reach it


def _stored(
    stream_id: str, version: int, type_: str = "Tested", data: bytes = b"{}", schema: int = 1
) -> StoredEvent:
    return StoredEvent(
        event_id=uuid.uuid4(),
        stream_id=stream_id,
        version=version,
        type=type_,
        data=msgspec.Raw(data),
        schema_version=schema,
        metadata=Metadata(),
        recorded_at=datetime.now(UTC),
        position=version,
        transaction_id=1,
    )


@pytest.mark.usefixtures("effects_table")
async def test_malformed_messages_are_parked_with_a_reason_and_not_redelivered(
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
    consumer_running: Running,
) -> None:
    await ensure_streams(js, subjects)
    subject = subjects.event("game-1", "Tested")
    bad = [
        b"\x00not json at all",
        b'{"event_id": "not-a-uuid"}',
        msgspec.json.encode(_stored("game-2", 1, type_="NoSuchType")),
        # A known type whose payload lacks required fields (MessageParked needs consumer...).
        msgspec.json.encode(
            _stored("game-3", 1, type_="MessageParked", data=b'{"x": 1}', schema=2)
        ),
    ]
    good = _stored(
        "game-4",
        1,
        type_="MessageParked",
        data=msgspec.json.encode(MessageParked(consumer="c", subject="s", reason="r")),
        schema=2,
    )
    for payload in bad:
        await js.publish(subject, payload)
    await js.publish(subject, msgspec.json.encode(good))

    async def refuse_game_5(conn: Conn, received: Received) -> None:
        if received.event.stream_id == "game-5":
            raise Unprocessable("game 5 is refused by this handler")
        await record_effect(conn, received)

    await js.publish(
        subject,
        msgspec.json.encode(
            _stored("game-5", 1, type_="MessageParked", data=bytes(good.data), schema=2)
        ),
    )
    parked_sub = await js.subscribe(subjects.parked("effects"), stream=subjects.parked_stream)
    with capture_logs() as logs:
        async with consumer_running(refuse_game_5, registry=REGISTRY):
            await eventually(lambda: _count(pg_pool, 1), what="the good message")
            await eventually(lambda: consumer_idle(js, subjects, "effects"), what="acks")
    rows = await pg_pool.fetch("SELECT reason, payload FROM spades_parked ORDER BY stream_sequence")
    assert len(rows) == 5
    assert [bytes(r["payload"]) for r in rows[:4]] == bad
    assert all(r["reason"].startswith("undecodable") for r in rows[:4])
    assert rows[4]["reason"] == "unprocessable: game 5 is refused by this handler"
    assert [e["event_id"] for e in await effects(pg_pool)] == [good.event_id]
    parked_logs = [e for e in logs if e["event"] == "message parked"]
    assert [e["reason"] for e in parked_logs] == [r["reason"] for r in rows]
    assert all("payload" not in e for e in parked_logs)  # ids and reasons only, never data
    parked_msgs = [await parked_sub.next_msg(timeout=10) for _ in range(5)]
    decoded = [REGISTRY.decode(_as_new(m.data)) for m in parked_msgs]
    assert [d.reason for d in decoded] == [r["reason"] for r in rows]
    await parked_sub.unsubscribe()


def _as_new(data: bytes) -> NewEvent:
    return NewEvent(
        event_id=uuid.uuid4(), type="MessageParked", data=msgspec.Raw(data), schema_version=2
    )


@pytest.mark.usefixtures("effects_table")
async def test_handler_failing_every_time_is_parked_after_max_attempts(
    pg_pool: asyncpg.Pool, js: JetStreamContext, subjects: Subjects, consumer_running: Running
) -> None:
    await ensure_streams(js, subjects)
    event = _stored("game-9", 1)
    await js.publish(subjects.event(event.stream_id, event.type), msgspec.json.encode(event))

    async def broken(conn: Conn, received: Received) -> None:
        raise RuntimeError("always")

    async with consumer_running(broken, max_attempts=3, retry_delay=0.05):
        reason = await eventually(
            lambda: pg_pool.fetchval("SELECT reason FROM spades_parked"), what="parked"
        )
    assert reason == "handler failed 3 times: RuntimeError"
    assert await pg_pool.fetchval("SELECT count(*) FROM spades_consumer_positions") == 0


async def test_relay_recreates_the_stream_when_nats_comes_back_empty(
    event_store: PostgresEventStore,
    private_nats: EmbeddedNats,
    subjects: Subjects,
    relay_running: Running,
) -> None:
    nc = await connect(private_nats.url, name="test")
    js = nc.jetstream()
    try:
        async with relay_running(nats_url=private_nats.url):
            before = await append_many(event_store, streams=2, per_stream=3)
            await eventually(lambda: _stream_has(js, subjects, len(before)), what="first batch")
            await asyncio.to_thread(private_nats.stop)
            shutil.rmtree(private_nats.data_dir / "jetstream")
            await asyncio.to_thread(private_nats.start)
            after = await append_many(event_store, streams=2, per_stream=3)
            await eventually(lambda: _stream_has(js, subjects, len(after)), what="new stream")
        msgs = [await js.get_msg(subjects.events_stream, seq) for seq in range(1, len(after) + 1)]
        published = [msgspec.json.decode(m.data, type=StoredEvent).event_id for m in msgs]
        assert sorted(published) == sorted(e.event_id for e in after)
    finally:
        await close_nats(nc)


@pytest.mark.usefixtures("effects_table")
async def test_a_failing_event_is_not_overtaken_by_the_next_one_of_its_stream(
    pg_pool: asyncpg.Pool, js: JetStreamContext, subjects: Subjects, consumer_running: Running
) -> None:
    """v1 fails once, v2 is already fetched: v2 must wait, or v1 would later look like a
    duplicate (the position would be past it) and its effect would be lost."""
    await ensure_streams(js, subjects)
    first, second = _stored("game-7", 1), _stored("game-7", 2)
    for event in (first, second):
        await js.publish(subjects.event(event.stream_id, event.type), msgspec.json.encode(event))
    failed = False

    async def fails_once(conn: Conn, received: Received) -> None:
        nonlocal failed
        if received.event.version == 1 and not failed:
            failed = True
            raise ConnectionError("transient")
        await record_effect(conn, received)

    async with consumer_running(fails_once, retry_delay=0.05):
        await eventually(lambda: _count(pg_pool, 2), what="both effects")
    assert [r["version"] for r in await effects(pg_pool)] == [1, 2]


async def test_a_busy_jetstream_answering_503_pauses_the_consumer_instead_of_killing_it() -> None:
    """Seen under load: fetch raised ServiceUnavailableError and took the table service down."""
    stop = asyncio.Event()

    class Busy:
        calls = 0

        async def fetch(self, batch: int, timeout: float) -> list[object]:  # noqa: ASYNC109
            self.calls += 1
            if self.calls == 1:
                raise nats.js.errors.ServiceUnavailableError
            stop.set()
            raise TimeoutError

    sub = Busy()
    await consumer_module._consume_loop(
        sub,
        None,  # type: ignore[arg-type]  (no message arrives, so nothing else is touched)
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        "busy",
        None,  # type: ignore[arg-type]
        None,
        structlog.get_logger(),
        stop,
        1,
        1,
        0.0,
        60.0,  # lost_after: one 503 is a pause, never taken for a consumer that is gone
    )
    assert sub.calls == 2


async def test_an_idle_relay_is_woken_by_each_commit_not_by_its_poll(
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    js: JetStreamContext,
    subjects: Subjects,
    relay_running: Running,
) -> None:
    """The relay's poll is set to an hour: only the log's commit notification can make it
    publish, for appends through the store and for a writer's own transaction alike."""
    async with relay_running(idle_wait=3600) as stats:
        first = await append_many(event_store, streams=2, per_stream=3)
        await eventually(lambda: stats.published >= len(first), what="woken by the first commit")
        # its quick re-reads after a wake-up are over: it waits on the hour-long poll now
        await eventually(lambda: stats.idle, what="the relay on its long wait")
        async with pg_pool.acquire() as conn, conn.transaction():
            await append_with(conn, stream("game"), 0, new_events(2))
        await eventually(
            lambda: stats.published == len(first) + 2, what="woken by a writer's transaction"
        )
    assert await stream_count(js, subjects) == len(first) + 2


async def test_a_failed_lag_poll_is_logged_under_the_consumers_own_request_id(
    js: JetStreamContext, subjects: Subjects
) -> None:
    """A consumer's polling is work too: its lines carry `lag:<consumer>` as their request id."""
    await ensure_streams(js, subjects)
    stop = asyncio.Event()
    measured: list[int] = []
    with capture_logs() as logs:
        watcher = asyncio.create_task(
            consumer_module._watch_lag(
                js,
                subjects.events_stream,
                subjects.durable("never-created"),  # consumer_info fails: not found
                "never-created",
                lambda _, backlog: measured.append(backlog),
                stop,
                0.05,
            )
        )
        await eventually(lambda: [e for e in logs if e["event"] == "consumer lag not measured"])
        stop.set()
        await watcher
    failed = [e for e in logs if e["event"] == "consumer lag not measured"]
    assert measured == []
    assert {(e["request_id"], e["consumer"]) for e in failed} == {
        ("lag:never-created", "never-created")
    }


async def test_ensure_streams_creates_what_is_missing_and_leaves_declared_streams_alone(
    js: JetStreamContext, subjects: Subjects
) -> None:
    """A stream declared by the operator (NACK: more replicas, other limits) is kept as it is;
    one that does not capture the platform's subjects is refused with the stream's name."""
    declared = stream_configs(subjects)[0]
    declared.max_msgs = 1234  # the operator's own limit, which the services must not undo
    await js.add_stream(declared)
    await ensure_streams(js, subjects)
    await ensure_streams(js, subjects)  # twice: every start calls it
    kept = await js.stream_info(subjects.events_stream)
    assert kept.config.max_msgs == 1234
    created = await js.stream_info(subjects.parked_stream)
    assert created.config.subjects == subjects.parked_stream_subjects()

    await js.delete_stream(subjects.parked_stream)
    wrong = stream_configs(subjects)[1]
    wrong.subjects = [f"{subjects.parked('x')}.only"]
    await js.add_stream(wrong)
    with pytest.raises(StreamMismatch, match=subjects.parked_stream):
        await ensure_streams(js, subjects)
