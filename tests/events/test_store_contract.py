"""One contract for every EventStore backend: memory and PostgreSQL pass the same tests."""

from __future__ import annotations

import asyncio
import uuid

import msgspec
import pytest

from events.envelope import NewEvent
from events.pgstore import PostgresEventStore
from events.store import (
    START,
    ConcurrencyConflict,
    EventIdReused,
    EventStore,
    InMemoryEventStore,
    checkpoint_of,
)
from tests.events.helpers import new_events, stream


class EventStoreContract:
    """The behaviour every EventStore must have. Subclasses provide the `store` fixture."""

    @pytest.fixture
    def store(self) -> EventStore:
        raise NotImplementedError

    async def test_append_returns_numbered_events_and_read_gives_them_back(
        self, store: EventStore
    ) -> None:
        sid = stream()
        events = new_events(3)
        stored = await store.append(sid, 0, events)
        assert [e.version for e in stored] == [1, 2, 3]
        assert [e.event_id for e in stored] == [e.event_id for e in events]
        assert all(e.stream_id == sid for e in stored)
        read = await store.read(sid)
        assert read == stored
        assert [bytes(e.data) for e in read] == [bytes(e.data) for e in events]
        assert [e.metadata for e in read] == [e.metadata for e in events]
        assert await store.stream_version(sid) == 3

    async def test_read_from_version_is_inclusive(self, store: EventStore) -> None:
        sid = stream()
        await store.append(sid, 0, new_events(2))
        await store.append(sid, 2, new_events(3))
        assert [e.version for e in await store.read(sid, from_version=3)] == [3, 4, 5]
        assert await store.read(sid, from_version=6) == []

    async def test_unknown_stream_is_empty_at_version_zero(self, store: EventStore) -> None:
        assert await store.read(stream()) == []
        assert await store.stream_version(stream()) == 0

    async def test_empty_append_writes_nothing(self, store: EventStore) -> None:
        sid = stream()
        assert await store.append(sid, 0, []) == []
        assert await store.stream_version(sid) == 0

    @pytest.mark.parametrize("expected", [0, 1, 3])
    async def test_stale_or_future_expected_version_conflicts(
        self, store: EventStore, expected: int
    ) -> None:
        sid = stream()
        await store.append(sid, 0, new_events(2))
        with pytest.raises(ConcurrencyConflict) as caught:
            await store.append(sid, expected, new_events(1))
        assert caught.value.stream_id == sid
        assert caught.value.expected_version == expected
        assert caught.value.actual_version == 2
        assert await store.stream_version(sid) == 2

    async def test_new_stream_with_nonzero_expected_version_conflicts(
        self, store: EventStore
    ) -> None:
        with pytest.raises(ConcurrencyConflict):
            await store.append(stream(), 1, new_events(1))

    async def test_retry_with_same_event_ids_succeeds_without_writing_twice(
        self, store: EventStore
    ) -> None:
        sid = stream()
        events = new_events(2)
        first = await store.append(sid, 0, events)
        again = await store.append(sid, 0, events)
        assert again == first
        await store.append(sid, 2, new_events(1))
        assert await store.append(sid, 0, events) == first  # still a retry after more appends
        assert [e.version for e in await store.read(sid)] == [1, 2, 3]

    async def test_partly_matching_retry_is_a_conflict(self, store: EventStore) -> None:
        sid = stream()
        events = new_events(2)
        await store.append(sid, 0, events)
        with pytest.raises(ConcurrencyConflict):
            await store.append(sid, 0, [events[0], *new_events(1)])

    async def test_a_late_append_of_the_same_ids_with_other_content_is_a_conflict(
        self, store: EventStore
    ) -> None:
        """Two writers acting on one version make the same ids (a bot's move takes them from
        the game and the version); the one whose move differs is not taken for a retry."""
        sid = stream()
        events = new_events(2)
        first = await store.append(sid, 0, events)
        other = [
            NewEvent(event_id=e.event_id, type=e.type, data=msgspec.Raw(b'{"n": -1}'))
            for e in events
        ]
        with pytest.raises(ConcurrencyConflict):
            await store.append(sid, 0, other)
        renamed = [msgspec.structs.replace(e, type="Other") for e in events]
        with pytest.raises(ConcurrencyConflict):
            await store.append(sid, 0, renamed)
        assert await store.read(sid) == first

    async def test_event_id_reused_in_another_stream_is_refused(self, store: EventStore) -> None:
        events = new_events(1)
        await store.append(stream(), 0, events)
        other = stream()
        with pytest.raises(EventIdReused):
            await store.append(other, 0, events)
        assert await store.stream_version(other) == 0

    async def test_negative_expected_version_is_refused(self, store: EventStore) -> None:
        with pytest.raises(ValueError, match="expected_version"):
            await store.append(stream(), -1, new_events(1))

    async def test_read_all_returns_every_event_once_in_append_order(
        self, store: EventStore
    ) -> None:
        a, b = stream("a"), stream("b")
        appended = []
        appended += await store.append(a, 0, new_events(2))
        appended += await store.append(b, 0, new_events(3))
        appended += await store.append(a, 2, new_events(1))
        everything = await store.read_all()
        assert [e.event_id for e in everything] == [e.event_id for e in appended]

    async def test_read_all_pages_by_checkpoint_without_gap_or_repeat(
        self, store: EventStore
    ) -> None:
        appended = []
        for _ in range(7):
            appended += await store.append(stream(), 0, new_events(3))
        seen = []
        checkpoint = START
        while page := await store.read_all(after=checkpoint, limit=4):
            assert len(page) <= 4
            seen += page
            checkpoint = checkpoint_of(page[-1])
        assert [e.event_id for e in seen] == [e.event_id for e in appended]

    async def test_concurrent_appends_to_distinct_streams_all_succeed(
        self, store: EventStore
    ) -> None:
        streams = [stream() for _ in range(40)]
        results = await asyncio.gather(*(store.append(s, 0, new_events(2)) for s in streams))
        assert all([e.version for e in r] == [1, 2] for r in results)
        for sid, stored in zip(streams, results, strict=True):
            assert await store.read(sid) == stored

    async def test_concurrent_appends_at_one_version_have_exactly_one_winner(
        self, store: EventStore
    ) -> None:
        sid = stream()
        await store.append(sid, 0, new_events(1))
        outcomes = await asyncio.gather(
            *(store.append(sid, 1, new_events(2)) for _ in range(8)), return_exceptions=True
        )
        winners = [o for o in outcomes if not isinstance(o, BaseException)]
        assert len(winners) == 1
        assert all(isinstance(o, ConcurrencyConflict) for o in outcomes if o not in winners)
        assert await store.read(sid, 2) == winners[0]

    async def test_payload_bytes_survive_unchanged(self, store: EventStore) -> None:
        payload = b'{"z":1,"a":[1,2],"s":"\\u00e9t\\u00e9"}'
        event = NewEvent(event_id=uuid.uuid4(), type="Tested", data=msgspec.Raw(payload))
        sid = stream()
        await store.append(sid, 0, [event])
        (read,) = await store.read(sid)
        assert msgspec.json.decode(bytes(read.data)) == msgspec.json.decode(payload)


class TestInMemoryEventStore(EventStoreContract):
    @pytest.fixture
    def store(self) -> EventStore:
        return InMemoryEventStore()


class TestPostgresEventStore(EventStoreContract):
    @pytest.fixture
    def store(self, event_store: PostgresEventStore) -> EventStore:
        return event_store
