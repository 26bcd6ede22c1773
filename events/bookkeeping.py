"""The bus's own bookkeeping events: the smallest real context, and the versioning example.

`MessageParked` is what the consumer helper publishes on the parking subject when a message
cannot be handled. Its first shape called the reason `error`; schema version 2 renamed it to
`reason` (a change the defaults rule cannot express), so the registration carries an upcaster
from v1, and a stored v1 payload still decodes (tests/events/test_envelope.py).
"""

from __future__ import annotations

from typing import Any

import msgspec

from events.envelope import REGISTRY

__all__ = ["BOOKKEEPING", "BookkeepingEvent", "MessageParked"]


class BookkeepingEvent(msgspec.Struct, frozen=True, kw_only=True, tag=True, tag_field="type"):
    """Base of the bookkeeping context's events."""


class MessageParked(BookkeepingEvent, frozen=True, kw_only=True):
    """A message a consumer could not handle was set aside, with the reason."""

    consumer: str
    subject: str
    reason: str
    stream_sequence: int | None = None
    event_id: str | None = None
    payload: str = ""  # the raw payload, truncated; never decoded, so never logged


def _message_parked_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 named the reason `error`; v2 calls it `reason`."""
    payload = dict(payload)
    payload["reason"] = payload.pop("error")
    return payload


BookkeepingEvents = MessageParked

BOOKKEEPING = REGISTRY.register(
    "bookkeeping",
    BookkeepingEvents,
    schema_versions={"MessageParked": 2},
    upcasters={("MessageParked", 1): _message_parked_v1_to_v2},
)
