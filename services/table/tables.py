"""A table: one game's stream folded into the engine state plus who sits where.

Everything here is synchronous and free of I/O, so the rules of seating, timeouts and
abandonment are tested without servers; `services.table.games` does the loading and appending.

Seat rules decided here (the issue leaves them to us):

- A seat that lets its timer run out is played by the strong bot for that one action
  (`TurnTimedOut` then the bot's events, in one append), as is a seat taken over; the move
  is decided in the bot tier, or by the baseline on the table when no worker answers in
  time (`services.table.timers`). ``abandon_streak`` timeouts in a row
  (default 3) and a bot takes the seat over for the rest of the game (`SeatAbandoned`); the
  player can no longer act there. Any action of his own resets his streak.
- An unrated table (practice, casual) whose every seat a bot now plays closes at once: the
  abandonment of its last person is followed, in the same append, by `GameFinished` with
  reason "abandoned" (no winner, the scores as they stand) instead of the bot's move (see
  `closing_events`). So an idle practice table ends after ``abandon_streak`` turn timers in
  a row (3 x 25 s by default), recorded in its log, and bots never play on for nobody.
- An untimed table (a practice table without the turn clock) has no timer to run out, so it
  would never end: after ``SPADES_UNTIMED_IDLE_SECONDS`` (30 min) with no event in its log
  (nobody acted; the bots act at once) it closes with `GameFinished` reason "idle", no
  winner, the scores as they stand (`idle_close_events`), appended like any timer's events.
- An abandoned game stays rated; who is charged is `services.rating.model`'s rule (the
  abandoner a loss, his partner no move), carried to the rating service in `GameFinished`.
- A player may leave his seat for good (`leave_events`, the request `LeaveTable`):
  `SeatAbandoned` with ``left``, then as above: at an unrated table a bot takes the seat and
  the table closes once no person is left; a rated game is resigned, charged as an
  abandonment, and the bots play it out.
"""

from __future__ import annotations

import random
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import engine
import engine.bot
import engine.botnil
from events.contracts import game as wire
from events.contracts.audience import Frame
from events.contracts.talk import Say, Talked
from events.envelope import StoredEvent
from events.ids import uuid5
from services.table.decided import Decided
from services.table.finished import FinishedTables as FinishedTables
from services.table.refusals import Rejected as Rejected
from services.table.talk import TalkLog
from services.table.talk import decide as say

ABANDONED = "abandoned"
"""`GameFinished.reason` of an unrated table closed because no person plays at it any more."""
IDLE = "idle"
"""`GameFinished.reason` of an untimed table closed because nobody acted at it for
SPADES_UNTIMED_IDLE_SECONDS (`Table.idle_close_events`)."""
BOT_ACTOR = "bot"
TIMEOUT_ACTOR = "timeout"
RECENT_FRAMES = 32
"""Frames a table keeps in memory for catch-ups (beyond them it reads the log)."""
MIN_RESTART = 1.0
"""Seconds under which a game served again keeps its clock (`Table.clock_restart`)."""
EVENT_NAMESPACE = uuid.UUID("5ade5000-0000-4000-8000-000000000001")


def event_ids(seed: str, count: int) -> list[uuid.UUID]:
    """Return ``count`` event ids derived from ``seed``, the same on every retry."""
    return [uuid5(EVENT_NAMESPACE, f"{seed}:{i}") for i in range(count)]


