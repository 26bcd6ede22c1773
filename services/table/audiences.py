"""What each audience of a game is sent, built and encoded here once (`events.contracts.audience`).

Pure and synchronous: `services.table.games` calls `frame` after each append commits and
publishes it, and `catchup` to answer a gateway's `Catchup`. The rules of what a seat may
know are the engine's (`engine.audience`, `engine.view`); this module only encodes them, one
message per audience: four seats told the same public event without a change of hand share
one encoding.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Iterable, Sequence

import msgspec

import engine
import engine.audience
from events.contracts import game as wire
from events.contracts.audience import Clock, Event, Frame, View, YourTurn, messages_after
from events.envelope import REGISTRY, StoredEvent
from services.table.tables import Table

_json = msgspec.json.Encoder()
_command = functools.lru_cache(maxsize=4096)(wire.command_to_wire)
"""Engine commands are frozen and few (a card, a bid): convert each once per process."""

Step = tuple[int, wire.GameEvent, engine.GameState, engine.GameState]
"""One event of an append: its seq, the event, the engine state before and after it."""


def _names(cards: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(map(wire.card_name, cards))


def seat_messages(game_id: str, step: Step, seats: int) -> tuple[bytes, ...]:
    """Return each seat's `Event` message of one event."""
    seq, event, before, after = step
    shared: bytes | None = None
    out = []
    for seat in range(seats):
        told = wire.redact(event, seat)
        hand = engine.audience.visible_hand(after, seat)
        if hand is not None and hand == engine.audience.visible_hand(before, seat):
            hand = None
        if hand is None and told is event:  # public, no hand: the same bytes for every seat
            if shared is None:
                shared = _json.encode(Event(game_id=game_id, seq=seq, event=told))
            out.append(shared)
            continue
        names = None if hand is None else _names(hand)
        out.append(_json.encode(Event(game_id=game_id, seq=seq, event=told, hand=names)))
    return tuple(out)


def spectator_message(game_id: str, seq: int, event: wire.GameEvent) -> bytes:
    """Return the spectators' `Event` message of one event."""
    return _json.encode(Event(game_id=game_id, seq=seq, event=wire.redact(event, -1)))


class _Recent:
    """The last few thousand encoded answers, by a key that fixes their bytes.

    A game's version names one state for good (its events never change), so a seat's view
    or turn at a version, with the suggestion it carries, is the same bytes however often it
    is asked: a client asking for its view fifty times a second (the most the gateway lets a
    connection send) costs the table one encoding per change of the game, not fifty.
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.kept: collections.OrderedDict[tuple[object, ...], bytes] = collections.OrderedDict()

    def get(self, key: tuple[object, ...]) -> bytes | None:
        found = self.kept.get(key)
        if found is not None:
            self.kept.move_to_end(key)
        return found

    def put(self, key: tuple[object, ...], value: bytes) -> bytes:
        self.kept[key] = value
        if len(self.kept) > self.size:
            self.kept.popitem(last=False)
        return value


_views = _Recent()
_turns = _Recent()


def turn_message(table: Table, seat: int, *, hints: bool = False) -> bytes:
    """Return ``seat``'s `YourTurn` now (empty: not on turn, or a bot holds the seat);
    ``hints``: with the bot tier's suggestion, at a practice table only (if it has come)."""
    state = table.state
    if seat < 0 or state.turn != seat or table.over or seat in table.bot_seats():
        return b""
    hinted = None
    if hints and table.opened is not None and wire.hints_allowed(table.opened):
        hinted = table.suggestion(seat)  # asked of the bot tier once per turn; never here
    key = (table.game_id, table.version, table.turn_deadline, seat, hinted)
    kept = _turns.get(key)
    if kept is not None:
        return kept
    commands = engine.audience.turn_commands(state, seat)
    if not commands:
        return _turns.put(key, b"")
    suggestion = None if hinted is None else _command(hinted)
    return _turns.put(key, _turn_bytes(table, commands, suggestion))


def _turn_bytes(
    table: Table, commands: Sequence[engine.Command], suggestion: wire.AnySeatCommand | None
) -> bytes:
    return _json.encode(
        YourTurn(
            game_id=table.game_id,
            seq=table.version,
            legal=tuple(_command(c) for c in commands),
            deadline=table.turn_deadline,
            suggestion=suggestion,
        )
    )


