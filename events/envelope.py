"""The envelope every stored event travels in, and the registry that turns payloads into Structs.

The envelope knows nothing about game events: a context (the game, matchmaking, ratings, the
store's own bookkeeping) registers one tagged union of `msgspec.Struct` events with
`REGISTRY.register(...)`, and the same envelope, store and bus carry all of them.

Versioning rule (msgspec's schema-evolution rule, plus upcasters):

1. A new field always gets a default; an old field's annotation never changes. Old payloads
   then decode as they are, and old readers ignore the new field. No version bump needed.
2. When a shape really must change (a rename, a split, a new meaning), bump the type's
   `schema_version` in the registration and register an upcaster keyed by
   `(type, old_schema_version)`: a pure function from the old payload (a dict) to the payload of
   the next version. Stored rows keep their original version forever; readers upcast on decode,
   one step at a time, so `v1 -> v2 -> v3` needs only the two neighbouring upcasters.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar, get_args

import msgspec

__all__ = [
    "REGISTRY",
    "Context",
    "Metadata",
    "NewEvent",
    "Registry",
    "StoredEvent",
    "UnknownEventType",
    "Upcaster",
    "event_type_of",
    "new_event_id",
]

E = TypeVar("E", bound=msgspec.Struct)
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def new_event_id() -> uuid.UUID:
    """Return a fresh random event id (uuid4)."""
    return uuid.uuid4()


class Metadata(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Who and what caused an event: the command, the event before it, the whole conversation."""

    command_id: uuid.UUID | None = None
    causation_id: uuid.UUID | None = None
    correlation_id: uuid.UUID | None = None
    actor: str | None = None
    epoch: int | None = None
    """The writer's lease epoch when the append was fenced (`events.leases`): an audit trail."""
    deadline: float = 0.0
    """A game's turn timer (unix seconds): when the table acts for the seat on turn after the
    append that wrote this event, unless it acts first (every event of the append carries the
    same value). The table writes it, runs its timer to it, and every watcher is told it:
    nobody computes it again. 0: none (nobody on turn, an untimed table, or an event recorded
    before deadlines were: `events.contracts.game.deadline_of` reads those)."""


class NewEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An event about to be appended: its payload is already JSON (`data`)."""

    event_id: uuid.UUID
    type: str
    data: msgspec.Raw
    schema_version: int = 1
    metadata: Metadata = Metadata()


class StoredEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An event as the log holds it, and as it travels on the bus (JSON).

    `version` numbers the events of one stream from 1 with no gap. `(transaction_id, position)`
    is the event's place in the global log: see `PostgresEventStore.read_all` for why the
    transaction id comes first.
    """

    event_id: uuid.UUID
    stream_id: str
    version: int
    type: str
    data: msgspec.Raw
    schema_version: int = 1
    metadata: Metadata = Metadata()
    recorded_at: datetime
    position: int
    transaction_id: int


class UnknownEventType(LookupError):
    """No registered context has an event of this type."""


def event_type_of(cls: type[msgspec.Struct]) -> str:
    """Return the wire tag (type name) of a tagged event Struct class."""
    tag = cls.__struct_config__.tag
    if not isinstance(tag, str):
        raise TypeError(f"{cls.__name__} is not a tagged Struct (declare tag=True on its base)")
    return tag


@dataclass(frozen=True)
class Context(Generic[E]):
    """One registered context: its union, each type's current schema version, its upcasters."""

    name: str
    union: Any
    schema_versions: Mapping[str, int]
    upcasters: Mapping[tuple[str, int], Upcaster]
    decoder: msgspec.json.Decoder[Any] = field(repr=False)

    def decode(self, type_: str, schema_version: int, data: bytes) -> E:
        """Return the Struct for a payload stored at `schema_version`, upcast to the current one."""
        current = self.schema_versions[type_]
        if schema_version == current:
            event: E = self.decoder.decode(data)
            return event
        payload: dict[str, Any] = msgspec.json.decode(data)
        for version in range(schema_version, current):
            try:
                step = self.upcasters[(type_, version)]
            except KeyError:
                raise UnknownEventType(f"no upcaster for {type_} v{version}") from None
            payload = step(payload)
        payload["type"] = type_
        converted: E = msgspec.convert(payload, self.union)
        return converted


class Registry:
    """Every context's union, keyed by event type; decodes stored events into Structs."""

    def __init__(self) -> None:
        self._by_type: dict[str, Context[Any]] = {}
        self._contexts: dict[str, Context[Any]] = {}
        self._encoder = msgspec.json.Encoder()

    def register(
        self,
        name: str,
        union: Any,
        *,
        schema_versions: Mapping[str, int] | None = None,
        upcasters: Mapping[tuple[str, int], Upcaster] | None = None,
    ) -> Context[Any]:
        """Register a context's tagged union (`A | B | C`) and return its Context.

        Registering the same name again replaces it (module reloads in tests); a type name
        already owned by another context is an error, because the type column alone must say
        which Struct to decode.
        """
        members: Iterable[type[msgspec.Struct]] = get_args(union) or (union,)
        types = {event_type_of(cls) for cls in members}
        versions = {t: 1 for t in types} | dict(schema_versions or {})
        if unknown := set(versions) - types:
            raise ValueError(f"schema versions for types outside {name}: {sorted(unknown)}")
        for type_ in types:
            owner = self._by_type.get(type_)
            if owner is not None and owner.name != name:
                raise ValueError(f"event type {type_} already registered by {owner.name}")
        context: Context[Any] = Context(
            name=name,
            union=union,
            schema_versions=versions,
            upcasters=dict(upcasters or {}),
            decoder=msgspec.json.Decoder(union),
        )
        self._contexts[name] = context
        for type_ in types:
            self._by_type[type_] = context
        return context

    def context_of(self, type_: str) -> Context[Any]:
        """Return the context that owns event type `type_`."""
        try:
            return self._by_type[type_]
        except KeyError:
            raise UnknownEventType(type_) from None

    def new_event(
        self,
        event: msgspec.Struct,
        metadata: Metadata | None = None,
        *,
        event_id: uuid.UUID | None = None,
    ) -> NewEvent:
        """Return the NewEvent for a registered event Struct, stamped with its schema version."""
        type_ = event_type_of(type(event))
        context = self.context_of(type_)
        return NewEvent(
            event_id=event_id or new_event_id(),
            type=type_,
            data=msgspec.Raw(self._encoder.encode(event)),
            schema_version=context.schema_versions[type_],
            metadata=metadata or Metadata(),
        )

    def decode(self, stored: StoredEvent | NewEvent) -> Any:
        """Return the event Struct carried by a stored event, upcast to its current shape."""
        return self.context_of(stored.type).decode(
            stored.type, stored.schema_version, bytes(stored.data)
        )


REGISTRY = Registry()
