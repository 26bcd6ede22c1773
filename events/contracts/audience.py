"""What the table sends each audience of a game, already encoded, and how it travels.

The table is the only process that folds a game, so it is the one that decides what each
seat and the spectators may receive (`engine.audience`) and encodes it, once per audience,
as the exact bytes a WebSocket client is sent (`Event`, `View`, `YourTurn`, `Clock`: the
server messages of services/gateway/PROTOCOL.md that carry game information). The gateway
forwards those bytes; it decodes only the `Frame` around them (msgpack), never a message.

- `Frame`: after each append commits, its owner publishes one frame on the game's audience
  subject (`Subjects.audiences`, core NATS: no stream): every seat's event messages for the
  append's events, the spectators' messages it released (they are kept one trick behind),
  each seat's ``your_turn`` and the ``clock``. Frames are numbered by the game's seqs, so a
  gateway sees a gap (the owner died between commit and publish, the partition moved) and
  asks the table for what it missed.
- `events.contracts.game.Catchup` / `CatchupReply`: request/reply to the partition's owner: the view
  (a fresh subscription), the messages after a seq (resume), the current turn and clock.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from events.contracts import game as wire

# -- server messages the table builds (the gateway sends them as they are) -------------------


class _Out(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of the server's messages about a game."""


class View(_Out, frozen=True, kw_only=True, omit_defaults=True, tag="view"):
    """A snapshot of the game at ``seq`` as this seat may see it."""

    game_id: str
    seq: int
    view: wire.SeatViewWire


class Event(_Out, frozen=True, kw_only=True, omit_defaults=True, tag="event"):
    """Event number ``seq`` of the game, redacted for this seat; ``hand`` when it changed."""

    game_id: str
    seq: int
    event: wire.SeatEvent
    hand: tuple[wire.Card, ...] | None = None


class YourTurn(_Out, frozen=True, kw_only=True, omit_defaults=True, tag="your_turn"):
    """The seat is on turn after event ``seq``: what it may send, and until when."""

    game_id: str
    seq: int
    legal: tuple[wire.AnySeatCommand, ...]
    deadline: float | None
    suggestion: wire.AnySeatCommand | None = None


class Clock(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag="clock"):
    """Seat ``seat`` is on turn after event ``seq``; its timer runs out at ``deadline``.

    ``now`` is the table's time when this was built (count down with ``deadline - now``, not
    the client's own clock); ``bot``: the seat is played by a bot, which acts long before.
    ``deadline`` is null at an untimed table (practice opened with ``untimed``).
    """

    game_id: str
    seq: int
    seat: int
    deadline: float | None
    now: float
    bot: bool = False


# -- table -> gateway ---------------------------------------------------------------------------


class Frame(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One committed append of a game, for every audience, encoded by the table.

    The append holds events ``first`` .. ``last`` (``last == first - 1``: no event, a nudge
    a new owner sends so that watchers behind it catch up). ``seats[i]`` holds seat ``i``'s
    `Event` message for each of them, in order. ``spectators`` holds the spectators' `Event`
    messages this append released: events ``spectators_from`` .. ``released`` (none when
    ``released`` did not move). ``turns[i]`` is seat ``i``'s `YourTurn` after the append
    (empty: not on turn, or a bot holds the seat), ``clock`` the `Clock` (empty: nobody on
    turn).
    """

    game_id: str
    first: int
    last: int
    seats: tuple[tuple[bytes, ...], ...] = ()
    spectators: tuple[bytes, ...] = ()
    spectators_from: int = 0
    released: int = 0
    turns: tuple[bytes, ...] = ()
    clock: bytes = b""


class CatchupReply(msgspec.Struct, frozen=True, kw_only=True):
    """The table's answer to `events.contracts.game.Catchup`.

    ``version``: the game's last seq; ``released``: the last seq spectators may see. ``seat``
    is the asker's (-1: a spectator), ``players`` who sits where. ``view``: the `View` message
    (when no ``after`` was given); ``messages``: the `Event` messages after ``after`` for this
    audience, up to ``version`` (a seat) or ``released`` (a spectator); ``turn`` the seat's
    `YourTurn` (with the searching bot's suggestion when hints were asked at a practice
    table), ``clock`` the `Clock`, both empty when they do not apply.
    """

    ok: bool
    code: str = ""
    message: str = ""
    version: int = 0
    released: int = 0
    seat: int = -1
    players: tuple[str, ...] = ()
    view: bytes = b""
    messages: tuple[bytes, ...] = ()
    turn: bytes = b""
    clock: bytes = b""
    hints: bool = False
    """Whether this table gives hints (a practice table): ask again with ``hints`` for them."""
    unlisted: bool = False
    """An unlisted friends' table (`TableOpened.unlisted`): named in no public list, presence
    included, while it runs."""


FRAMES = msgspec.msgpack.Encoder()
"""Frames and catch-up replies travel as msgpack: their payloads are bytes, kept as they are."""
frame_decoder = msgspec.msgpack.Decoder(Frame)
catchup_decoder = msgspec.msgpack.Decoder(CatchupReply)


def messages_after(frames: Iterable[Frame], seat: int, after: int, upto: int) -> list[bytes] | None:
    """Return ``seat``'s messages (-1: the spectators') of events ``after`` + 1 .. ``upto``
    from consecutive ``frames``, or None when the frames do not hold all of them."""
    out: list[bytes] = []
    expect = after + 1
    for f in frames:
        if expect > upto:
            break
        if seat >= 0:
            if f.last < expect:
                continue
            if f.first > expect:
                return None
            out += f.seats[seat][expect - f.first : upto - f.first + 1]
            expect = min(f.last, upto) + 1
        else:
            if not f.spectators or f.released < expect:
                continue
            if f.spectators_from > expect:
                return None
            start = expect - f.spectators_from
            out += f.spectators[start : start + upto - expect + 1]
            expect = min(f.released, upto) + 1
    return out if expect == upto + 1 else None
