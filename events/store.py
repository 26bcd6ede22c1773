"""The event store's protocol, its errors, and the in-memory store the contract tests also run.

A stream is the history of one thing (`game-<uuid>`); its events are numbered from 1 with no
gap. `append` takes the version the caller last saw; a stale version raises
`ConcurrencyConflict`, so two writers racing on one game never both win. The global log is read
with `read_all(after=checkpoint)`, in an order that never lets a reader skip an event.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NamedTuple, Protocol

import msgspec

from events.envelope import NewEvent, StoredEvent
from events.logs import get_logger

__all__ = [
    "START",
    "Checkpoint",
    "ConcurrencyConflict",
    "EventIdReused",
    "EventStore",
    "Fence",
    "Fenced",
    "InMemoryEventStore",
    "checkpoint_of",
    "is_retry_of",
    "same_content",
    "same_ids",
]


class Checkpoint(NamedTuple):
    """A reader's place in the global log: after this (transaction id, position)."""

    transaction_id: int
    position: int


START = Checkpoint(0, 0)


def checkpoint_of(event: StoredEvent) -> Checkpoint:
    """Return the checkpoint just after `event`."""
    return Checkpoint(event.transaction_id, event.position)


class ConcurrencyConflict(Exception):
    """The stream is not at the expected version: someone else appended first."""

    def __init__(self, stream_id: str, expected_version: int, actual_version: int) -> None:
        super().__init__(
            f"stream {stream_id!r} is at version {actual_version}, expected {expected_version}"
        )
        self.stream_id = stream_id
        self.expected_version = expected_version
        self.actual_version = actual_version


class EventIdReused(ValueError):
    """An event id in the batch is already stored somewhere other than this append's slot."""


class Fence(NamedTuple):
    """A writer's claim to a lease: the append commits only while the lease is at ``epoch``.

    The lease (`events.leases`) is a row whose epoch goes up by one at every claim. An append
    that carries a fence checks that row, under a row lock, inside its own transaction: a
    writer whose lease was claimed by someone else since is refused by the store itself, even
    if it still believes it owns the lease (a paused process, a lost connection). This is the
    fencing token of Kleppmann's "How to do distributed locking", Kafka's leader epoch.
    """

    name: str
    epoch: int


class Fenced(Exception):
    """The append's fence is stale: its lease has moved on (another writer owns it now)."""

    def __init__(self, fence: Fence, current_epoch: int | None) -> None:
        super().__init__(
            f"lease {fence.name!r} is at epoch {current_epoch}; the writer's is {fence.epoch}"
        )
        self.fence = fence
        self.current_epoch = current_epoch


class EventStore(Protocol):
    """What every event store backend provides (PostgreSQL in production, memory in tests)."""

    async def append(
        self, stream_id: str, expected_version: int, events: Sequence[NewEvent]
    ) -> list[StoredEvent]:
        """Append `events` after `expected_version` (0: a new stream) and return them stored.

        All or nothing. Re-appending the same event ids at the same expected version (a
        retry after a lost reply) returns the stored events and writes nothing.
        """
        ...

    async def read(self, stream_id: str, from_version: int = 0) -> list[StoredEvent]:
        """Return the stream's events with version >= from_version, in version order."""
        ...

    async def read_all(self, after: Checkpoint = START, limit: int = 1000) -> list[StoredEvent]:
        """Return up to `limit` committed events after `after`, in global log order."""
        ...

    async def stream_version(self, stream_id: str) -> int:
        """Return the stream's current version (0 when it has no events)."""
        ...


def is_retry_of(events: Sequence[NewEvent], stored: Sequence[StoredEvent]) -> bool:
    """Return whether `stored` (the slots the append aimed at) hold exactly these events:
    the same ids *and* the same content (type, schema version, payload).

    Ids alone are not enough: a bot's or a timer's move takes its ids from the game and the
    version it acts on, so two replicas acting on one version (one of them paused past its
    lease, resuming with the append in flight) make the same ids; a time-limited bot may not
    make the same move. Such an append is a different write, refused as a conflict, and the
    writer reloads the log instead of publishing what it computed. The metadata is not
    compared: a retry of one command records its own deadline and epoch.
    """
    return len(stored) == len(events) and all(
        s.event_id == e.event_id and same_content(e, s) for s, e in zip(stored, events, strict=True)
    )


def same_ids(events: Sequence[NewEvent], stored: Sequence[StoredEvent]) -> bool:
    """Return whether `stored` holds these event ids, whatever their content."""
    return len(stored) == len(events) and all(
        s.event_id == e.event_id for s, e in zip(stored, events, strict=True)
    )


def same_content(new: NewEvent, stored: StoredEvent) -> bool:
    """Return whether ``new`` writes what ``stored`` holds: type, schema version, payload."""
    if new.type != stored.type or new.schema_version != stored.schema_version:
        return False
    if bytes(new.data) == bytes(stored.data):
        return True
    try:  # the same JSON written differently (whitespace, key order) is the same payload
        return bool(_json.decode(bytes(new.data)) == _json.decode(bytes(stored.data)))
    except msgspec.DecodeError:
        return False


_json = msgspec.json.Decoder()


_log = get_logger("store")


class InMemoryEventStore:
    """An EventStore in a list: same contract, no persistence. For unit tests and tools."""

    def __init__(self) -> None:
        self._log: list[StoredEvent] = []
        self._streams: dict[str, list[StoredEvent]] = {}
        self._ids: set[object] = set()
        self._transaction = 0

    async def append(
        self, stream_id: str, expected_version: int, events: Sequence[NewEvent]
    ) -> list[StoredEvent]:
        """See EventStore.append."""
        if not events:
            return []
        stream = self._streams.get(stream_id, [])
        if expected_version < 0:
            raise ValueError(f"expected_version must be >= 0, got {expected_version}")
        if len(stream) != expected_version:
            slots = stream[expected_version : expected_version + len(events)]
            if expected_version >= 0 and is_retry_of(events, slots):
                return list(slots)
            if same_ids(events, slots):
                _log.warning(
                    "an append reused stored event ids with other content: refused",
                    stream_id=stream_id,
                    expected_version=expected_version,
                )
            raise ConcurrencyConflict(stream_id, expected_version, len(stream))
        if len({e.event_id for e in events}) != len(events) or any(
            e.event_id in self._ids for e in events
        ):
            raise EventIdReused(f"an event id in this batch for {stream_id!r} is already stored")
        self._transaction += 1
        now = datetime.now(UTC)
        stored = [
            StoredEvent(
                event_id=e.event_id,
                stream_id=stream_id,
                version=expected_version + i,
                type=e.type,
                data=e.data,
                schema_version=e.schema_version,
                metadata=e.metadata,
                recorded_at=now,
                position=len(self._log) + i,
                transaction_id=self._transaction,
            )
            for i, e in enumerate(events, start=1)
        ]
        self._streams[stream_id] = [*stream, *stored]
        self._log.extend(stored)
        self._ids.update(e.event_id for e in events)
        return stored

    async def read(self, stream_id: str, from_version: int = 0) -> list[StoredEvent]:
        """See EventStore.read."""
        return [e for e in self._streams.get(stream_id, []) if e.version >= from_version]

    async def read_all(self, after: Checkpoint = START, limit: int = 1000) -> list[StoredEvent]:
        """See EventStore.read_all (here every append commits at once, so no event is late)."""
        return [e for e in self._log if checkpoint_of(e) > after][:limit]

    async def stream_version(self, stream_id: str) -> int:
        """See EventStore.stream_version."""
        return len(self._streams.get(stream_id, []))
