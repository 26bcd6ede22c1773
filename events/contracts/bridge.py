"""The bridge between the engine's dataclasses and the game's wire Structs.

Derived once, at import, from the engine's dataclass fields and the generated module's tables
(`CARD_DEPTH`, `WIRE_NAMES` of `events.contracts.game_wire`): per class, which fields cross,
under which name, converted how. `to_wire` and `to_engine` convert events, the `command_*`
functions seat commands, `steps` and `fold` are the one way to fold wire events through the
engine. `events.contracts.game` re-exports all of it: import it from there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Any, get_args

import msgspec

import engine
import engine.audience
from events.contracts.game_wire import (
    CARD_DEPTH,
    WIRE_NAMES,
    AnySeatCommand,
    BidPlaced,
    BlindNilDeclared,
    BlindNilDeclined,
    CardPlayed,
    EngineEvent,
    GameEvent,
    GameFinished,
    HandScored,
    RuleValue,
    SeatCardDrawn,
    SeatCardsPassed,
    SeatCommand,
    SeatGameStarted,
    SeatHandDealt,
    SeedContributed,
    SeedRevealed,
    TrickWon,
)

__all__ = [
    "ToldEvent",
    "command_to_engine",
    "command_to_wire",
    "fold",
    "steps",
    "stored_rules",
    "to_engine",
    "to_wire",
    "told_to_wire",
    "wire_class",
]

#
# Derived once, at import, from the engine's dataclass fields and the generated module's tables
# (`CARD_DEPTH`, `WIRE_NAMES`): per class, which fields cross, under which name, converted how.
# An engine field the wire class lacks is the seat of a seat command (the asker is the seat).

_Convert = Callable[[Any], Any]
_Plan = tuple[type, tuple[tuple[str, str, _Convert | None], ...]]
"""The class to build and, per field, (source name, target name, conversion or None)."""


_NAMES = tuple(engine.card_str(c) for c in range(engine.BIG_JOKER + 1))
_NUMBERS = {name: number for number, name in enumerate(_NAMES)}


def card_name(card: int) -> str:
    """Return `engine.card_str` of ``card``, looked up (every card's name is made once)."""
    if 0 <= card < len(_NAMES):
        return _NAMES[card]
    return engine.card_str(card)  # raises engine.InvalidCard as ever


def card_number(text: str) -> int:
    """Return `engine.parse_card` of ``text``: a card's own name ('QS') is looked up, any other
    spelling ('10h', ' qs') parsed (or refused) as ever."""
    number = _NUMBERS.get(text)
    return engine.parse_card(text) if number is None else number


def _cards(depth: int, card: _Convert) -> _Convert:
    """Return a conversion of every card ``depth`` deep (1 a card, 2 a tuple, 3 tuples)."""
    if depth == 1:
        return card
    if depth == 2:
        return lambda cards: tuple(map(card, cards))
    inner = _cards(depth - 1, card)
    return lambda nested: tuple(map(inner, nested))


def stored_rules(rules: dict[str, RuleValue]) -> engine.Ruleset:
    """Return the ruleset a stored ``GameStarted`` recorded.

    An option added later is absent from older games' rules and takes its default, which is
    the behaviour those games were played with; the exceptions are options whose default
    changed the rule itself: ``ten_for_two_scoring`` (issue 18: a game recorded without it
    scored ten for two hundred 20 per trick above ten, and keeps doing so) and
    ``ten_for_two_part_blind`` (issue 28: one recorded without it scored a part-blind ten
    for two by the blind rule alone).
    """
    options = dict(rules)
    if options.get("ten_for_two_hundred") is True and "ten_for_two_scoring" not in options:
        options["ten_for_two_scoring"] = "per_trick"
    if (
        options.get("ten_for_two_hundred") is True
        and options.get("blind_bids") is True
        and "ten_for_two_part_blind" not in options
    ):
        options["ten_for_two_part_blind"] = "blind_rule"
    return engine.Ruleset.from_options(options)


def _plans(engine_cls: type, wire_cls: type[msgspec.Struct]) -> tuple[_Plan, _Plan]:
    """Return the plans engine -> wire and wire -> engine of one event or command."""
    name = engine_cls.__name__
    out: list[tuple[str, str, _Convert | None]] = []
    back: list[tuple[str, str, _Convert | None]] = []
    for f in dataclasses.fields(engine_cls):
        wire_name = WIRE_NAMES.get((name, f.name), f.name)
        if wire_name not in wire_cls.__struct_fields__:
            continue
        depth = CARD_DEPTH.get((name, f.name), 0)
        names: _Convert | None = None
        numbers: _Convert | None = None
        if depth:
            names, numbers = _cards(depth, card_name), _cards(depth, card_number)
        elif f.type in ("Ruleset", engine.Ruleset):
            names, numbers = engine.Ruleset.to_dict, stored_rules
        out.append((f.name, wire_name, names))
        back.append((wire_name, f.name, numbers))
    return (wire_cls, tuple(out)), (engine_cls, tuple(back))


_Builder = Callable[..., Any]


def _compile(plan: _Plan, *extra: str) -> _Builder:
    """Return ``plan`` as one function of the source and the ``extra`` fields (keywords; ``**``
    for any) that builds the target class, each field read and converted as the plan says.
    Generated once per class (as `dataclasses` generates ``__init__``): the table converts a
    command and its events on every move, and a loop over a plan's fields (a dict built, then
    unpacked) cost more than the conversions themselves."""
    cls, fields = plan
    scope: dict[str, Any] = {"cls": cls}
    args = []
    for i, (name, target, convert) in enumerate(fields):
        if not (name.isidentifier() and target.isidentifier()):
            raise ValueError(f"{cls.__name__}: field {name!r} -> {target!r} is no identifier")
        if convert is None:
            args.append(f"{target}=source.{name}")
        else:
            scope[f"convert{i}"] = convert
            args.append(f"{target}=convert{i}(source.{name})")
    if extra == ("**",):
        params, args = ["source", "**more"], [*args, "**more"]
    else:
        params, args = ["source", *extra], [*args, *(f"{key}={key}" for key in extra)]
    exec(f"def build({', '.join(params)}):\n    return cls({', '.join(args)})\n", scope)
    builder: _Builder = scope["build"]
    return builder


def _bridge(
    wire_classes: tuple[type[msgspec.Struct], ...], engine_types: dict[str, type]
) -> tuple[dict[type, _Plan], dict[type, _Plan]]:
    to_wire: dict[type, _Plan] = {}
    to_engine: dict[type, _Plan] = {}
    for wire_cls in wire_classes:
        engine_cls = engine_types[wire_cls.__name__]
        to_wire[engine_cls], to_engine[wire_cls] = _plans(engine_cls, wire_cls)
    return to_wire, to_engine


_EVENTS_TO_WIRE, _EVENTS_TO_ENGINE = _bridge(get_args(EngineEvent), engine.EVENT_TYPES)
_COMMANDS_TO_WIRE, _COMMANDS_TO_ENGINE = _bridge(get_args(AnySeatCommand), engine.COMMAND_TYPES)
_EVENT_TO_WIRE = {cls: _compile(plan, "**") for cls, plan in _EVENTS_TO_WIRE.items()}
_EVENT_TO_ENGINE = {cls: _compile(plan) for cls, plan in _EVENTS_TO_ENGINE.items()}
_COMMAND_TO_ENGINE = {cls: _compile(plan, "seat") for cls, plan in _COMMANDS_TO_ENGINE.items()}
_COMMAND_TO_WIRE = {cls: _compile(plan) for cls, plan in _COMMANDS_TO_WIRE.items()}


def to_wire(event: engine.Event, **extra: Any) -> GameEvent:
    """Return the wire Struct of an engine event; ``extra`` fills wire-only fields."""
    result: GameEvent = _EVENT_TO_WIRE[type(event)](event, **extra)
    return result


def to_engine(event: GameEvent) -> engine.Event | None:
    """Return the engine event a wire event carries, or None for a table-only fact."""
    build = _EVENT_TO_ENGINE.get(type(event))
    if build is None:
        return None
    result: engine.Event = build(event)
    return result


def command_to_engine(command: SeatCommand, seat: int) -> engine.SeatCommand:
    """Return the engine command for a seat's wire command (raises InvalidCard on bad names)."""
    result: engine.SeatCommand = _COMMAND_TO_ENGINE[type(command)](command, seat=seat)
    return result


def command_to_wire(command: engine.Command) -> AnySeatCommand:
    """Return the wire form of an engine seat command (the seat is dropped: the asker is it)."""
    result: AnySeatCommand = _COMMAND_TO_WIRE[type(command)](command)
    return result


# -- folding wire events through the engine ------------------------------------------------------


def steps(
    events: Iterable[GameEvent], state: engine.GameState | None = None
) -> Iterator[tuple[GameEvent, engine.Event | None, engine.GameState]]:
    """Yield each wire event with the engine event it carries (None: a table-only fact) and the
    engine state after it, folding from ``state`` (default: a game not started)."""
    state = engine.initial_state() if state is None else state
    for event in events:
        engine_event = to_engine(event)
        if engine_event is not None:
            state = engine.apply(state, engine_event)
        yield event, engine_event, state


def fold(events: Iterable[GameEvent], state: engine.GameState | None = None) -> engine.GameState:
    """Return the engine state wire events fold to, from ``state`` (default: a game not
    started); the table's own facts about seats are skipped (the engine never sees them)."""
    return engine.replay((e for e in map(to_engine, events) if e is not None), state)


def wire_class(engine_cls: type) -> type:
    """Return the wire Struct class of an engine event class."""
    return _EVENTS_TO_WIRE[engine_cls][0]


# -- what the engine told one seat, on the wire ----------------------------------------------------

ToldEvent = (
    SeatGameStarted
    | SeedContributed
    | SeedRevealed
    | SeatHandDealt
    | SeatCardDrawn
    | BlindNilDeclared
    | BlindNilDeclined
    | BidPlaced
    | SeatCardsPassed
    | CardPlayed
    | TrickWon
    | HandScored
    | GameFinished
)
"""What a seat or spectator may receive about one engine event (`events.contracts.game`'s
`SeatEvent` adds the table's own facts about seats)."""

_SEAT_FORMS: dict[type, _Plan] = {
    told: _plans(told, form)[0]
    for told, form in (
        (engine.audience.SeatGameStarted, SeatGameStarted),
        (engine.audience.SeatHandDealt, SeatHandDealt),
        (engine.audience.SeatCardDrawn, SeatCardDrawn),
        (engine.audience.SeatCardsPassed, SeatCardsPassed),
    )
}


def told_to_wire(told: engine.audience.Told) -> ToldEvent:
    """Return the wire form of what `engine.audience.redact` told a seat (cards by name)."""
    plan = _SEAT_FORMS.get(type(told))
    if plan is None:
        return to_wire(told)  # type: ignore[arg-type,return-value]
    form, fields = plan
    values: dict[str, Any] = {}
    for name, target, convert in fields:
        value = getattr(told, name)
        if convert is None:
            values[target] = value
        elif value != engine.audience.NO_CARD:  # else the struct's default (None): "not told"
            values[target] = convert(value)
    result: ToldEvent = form(**values)
    return result
