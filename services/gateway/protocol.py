"""The WebSocket protocol's messages (services/gateway/PROTOCOL.md): what a client may send,
and what the gateway itself says. Both directions are msgspec Structs, so what this module
declares is exactly what is accepted and sent.

The messages that carry a game (`view`, `event`, `your_turn`, `clock`) are not built here:
the table builds and encodes them once per audience (`events.contracts.audience`), and the gateway
forwards their bytes.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import msgspec

from events.contracts import game as wire
from events.contracts import talk
from events.contracts.audience import Clock, Event, View, YourTurn
from events.ids import uuid5

COMMAND_NAMESPACE = uuid.UUID("5ade5000-0000-4000-8000-00000000a7e5")
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A UUID as `str(uuid.UUID(...))` spells it: lowercase 8-4-4-4-12."""

# -- client -> server ---------------------------------------------------------------------------


class _In(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of the client's messages."""


class Auth(_In, frozen=True, tag="auth"):
    """Authenticate with an access token."""

    token: str


class Subscribe(_In, frozen=True, tag="subscribe"):
    """Watch a game (as its seat, or a spectator); resume after ``last_seq`` if given."""

    game_id: str
    last_seq: int | None = None
    hints: bool = False


class Unsubscribe(_In, frozen=True, tag="unsubscribe"):
    """Stop watching a game."""

    game_id: str


class Command(_In, frozen=True, tag="command"):
    """Act at one's seat; ``command`` is a seat command (see the module docstring)."""

    game_id: str
    command_id: uuid.UUID
    command: dict[str, Any]


class ViewRequest(_In, frozen=True, tag="view"):
    """Ask for a fresh snapshot of a watched game."""

    game_id: str


class Ping(_In, frozen=True, tag="ping"):
    """Ask for a pong."""


ClientMessage = Auth | Subscribe | Unsubscribe | Command | ViewRequest | Ping
CLIENT_TYPES = frozenset({"auth", "subscribe", "unsubscribe", "command", "view", "ping"})

# -- server -> client ---------------------------------------------------------------------------


class _Out(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of the server's messages."""


class Welcome(_Out, frozen=True, tag="welcome"):
    """Authenticated as ``player_id`` until ``expires_at`` (unix seconds)."""

    player_id: str
    bot: bool
    expires_at: float


class Subscribed(_Out, frozen=True, tag="subscribed"):
    """Watching ``game_id`` as ``role`` ("seat" or "spectator") at ``seat`` (-1: none)."""

    game_id: str
    role: str
    seat: int
    players: tuple[str, ...]


class Ack(_Out, frozen=True, tag="ack"):
    """A command was applied (``applied``), or had been already (``already_applied``)."""

    game_id: str
    command_id: uuid.UUID
    seq: int
    code: str


class Error(_Out, frozen=True, tag="error"):
    """Something was refused or went wrong; ``code`` names the reason."""

    code: str
    message: str
    game_id: str | None = None
    command_id: uuid.UUID | None = None


class Unsubscribed(_Out, frozen=True, tag="unsubscribed"):
    """No longer watching ``game_id``."""

    game_id: str


class Pong(_Out, frozen=True, tag="pong"):
    """The answer to a ping."""


class MatchReady(_Out, frozen=True, tag="match_found"):
    """The player was matched: ``game_id`` is his ranked game, at ``seat`` of ``players``."""

    game_id: str
    match_id: str
    ladder: str
    seat: int
    players: tuple[str, ...]


ServerMessage = (
    Welcome
    | Subscribed
    | View
    | Event
    | YourTurn
    | Clock
    | MatchReady
    | Ack
    | Error
    | Unsubscribed
    | Pong
)

_decoder = msgspec.json.Decoder(ClientMessage)
_encoder = msgspec.json.Encoder()
_COMMAND_CLASSES: dict[str, type[wire.AnySeatCommand | talk.Say]] = {
    cls.__name__: cls
    for cls in (
        wire.PlaceBid,
        wire.DeclareBlindNil,
        wire.DeclineBlindNil,
        wire.PassCards,
        wire.PlayCard,
        wire.DrawCard,
        wire.Contribute,
        talk.Say,
    )
}
_COMMAND_FIELDS = {name: set(cls.__struct_fields__) for name, cls in _COMMAND_CLASSES.items()}
_COMMAND_FIELDS["Say"] = set(talk.CLIENT_FIELDS)  # whom he is apart from: the gateway's to say


def misspelt_game_id(game_id: str) -> str | None:
    """Return why ``game_id`` is refused when it is a UUID spelt otherwise than the canonical
    lowercase 8-4-4-4-12 form (braces, `urn:uuid:`, capitals, dashes moved or missing), or
    None. Such an id names no game (every game id is canonical) and must never reach a NATS
    subject, where braces or a colon are not allowed (a `{uuid}` once closed the socket)."""
    if _CANONICAL.fullmatch(game_id):  # every id a client copies from the server: 1 µs, not 7
        return None
    try:
        canonical = str(uuid.UUID(game_id))
    except ValueError:
        return None  # not a UUID at all: the callers answer unknown_game / not_subscribed
    if canonical == game_id:
        return None
    return f"a game id is a UUID in lowercase 8-4-4-4-12 form, e.g. {canonical}"


def parse(data: str | bytes) -> ClientMessage | Error:
    """Return the client message in a frame, or the Error that answers it."""
    try:
        message: ClientMessage = _decoder.decode(data)
    except msgspec.ValidationError as exc:  # JSON, but not a message (a DecodeError subclass)
        try:
            raw = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError):
            raw = None
        kind = raw.get("type") if isinstance(raw, dict) else None
        if isinstance(raw, dict) and kind not in CLIENT_TYPES:
            return Error(
                code="unknown_type",
                message=f"unknown message type {kind!r}: one of {sorted(CLIENT_TYPES)}",
            )
        return Error(code="malformed", message=str(exc))
    except msgspec.DecodeError as exc:
        return Error(code="malformed", message=f"not JSON: {exc}")
    except RecursionError:  # deeper than the decoder goes: a crafted frame, not a message
        return Error(code="malformed", message="the message is nested too deeply")
    game_id = getattr(message, "game_id", None)
    if isinstance(game_id, str) and (why := misspelt_game_id(game_id)) is not None:
        return Error(
            code="malformed",
            message=why,
            game_id=game_id,
            command_id=getattr(message, "command_id", None),
        )
    return message


def seat_command(body: dict[str, Any]) -> wire.AnySeatCommand | talk.Say:
    """Return the seat command of a ``command`` message; raise ValueError saying what is wrong.

    Unknown fields are refused rather than ignored: a ``seat`` field in particular, since a
    command always acts for the sender's own seat.
    """
    kind = body.get("type")
    fields = _COMMAND_FIELDS.get(kind) if isinstance(kind, str) else None  # [] is unhashable
    if fields is None or not isinstance(kind, str):
        raise ValueError(f"unknown command {kind!r}: one of {sorted(_COMMAND_FIELDS)}")
    extra = set(body) - fields - {"type"}
    if extra:
        raise ValueError(f"unknown field(s) {sorted(extra)}: a command acts for your own seat")
    try:
        # to the class the tag names, not to the union: msgspec works a union's type out
        # again on every call (9 µs against 0.3 µs a command), with the same error texts
        command: wire.AnySeatCommand | talk.Say = msgspec.convert(body, _COMMAND_CLASSES[kind])
    except msgspec.ValidationError as exc:
        raise ValueError(str(exc)) from None
    return command


def scoped_command_id(player_id: str, game_id: str, command_id: uuid.UUID) -> uuid.UUID:
    """Return the command id the table sees: the client's, scoped to its player and game, so
    no client can collide with (or pre-empt) another's ids."""
    return uuid5(COMMAND_NAMESPACE, f"{player_id}\n{game_id}\n{command_id}")
