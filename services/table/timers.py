"""The table's timers: each live game has one, for a bot's move or the turn of a person.

A bot seat's move is asked of the bot tier (`services.table.tier`) outside the game's lock and
played only if the game is still where it was asked about. A person's timer runs to the
deadline the log recorded; when it runs out the seat times out and the bot plays for it
(`Table.timeout_events`). A committed game's first deal waits for the contributions up to its
window; an untimed table nobody acts at closes after SPADES_UNTIMED_IDLE_SECONDS.

Faults: a timer that fails (database or NATS away) is armed again with a backoff, never given
up; a person is timed out only while this replica hears NATS (`HEARD_WITHIN`), and a person's
timer that failed at the deadline gives him a full turn again instead (`restart_clock`,
`TurnClockRestarted`), as a game served again after nobody served it does. A timer due while
its slot's lease is held but its renewal is late (`Games.in_doubt`) looks again every
`IN_DOUBT_RECHECK` until the lease is renewed or given up: the renewal brings the lease back
with no new claim, so nothing else would arm the game's timer again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from events.retry import Backoff
from events.store import ConcurrencyConflict, Fenced
from services.runtime import logs
from services.runtime.service import Runtime
from services.table.decided import Decided
from services.table.games import Games
from services.table.refusals import Rejected
from services.table.tables import BOT_ACTOR, TIMEOUT_ACTOR, Table
from services.table.tier import BotTier

BOT_DELAY = 0.0  # seconds a bot "thinks" before it plays (a UI may want ~0.5)
# A timer that failed (database or NATS away): run it again, up to every 5 s, never give up.
TIMER_BACKOFF = Backoff(first=0.2, factor=2.5, most=5.0, jitter=0.1)
# A timer armed while its slot's lease renewal is late looks again this often, until the lease
# is renewed (the timer is armed) or given up (the game is dropped with its slot).
IN_DOUBT_RECHECK = 0.25
# A person's turn is timed out only if this replica's NATS connection answered its own probe
# (sent every second) within this many seconds: else his commands may not be reaching it.
HEARD_WITHIN = 2.0


class NatsUnheard(Exception):
    """A timer did not act because this replica cannot tell that players can reach it."""


class Timers:
    """The one timer of each game this replica serves."""

    def __init__(
        self, rt: Runtime, games: Games, bots: BotTier, *, bot_delay: float = BOT_DELAY
    ) -> None:
        self.rt = rt
        self.settings = rt.settings
        self.log = rt.log
        self.games = games
        self.bots = bots
        self.bot_delay = bot_delay
        self.timers: dict[str, asyncio.Task[None] | asyncio.TimerHandle] = {}
        """Each game's timer: a task while it acts (or a bot's move is due at once), else the
        loop's timer handle that starts that task when the time comes."""
        self.retries: dict[str, int] = {}
        self.faulted: dict[str, int] = {}
        """game -> version whose person's timer failed (an outage): its clock restarts."""
        health = rt.nats_health
        # whether this replica heard NATS lately: a person is timed out only then
        self._heard: Callable[[], bool] = (
            (lambda: True) if health is None else (lambda: health.answered_within(HEARD_WITHIN))
        )

    def forget(self, game_id: str) -> None:
        """Stop serving ``game_id``: no timer, no table in memory, no hint asked."""
        _cancel(self.timers.pop(game_id, None))
        self.retries.pop(game_id, None)
        self.faulted.pop(game_id, None)
        self.bots.asked.pop(game_id, None)
        self.games.drop(game_id)

    async def restart_clock(self, table: Table) -> bool:
        """Return whether the person on turn got a full turn again (`Table.clock_restart`)."""
        restart = table.clock_restart(time.time())
        if restart is not None:
            seed = f"restart:{table.game_id}:{table.version}"
            facts = Decided.facts(table.state, restart)
            await self.games.append(table, facts, id_seed=seed, actor="table")
            self.log.info("turn clock restarted after an outage", seconds=restart.seconds)
            self.schedule(table)
        return restart is not None

    def schedule(self, table: Table, *, delay: float | None = None) -> None:
        """(Re)arm the game's one timer: a bot's move, or the turn timer of a person."""
        _cancel(self.timers.pop(table.game_id, None))
        seat = table.seat_to_act()
        fence = self.games.fence
        if fence(table.game_id) is None and self.games.in_doubt(table.game_id):
            # Its lease's renewal is late: arming nothing would leave a game we keep with no
            # timer (a fresh clone's suite, loaded, saw a game wait for ever on a bot's lead).
            self.timers[table.game_id] = asyncio.get_running_loop().call_later(
                IN_DOUBT_RECHECK, self._recheck, table.game_id
            )
            return
        if seat is None and table.seeding:  # hand 1 waits for the contributions, not for ever
            if fence(table.game_id) is not None:
                wait = self._window() if delay is None else delay
                self._arm(table.game_id, table.version, -1, False, wait)
            return
        if seat is None:
            if table.over:
                self.forget(table.game_id)
                self.games.count_active()
            return
        if fence(table.game_id) is None:
            return
        is_bot = seat in table.bot_seats()
        if not is_bot and table.untimed:
            # an untimed table: the person takes as long as he likes, but a table nobody acts
            # at closes SPADES_UNTIMED_IDLE_SECONDS after its last event (restarts included)
            if delay is None:
                idle = self.settings.untimed_idle_seconds
                delay = max(0.0, table.last_recorded + idle - time.time())
            self._arm(table.game_id, table.version, seat, False, delay, idle=True)
            return
        if delay is None:
            # a person's timer runs to the deadline the log recorded (and every watcher was
            # told); a game recorded before deadlines were: a full turn from now
            recorded = table.deadline - time.time() if table.deadline > 0 else None
            delay = self.bot_delay if is_bot else recorded
            if delay is None:
                delay = self.settings.turn_seconds
            delay = max(0.0, delay)
        self._arm(table.game_id, table.version, seat, is_bot, delay)

    def _recheck(self, game_id: str) -> None:
        """Arm the game's timer again, its lease's renewal having had time to come."""
        self.timers.pop(game_id, None)
        table = self.games.tables.get(game_id)
        if table is not None:
            self.schedule(table)

    def _arm(
        self,
        game_id: str,
        version: int,
        seat: int,
        is_bot: bool,
        delay: float,
        *,
        idle: bool = False,
    ) -> None:
        """Make the game's timer fire in ``delay`` s. A timer due later is a handle of the
        loop's until then, not a task asleep: nearly every timer is re-armed before it runs
        out (a person acts in time), and a handle is cancelled without waking anything, where
        a task costs a wake-up to start and another to cancel, on every move of every game."""
        if delay <= 0:
            self.timers[game_id] = asyncio.create_task(
                self._fire(game_id, version, seat, is_bot, delay, idle=idle)
            )
            return
        self.timers[game_id] = asyncio.get_running_loop().call_later(
            delay, self._start, game_id, version, seat, is_bot, idle
        )

    def _start(self, game_id: str, version: int, seat: int, is_bot: bool, idle: bool) -> None:
        # A handle re-armed or forgotten was cancelled: one that runs is still the game's timer.
        self.timers[game_id] = asyncio.create_task(
            self._fire(game_id, version, seat, is_bot, 0.0, idle=idle)
        )

    async def _fire(
        self,
        game_id: str,
        version: int,
        seat: int,
        is_bot: bool,
        delay: float,
        *,
        idle: bool = False,
    ) -> None:
        await asyncio.sleep(delay)
        # The timer task was armed inside some command's context: log under its own id.
        with logs.work(f"timer:{game_id}:{version}", game_id=game_id):
            try:
                await self._act_for(game_id, version, seat, is_bot, idle=idle)
            except Exception as exc:  # the database or NATS away: try again, never give up
                if not (is_bot or idle or seat < 0):  # no timeout for an outage of ours
                    self.faulted[game_id] = version
                self._retry_later(game_id, exc)

    def _retry_later(self, game_id: str, exc: Exception) -> None:
        attempt = self.retries.get(game_id, 0)
        self.retries[game_id] = attempt + 1
        delay = TIMER_BACKOFF.delay(attempt + 1)
        table = self.games.tables.get(game_id)
        self.log.warning(
            "timer failed, retrying", error=type(exc).__name__, attempt=attempt + 1, delay=delay
        )
        if table is not None and (self.games.fence(game_id) or self.games.in_doubt(game_id)):
            self.schedule(table, delay=delay)

    async def _act_for(
        self, game_id: str, version: int, seat: int, is_bot: bool, *, idle: bool = False
    ) -> None:
        """Play the bot's move, time the seat out, or close an idle untimed table (``idle``),
        unless somebody acted in time."""
        games = self.games
        move = None
        if seat >= 0 and not idle:
            table = games.tables.get(game_id)
            if table is None or table.version != version or self.rt.stop.is_set():
                return  # somebody acted in time
            # Outside the game's lock: the bot tier thinks while the table serves; the move
            # is played below only if the game is still where it was asked about.
            move = await self.bots.move(table, seat)
        async with games.lock(game_id):
            table = games.tables.get(game_id)
            if table is None or table.version != version or self.rt.stop.is_set():
                return  # somebody acted in time
            if self.timers.get(game_id) is asyncio.current_task():
                del self.timers[game_id]
            if games.fence(game_id) is None:
                # The slot is no longer ours (its games are dropped with it), or its lease's
                # renewal is late: then `schedule` looks again shortly.
                self.schedule(table)
                return
            try:
                if idle:  # nobody acted at an untimed table for SPADES_UNTIMED_IDLE_SECONDS
                    events = table.idle_close_events()
                    actor = "table"
                    if not events:
                        return
                    self.log.info("idle untimed table closed", seat=seat)
                elif seat < 0:  # the contribution window ran out: deal hand 1
                    events = table.close_seeding_events()
                    actor = "table"
                elif is_bot:
                    events = table.bot_events(seat, move)
                    actor = BOT_ACTOR
                else:
                    if not self._heard():
                        # The player may be sending and we may not be hearing: no timeout
                        # for an outage of ours. Try again shortly; cut off for longer, the
                        # replica lets the game go and its next owner restarts the clock.
                        raise NatsUnheard("NATS does not answer this replica")
                    if self.faulted.get(game_id) == version and await self.restart_clock(table):
                        self.retries.pop(game_id, None)
                        return  # the timer failed at the deadline: a full turn again instead
                    events = table.timeout_events(seat, self.settings.abandon_streak, move)
                    actor = TIMEOUT_ACTOR
                    self.log.info("turn timed out", seat=seat)
                await games.append(table, events, id_seed=f"{game_id}:{version}", actor=actor)
            except Fenced:
                return  # another replica owns the game now and drives it
            except ConcurrencyConflict:
                reloaded = await games.load(game_id, fresh=True)
                if reloaded is None:
                    return
                table = reloaded
            except Rejected as exc:  # a bot must never be refused: that is a bug to see
                self.log.error("bot move refused", seat=seat, code=exc.code)
                return
            self.retries.pop(game_id, None)
            self.log.debug("seat acted for", seat=seat, actor=actor, version=table.version)
            self.schedule(table)

    def _window(self) -> float:
        """Return the seconds hand 1 waits for contributions (never more than a turn)."""
        return min(self.settings.contribution_seconds, self.settings.turn_seconds)


def _cancel(timer: asyncio.Task[None] | asyncio.TimerHandle | None) -> None:
    """Stop a game's timer (never the task running this: it is the timer acting)."""
    if timer is not None and timer is not asyncio.current_task():
        timer.cancel()
