"""Small builders shared by the event tests."""

from __future__ import annotations

import asyncio
import uuid

import msgspec
from nats.js import JetStreamContext
from nats.js.api import RawStreamMsg

from events.envelope import Metadata, NewEvent, StoredEvent
from events.subjects import Subjects


def new_events(count: int, *, type_: str = "Tested", tag: str = "") -> list[NewEvent]:
    """Return `count` fresh NewEvents with distinct ids and payloads."""
    return [
        NewEvent(
            event_id=uuid.uuid4(),
            type=type_,
            data=msgspec.Raw(msgspec.json.encode({"n": i, "tag": tag})),
            metadata=Metadata(actor="tester", correlation_id=uuid.uuid4()),
        )
        for i in range(count)
    ]


def stream(category: str = "test") -> str:
    """Return a fresh stream id `category-<uuid>`."""
    return f"{category}-{uuid.uuid4()}"


async def consumer_idle(js: JetStreamContext, subjects: Subjects, consumer: str) -> bool:
    """Return whether a durable consumer has handled (acked) everything in its stream."""
    info = await js.consumer_info(subjects.events_stream, subjects.durable(consumer))
    return info.num_pending == 0 and info.num_ack_pending == 0


async def read_back(js: JetStreamContext, stream_name: str) -> list[RawStreamMsg]:
    """Every message of a JetStream stream, in the stream's order (by sequence)."""
    info = await js.stream_info(stream_name)
    first, last = int(info.state.first_seq), int(info.state.last_seq)
    out: list[RawStreamMsg] = []
    for start in range(first, last + 1, 100):
        chunk = range(start, min(start + 100, last + 1))
        out += await asyncio.gather(*(js.get_msg(stream_name, seq) for seq in chunk))
    return out


async def bus_events(js: JetStreamContext, subjects: Subjects) -> list[StoredEvent]:
    """Every event in the test's EVENTS stream, in the stream's order."""
    return [
        msgspec.json.decode(msg.data, type=StoredEvent)
        for msg in await read_back(js, subjects.events_stream)
        if msg.data
    ]


def assert_bus_is_the_log(on_bus: list[StoredEvent], logged: list[StoredEvent]) -> None:
    """Every logged event is on the bus exactly once, each stream's in version order, and the
    bus holds them in the log's own order (the relay's chain keeps the stream a log prefix)."""
    ids = [event.event_id for event in on_bus]
    assert len(ids) == len(set(ids)), "an event is on the bus twice"
    assert set(ids) == {event.event_id for event in logged}, "the bus and the log differ"
    versions: dict[str, list[int]] = {}
    for event in on_bus:
        versions.setdefault(event.stream_id, []).append(event.version)
    for stream_id, seen in versions.items():
        assert seen == list(range(1, len(seen) + 1)), f"{stream_id} out of order: {seen}"
    assert ids == [event.event_id for event in logged], "the bus is not in the log's order"
