"""Small builders shared by the event tests."""

from __future__ import annotations

import uuid

import msgspec
from nats.js import JetStreamContext

from events.envelope import Metadata, NewEvent
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
