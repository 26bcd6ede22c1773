"""The game context on the wire: game-stream events and seat commands as msgspec Structs.

The engine speaks frozen dataclasses with cards as small ints; the log and the bus speak Structs
with cards as their two-letter names ("QS", "TH", "BJ"). The engine's dataclasses are the one
declaration of each event and seat command: `events.contracts.game_wire` is generated from them by
`python -m events.contracts.wiregen` (which lists the few things the wire does differently) and
re-exported here. Stored events live forever, so a change to an engine event is a change of the
log's shape and follows the versioning rule of `events.envelope` (new fields get defaults, old
annotations never change); a test fails when the generated module is stale. `to_wire` and
`to_engine` are the bridge, `fold` and `steps` the one way to fold wire events through the
engine.

A game stream (`game-<uuid>`) holds the engine's events and the table's own facts about the seats
(`TableOpened`, `TurnTimedOut`, `SeatAbandoned`, `TurnClockRestarted`), which the engine never
sees.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

import engine
import engine.audience
from events.contracts.bridge import (
    card_name,
    card_number,
    command_to_engine,
    command_to_wire,
    fold,
    steps,
    stored_rules,
    to_engine,
    to_wire,
    told_to_wire,
    wire_class,
)
from events.contracts.game_wire import (
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
from events.contracts.talk import Say, Talked, TalkWithheld, told
from events.envelope import REGISTRY, StoredEvent

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
    "Say",
    "SeatCardDrawn",
    "SeatCardsPassed",
    "SeatCommand",
    "SeatGameStarted",
    "SeatHandDealt",
    "SeedContributed",
    "SeedRevealed",
    "TalkWithheld",
    "Talked",
    "TrickWon",
    "card_name",
    "card_number",
    "command_to_engine",
    "command_to_wire",
    "fold",
    "steps",
    "stored_rules",
    "to_engine",
    "to_wire",
    "told_to_wire",
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
    unlisted: bool = False
    """A friends' table its host kept unlisted: out of the public lists until it finishes."""
    free_text_chat: bool = False
    """Seats may say free text to the table (`events.contracts.talk`), not only presets."""


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
    """A seat timed out ``streak`` times in a row, or its player left (``left``; at a rated
    game he resigned): a bot plays it for the rest of the game. At a rated game it counts as
    the abandonment it is (the abandoner a loss, his partner no move)."""

    seat: int
    player_id: str
    streak: int
    left: bool = False
    """The player left the table himself (`LeaveTable`), not by letting timers run out."""


class TurnClockRestarted(GameEvent, frozen=True, kw_only=True):
    """The game was served again after nobody could serve it (a take-over, a database or NATS
    outage) while ``seat``, a person, was on turn: his turn starts again, a full turn from now
    (the deadline recorded with this event, `Metadata.deadline`, which the timer runs to and
    every watcher is told), so no outage of the server's making times him out. ``seconds``:
    how far his deadline moved (at least the time the game went unserved, at most a turn)."""

    seat: int
    seconds: float


GameStreamEvent = (
    TableOpened | TurnTimedOut | SeatAbandoned | TurnClockRestarted | Talked | EngineEvent
)
"""Everything a game stream holds: the table's facts about seats, then the engine's events."""

GAME = REGISTRY.register("game", GameStreamEvent)

# -- the bridge to the engine: `events.contracts.bridge` (re-exported here) -------------------

# -- requests to the table service (core NATS request/reply) --------------------------------------


