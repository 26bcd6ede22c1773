"""The table service: owns game streams, validates every command through the engine, appends.

Ownership. Games hash into the platform's fixed `events.subjects.SLOTS` (1,024) hash slots;
slot ``s`` is the lease ``table/s`` of `events.leases`, shared out among the live replicas
(about 1,024/replicas each; a joining replica gets its share, a dead one's moves within a
lease's time to live). A game's slot never changes, so replicas come and go (1 to hundreds)
without remapping a game: only whole slots move. The replica holding a slot's lease is the
only one that serves it: it subscribes to the slot's command subject, keeps its live games in
memory and runs their timers and bots.
Every append carries the lease's fence (name, epoch), so a replica that lost its lease is
refused by the store itself, and a replica stops serving before its lease can be claimed by
another (the argument is in `events.leases`).

Opening follows ownership too: an open (practice, casual, or a MatchFound's rated game) reaches
any replica, which picks the game id first and then opens it itself if it owns the game's
slot, or forwards the request to the owner on the slot's subject. So a standby never
holds a game it cannot drive.

Faults. A database or NATS error fails the one request (``unavailable``: send it again, same
command id) or re-arms the timer with a backoff; nothing dies of it. While the leases cannot
be renewed `/readyz` says so, and their validity running out stops the replica serving. A
replica whose NATS connection does not answer its own probe for SPADES_NATS_GRACE_SECONDS
gives its leases up the same way (timers first) and claims again once it answers (the
argument is in `events.leases`); meanwhile it times no person out. A game served again after
nobody served it (a take-over, or a person's timer that could not act for an outage) gives the
person on turn a full turn from then, recorded (`TurnClockRestarted`, `Timers.restart_clock`).

This module is the runner: the leases, the subscriptions, taking slots over and letting
them go. The replica's other jobs each have a module: the load -> decide -> append -> publish
path (`services.table.games`), the requests (`services.table.handlers`), opening and
forwarding (`services.table.opener`), the timers and bots (`services.table.timers`).

Logs: a command logs under its command id as `request_id` with its `game_id`; a timer or bot
move under `timer:<game_id>:<version>`; a MatchFound under its event id (the consumer binds
it); taking slots over under `resume:<slots>` (as ranges: `resume:0-511`). Lines name the
command's type and the seat, never a card or the seed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from events.leases import LeaseGroup, member_id
from events.retry import Backoff
from events.store import Fence
from events.subjects import SLOTS
from services.runtime import logs, ops
from services.runtime.service import Runtime
from services.table import audiences, talk
from services.table.games import LEASE_GROUP, Games, lease_name
from services.table.handlers import Handlers
from services.table.opener import Opener
from services.table.tier import BotTier
from services.table.timers import BOT_DELAY, Timers

__all__ = ["TableService", "lease_name", "main", "spans"]

# Loading a gained slot's games that failed: again, up to every 2 s, while it is ours.
RESUME_BACKOFF = Backoff(first=0.2, factor=2.0, most=2.0, jitter=0.1)


def spans(slots: set[int]) -> str:
    """Return slots as ranges for a log line: ``0-255,512-767`` rather than 512 numbers."""
    runs: list[list[int]] = []
    for slot in sorted(slots):
        if runs and slot == runs[-1][1] + 1:
            runs[-1][1] = slot
        else:
            runs.append([slot, slot])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


class TableService:
    """One replica of the table service."""

    def __init__(self, rt: Runtime, *, bot_delay: float = BOT_DELAY) -> None:
        self.rt = rt
        self.settings = rt.settings
        self.log = rt.log
        self.owned: dict[int, Subscription] = {}
        self.inflight: set[asyncio.Task[Any]] = set()
        health, grace = rt.nats_health, self.settings.nats_grace_seconds
        self.leases = LeaseGroup(
            rt.pool,
            group=f"{rt.subjects.prefix}{LEASE_GROUP}",
            names=[lease_name(s) for s in range(SLOTS)],
            member=self.settings.replica_id or member_id("table"),
            on_gain=self._on_gain,
            on_lose=self._on_lose,
            log=self.log,
            ttl=self.settings.lease_seconds,
            interval=self.settings.lease_seconds / 5,
            # ownership needs NATS too: cut off from it, the replica gives its leases up
            able=None if health is None else lambda: health.answered_within(grace),
        )
        self.games = Games(rt, self.leases)
        bots = BotTier(rt, self.log)
        self.timers = Timers(rt, self.games, bots, bot_delay=bot_delay)
        self.opener = Opener(rt, self.games, self.timers)
        self.handlers = Handlers(rt, self.games, self.timers, self.opener, bots)

    async def run(self) -> None:
        """Serve until ``rt.stop`` is set, then finish in-flight work and let go."""
        rt = self.rt
        rt.checks["leases"] = self.leases.check
        opener = await rt.nc.subscribe(
            rt.subjects.table_open(),
            queue=rt.subjects.table_queue_group(),
            cb=self._spawn(self.opener.on_open),
        )
        matches = asyncio.create_task(
            rt.consume("table-matches", rt.subjects.match_found(), self.opener.on_match_found)
        )
        try:
            # Returns once rt.stop is set, having stopped serving and released every lease.
            await self.leases.run(rt.stop)
        finally:
            with contextlib.suppress(Exception):
                await opener.unsubscribe()
            if self.owned:
                await self._on_lose({lease_name(s) for s in self.owned}, "stopping")
            if self.inflight:
                await asyncio.wait(self.inflight, timeout=10)
            await matches

    async def _on_gain(self, fences: Mapping[str, Fence]) -> None:
        """Serve newly leased slots: subscribe, then load their live games and timers."""
        gained = {int(name.rsplit("/", 1)[1]) for name in fences}
        on_command = self._spawn(self.handlers.on_command)
        for slot in sorted(gained):
            if slot not in self.owned:
                self.owned[slot] = await self.rt.nc.subscribe(
                    self.rt.subjects.table_slot_commands(slot), cb=on_command
                )
        self.log.info("slots claimed", slots=spans(gained), owned=len(self.owned))
        ops.SLOTS_OWNED.set(len(self.owned))
        ops.LEASE_CHANGES.labels(event="claimed").inc(len(gained))
        # Loading the games is retried in the background until it succeeds: a take-over
        # right after a database restart meets broken connections, and a game left unloaded
        # in a slot we hold would wait for a timer nobody armed.
        task = asyncio.create_task(self._resume(gained))
        self.inflight.add(task)
        task.add_done_callback(self.inflight.discard)

    async def _on_lose(self, names: set[str], why: str) -> None:
        """Stop serving slots at once: no subscription, no timer, no game in memory."""
        lost = {int(name.rsplit("/", 1)[1]) for name in names}
        subs = [self.owned.pop(p) for p in lost if p in self.owned]
        games, timers = self.games, self.timers
        for game_id in [
            g for g in (*games.tables, *games.finished.tables) if games.slot(g) in lost
        ]:
            timers.forget(game_id)
        for game_id in [g for g in timers.timers if games.slot(g) in lost]:
            timers.forget(game_id)
        ops.SLOTS_OWNED.set(len(self.owned))
        ops.LEASE_CHANGES.labels(event=why).inc(len(lost))
        games.count_active()
        self.log.info("slots given up", slots=spans(lost), why=why)
        for sub in subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def _resume(self, slots: set[int]) -> None:
        """Load the live games of newly owned slots so their timers run again; retry
        until it is done, the slots are gone, or the replica stops."""
        with logs.work(f"resume:{spans(slots)}"):
            async for attempt in RESUME_BACKOFF.attempts(stop=self.rt.stop):
                ours = {s for s in slots if self.leases.fence(lease_name(s)) is not None}
                if not ours:
                    return
                try:
                    resumed = await self._resume_once(ours)
                except Exception as exc:  # the database or NATS away: try again
                    self.log.warning(
                        "games not resumed yet, retrying", error=type(exc).__name__, attempt=attempt
                    )
                    continue
                if resumed:
                    self.log.info("games resumed", games=resumed, slots=spans(ours))
                return

    async def _resume_once(self, slots: set[int]) -> int:
        games = self.games
        unfinished = await self.rt.store.unfinished_games()
        resumed = 0
        for stream_id in unfinished:
            game_id = stream_id.removeprefix("game-")
            if games.slot(game_id) not in slots or games.fence(game_id) is None:
                continue
            async with games.lock(game_id):
                table = await games.load(game_id, fresh=True)
                if table is not None:
                    await games.publish(table, audiences.nudge(table))
                    if not await self.timers.restart_clock(table):
                        self.timers.schedule(table)
                    resumed += 1
        return resumed

    def _spawn(
        self, handler: Callable[[Msg], Coroutine[Any, Any, None]]
    ) -> Callable[[Msg], Awaitable[None]]:
        """Return a NATS callback that runs ``handler`` as a tracked task (drained on stop)."""

        async def callback(msg: Msg) -> None:
            task = asyncio.create_task(handler(msg))
            self.inflight.add(task)
            task.add_done_callback(self.inflight.discard)

        return callback


async def main(rt: Runtime) -> None:
    """Run one table replica until ``rt.stop``."""
    import events.contracts.matchmaking  # noqa: F401  (registers MatchFound, which this service consumes)

    talk.check()  # a bad SPADES_TALK_* setting or word file stops the replica at its start
    await TableService(rt).run()