@dataclass
class Table:
    """One game as its owner keeps it in memory."""

    game_id: str
    version: int = 0
    opened: wire.TableOpened | None = None
    state: engine.GameState = field(default_factory=engine.initial_state)
    results: dict[uuid.UUID, int] = field(default_factory=dict)
    """Command id -> version right after its events: a retried id gets the same answer."""
    streaks: dict[int, int] = field(default_factory=dict)
    abandoned: set[int] = field(default_factory=set)
    stored_bytes: int = 0
    last_recorded: float = 0.0
    """When the log recorded the game's last event (unix seconds): its last activity."""
    """The size of the game's events as the log holds them (their JSON): what a finished
    game weighs in `FinishedTables`."""
    deadline: float = 0.0
    """The turn timer the log recorded with the last event (`Metadata.deadline`), 0 if none."""
    turn_deadline: float | None = None
    """The deadline watchers are told (`events.contracts.game.deadline_of`: None at an untimed
    table)."""
    released: int = 0
    """Spectators are kept one trick behind: the last seq they may see."""
    released_state: engine.GameState = field(default_factory=engine.initial_state)
    """The game as spectators may see it: at ``released``."""
    unreleased: list[tuple[int, wire.GameEvent]] = field(default_factory=list)
    """The events after ``released`` (spectators get them with the next completed trick)."""
    recent: deque[Frame] = field(default_factory=lambda: deque(maxlen=RECENT_FRAMES))
    """The last frames published (`services.table.audiences`), for a gateway's catch-up."""
    hint: tuple[int, int, engine.Command] | None = None
    """The bot tier's suggestion for the seat on turn: (version, seat, command). Asked for
    once per turn at a practice table (`services.table.handlers`), however often it is shown."""
    talk: TalkLog = field(default_factory=TalkLog)

    # -- folding ------------------------------------------------------------------------------

    def fold(
        self, stored: StoredEvent, event: wire.GameEvent, after: engine.GameState | None = None
    ) -> None:
        """Fold one stored event of this game's stream into the table (``after``: the engine
        state the event leads to, when the caller computed it already)."""
        if stored.version != self.version + 1:
            raise ValueError(f"game {self.game_id}: event {stored.version} after {self.version}")
        self.version = stored.version
        self.stored_bytes += len(stored.data)
        self.last_recorded = stored.recorded_at.timestamp()
        self.deadline = stored.metadata.deadline
        command_id = stored.metadata.command_id
        if command_id is not None:
            self.results[command_id] = stored.version
        match event:
            case wire.TableOpened():
                self.opened = event
            case wire.TurnTimedOut(seat=seat, streak=streak):
                self.streaks[seat] = streak
            case wire.SeatAbandoned(seat=seat):
                self.abandoned.add(seat)
            case Talked(seat=seat):  # talk moves no card, resets no streak, runs no clock
                self.talk.heard(seat, self.last_recorded)
            case wire.TurnClockRestarted():
                pass  # its deadline is the metadata's, folded above
            case _:
                self.state = wire.fold((event,), self.state) if after is None else after
                actor = stored.metadata.actor
                if actor is not None and actor in self.players:
                    self.streaks[self.players.index(actor)] = 0
        if self.opened is not None:
            self.turn_deadline = wire.deadline_of(stored, self.opened)
        if wire.releases_spectators(event):
            self.released, self.released_state = stored.version, self.state
            self.unreleased = []
        else:
            self.unreleased.append((stored.version, event))

    # -- who sits where -----------------------------------------------------------------------

    @property
    def players(self) -> tuple[str, ...]:
        """Return the player id of every seat."""
        return self.opened.players if self.opened else ()

    @property
    def over(self) -> bool:
        """Return whether the game has finished."""
        return self.state.phase == "over"

    def seat_of(self, player_id: str) -> int | None:
        """Return the seat of ``player_id``, or None for a spectator."""
        return self.players.index(player_id) if player_id in self.players else None

    def bot_seats(self) -> set[int]:
        """Return the seats a bot plays: bots from the start and abandoned seats."""
        return set(self.opened.bots if self.opened else ()) | self.abandoned

    @property
    def seeding(self) -> bool:
        """Return whether a committed game still waits for contributions before hand 1."""
        s = self.state
        return s.phase == "dealing" and s.hand == 0 and bool(s.commitment) and not self.over

    def close_seeding_events(self) -> Decided:
        """Return the first deal, made with the contributions in (the window ran out)."""
        return self._engine_events(engine.CloseSeeding())

    def states_after(self, events: list[wire.GameEvent]) -> list[engine.GameState]:
        """Return the engine state after each of ``events`` (not yet appended): the states
        their deciding computed (`Decided`); events not decided here (a test's own list) are
        folded through their engine forms, as a game read from the store is."""
        if isinstance(events, Decided):
            return events.after
        return [after for _, _, after in wire.steps(events, self.state)]

    def deadline_after(
        self, events: Sequence[wire.GameEvent], state: engine.GameState, now: float
    ) -> float:
        """Return the turn deadline to record with an append of ``events`` leaving the game
        at ``state``: a full turn from ``now`` while somebody is on turn at a timed table,
        else 0."""
        opened = self.opened or next((e for e in events if isinstance(e, wire.TableOpened)), None)
        if all(isinstance(e, Talked) for e in events) and events:
            return self.deadline  # talking never moves the turn clock
        if opened is None or state.phase == "over" or state.turn < 0:
            return 0.0
        return wire.turn_deadline(opened, now) or 0.0

    def clock_restart(self, now: float) -> wire.TurnClockRestarted | None:
        """Return `TurnClockRestarted` for the person on turn when the game is served again
        after nobody could serve it (a take-over, a database or NATS outage): appended, it
        records a full turn from ``now`` (`deadline_after`), never less than the log had; none
        when nobody is on turn, a bot is, the table is untimed, or it would add under
        `MIN_RESTART` s (a game that moved just before). Nobody knows when the last owner
        stopped serving, only that it was after the last event, so a full turn from ``now``
        gives back at least the outage, at most one turn."""
        opened, seat = self.opened, self.seat_to_act()
        if opened is None or opened.turn_seconds <= 0 or self.deadline <= 0 or seat is None:
            return None
        moved = now + opened.turn_seconds - self.deadline
        if seat in self.bot_seats() or moved < MIN_RESTART:
            return None
        return wire.TurnClockRestarted(seat=seat, seconds=round(moved, 1))

    def seat_to_act(self) -> int | None:
        """Return the seat the game waits for, or None when it waits for nobody."""
        if self.opened is None or self.over or self.state.turn < 0:
            return None
        return self.state.turn

    # -- deciding -----------------------------------------------------------------------------

    def decide(self, player_id: str, command: wire.AnySeatCommand | Say) -> Decided:
        """Return the events a player's command causes; raise `Rejected` naming the rule."""
        if self.opened is None:
            raise Rejected("unknown_game", f"there is no game {self.game_id}")
        if isinstance(command, Say):
            return Decided.facts(self.state, *say(self, player_id, command))
        seat = self.seat_of(player_id)
        if seat is None:
            raise Rejected("not_your_seat", f"player {player_id} has no seat at this game")
        if seat in self.abandoned:
            raise Rejected(
                "seat_abandoned",
                f"seat {engine.seat_name(seat, len(self.players))} timed out too often; "
                "a bot plays it for the rest of the game",
            )
        try:
            seat_command = wire.command_to_engine(command, seat)
        except engine.InvalidCard as exc:
            raise Rejected("malformed", str(exc)) from None
        return self._engine_events(seat_command)

    def bot_level(self, seat: int) -> str:
        """Return the level of the bot acting for ``seat``.

        Bots seated from the start play the table's level; a seat a person left (a timeout,
        an abandonment: rated games too) gets the strong bot, whose search runs in the bot
        tier (`services.bots`), never on a table replica.
        """
        if self.opened is not None and seat in self.opened.bots:
            return self.opened.bot_level
        return "strong"

    def baseline_move(self, seat: int) -> engine.Command:
        """Return the baseline bot's move for ``seat``: the table's own fallback when the bot
        tier does not answer in time (about 20 µs of CPU; `python -m benchmarks bots`). It
        never searches: where suicide's nil side would (`baseline_searches`), the card rules
        alone (`engine.bot.choose_quickly`); the tier decides those moves."""
        rng = random.Random(f"{self.game_id}:{self.version}")
        return engine.bot.choose_quickly(engine.view(self.state, seat), rng)

    def baseline_searches(self, seat: int) -> bool:
        """Whether the baseline's move for ``seat`` is a search (`engine.botnil.searches`)."""
        return self.state.rules.suicide and engine.botnil.searches(engine.view(self.state, seat))

    def bot_events(self, seat: int, move: engine.Command | None = None) -> Decided:
        """Return the events of the bot playing ``move`` for ``seat`` (decided on its view by
        the bot tier; the baseline's move when None)."""
        return self._engine_events(self.baseline_move(seat) if move is None else move)

    def suggestion(self, seat: int) -> engine.Command | None:
        """Return the bot tier's suggestion for ``seat`` if it is on turn and one was asked."""
        if self.hint is None or self.seat_to_act() != seat:
            return None
        version, hinted, command = self.hint
        return command if (version, hinted) == (self.version, seat) else None

    def timeout_events(
        self, seat: int, abandon_streak: int, move: engine.Command | None = None
    ) -> Decided:
        """Return the events of ``seat`` timing out: the fact, maybe abandonment, the bot's
        ``move`` (decided on the seat's view; the baseline's when None)."""
        streak = self.streaks.get(seat, 0) + 1
        timed_out = wire.TurnTimedOut(seat=seat, streak=streak)
        if streak >= abandon_streak and seat not in self.abandoned:
            left = wire.SeatAbandoned(seat=seat, player_id=self.players[seat], streak=streak)
            self.abandoned.add(seat)  # the GameFinished below must know
            try:
                closing = self.closing_events()
                facts = Decided.facts(self.state, timed_out, left)
                return facts.then(closing or self.bot_events(seat, move))
            finally:
                self.abandoned.discard(seat)  # folding the stored event sets it for good
        return Decided.facts(self.state, timed_out).then(self.bot_events(seat, move))

    @property
    def untimed(self) -> bool:
        """Return whether the table has no turn clock (an untimed practice table)."""
        return self.opened is not None and self.opened.turn_seconds <= 0

    def idle_close_events(self) -> Decided:
        """Return the end of an unrated untimed table nobody acted at for too long, or nothing:
        `GameFinished` with reason "idle", no winner, the scores as they stand."""
        opened = self.opened
        if opened is None or opened.rated or self.over or not self.untimed:
            return Decided()
        return self._ended(IDLE)

    def leave_events(self, player_id: str) -> Decided:
        """Return the events of ``player_id`` leaving his seat for good: `SeatAbandoned`
        (``left``), then the table's end when no person is left at an unrated table. At a
        rated game it is his resignation: the bot plays the seat out, the rating rule of an
        abandonment applies. Raise `Rejected` when he cannot leave."""
        if self.opened is None:
            raise Rejected("unknown_game", f"there is no game {self.game_id}")
        seat = self.seat_of(player_id)
        if seat is None:
            raise Rejected("not_your_seat", f"player {player_id} has no seat at this game")
        if self.over:
            raise Rejected("game_over", "the game is over: there is no seat to leave")
        if seat in self.abandoned:
            raise Rejected(
                "seat_abandoned",
                f"seat {engine.seat_name(seat, len(self.players))} is already played by a bot",
            )
        left = wire.SeatAbandoned(
            seat=seat, player_id=player_id, streak=self.streaks.get(seat, 0), left=True
        )
        self.abandoned.add(seat)  # the GameFinished below must know
        try:
            return Decided.facts(self.state, left).then(self.closing_events())
        finally:
            self.abandoned.discard(seat)  # folding the stored event sets it for good

    def closing_events(self) -> Decided:
        """Return the end of an unrated game nobody plays any more (every seat a bot's), or
        nothing: `GameFinished` with reason "abandoned", no winner, the scores as they stand.
        A rated game is played out by the bots instead: its result moves ratings."""
        opened = self.opened
        if opened is None or opened.rated or self.over:
            return Decided()
        if len(self.bot_seats()) < len(self.players):
            return Decided()
        return self._ended(ABANDONED)

    def _ended(self, reason: str) -> Decided:
        """Return the table's end of an unrated game: no winner, the scores as they stand."""
        finished = engine.GameFinished(winner=-1, reason=reason, scores=self.state.scores)
        return Decided.applied(self.state, (finished,), self._to_wire)

    def _engine_events(self, command: engine.Command) -> Decided:
        """Return the events `engine.decide` returned, applied once, in their wire forms."""
        try:
            decided = engine.decide(self.state, command)
        except engine.RuleViolation as exc:
            raise Rejected(exc.code, str(exc)) from None
        return Decided.applied(self.state, decided, self._to_wire)

    def _to_wire(self, event: engine.Event) -> wire.GameEvent:
        if not isinstance(event, engine.GameFinished) or self.opened is None:
            return wire.to_wire(event)
        return wire.to_wire(
            event,
            ladder=self.opened.ladder,
            rated=self.opened.rated,
            players=self.players,
            abandoned=tuple(sorted(self.abandoned)),
        )

    def view(self, player_id: str, **extra: Any) -> wire.SeatViewWire:
        """Return ``player_id``'s view (a spectator's if he has no seat), with the suggestion
        the bot tier made for his turn if there is one (a view never starts a search)."""
        seat = self.seat_of(player_id)
        seat_view = engine.view(self.state, engine.SPECTATOR if seat is None else seat)
        suggestion = None if seat is None else self.suggestion(seat)
        return wire.view_to_wire(
            seat_view, suggestion, players=self.players, version=self.version, **extra
        )