def clock_message(table: Table, now: float) -> bytes:
    """Return the `Clock` now (empty: nobody on turn)."""
    state = table.state
    if table.opened is None or table.over or state.turn < 0:
        return b""
    return _json.encode(
        Clock(
            game_id=table.game_id,
            seq=table.version,
            seat=state.turn,
            deadline=table.turn_deadline,
            now=now,
            bot=state.turn in table.bot_seats(),
        )
    )


def view_message(table: Table, player_id: str) -> bytes:
    """Return ``player_id``'s `View`: his seat's now, or the spectators' at the last release."""
    seat = table.seat_of(player_id)
    if seat is not None:
        key: tuple[object, ...] = (table.game_id, table.version, seat, table.suggestion(seat))
        kept = _views.get(key)
        if kept is not None:
            return kept
        return _views.put(
            key,
            _json.encode(
                View(game_id=table.game_id, seq=table.version, view=table.view(player_id))
            ),
        )
    key = (table.game_id, table.released, engine.SPECTATOR)
    kept = _views.get(key)
    if kept is not None:
        return kept
    view = wire.view_to_wire(
        engine.view(table.released_state, engine.SPECTATOR),
        players=table.players,
        version=table.released,
    )
    return _views.put(key, _json.encode(View(game_id=table.game_id, seq=table.released, view=view)))


def frame(
    table: Table,
    steps: Sequence[Step],
    held: Iterable[tuple[int, wire.GameEvent]],
    released_before: int,
    now: float,
) -> Frame:
    """Return the frame of an append whose ``steps`` the table has just folded; ``held`` are
    the events spectators had not been shown before it, ``released_before`` the last seq
    they had."""
    seats = len(table.players)
    per_seat: list[list[bytes]] = [[] for _ in range(seats)]
    for step in steps:
        for seat, data in enumerate(seat_messages(table.game_id, step, seats)):
            per_seat[seat].append(data)
    spectators: tuple[bytes, ...] = ()
    spectators_from = 0
    if table.released > released_before:
        shown = [
            (seq, event)
            for seq, event in [*held, *((s[0], s[1]) for s in steps)]
            if released_before < seq <= table.released
        ]
        spectators = tuple(spectator_message(table.game_id, seq, e) for seq, e in shown)
        spectators_from = shown[0][0] if shown else 0
    first = steps[0][0] if steps else table.version + 1
    return Frame(
        game_id=table.game_id,
        first=first,
        last=table.version,
        seats=tuple(tuple(s) for s in per_seat),
        spectators=spectators,
        spectators_from=spectators_from,
        released=table.released,
        turns=tuple(turn_message(table, seat) for seat in range(seats)),
        clock=clock_message(table, now),
    )


def nudge(table: Table) -> Frame:
    """Return an empty frame at the table's version: watchers behind it catch up (sent by a
    new owner, which cannot know what the old one published before it died)."""
    return Frame(
        game_id=table.game_id,
        first=table.version + 1,
        last=table.version,
        released=table.released,
    )


def replayed_messages(
    game_id: str, stored: Sequence[StoredEvent], seat: int, after: int, upto: int
) -> tuple[bytes, ...]:
    """Return the messages of events ``after`` + 1 .. ``upto`` for ``seat`` (-1: spectators),
    folding the game's log from its start (for a catch-up beyond what the table keeps)."""
    probe = Table(game_id)
    out = []
    for s in stored:
        if s.version > upto:
            break
        event = REGISTRY.decode(s)
        before = probe.state
        probe.fold(s, event)
        if s.version <= after:
            continue
        if seat < 0:
            out.append(spectator_message(game_id, s.version, event))
        else:
            step = (s.version, event, before, probe.state)
            out.append(seat_messages(game_id, step, seat + 1)[seat])
    return tuple(out)


def recent_messages(table: Table, seat: int, after: int) -> tuple[bytes, ...] | None:
    """Return the messages after ``after`` for ``seat`` from the frames the table keeps, or
    None when they do not reach back that far."""
    upto = table.version if seat >= 0 else table.released
    found = messages_after(table.recent, seat, after, upto)
    return None if found is None else tuple(found)
