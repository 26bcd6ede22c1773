"""Reads of one game from the event log, as the public may see them.

A finished game is shown face up: every event, every dealt hand (the deck seed excepted: it
never leaves the servers). A game in progress shows only what a spectator would see now: the
events up to its last completed trick, redacted for a spectator (no hand, no seed). Folding is
the engine's; nothing here is kept between requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import msgspec

import engine
from events.contracts import game as wire
from events.envelope import REGISTRY, StoredEvent
from services.records import transcript as transcripts


class GameEventOut(msgspec.Struct, frozen=True, kw_only=True):
    """One event of a game: its number, type, time and content (redacted unless finished)."""

    seq: int
    type: str
    recorded_at: datetime
    event: Any


class GameSummary(msgspec.Struct, frozen=True, kw_only=True):
    """A game's public summary (for a game in progress: as of its last completed trick)."""

    game_id: str
    ladder: str
    rated: bool
    players: tuple[str, ...]
    bots: tuple[int, ...]
    finished: bool
    phase: str
    hand_number: int
    scores: tuple[int, ...]
    bags: tuple[int, ...]
    bids: tuple[int, ...]
    winner: int
    reason: str
    seq: int
    """The last event this summary includes."""
    events: int
    """Events in the game's log now."""
    rules: dict[str, Any]
    free_text_chat: bool = False
    """Seats may say free text besides the talk presets (`events.contracts.talk`)."""


class StateAt(msgspec.Struct, frozen=True, kw_only=True):
    """The state after event ``at``: every hand when the game is finished, none before."""

    game_id: str
    at: int
    face_up: bool
    phase: str
    hand_number: int
    dealer: int
    turn: int
    hands: tuple[tuple[str, ...], ...]
    hand_sizes: tuple[int, ...]
    bids: tuple[int, ...]
    trick: tuple[str, ...]
    taken: tuple[int, ...]
    scores: tuple[int, ...]
    bags: tuple[int, ...]
    winner: int
    reason: str
    moe: tuple[bool, ...] = ()
    """Per seat: whether its bid is a Big or Little Moe."""
    power_checks: tuple[tuple[str, ...], ...] = ()
    """Per seat: its face-up cards still held (power checks: public at any time)."""


class ReplayedEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One event of a replayed transcript, as `/api/games/{id}/events` shows a finished game's
    (there is no time: a transcript does not record one)."""

    seq: int
    type: str
    event: Any


class TranscriptReplay(msgspec.Struct, frozen=True, kw_only=True):
    """A transcript read back: its game's rules, every event, and the state they end in."""

    game_id: str
    rules: dict[str, Any]
    events: list[ReplayedEvent]
    state: StateAt


def shown(event: wire.GameEvent, finished: bool) -> Any:
    """Return an event as the public may see it: all of it (bar the seed) once the game is
    finished, a spectator's part before."""
    if finished and not isinstance(event, wire.GameStarted):
        return event
    return wire.redact(event, -1)


def state_at_of(game_id: str, at: int, state: engine.GameState, face_up: bool) -> StateAt:
    """Return the public form of a game's state after event ``at``."""
    names = engine.card_str
    return StateAt(
        game_id=game_id,
        at=at,
        face_up=face_up,
        phase=state.phase,
        hand_number=state.hand,
        dealer=state.dealer,
        turn=state.turn,
        hands=tuple(tuple(names(c) for c in h) for h in state.hands) if face_up else (),
        hand_sizes=tuple(len(h) for h in state.hands),
        bids=state.bids,
        trick=tuple(names(c) for c in state.trick),
        taken=state.taken,
        scores=state.scores,
        bags=state.bags,
        winner=state.winner,
        reason=state.reason,
        moe=state.moe,
        power_checks=tuple(
            tuple(names(c) for c in up if c in held)
            for up, held in zip(state.face_up, state.hands, strict=False)
        ),
    )


def replay_of(read: transcripts.Transcript) -> TranscriptReplay:
    """Return the public replay of a transcript read back (face up: the game is over)."""
    return TranscriptReplay(
        game_id=read.opened.game_id,
        rules=read.state.rules.to_dict(),
        events=[
            ReplayedEvent(seq=seq, type=type(event).__name__, event=shown(event, True))
            for seq, event in enumerate(read.events, 1)
        ],
        state=state_at_of(read.opened.game_id, len(read.events), read.state, True),
    )


class Game:
    """One game's log, decoded, and what the public may see of it."""

    def __init__(self, game_id: str, stored: list[StoredEvent]) -> None:
        self.game_id = game_id
        self.stored = stored
        self.decoded: list[wire.GameEvent] = [REGISTRY.decode(s) for s in stored]
        opened = self.decoded[0]
        assert isinstance(opened, wire.TableOpened)
        self.opened = opened
        self.finished = isinstance(self.decoded[-1], wire.GameFinished)
        self.public = len(stored) if self.finished else self._last_release()

    def _last_release(self) -> int:
        for index in range(len(self.decoded) - 1, -1, -1):
            if wire.releases_spectators(self.decoded[index]):
                return index + 1
        return 0

    def state(self, at: int | None = None) -> engine.GameState:
        """Return the engine state after event ``at`` (capped at what is public)."""
        until = self.public if at is None else min(at, self.public)
        return wire.fold(self.decoded[:until])

    def events(self) -> Iterator[GameEventOut]:
        """Yield the public events: all (seed removed) when finished, else a spectator's."""
        for stored, event in zip(self.stored[: self.public], self.decoded, strict=False):
            yield GameEventOut(
                seq=stored.version,
                type=stored.type,
                recorded_at=stored.recorded_at,
                event=shown(event, self.finished),
            )

    def summary(self) -> GameSummary:
        """Return the public summary."""
        state = self.state()
        return GameSummary(
            game_id=self.game_id,
            ladder=self.opened.ladder,
            rated=self.opened.rated,
            players=self.opened.players,
            bots=self.opened.bots,
            finished=self.finished,
            phase=state.phase,
            hand_number=state.hand,
            scores=state.scores,
            bags=state.bags,
            bids=state.bids,
            winner=state.winner,
            reason=state.reason,
            seq=self.public,
            events=len(self.stored),
            rules=self.rules(),
            free_text_chat=self.opened.free_text_chat,
        )

    def rules(self) -> dict[str, Any]:
        """Return the game's rules, public from its start (not only from its first trick)."""
        for event in self.decoded:
            if isinstance(event, wire.GameStarted):
                return wire.fold((event,)).rules.to_dict()
        return self.state().rules.to_dict()

    def state_at(self, at: int) -> StateAt:
        """Return the state after event ``at`` (capped at what is public)."""
        until = min(at, self.public)
        return state_at_of(self.game_id, until, self.state(until), self.finished)

    def transcript(self) -> str:
        """Return the plain-text transcript: face up once finished, else only the public part
        (up to the last completed trick, no hand, no exchanged or drawn card); never the seed."""
        return transcripts.export(self.decoded[: self.public])
