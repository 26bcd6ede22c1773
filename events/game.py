"""The game context on the wire: game-stream events and seat commands as msgspec Structs.

The engine speaks frozen dataclasses with cards as small ints; the log and the bus speak Structs
with cards as their two-letter names ("QS", "TH", "BJ"). The engine's dataclasses are the one
declaration of each event and seat command: `events.game_wire` is generated from them by
`python -m events.wiregen` (which lists the few things the wire does differently) and
re-exported here. Stored events live forever, so a change to an engine event is a change of the
log's shape and follows the versioning rule of `events.envelope` (new fields get defaults, old
annotations never change); a test fails when the generated module is stale. `to_wire` and
`to_engine` are the bridge, `fold` and `steps` the one way to fold wire events through the
engine.

A game stream (`game-<uuid>`) holds the engine's events and the table's own facts about the seats
(`TableOpened`, `TurnTimedOut`, `SeatAbandoned`), which the engine never sees.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any, get_args

import msgspec

import engine
import engine.audience
from events.envelope import REGISTRY, StoredEvent
from events.game_wire import (
    CARD_DEPTH,
    WIRE_NAMES,
    AnySeatCommand,
    BidPlaced,
    BlindNilDeclared,
    BlindNilDeclined,
    Card,
    CardDrawn,
    CardPlayed,
    CardsPassed,
    Contribute,
    DeclareBlindNil,
    DeclineBlindNil,
    DrawCard,
    EngineEvent,
    GameEvent,
    GameFinished,
    GameStarted,
    HandDealt,
    HandScored,
    PassCards,
    PlaceBid,
    PlayCard,
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
    "AnySeatCommand",
    "BidPlaced",
    "BlindNilDeclared",
    "BlindNilDeclined",
    "Card",
    "CardDrawn",
    "CardPlayed",
    "CardsPassed",
    "Contribute",
    "DeclareBlindNil",
    "DeclineBlindNil",
    "DrawCard",
    "EngineEvent",
    "GameEvent",
    "GameFinished",
    "GameStarted",
    "HandDealt",
    "HandScored",
    "PassCards",
    "PlaceBid",
    "PlayCard",
    "RuleValue",
    "SeatCardDrawn",
    "SeatCardsPassed",
    "SeatCommand",
    "SeatGameStarted",
    "SeatHandDealt",
    "SeedContributed",
    "SeedRevealed",
    "TrickWon",
]


def stream_of(game_id: str) -> str:
    """Return the event stream id of a game (every service names a game's stream this way)."""
    return f"game-{game_id}"


def game_id_of_match(match_id: str) -> str:
    """Return the id of the game a MatchFound opens (the same on every redelivery)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"match:{match_id}"))


# -- the table's facts about seats --------------------------------------------------------------


class TableOpened(GameEvent, frozen=True, kw_only=True):
    """A table was opened: who sits where, on which ladder, rated or not.

    ``players`` holds a player id per seat; a seat played by a bot from the start holds
    "bot:<n>" and is listed in ``bots``.
    """

    game_id: str
    ladder: str
    rated: bool
    players: tuple[str, ...]
    bots: tuple[int, ...] = ()
    match_id: str | None = None
    turn_seconds: float = 25.0
    """Seconds a person has for one action before the bot plays it; 0: untimed (no timer)."""
    bot_level: str = "baseline"
    """Level of the bots seated from the start (`engine.search.LEVELS`)."""


PRACTICE_LADDER = "practice"
"""The ``ladder`` of a practice table: its opener and bots."""


def hints_allowed(opened: TableOpened) -> bool:
    """Return whether a seat of this game may be shown the bot's suggestion: at a practice
    table only. A rated game (or a casual one between people) gets no help, whatever a client
    asks: the server decides from the game's kind."""
    return opened.ladder == PRACTICE_LADDER and not opened.rated


def turn_deadline(opened: TableOpened, since: float) -> float | None:
    """Return when a person's turn that began at ``since`` runs out (None: untimed table).

    The table calls it once, when it appends, and writes the answer in the log
    (`Metadata.deadline`); everybody else reads it there (`deadline_of`)."""
    return since + opened.turn_seconds if opened.turn_seconds > 0 else None


def deadline_of(stored: StoredEvent, opened: TableOpened) -> float | None:
    """Return the turn deadline the log records with ``stored`` (None: untimed table).

    Events recorded before the table wrote deadlines carry none: for them it is what the
    table's timer did then, a full turn from when the event was recorded."""
    if opened.turn_seconds <= 0:
        return None
    if stored.metadata.deadline > 0:
        return stored.metadata.deadline
    return turn_deadline(opened, stored.recorded_at.timestamp())


class TurnTimedOut(GameEvent, frozen=True, kw_only=True):
    """A seat let its turn timer run out; the bot's action for it follows in the same batch."""

    seat: int
    streak: int


class SeatAbandoned(GameEvent, frozen=True, kw_only=True):
    """A seat timed out ``streak`` times in a row: a bot plays it for the rest of the game."""

    seat: int
    player_id: str
    streak: int


GameStreamEvent = TableOpened | TurnTimedOut | SeatAbandoned | EngineEvent
"""Everything a game stream holds: the table's facts about seats, then the engine's events."""

GAME = REGISTRY.register("game", GameStreamEvent)

# -- the bridge to the engine ---------------------------------------------------------------------
#
# Derived once, at import, from the engine's dataclass fields and the generated module's tables
# (`CARD_DEPTH`, `WIRE_NAMES`): per class, which fields cross, under which name, converted how.
# An engine field the wire class lacks is the seat of a seat command (the asker is the seat).

_Convert = Callable[[Any], Any]
_Plan = tuple[type, tuple[tuple[str, str, _Convert | None], ...]]
"""The class to build and, per field, (source name, target name, conversion or None)."""


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
            names, numbers = _cards(depth, engine.card_str), _cards(depth, engine.parse_card)
        elif f.type in ("Ruleset", engine.Ruleset):
            names, numbers = engine.Ruleset.to_dict, stored_rules
        out.append((f.name, wire_name, names))
        back.append((wire_name, f.name, numbers))
    return (wire_cls, tuple(out)), (engine_cls, tuple(back))


def _build(plan: _Plan, source: Any, extra: dict[str, Any]) -> Any:
    cls, fields = plan
    values = {
        target: getattr(source, name) if convert is None else convert(getattr(source, name))
        for name, target, convert in fields
    }
    return cls(**values, **extra)


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


def to_wire(event: engine.Event, **extra: Any) -> GameEvent:
    """Return the wire Struct of an engine event; ``extra`` fills wire-only fields."""
    result: GameEvent = _build(_EVENTS_TO_WIRE[type(event)], event, extra)
    return result


def to_engine(event: GameEvent) -> engine.Event | None:
    """Return the engine event a wire event carries, or None for a table-only fact."""
    plan = _EVENTS_TO_ENGINE.get(type(event))
    if plan is None:
        return None
    result: engine.Event = _build(plan, event, {})
    return result


def command_to_engine(command: SeatCommand, seat: int) -> engine.SeatCommand:
    """Return the engine command for a seat's wire command (raises InvalidCard on bad names)."""
    result: engine.SeatCommand = _build(_COMMANDS_TO_ENGINE[type(command)], command, {"seat": seat})
    return result


def command_to_wire(command: engine.Command) -> AnySeatCommand:
    """Return the wire form of an engine seat command (the seat is dropped: the asker is it)."""
    result: AnySeatCommand = _build(_COMMANDS_TO_WIRE[type(command)], command, {})
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


# -- requests to the table service (core NATS request/reply) --------------------------------------


class TableRequest(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of the requests a table replica answers."""


class SubmitCommand(TableRequest, frozen=True, kw_only=True):
    """A player's command for his seat at a game; ``command_id`` makes retries safe."""

    game_id: str
    player_id: str
    command_id: uuid.UUID
    command: AnySeatCommand


class OpenPractice(TableRequest, frozen=True, kw_only=True):
    """Open an unrated table: the player at seat 0, bots at the others, any valid rules."""

    player_id: str
    command_id: uuid.UUID
    rules: dict[str, RuleValue] = {}
    bots: str = "baseline"
    """The bots' level: "baseline" or "strong" (`engine.search.LEVELS`)."""
    untimed: bool = False
    """No turn timer for the player: the bots wait for him as long as he thinks."""


class OpenCasual(TableRequest, frozen=True, kw_only=True):
    """Open an unrated table for these players in seat order (friends, tournaments, benches)."""

    players: tuple[str, ...]
    command_id: uuid.UUID
    rules: dict[str, RuleValue] = {}


class GetView(TableRequest, frozen=True, kw_only=True):
    """Ask for what ``player_id`` may see of a game (a spectator's view if he has no seat)."""

    game_id: str
    player_id: str = ""


class OpenMatch(TableRequest, frozen=True, kw_only=True):
    """Between table replicas: open a MatchFound's rated game on its partition's owner.

    Whichever replica consumed the MatchFound forwards it here, so the game is opened (and
    then driven: timers, bots) by the one replica that owns its partition.
    """

    match_id: str
    ladder: str
    seats: tuple[str, ...]


class Catchup(TableRequest, frozen=True, kw_only=True):
    """Gateway to the game's owner: what ``player_id`` (a spectator if he has no seat) is to
    be sent: the view when ``after`` is None, else every event message after seq ``after``;
    and the current ``your_turn`` (``hints``: with the searching bot's suggestion, at a
    practice table only) and clock. Answered with an `events.audience.CatchupReply`."""

    game_id: str
    player_id: str = ""
    after: int | None = None
    hints: bool = False


AnyTableRequest = SubmitCommand | OpenPractice | OpenCasual | GetView | OpenMatch | Catchup


class TableReply(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The answer to a table request: ok with the game's version, or a code and a reason.

    ``code`` is stable for programs (``out_of_turn``, ``must_follow_suit``, ``unknown_game``,
    ``malformed`` ...); ``message`` names the rule for people. ``retry`` is true when the
    command id had already been applied and nothing new was appended.
    """

    ok: bool
    code: str = ""
    message: str = ""
    game_id: str = ""
    version: int = 0
    retry: bool = False
    view: SeatViewWire | None = None


class SeatViewWire(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's view of a game on the wire (cards by name); see `engine.SeatView`."""

    seat: int
    phase: str
    hand_number: int
    dealer: int
    turn: int
    hand: tuple[Card, ...]
    hand_hidden: bool
    hand_sizes: tuple[int, ...]
    bids: tuple[int, ...]
    blind: tuple[bool, ...]
    leader: int
    trick: tuple[Card, ...]
    taken: tuple[int, ...]
    spades_broken: bool
    scores: tuple[int, ...]
    bags: tuple[int, ...]
    legal: tuple[AnySeatCommand, ...]
    suggestion: AnySeatCommand | None = None
    winner: int = -1
    reason: str = ""
    players: tuple[str, ...] = ()
    version: int = 0
    drawn: Card | None = None
    """Two-player draw deal: the stock's top card, shown only to the seat about to draw."""
    discards: tuple[Card, ...] = ()
    """Two-player draw deal: this seat's own discards (never another seat's)."""
    moe: tuple[bool, ...] = ()
    """Per seat: whether its bid is a Big or Little Moe."""
    face_up: tuple[tuple[Card, ...], ...] = ()
    """Power checks: every seat's face-up cards still in its hand (public: shown to all)."""
    commitment: str = ""
    """A committed game's SHA-256 of its secret server seed (docs/FAIRNESS.md)."""
    contributors: tuple[int, ...] = ()
    """The seats that may send a Contribute before hand 1."""
    contributions: tuple[str, ...] = ()
    """Each seat's contribution so far ("" none)."""


def view_to_wire(
    seat_view: engine.SeatView,
    suggestion: engine.Command | None = None,
    **extra: Any,
) -> SeatViewWire:
    """Return the wire form of a seat view; ``suggestion`` is the bot's advice for the seat."""
    return SeatViewWire(
        seat=seat_view.seat,
        phase=seat_view.phase,
        hand_number=seat_view.hand_number,
        dealer=seat_view.dealer,
        turn=seat_view.turn,
        hand=tuple(engine.card_str(c) for c in seat_view.hand),
        hand_hidden=seat_view.hand_hidden,
        hand_sizes=seat_view.hand_sizes,
        bids=seat_view.bids,
        blind=seat_view.blind,
        leader=seat_view.leader,
        trick=tuple(engine.card_str(c) for c in seat_view.trick),
        taken=seat_view.taken,
        spades_broken=seat_view.spades_broken,
        scores=seat_view.scores,
        bags=seat_view.bags,
        legal=tuple(command_to_wire(c) for c in seat_view.legal if not _is_start(c)),
        suggestion=None
        if suggestion is None or _is_start(suggestion)
        else command_to_wire(suggestion),
        winner=seat_view.winner,
        reason=seat_view.reason,
        drawn=engine.card_str(seat_view.drawn) if seat_view.drawn >= 0 else None,
        discards=tuple(engine.card_str(c) for c in seat_view.discards),
        moe=seat_view.moe,
        face_up=tuple(tuple(engine.card_str(c) for c in up) for up in seat_view.face_up),
        commitment=seat_view.commitment,
        contributors=seat_view.contributors,
        contributions=seat_view.contributions,
        **extra,
    )


def _is_start(command: engine.Command) -> bool:
    return isinstance(command, engine.StartGame)


# -- what one seat may be told of a game event (gateway -> client) --------------------------------
#
# The stored events hold every secret (the seed, every hand, the stock, the exchanged cards).
# `redact` returns the form of an event a seat (or a spectator, seat -1) may receive; public
# events come back as they are. The redacted Structs carry the tag of the event they stand for,
# so a client sees one "HandDealt" type whatever its seat. A seat's own cards never travel
# inside an event: `visible_hand` gives them, and the gateway sends them beside the event
# whenever they change (the deal, a blind candidate's choice, the exchange, a card played).


SeatEvent = (
    TableOpened
    | TurnTimedOut
    | SeatAbandoned
    | SeatGameStarted
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
"""Everything a seat or spectator may receive about one event of a game."""


_SEAT_FORMS: dict[type, _Plan] = {
    told: _plans(told, form)[0]
    for told, form in (
        (engine.audience.SeatGameStarted, SeatGameStarted),
        (engine.audience.SeatHandDealt, SeatHandDealt),
        (engine.audience.SeatCardDrawn, SeatCardDrawn),
        (engine.audience.SeatCardsPassed, SeatCardsPassed),
    )
}
_PUBLIC = frozenset(_EVENTS_TO_WIRE[cls][0] for cls in engine.audience.PUBLIC_EVENTS) | frozenset(
    {TableOpened, TurnTimedOut, SeatAbandoned}
)
"""The wire events every audience receives as they are: the engine's public events and the
table's facts about seats (which the engine never sees)."""


def told_to_wire(told: engine.audience.Told) -> SeatEvent:
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
    result: SeatEvent = form(**values)
    return result


def redact(event: GameEvent, seat: int) -> SeatEvent:
    """Return what ``seat`` (-1: a spectator) may know of ``event``: no seed, no hand, no card
    of another seat that has not been played. The rule is the engine's
    (`engine.audience.redact`); this carries it to the wire forms."""
    if type(event) in _PUBLIC:
        return event  # type: ignore[return-value]
    engine_event = to_engine(event)
    if engine_event is None:
        raise TypeError(f"no redaction for {type(event).__name__}")
    return told_to_wire(engine.audience.redact(engine_event, seat))


def visible_hand(state: engine.GameState, seat: int) -> tuple[Card, ...] | None:
    """Return the cards ``seat`` holds and may see (`engine.audience.visible_hand`), by name."""
    hand = engine.audience.visible_hand(state, seat)
    return None if hand is None else tuple(engine.card_str(c) for c in hand)


def releases_spectators(event: GameEvent) -> bool:
    """Return whether spectators may now see everything up to ``event``: they are kept one
    trick behind (`engine.audience.releases_spectators`; the wire events share its names)."""
    return isinstance(event, TrickWon | GameFinished)
