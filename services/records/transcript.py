"""The transcript of a stored game: the adapter between a game stream's events
(`events.contracts.game`) and the transcript format, which the engine defines
(`engine.transcript`, its lines in `engine.notation`).

`export` and `lines` write the stored events' transcript: each event becomes the format's entry
(the engine's own event, or one of the table's facts: `TableOpened`, `TurnTimedOut`,
`TurnClockRestarted`, `SeatAbandoned`, `Talked`) and the engine writes its line. `parse` reads
a face-up transcript back, checked line by line against the rules by the engine, and returns
the game stream's events: what the table had appended, but for the facts the format does not
write (a table's bot level, whether it was unlisted, whether free text was allowed, whether
an abandoning player left himself), which take their defaults. Errors are `TranscriptError`s
(a `events.errors.Refusal`) with the engine's stable ``code`` and the line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence

import engine
import engine.transcript as fmt
from engine.notation import Abandoned, ClockRestarted, Entry, Opened, Talk, TimedOut
from events.contracts import game as wire
from events.contracts.talk import Talked
from events.errors import Refusal

__all__ = [
    "FACE_DOWN_NOTE",
    "Transcript",
    "TranscriptError",
    "entries_of",
    "events_of",
    "export",
    "finished",
    "lines",
    "parse",
]

FACE_DOWN_NOTE = fmt.FACE_DOWN_NOTE


class TranscriptError(Refusal, ValueError):
    """A transcript that cannot be replayed: ``code`` for programs, ``line`` (from 1) where."""

    def __init__(self, code: str, line: int, message: str) -> None:
        super().__init__(code, f"line {line}: {message}")
        self.line = line


@dataclasses.dataclass(frozen=True, slots=True)
class Transcript:
    """What a transcript reads back to: the game's events (wire form, stream order), the
    state they fold to, and whether the text carried the seed (else ``GameStarted.seed`` 0)."""

    events: tuple[wire.GameEvent, ...]
    state: engine.GameState
    seeded: bool

    @property
    def opened(self) -> wire.TableOpened:
        """Return the table's opening event."""
        opened = self.events[0]
        assert isinstance(opened, wire.TableOpened)
        return opened


# -- stored events -> the format's entries ---------------------------------------------------


def entry_of(event: wire.GameEvent) -> Entry:
    """Return the transcript entry of one stored event of a game stream."""
    match event:
        case wire.TableOpened():
            return Opened(
                game_id=event.game_id,
                ladder=event.ladder,
                rated=event.rated,
                players=event.players,
                bots=event.bots,
                match_id=event.match_id,
                turn_seconds=event.turn_seconds,
            )
        case wire.TurnTimedOut():
            return TimedOut(event.seat, event.streak)
        case wire.TurnClockRestarted():
            return ClockRestarted(event.seat, event.seconds)
        case wire.SeatAbandoned():
            return Abandoned(event.seat, event.player_id, event.streak, event.left)
        case Talked():
            return Talk(
                event.seat, event.to, event.preset, event.n, event.text, event.hearers,
                event.spectators,
            )  # fmt: skip
    engine_event = wire.to_engine(event)
    if engine_event is None:
        raise TypeError(f"no transcript line for {type(event).__name__}")
    return engine_event


def entries_of(events: Iterable[wire.GameEvent]) -> list[Entry]:
    """Return the transcript entries of a game stream's events, in order."""
    return [entry_of(e) for e in events]


# -- the format's entries -> stored events ---------------------------------------------------


def events_of(entries: Iterable[Entry]) -> list[wire.GameEvent]:
    """Return the game stream's events that transcript entries stand for, in order; the end
    of the game carries what the table adds to it (ladder, rating, players, abandoned seats)."""
    events: list[wire.GameEvent] = []
    opened: Opened | None = None
    for entry in entries:
        match entry:
            case Opened():
                opened = entry
                events.append(
                    wire.TableOpened(
                        game_id=entry.game_id,
                        ladder=entry.ladder,
                        rated=entry.rated,
                        players=entry.players,
                        bots=entry.bots,
                        match_id=entry.match_id,
                        turn_seconds=entry.turn_seconds,
                    )
                )
            case TimedOut():
                events.append(wire.TurnTimedOut(seat=entry.seat, streak=entry.streak))
            case ClockRestarted():
                events.append(wire.TurnClockRestarted(seat=entry.seat, seconds=entry.seconds))
            case Abandoned():
                events.append(
                    wire.SeatAbandoned(
                        seat=entry.seat,
                        player_id=entry.player_id,
                        streak=entry.streak,
                        left=entry.left,
                    )
                )
            case Talk():
                events.append(Talked(**dataclasses.asdict(entry)))
            case engine.GameFinished() if opened is not None:
                abandoned = {e.seat for e in events if isinstance(e, wire.SeatAbandoned)}
                events.append(
                    wire.to_wire(
                        entry,
                        ladder=opened.ladder,
                        rated=opened.rated,
                        players=opened.players,
                        abandoned=tuple(sorted(abandoned)),
                    )
                )
            case _:
                events.append(wire.to_wire(entry))
    return events


# -- the transcript of stored events, and back -----------------------------------------------


def finished(events: Sequence[wire.GameEvent]) -> bool:
    """Return whether these events end a game (its transcript is then face up)."""
    return any(isinstance(e, wire.GameFinished) for e in events)


def lines(
    events: Sequence[wire.GameEvent], *, seed: bool = False, until: int | None = None
) -> Iterator[str]:
    """Yield the numbered lines of a game's events (event ``i`` is number ``i + 1``), up to
    number ``until`` (all when None): face up when the events end the game, face down when
    they do not; the seed only face up and when asked for."""
    return fmt.lines(entries_of(events), seed=seed, until=until)


def export(events: Sequence[wire.GameEvent], *, seed: bool = False) -> str:
    """Return the transcript of a game's events (`engine.transcript` says what it holds)."""
    return fmt.export(entries_of(events), seed=seed)


def parse(text: str) -> Transcript:
    """Return the game a face-up transcript records, checked against the engine line by line;
    raise `TranscriptError` naming the first line that is not a legal continuation."""
    try:
        read = fmt.parse(text)
    except fmt.TranscriptError as exc:
        raise TranscriptError(exc.code, exc.line, exc.detail) from None
    return Transcript(events=tuple(events_of(read.entries)), state=read.state, seeded=read.seeded)
