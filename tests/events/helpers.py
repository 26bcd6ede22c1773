"""Small builders shared by the event tests."""

from __future__ import annotations

import uuid

import msgspec

from events.envelope import Metadata, NewEvent


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
