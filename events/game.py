"""The game context on the wire: game-stream events and seat commands as msgspec Structs.

The engine speaks frozen dataclasses with cards as small ints; the log and the bus speak these
Structs with cards as their two-letter names ("QS", "TH", "BJ"). Keeping the two apart is
deliberate: stored events live forever, so their shape follows the versioning rule of
`events.envelope` (new fields get defaults, old annotations never change) while the engine stays
free to change its internal card numbering or field types. `to_wire` and `to_engine` are the only
bridge; a test checks every engine event has a wire twin with the same fields.

A game stream (`game-<uuid>`) holds the engine's events and the table's own facts about the seats
(`TableOpened`, `TurnTimedOut`, `SeatAbandoned`), which the engine never sees.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import msgspec

import engine
import engine.audience
import engine.fairness
from events.envelope import REGISTRY, StoredEvent

Card = str
"""A card by name: rank 23456789TJQKA then suit CDHS ("QS", "TH"), or "LJ" / "BJ"."""

RuleValue = int | bool | str


def stream_of(game_id: str) -> str:
    """Return the event stream id of a game (every service names a game's stream this way)."""
    return f"game-{game_id}"


def game_id_of_match(match_id: str) -> str:
    """Return the id of the game a MatchFound opens (the same on every redelivery)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"match:{match_id}"))


class GameEvent(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of every event in a game stream; the tag is the class name."""


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


# -- the engine's events, cards by name ---------------------------------------------------------


class GameStarted(GameEvent, frozen=True, kw_only=True):
    """The game started with these rules, this secret seed and this first dealer.

    ``scheme`` names the deal derivation (docs/FAIRNESS.md); games recorded before it existed
    have the legacy default. A committed game keeps ``server_seed`` secret until `SeedRevealed`
    and shows every seat its SHA-256 ``commitment``."""

    rules: dict[str, RuleValue]
    seed: int
    dealer: int
    scheme: str = engine.fairness.LEGACY
    commitment: str = ""
    server_seed: str = ""
    contributors: tuple[int, ...] = ()


class SeedContributed(GameEvent, frozen=True, kw_only=True):
    """A seat's client added its random contribution (64 hex digits) to the deals."""

    seat: int
    value: str


class SeedRevealed(GameEvent, frozen=True, kw_only=True):
    """The game ended: the committed server seed, so anyone can recompute every deal."""

    server_seed: str


class HandDealt(GameEvent, frozen=True, kw_only=True):
    """A hand was dealt; every seat's cards (or the draw deal's stock) recorded.

    ``face_up``: each seat's power checks (cards of its hand dealt face up), or empty."""

    hand: int
    dealer: int
    hands: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...] = ()
    face_up: tuple[tuple[Card, ...], ...] = ()


class CardDrawn(GameEvent, frozen=True, kw_only=True):
    """Two-player draw deal: a seat kept one card and discarded one."""

    seat: int
    kept: Card
    discarded: Card


class BlindNilDeclared(GameEvent, frozen=True, kw_only=True):
    """A seat bid blind nil without having seen its hand."""

    seat: int


class BlindNilDeclined(GameEvent, frozen=True, kw_only=True):
    """A blind candidate declined and now sees its hand."""

    seat: int


class BidPlaced(GameEvent, frozen=True, kw_only=True):
    """A seat bid a number of tricks (blind: before seeing its hand; moe: the 6 or 8 is Little
    or Big Moe, that many tricks in a row)."""

    seat: int
    tricks: int
    blind: bool = False
    moe: bool = False


class CardsPassed(GameEvent, frozen=True, kw_only=True):
    """Blind-nil exchange: a seat gave cards to its partner."""

    seat: int
    to_seat: int
    cards: tuple[Card, ...]


class CardPlayed(GameEvent, frozen=True, kw_only=True):
    """A seat played a card to the current trick."""

    seat: int
    card: Card


class TrickWon(GameEvent, frozen=True, kw_only=True):
    """A trick was completed and won by ``seat``; cards in play order."""

    seat: int
    cards: tuple[Card, ...]


class HandScored(GameEvent, frozen=True, kw_only=True):
    """A hand was scored: tricks per seat, points, totals and bags per side."""

    hand: int
    tricks: tuple[int, ...]
    points: tuple[int, ...]
    scores: tuple[int, ...]
    bags: tuple[int, ...]