class TableRequest(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Base of the requests a table replica answers."""


class SubmitCommand(TableRequest, frozen=True, kw_only=True):
    """A player's command for his seat at a game; ``command_id`` makes retries safe."""

    game_id: str
    player_id: str
    command_id: uuid.UUID
    command: AnySeatCommand | Say


class OpenPractice(TableRequest, frozen=True, kw_only=True):
    """Open an unrated table: the player at seat 0, bots at the others, any valid rules."""

    player_id: str
    command_id: uuid.UUID
    rules: dict[str, RuleValue] = {}
    bots: str = "baseline"
    """The bots' level: "baseline" or "strong" (`engine.search.LEVELS`)."""
    untimed: bool = False
    """No turn timer for the player: the bots wait for him as long as he thinks."""
    dealer: int = -1
    """The first dealer (a rematch passes the deal on); -1: drawn from the server seed."""
    free_text_chat: bool = False


class OpenCasual(TableRequest, frozen=True, kw_only=True):
    """Open an unrated table for these players in seat order (friends, tournaments, benches)."""

    players: tuple[str, ...]
    command_id: uuid.UUID
    rules: dict[str, RuleValue] = {}
    bots: tuple[int, ...] = ()
    """Seats a bot plays from the start (their ``players`` entry is "bot:<seat>")."""
    bot_level: str = "baseline"
    dealer: int = -1
    """The first dealer (a rematch passes the deal on); -1: drawn from the server seed."""
    unlisted: bool = False
    """Keep the game out of the public lists until it finishes (`TableOpened.unlisted`)."""
    free_text_chat: bool = False
    board_seed: str = ""
    """A duplicate event's board (64 hex digits): the game is dealt from this committed server
    seed with no client contribution, so every table of the board holds the same cards; its
    SHA-256 was published when the event opened (`services.gateway.tourneys`)."""


class LeaveTable(TableRequest, frozen=True, kw_only=True):
    """A player leaves his seat for good (``command_id`` makes a retry safe): at an unrated
    table a bot takes the seat, and the table closes once no person is left; at a rated game
    he resigns, and the bot plays the seat out (counted as the abandonment it is)."""

    game_id: str
    player_id: str
    command_id: uuid.UUID


LEFT_CLOSED = "closed"
"""`TableReply.code` of an accepted `LeaveTable`: the table closed (no person left at it)."""
LEFT_BOT = "bot_seated"
"""`TableReply.code` of an accepted `LeaveTable`: a bot plays the seat (an unrated game)."""
LEFT_RESIGNED = "resigned"
"""`TableReply.code` of an accepted `LeaveTable`: a rated game, resigned; the bot plays it out."""


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
    practice table only) and clock. Answered with an `events.contracts.audience.CatchupReply`."""

    game_id: str
    player_id: str = ""
    after: int | None = None
    hints: bool = False


AnyTableRequest = (
    SubmitCommand | OpenPractice | OpenCasual | GetView | OpenMatch | Catchup | LeaveTable
)


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
        hand=tuple(card_name(c) for c in seat_view.hand),
        hand_hidden=seat_view.hand_hidden,
        hand_sizes=seat_view.hand_sizes,
        bids=seat_view.bids,
        blind=seat_view.blind,
        leader=seat_view.leader,
        trick=tuple(card_name(c) for c in seat_view.trick),
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
        drawn=card_name(seat_view.drawn) if seat_view.drawn >= 0 else None,
        discards=tuple(card_name(c) for c in seat_view.discards),
        moe=seat_view.moe,
        face_up=tuple(tuple(card_name(c) for c in up) for up in seat_view.face_up),
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
    | Talked
    | TalkWithheld
    | TurnClockRestarted
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


_PUBLIC = frozenset(wire_class(cls) for cls in engine.audience.PUBLIC_EVENTS) | frozenset(
    {TableOpened, TurnTimedOut, SeatAbandoned, TurnClockRestarted}
)
"""The wire events every audience receives as they are: the engine's public events and the
table's facts about seats (which the engine never sees)."""


def redact(event: GameEvent, seat: int) -> SeatEvent:
    """Return what ``seat`` (-1: a spectator) may know of ``event``: no seed, no hand, no card
    of another seat that has not been played. The rule is the engine's
    (`engine.audience.redact`); this carries it to the wire forms. Table talk follows its own
    rule (`events.contracts.talk.told`: partner talk to the partner only)."""
    if isinstance(event, Talked):
        return told(event, seat)
    if type(event) in _PUBLIC:
        return event  # type: ignore[return-value]
    engine_event = to_engine(event)
    if engine_event is None:
        raise TypeError(f"no redaction for {type(event).__name__}")
    return told_to_wire(engine.audience.redact(engine_event, seat))


def visible_hand(state: engine.GameState, seat: int) -> tuple[Card, ...] | None:
    """Return the cards ``seat`` holds and may see (`engine.audience.visible_hand`), by name."""
    hand = engine.audience.visible_hand(state, seat)
    return None if hand is None else tuple(card_name(c) for c in hand)


def releases_spectators(event: GameEvent) -> bool:
    """Return whether spectators may now see everything up to ``event``: they are kept one
    trick behind (`engine.audience.releases_spectators`; the wire events share its names)."""
    return isinstance(event, TrickWon | GameFinished)
