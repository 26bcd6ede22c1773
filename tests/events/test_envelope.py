"""The envelope, the registry and the versioning rule (defaults, then upcasters)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import msgspec
import pytest

from events.bookkeeping import BOOKKEEPING, MessageParked
from events.envelope import (
    Metadata,
    NewEvent,
    Registry,
    StoredEvent,
    UnknownEventType,
    event_type_of,
)


def stored(type_: str, data: bytes, schema_version: int) -> StoredEvent:
    return StoredEvent(
        event_id=uuid.uuid4(),
        stream_id="parked-rating",
        version=1,
        type=type_,
        data=msgspec.Raw(data),
        schema_version=schema_version,
        recorded_at=datetime.now(UTC),
        position=1,
        transaction_id=1,
    )


def test_a_stored_v1_payload_is_upcast_to_the_current_shape() -> None:
    # Exactly what a v1 writer stored: the reason was called `error`, no event_id/payload yet.
    v1 = b'{"type":"MessageParked","consumer":"rating","subject":"ev.game.1.X","error":"bad"}'
    event = BOOKKEEPING.decode("MessageParked", 1, v1)
    assert event == MessageParked(consumer="rating", subject="ev.game.1.X", reason="bad")


def test_current_payload_decodes_without_upcasting() -> None:
    from events.envelope import REGISTRY

    event = MessageParked(consumer="c", subject="s", reason="r", stream_sequence=7)
    new = REGISTRY.new_event(event, Metadata(actor="relay"))
    assert new.schema_version == 2
    assert new.type == "MessageParked"
    assert REGISTRY.decode(new) == event


def test_new_fields_with_defaults_read_old_payloads_and_old_readers_ignore_them() -> None:
    class Old(msgspec.Struct, frozen=True, kw_only=True, tag=True, tag_field="type"):
        seat: int

    class Later(msgspec.Struct, frozen=True, kw_only=True, tag="Old", tag_field="type"):
        seat: int
        note: str = ""  # added later, with a default

    assert msgspec.json.decode(msgspec.json.encode(Old(seat=2)), type=Later) == Later(seat=2)
    written_later = msgspec.json.encode(Later(seat=1, note="x"))
    assert msgspec.json.decode(written_later, type=Old) == Old(seat=1)


def test_a_stored_event_round_trips_through_json_with_its_payload_bytes() -> None:
    event = stored("MessageParked", b'{"type":"MessageParked","consumer":"c"}', 2)
    wire = msgspec.json.encode(event)
    back = msgspec.json.decode(wire, type=StoredEvent)
    assert back == event
    assert bytes(back.data) == bytes(event.data)


def test_registry_refuses_a_type_owned_by_another_context() -> None:
    registry = Registry()

    class A(msgspec.Struct, frozen=True, kw_only=True, tag=True, tag_field="type"):
        pass

    registry.register("one", A)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("two", A)
    registry.register("one", A)  # re-registering the same context is fine


def test_missing_upcaster_and_unknown_type_are_typed_errors() -> None:
    registry = Registry()

    class B(msgspec.Struct, frozen=True, kw_only=True, tag=True, tag_field="type"):
        x: int

    registry.register("ctx", B, schema_versions={"B": 3}, upcasters={("B", 2): lambda p: p})
    with pytest.raises(UnknownEventType, match="no upcaster for B v1"):
        registry.decode(stored("B", b'{"x":1}', 1))
    assert registry.decode(stored("B", b'{"x":1}', 2)) == B(x=1)
    with pytest.raises(UnknownEventType):
        registry.decode(stored("Nope", b"{}", 1))


def test_untagged_struct_cannot_be_an_event() -> None:
    class Plain(msgspec.Struct):
        pass

    with pytest.raises(TypeError, match="tagged"):
        event_type_of(Plain)


def test_new_event_ids_are_fresh() -> None:
    from events.envelope import REGISTRY

    event = MessageParked(consumer="c", subject="s", reason="r")
    ids = {REGISTRY.new_event(event).event_id for _ in range(3)}
    assert len(ids) == 3
    assert isinstance(next(iter(ids)), uuid.UUID)
    assert NewEvent(event_id=uuid.uuid4(), type="T", data=msgspec.Raw(b"{}")).schema_version == 1