class GameFinished(GameEvent, frozen=True, kw_only=True):
    """The game ended. The table adds who played, so consumers need no other stream.

    ``winner`` is the winning side (-1: a draw at the hand cap). ``players`` is the player id
    per seat, ``abandoned`` the seats a bot took over; ``rated`` and ``ladder`` say whether and
    where ratings move.
    """

    winner: int
    reason: str
    scores: tuple[int, ...]
    ladder: str = ""
    rated: bool = False
    players: tuple[str, ...] = ()
    abandoned: tuple[int, ...] = ()


GameStreamEvent = (
    TableOpened
    | TurnTimedOut
    | SeatAbandoned
    | GameStarted
    | SeedContributed
    | SeedRevealed
    | HandDealt
    | CardDrawn
    | BlindNilDeclared
    | BlindNilDeclined
    | BidPlaced
    | CardsPassed
    | CardPlayed
    | TrickWon
    | HandScored
    | GameFinished
)

GAME = REGISTRY.register("game", GameStreamEvent)

# -- seat commands (client -> gateway -> table) --------------------------------------------------


class SeatCommand(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of what a seat may ask; the seat itself comes from who is asking, never the body."""


class PlaceBid(SeatCommand, frozen=True, kw_only=True):
    """Bid a number of tricks (0 = nil); ``blind`` for a blind bid before seeing the hand;
    ``moe`` with 6 or 8 for Little or Big Moe (where the table plays Moe)."""

    tricks: int
    blind: bool = False
    moe: bool = False


class DeclareBlindNil(SeatCommand, frozen=True, kw_only=True):
    """Bid blind nil before seeing the hand."""


class DeclineBlindNil(SeatCommand, frozen=True, kw_only=True):
    """Decline the blind options and see the hand."""


class PassCards(SeatCommand, frozen=True, kw_only=True):
    """Give these cards to the partner in the blind-nil exchange."""

    cards: tuple[Card, ...]


class PlayCard(SeatCommand, frozen=True, kw_only=True):
    """Play this card to the current trick."""

    card: Card


class DrawCard(SeatCommand, frozen=True, kw_only=True):
    """Two-player draw deal: keep the shown card (and discard the next) or not."""

    keep: bool


class Contribute(SeatCommand, frozen=True, kw_only=True):
    """Add this seat's random contribution (32 bytes, 64 lowercase hex digits) to the deals,
    before the first hand of a committed game."""

    value: str


AnySeatCommand = (
    PlaceBid | DeclareBlindNil | DeclineBlindNil | PassCards | PlayCard | DrawCard | Contribute
)

# -- the bridge to the engine ---------------------------------------------------------------------

_WIRE_EVENTS: dict[str, type[GameEvent]] = {
    cls.__name__: cls
    for cls in (
        GameStarted,
        SeedContributed,
        SeedRevealed,
        HandDealt,
        CardDrawn,
        BlindNilDeclared,
        BlindNilDeclined,
        BidPlaced,
        CardsPassed,
        CardPlayed,
        TrickWon,
        HandScored,
        GameFinished,
    )
}
_WIRE_COMMANDS: dict[str, type[SeatCommand]] = {
    cls.__name__: cls for cls in AnySeatCommand.__args__
}

# how deep the card names sit in each card-bearing field: 1 a card, 2 a tuple, 3 tuple of tuples
_CARD_DEPTH = {
    "card": 1,
    "kept": 1,
    "discarded": 1,
    "cards": 2,
    "stock": 2,
    "hands": 3,
    "face_up": 3,
}


def _cards(value: Any, depth: int, convert: Any) -> Any:
    if depth == 1:
        return convert(value)
    return tuple(_cards(v, depth - 1, convert) for v in value)


def _to_names(name: str, value: Any) -> Any:
    depth = _CARD_DEPTH.get(name)
    return value if depth is None else _cards(value, depth, engine.card_str)


def _to_numbers(name: str, value: Any) -> Any:
    depth = _CARD_DEPTH.get(name)
    return value if depth is None else _cards(value, depth, engine.parse_card)


def to_wire(event: engine.Event, **extra: Any) -> GameEvent:
    """Return the wire Struct of an engine event; ``extra`` fills wire-only fields."""
    cls = _WIRE_EVENTS[type(event).__name__]
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if isinstance(value, engine.Ruleset):
            fields["rules"] = value.to_dict()
        else:
            fields[f.name] = _to_names(f.name, value)
    return cls(**fields, **extra)


def stored_rules(rules: dict[str, RuleValue]) -> engine.Ruleset:
    """Return the ruleset a stored ``GameStarted`` recorded.

    An option added later is absent from older games' rules and takes its default, which is
    the behaviour those games were played with; the one exception is ``ten_for_two_scoring``,
    whose default changed the rule itself (issue 18): a game recorded without it scored ten
    for two hundred 20 per trick above ten, and keeps doing so.
    """
    options = dict(rules)
    if options.get("ten_for_two_hundred") is True and "ten_for_two_scoring" not in options:
        options["ten_for_two_scoring"] = "per_trick"
    return engine.Ruleset.from_options(options)


def to_engine(event: GameEvent) -> engine.Event | None:
    """Return the engine event a wire event carries, or None for a table-only fact."""
    cls = engine.EVENT_TYPES.get(type(event).__name__)
    if cls is None:
        return None
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if isinstance(event, GameStarted) and f.name == "ruleset":
            values["ruleset"] = stored_rules(event.rules)
        else:
            values[f.name] = _to_numbers(f.name, getattr(event, f.name))
    result: engine.Event = cls(**values)
    return result


def command_to_engine(command: SeatCommand, seat: int) -> engine.SeatCommand:
    """Return the engine command for a seat's wire command (raises InvalidCard on bad names)."""
    cls = engine.COMMAND_TYPES[type(command).__name__]
    values = {f: _to_numbers(f, getattr(command, f)) for f in command.__struct_fields__}
    result: engine.SeatCommand = cls(seat=seat, **values)
    return result


def command_to_wire(command: engine.Command) -> AnySeatCommand:
    """Return the wire form of an engine seat command (the seat is dropped: the asker is it)."""
    cls: Any = _WIRE_COMMANDS[type(command).__name__]
    values = {
        f.name: _to_names(f.name, getattr(command, f.name))
        for f in dataclasses.fields(command)
        if f.name != "seat"
    }
    result: AnySeatCommand = cls(**values)
    return result


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


class SeatGameStarted(msgspec.Struct, frozen=True, kw_only=True, tag="GameStarted"):
    """The game started with these rules and this first dealer (the seed stays secret; a
    committed game shows the seed's SHA-256 and which seats may contribute)."""

    rules: dict[str, RuleValue]
    dealer: int
    scheme: str = engine.fairness.LEGACY
    commitment: str = ""
    contributors: tuple[int, ...] = ()


class SeatHandDealt(msgspec.Struct, frozen=True, kw_only=True, tag="HandDealt"):
    """A hand was dealt: how many cards each seat holds (the cards themselves stay secret,
    except the power checks, dealt face up for every seat to see)."""

    hand: int
    dealer: int
    hand_sizes: tuple[int, ...]
    stock_size: int = 0
    face_up: tuple[tuple[Card, ...], ...] = ()


class SeatCardDrawn(msgspec.Struct, frozen=True, kw_only=True, tag="CardDrawn"):
    """Two-player draw deal: a seat drew; only the drawer is told what it kept and discarded."""

    seat: int
    kept: Card | None = None
    discarded: Card | None = None


class SeatCardsPassed(msgspec.Struct, frozen=True, kw_only=True, tag="CardsPassed"):
    """Blind-nil exchange: ``count`` cards went from ``seat`` to ``to_seat``; only those two
    seats are told which."""

    seat: int
    to_seat: int
    count: int
    cards: tuple[Card, ...] = ()


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


_SEAT_FORMS: dict[type, Any] = {
    engine.audience.SeatHandDealt: SeatHandDealt,
    engine.audience.SeatCardDrawn: SeatCardDrawn,
    engine.audience.SeatCardsPassed: SeatCardsPassed,
}
_PUBLIC = frozenset(
    _WIRE_EVENTS[cls.__name__] for cls in engine.audience.PUBLIC_EVENTS
) | frozenset({TableOpened, TurnTimedOut, SeatAbandoned})
"""The wire events every audience receives as they are: the engine's public events and the
table's facts about seats (which the engine never sees)."""


def told_to_wire(told: engine.audience.Told) -> SeatEvent:
    """Return the wire form of what `engine.audience.redact` told a seat (cards by name)."""
    if isinstance(told, engine.audience.SeatGameStarted):
        return SeatGameStarted(
            rules=told.ruleset.to_dict(),
            dealer=told.dealer,
            scheme=told.scheme,
            commitment=told.commitment,
            contributors=told.contributors,
        )
    form = _SEAT_FORMS.get(type(told))
    if form is None:
        return to_wire(told)  # type: ignore[arg-type,return-value]
    values: dict[str, Any] = {}
    for f in dataclasses.fields(told):
        value = getattr(told, f.name)
        if f.name in _CARD_DEPTH and value == engine.audience.NO_CARD:
            continue  # left out: the struct's default (None) says "not told"
        values[f.name] = _to_names(f.name, value)
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
