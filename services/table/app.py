"""The table service: owns game streams, validates every command through the engine, appends.

Ownership. Games hash into ``table_partitions`` partitions; partition ``p`` is the lease
``table/p`` of `events.leases`, shared out among the live replicas (about partitions/replicas
each; a joining replica gets its share, a dead one's moves within a lease's time to live). The
replica holding a lease is the only one that serves the partition: it subscribes to the
partition's command subject, keeps its live games in memory and runs their timers and bots.
Every append carries the lease's fence (name, epoch), so a replica that lost its lease is
refused by the store itself, and a replica stops serving before its lease can be claimed by
another (the argument is in `events.leases`).

Opening follows ownership too: an open (practice, casual, or a MatchFound's rated game) reaches
any replica, which picks the game id first and then opens it itself if it owns the game's
partition, or forwards the request to the owner on the partition's subject. So a standby never
holds a game it cannot drive.

Faults. A database or NATS error fails the one request (``unavailable``: send it again, same
command id) or re-arms the timer with a backoff; nothing dies of it. While the leases cannot
be renewed `/readyz` says so, and their validity running out stops the replica serving. A
replica whose NATS connection does not answer its own probe for SPADES_NATS_GRACE_SECONDS
gives its leases up the same way (timers first) and claims again once it answers (the
argument is in `events.leases`); meanwhile it times no person out. A game served again after
nobody served it (a take-over, or a person's timer that could not act for an outage) gives the
person on turn a full turn from then, recorded (`TurnClockRestarted`, `_restart_clock`).

Handlers are thin: decode, load, `Table.decide` (the engine), append, answer.

Logs: a command logs under its command id as `request_id` with its `game_id`; a timer or bot
move under `timer:<game_id>:<version>`; a MatchFound under its event id (the consumer binds
it). Lines name the command's type and the seat, never a card or the seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import msgspec
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from events.consumer import Received, Unprocessable
from events.contracts import game as wire
from events.contracts.audience import FRAMES, CatchupReply, Frame
from events.contracts.game import game_id_of_match, stream_of
from events.contracts.ladders import UnknownLadder, ruleset_of
from events.envelope import REGISTRY, Metadata
from events.leases import LeaseGroup, member_id
from events.logs import bound_ids
from events.pgstore import Conn
from events.retry import Backoff
from events.store import ConcurrencyConflict, Fence, Fenced
from events.subjects import partition_of
from services.runtime import logs, ops
from services.runtime.service import Runtime
from services.table import audiences, talk
from services.table.catchups import Catchups
from services.table.decided import Decided
from services.table.openings import OpenRequest, opening_events, opening_of
from services.table.tables import (
    BOT_ACTOR,
    TIMEOUT_ACTOR,
    FinishedTables,
    Rejected,
    Table,
    event_ids,
)
from services.table.tier import BotTier

LEASE_GROUP = "table"
BOT_DELAY = 0.0  # seconds a bot "thinks" before it plays (a UI may want ~0.5)
FORWARD_WITHIN = 15.0  # seconds an open keeps looking for its partition's owner, 3 s a send
# An open forwarded while nobody owns its partition (a failover): ask again, less often.
FORWARD_BACKOFF = Backoff(first=0.05, factor=2.0, most=1.0)
# A timer that failed (database or NATS away): run it again, up to every 5 s, never give up.
TIMER_BACKOFF = Backoff(first=0.2, factor=2.5, most=5.0, jitter=0.1)
# Loading a gained partition's games that failed: again, up to every 2 s, while it is ours.
RESUME_BACKOFF = Backoff(first=0.2, factor=2.0, most=2.0, jitter=0.1)
# A command that lost the race for the game's next version: judge it again on the new state;
# the jittered pause lets two replicas that keep colliding (a failover) fall out of step.
CONFLICT_BACKOFF = Backoff(first=0.005, factor=4.0, most=0.08, jitter=0.5)
CONFLICT_ATTEMPTS = 3
# A person's turn is timed out only if this replica's NATS connection answered its own probe
# (sent every second) within this many seconds: else his commands may not be reaching it.
HEARD_WITHIN = 2.0
# Test hook (seconds): every append waits this long after taking its fence, so that a replica
# paused by a fault test has appends in flight, as a busy one does at any moment.
APPEND_DELAY = float(os.environ.get("SPADES_TABLE_APPEND_DELAY") or 0)


class NatsUnheard(Exception):
    """A timer did not act because this replica cannot tell that players can reach it."""


_requests = msgspec.json.Decoder(wire.AnyTableRequest)
_reply = msgspec.json.Decoder(wire.TableReply)
_encoder = msgspec.json.Encoder()


def lease_name(partition: int) -> str:
    """Return the lease of a table partition."""
    return f"{LEASE_GROUP}/{partition}"


class TableService:
    """One replica of the table service."""

    def __init__(self, rt: Runtime, *, bot_delay: float = BOT_DELAY) -> None:
        self.rt = rt
        self.settings = rt.settings
        self.log = rt.log
        self.bot_delay = bot_delay
        self.tables: dict[str, Table] = {}
        """The live games of the owned partitions."""
        self.finished = FinishedTables(self.settings.table_finished_cache_bytes)
        """Finished games read again, within a byte limit (SPADES_TABLE_FINISHED_CACHE_BYTES)."""
        self.locks: dict[str, asyncio.Lock] = {}
        self.timers: dict[str, asyncio.Task[None]] = {}
        self.retries: dict[str, int] = {}
        self.owned: dict[int, Subscription] = {}
        self.inflight: set[asyncio.Task[Any]] = set()
        self.bots = BotTier(rt, self.log)
        self.catchups = Catchups()
        self.faulted: dict[str, int] = {}
        """game -> version whose person's timer failed (an outage): its clock restarts."""
        partitions = self.settings.table_partitions
        health, grace = rt.nats_health, self.settings.nats_grace_seconds
        self.leases = LeaseGroup(
            rt.pool,
            group=f"{rt.subjects.prefix}{LEASE_GROUP}",
            names=[lease_name(p) for p in range(partitions)],
            member=self.settings.replica_id or member_id("table"),
            on_gain=self._on_gain,
            on_lose=self._on_lose,
            log=self.log,
            ttl=self.settings.lease_seconds,
            interval=self.settings.lease_seconds / 5,
            # ownership needs NATS too: cut off from it, the replica gives its leases up
            able=None if health is None else lambda: health.answered_within(grace),
        )
        # whether this replica heard NATS lately: a person is timed out only then
        self._heard: Callable[[], bool] = (
            (lambda: True) if health is None else (lambda: health.answered_within(HEARD_WITHIN))
        )

    # -- lifecycle ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve until ``rt.stop`` is set, then finish in-flight work and let go."""
        rt = self.rt
        rt.checks["leases"] = self.leases.check
        opener = await rt.nc.subscribe(
            rt.subjects.table_open(),
            queue=rt.subjects.table_queue_group(),
            cb=self._spawn(self.on_open),
        )
        matches = asyncio.create_task(
            rt.consume("table-matches", rt.subjects.match_found(), self.on_match_found)
        )
        try:
            # Returns once rt.stop is set, having stopped serving and released every lease.
            await self.leases.run(rt.stop)
        finally:
            with contextlib.suppress(Exception):
                await opener.unsubscribe()
            if self.owned:
                await self._on_lose({lease_name(p) for p in self.owned}, "stopping")
            if self.inflight:
                await asyncio.wait(self.inflight, timeout=10)
            await matches

    def partition(self, game_id: str) -> int:
        """Return the partition of a game."""
        return partition_of(game_id, self.settings.table_partitions)

    def fence(self, game_id: str) -> Fence | None:
        """Return the fence to append to ``game_id`` under, None if this replica may not."""
        return self.leases.fence(lease_name(self.partition(game_id)))

    async def _on_gain(self, fences: Mapping[str, Fence]) -> None:
        """Serve newly leased partitions: subscribe, then load their live games and timers."""
        gained = {int(name.rsplit("/", 1)[1]) for name in fences}
        for partition in sorted(gained):
            if partition not in self.owned:
                self.owned[partition] = await self.rt.nc.subscribe(
                    self.rt.subjects.table_partition_commands(partition),
                    cb=self._spawn(self.on_command),
                )
        self.log.info("partitions claimed", partitions=sorted(gained), owned=len(self.owned))
        ops.PARTITIONS_OWNED.set(len(self.owned))
        ops.LEASE_CHANGES.labels(event="claimed").inc(len(gained))
        # Loading the games is retried in the background until it succeeds: a take-over
        # right after a database restart meets broken connections, and a game left unloaded
        # in a partition we hold would wait for a timer nobody armed.
        task = asyncio.create_task(self._resume(gained))
        self.inflight.add(task)
        task.add_done_callback(self.inflight.discard)

    async def _on_lose(self, names: set[str], why: str) -> None:
        """Stop serving partitions at once: no subscription, no timer, no game in memory."""
        lost = {int(name.rsplit("/", 1)[1]) for name in names}
        subs = [self.owned.pop(p) for p in lost if p in self.owned]
        for game_id in [
            g for g in (*self.tables, *self.finished.tables) if self.partition(g) in lost
        ]:
            self._forget(game_id)
        for game_id in [g for g in self.timers if self.partition(g) in lost]:
            self._forget(game_id)
        ops.PARTITIONS_OWNED.set(len(self.owned))
        ops.LEASE_CHANGES.labels(event=why).inc(len(lost))
        ops.ACTIVE_GAMES.set(sum(1 for t in self.tables.values() if not t.over))
        self.log.info("partitions given up", partitions=sorted(lost), why=why)
        for sub in subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    def _forget(self, game_id: str) -> None:
        timer = self.timers.pop(game_id, None)
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()
        self.tables.pop(game_id, None)
        self.retries.pop(game_id, None)
        self.faulted.pop(game_id, None)
        self.bots.asked.pop(game_id, None)
        if game_id in self.finished.tables:
            self.finished.pop(game_id)
            self._count_finished()

    def _count_finished(self) -> None:
        ops.FINISHED_CACHE_BYTES.set(self.finished.bytes)
        ops.FINISHED_CACHE_GAMES.set(len(self.finished))

    async def _resume(self, partitions: set[int]) -> None:
        """Load the live games of newly owned partitions so their timers run again; retry
        until it is done, the partitions are gone, or the replica stops."""
        with logs.work(f"resume:{','.join(map(str, sorted(partitions)))}"):
            async for attempt in RESUME_BACKOFF.attempts(stop=self.rt.stop):
                ours = {p for p in partitions if self.leases.fence(lease_name(p)) is not None}
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
                    self.log.info("games resumed", games=resumed, partitions=sorted(ours))
                return

    async def _resume_once(self, partitions: set[int]) -> int:
        unfinished = await self.rt.store.open_streams("game", "GameFinished")
        resumed = 0
        for stream_id in unfinished:
            game_id = stream_id.removeprefix("game-")
            if self.partition(game_id) not in partitions or self.fence(game_id) is None:
                continue
            async with self._lock(game_id):
                table = await self._load(game_id, fresh=True)
                if table is not None:
                    await self._publish(table, audiences.nudge(table))
                    if not await self._restart_clock(table):
                        self._schedule(table)
                    resumed += 1
        return resumed

    async def _restart_clock(self, table: Table) -> bool:
        """Return whether the person on turn got a full turn again (`Table.clock_restart`)."""
        restart = table.clock_restart(time.time())
        if restart is not None:
            seed = f"restart:{table.game_id}:{table.version}"
            facts = Decided.facts(table.state, restart)
            await self._append(table, facts, id_seed=seed, actor="table")
            self.log.info("turn clock restarted after an outage", seconds=restart.seconds)
            self._schedule(table)
        return restart is not None

    def _spawn(
        self, handler: Callable[[Msg], Coroutine[Any, Any, None]]
    ) -> Callable[[Msg], Awaitable[None]]:
        """Return a NATS callback that runs ``handler`` as a tracked task (drained on stop)."""

        async def callback(msg: Msg) -> None:
            task = asyncio.create_task(handler(msg))
            self.inflight.add(task)
            task.add_done_callback(self.inflight.discard)

        return callback

    # -- loading and appending ------------------------------------------------------------------

    def _lock(self, game_id: str) -> asyncio.Lock:
        return self.locks.setdefault(game_id, asyncio.Lock())

    async def _load(self, game_id: str, *, fresh: bool = False) -> Table | None:
        """Return the game from memory, or rebuilt from its events; None if it has none."""
        if not fresh:
            found = self.tables.get(game_id) or self.finished.get(game_id)
            if found is not None:
                return found
        table = Table(game_id)
        for stored in await self.rt.store.read(stream_of(game_id)):
            table.fold(stored, REGISTRY.decode(stored))
        if table.opened is None or self.fence(game_id) is None:
            self.tables.pop(game_id, None)
            return None if table.opened is None else table
        if table.over:  # kept for the next reader within the cache's bytes, not for ever
            self.tables.pop(game_id, None)
            evicted = self.finished.evicted
            self.finished.put(table)
            ops.FINISHED_CACHE_EVICTIONS.inc(self.finished.evicted - evicted)
            self._count_finished()
            return table
        self.tables[game_id] = table
        ops.ACTIVE_GAMES.set(sum(1 for t in self.tables.values() if not t.over))
        return table

    async def _append(
        self,
        table: Table,
        events: Decided,
        *,
        id_seed: str,
        actor: str,
        command_id: uuid.UUID | None = None,
    ) -> None:
        """Append ``events`` after the table's version, fenced by the partition's lease, then
        fold the states their deciding computed (never the wire events back through the engine)
        and publish every audience's messages."""
        fence = self._owner_fence(table.game_id)
        states = events.after
        metadata = Metadata(
            command_id=command_id,
            correlation_id=uuid.UUID(table.game_id),
            actor=actor,
            epoch=fence.epoch,
            deadline=table.deadline_after(events, states[-1], time.time()),
        )
        new = [
            REGISTRY.new_event(event, metadata, event_id=event_id)
            for event, event_id in zip(events, event_ids(id_seed, len(events)), strict=True)
        ]
        if APPEND_DELAY:  # a test's window: the fence taken, the append not yet sent
            await asyncio.sleep(APPEND_DELAY)
        started = time.perf_counter()
        try:
            stored = await self.rt.store.append(
                stream_of(table.game_id), table.version, new, fence=fence
            )
        except ConcurrencyConflict as exc:
            ops.APPEND_LATENCY.labels(outcome="conflict").observe(time.perf_counter() - started)
            if exc.actual_version < table.version:
                # Only a database that lost committed transactions (a failover to a replica
                # that had not received them) puts the log behind what this replica applied.
                self.log.error(
                    "the log is behind this replica's memory: committed events were lost",
                    memory_version=table.version,
                    log_version=exc.actual_version,
                )
            raise
        except Fenced:
            await self._fenced_off(table.game_id)
            raise
        ops.APPEND_LATENCY.labels(outcome="ok").observe(time.perf_counter() - started)
        held, released = list(table.unreleased), table.released
        steps = []
        for s, event, after in zip(stored, events, states, strict=True):
            steps.append((s.version, event, table.state, after))
            table.fold(s, event, after)
        await self._publish(table, audiences.frame(table, steps, held, released, time.time()))

    async def _publish(self, table: Table, frame: Frame) -> None:
        """Publish what each audience is sent of a commit (core NATS, buffered: no flush per
        message). Never fails the command: a gateway that misses a frame sees the gap in the
        next one (or the nudge of a new owner) and asks for the rest."""
        if frame.last >= frame.first:
            table.recent.append(frame)
        subject = self.rt.subjects.audiences(table.game_id, self.settings.table_partitions)
        try:
            await self.rt.nc.publish(subject, FRAMES.encode(frame))
        except Exception as exc:  # NATS away: the frame is lost, the log is not
            self.log.warning("frame not published", error=type(exc).__name__)

    def _owner_fence(self, game_id: str) -> Fence:
        """Return the fence for ``game_id``; raise `Rejected` ``unavailable`` if not the owner."""
        fence = self.fence(game_id)
        if fence is None:
            raise Rejected(
                "unavailable",
                "the table serving this game is changing hands: send it again (same command id)",
            )
        return fence

    async def _fenced_off(self, game_id: str) -> None:
        """The store refused our epoch: someone else owns the partition now; stop serving it."""
        name = lease_name(self.partition(game_id))
        self.log.warning("append fenced off: the partition has a new owner", lease=name)
        await self.leases.give_up({name}, "fenced")

    # -- requests -------------------------------------------------------------------------------

    async def on_command(self, msg: Msg) -> None:
        """Answer a request on a partition's subject: a seat's command, a view, or an open."""
        try:
            request = _requests.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await self._reply(msg, wire.TableReply(ok=False, code="malformed", message=str(exc)))
            return
        if isinstance(request, OpenRequest):
            await self._reply(msg, await self._open_here(request))
            return
        if isinstance(request, wire.Catchup):
            with logs.work(None, game_id=request.game_id):
                async with self._lock(request.game_id):
                    answer = await self._catchup(request)
            if msg.reply:
                with contextlib.suppress(Exception):
                    await msg.respond(FRAMES.encode(answer))
            return
        request_id = (
            str(request.command_id)
            if isinstance(request, wire.SubmitCommand | wire.LeaveTable)
            else None
        )
        with logs.work(request_id, game_id=request.game_id):
            log = self.log.bind(player_id=request.player_id)
            async with self._lock(request.game_id):
                try:
                    reply = await self._answer(request)
                except Rejected as exc:
                    command = _command_name(request)
                    ops.COMMANDS_REJECTED.labels(command=command, reason=exc.code).inc()
                    log.info("command rejected", command=command, code=exc.code)
                    reply = wire.TableReply(
                        ok=False, code=exc.code, message=str(exc), game_id=request.game_id
                    )
                except Exception as exc:  # the database or NATS away: the sender tries again
                    reply = _unavailable(request.game_id, exc)
                    ops.COMMANDS_REJECTED.labels(
                        command=_command_name(request), reason="unavailable"
                    ).inc()
                    log.warning("command failed", error=type(exc).__name__)
            await self._reply(msg, reply)

    async def _answer(
        self, request: wire.SubmitCommand | wire.GetView | wire.LeaveTable
    ) -> wire.TableReply:
        self._owner_fence(request.game_id)
        table = await self._load(request.game_id)
        if table is None:
            raise Rejected("unknown_game", f"there is no game {request.game_id}")
        self._owner_fence(request.game_id)  # still ours after the read
        if isinstance(request, wire.GetView):
            return wire.TableReply(
                ok=True,
                game_id=table.game_id,
                version=table.version,
                view=table.view(request.player_id),
            )
        if request.command_id in table.results:
            return _answered(table, request, retry=True)
        async for _attempt in CONFLICT_BACKOFF.attempts(limit=CONFLICT_ATTEMPTS):
            if isinstance(request, wire.LeaveTable):
                events = table.leave_events(request.player_id)
            else:
                events = table.decide(request.player_id, request.command)
            try:
                await self._append(
                    table,
                    events,
                    id_seed=str(request.command_id),
                    actor=request.player_id,
                    command_id=request.command_id,
                )
            except Fenced:
                raise Rejected(
                    "unavailable", "the table serving this game changed hands: send it again"
                ) from None
            except ConcurrencyConflict:
                # another writer moved the game on: rebuild it and judge the command again
                reloaded = await self._load(request.game_id, fresh=True)
                if reloaded is None:
                    raise Rejected("unknown_game", f"there is no game {request.game_id}") from None
                table = reloaded
                self._schedule(table)  # whatever the command's fate, the game's timer runs on
                if request.command_id in table.results:
                    return _answered(table, request, retry=True)
                continue
            break
        else:
            raise Rejected("conflict", "the game moved on three times; send the command again")
        ops.COMMANDS_HANDLED.labels(command=_command_name(request)).inc()
        self.log.debug(
            "command applied",
            command=_command_name(request),
            player_id=request.player_id,
            version=table.version,
        )
        self._schedule(table)
        return _answered(table, request, retry=False)

    async def _catchup(self, request: wire.Catchup) -> CatchupReply:
        """Answer a gateway: the view or the messages after a seq, the turn and the clock."""
        try:
            self._owner_fence(request.game_id)
            table = await self._load(request.game_id)
        except Rejected as exc:
            return CatchupReply(ok=False, code=exc.code, message=str(exc))
        except Exception as exc:  # the database away: the gateway asks again
            self.log.warning("catch-up failed", error=type(exc).__name__)
            return CatchupReply(ok=False, code="unavailable", message="the table could not read")
        if table is None or table.opened is None:
            return CatchupReply(ok=False, code="unknown_game", message="no such game")
        seat = table.seat_of(request.player_id)
        seat = -1 if seat is None else seat
        after = request.after
        if after is not None and after > table.version:
            return CatchupReply(
                ok=False, code="malformed", message=f"last_seq {after} is past the last event"
            )
        if request.hints and seat >= 0 and wire.hints_allowed(table.opened):
            await self.bots.hint(table, seat)
        upto = table.version if seat >= 0 else table.released
        messages: tuple[bytes, ...] = ()
        if after is not None and after < upto:
            found = audiences.recent_messages(table, seat, after)
            key = (table.game_id, seat, after, upto)
            if found is None:
                found = self.catchups.get(key)
            if found is None:  # beyond the frames kept: fold the log once, keep the answer
                stored = await self.rt.store.read(stream_of(table.game_id))
                found = audiences.replayed_messages(table.game_id, stored, seat, after, upto)
                self.catchups.put(key, found)
            messages = found
        return CatchupReply(
            ok=True,
            version=table.version,
            released=table.released,
            seat=seat,
            players=table.players,
            view=audiences.view_message(table, request.player_id) if after is None else b"",
            messages=messages,
            turn=audiences.turn_message(table, seat, hints=request.hints),
            clock=audiences.clock_message(table, time.time()),
            hints=wire.hints_allowed(table.opened),
            unlisted=table.opened.unlisted,
        )

    async def on_open(self, msg: Msg) -> None:
        """Open an unrated table (practice or casual) on the replica owning its partition."""
        try:
            request = _requests.decode(msg.data)
            if not isinstance(request, wire.OpenPractice | wire.OpenCasual):
                raise msgspec.ValidationError("expected an OpenPractice or OpenCasual request")
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await self._reply(msg, wire.TableReply(ok=False, code="malformed", message=str(exc)))
            return
        await self._reply(msg, await self._open_at_owner(request))

    async def on_match_found(self, conn: Conn, received: Received) -> None:
        """Turn a MatchFound into a rated game (idempotent: its id comes from the match)."""
        match = received.payload
        request = wire.OpenMatch(match_id=match.match_id, ladder=match.ladder, seats=match.seats)
        try:
            ruleset_of(match.ladder)
        except UnknownLadder as exc:
            raise Unprocessable(str(exc)) from None
        # The consumer bound the event id as request_id; the game is known only from here on.
        with bound_ids(game_id=game_id_of_match(match.match_id)):
            reply = await self._open_at_owner(request)
        if not reply.ok:  # no owner reachable yet: the consumer retries with a growing delay
            raise RuntimeError(f"could not open the match's game: {reply.code}")

    async def _open_at_owner(self, request: OpenRequest) -> wire.TableReply:
        """Open here if this replica owns the game's partition, else ask the owner to."""
        try:
            game_id, _how = opening_of(request)
        except Rejected as exc:
            return wire.TableReply(ok=False, code=exc.code, message=str(exc))
        if self.fence(game_id) is not None:
            return await self._open_here(request)
        subject = self.rt.subjects.table_command(game_id, self.settings.table_partitions)
        body = _encoder.encode(request)
        reply: wire.TableReply | None = None
        async for attempt in FORWARD_BACKOFF.attempts(within=FORWARD_WITHIN):
            if attempt > 1 and self.fence(game_id) is not None:  # the partition came to us
                return await self._open_here(request)
            try:
                reply = _reply.decode((await self.rt.nc.request(subject, body, timeout=3)).data)
            except Exception as exc:  # nobody owns it this instant (a failover), or NATS away
                reply = _unavailable(game_id, exc)
            if reply.code != "unavailable":
                return reply
        assert reply is not None
        return reply

    async def _open_here(self, request: OpenRequest) -> wire.TableReply:
        """Open the requested game as its partition's owner; refuse if this replica is not."""
        try:
            game_id, how = opening_of(request)
        except Rejected as exc:
            return wire.TableReply(ok=False, code=exc.code, message=str(exc))
        request_id = None if isinstance(request, wire.OpenMatch) else str(request.command_id)
        with logs.work(request_id, game_id=game_id):
            try:
                await self._open(game_id, **how)
            except Rejected as exc:
                return wire.TableReply(ok=False, code=exc.code, message=str(exc), game_id=game_id)
            except Exception as exc:
                self.log.warning("open failed", error=type(exc).__name__)
                return _unavailable(game_id, exc)
        return wire.TableReply(ok=True, game_id=game_id, version=1)

    async def _open(self, game_id: str, **how: Any) -> None:
        # committed deals (docs/FAIRNESS.md): every seat not played by a bot may contribute
        window = self.settings.contribution_seconds > 0
        humans = tuple(s for s in range(len(how["players"])) if s not in how["bots"])
        async with self._lock(game_id):
            fence = self._owner_fence(game_id)
            how.setdefault("turn_seconds", self.settings.turn_seconds)  # 0: untimed practice
            events = opening_events(
                game_id,
                seed=0,
                server_seed=secrets.token_hex(32),
                contributors=humans if window else (),
                **how,
            )
            metadata = Metadata(
                correlation_id=uuid.UUID(game_id),
                actor="table",
                epoch=fence.epoch,
                deadline=Table(game_id).deadline_after(events, events.after[-1], time.time()),
            )
            new = [
                REGISTRY.new_event(e, metadata, event_id=i)
                for e, i in zip(events, event_ids(f"open:{game_id}", len(events)), strict=True)
            ]
            try:
                await self.rt.store.append(stream_of(game_id), 0, new, fence=fence)
                self.log.info("game opened", ladder=how["ladder"], rated=how["rated"])
            except ConcurrencyConflict:
                pass  # opened already (a retry or a redelivered MatchFound)
            except Fenced:
                await self._fenced_off(game_id)
                raise Rejected("unavailable", "the table changed hands: send it again") from None
            table = await self._load(game_id, fresh=True)
            if table is not None:
                self._schedule(table)
                await self._publish(table, audiences.nudge(table))  # a match's waiters look

    async def _reply(self, msg: Msg, reply: wire.TableReply) -> None:
        if msg.reply:
            with contextlib.suppress(Exception):  # NATS away: the asker times out and retries
                await msg.respond(_encoder.encode(reply))

    # -- timers and bots ------------------------------------------------------------------------

    def _schedule(self, table: Table, *, delay: float | None = None) -> None:
        """(Re)arm the game's one timer: a bot's move, or the turn timer of a person."""
        old = self.timers.pop(table.game_id, None)
        if old is not None and old is not asyncio.current_task():
            old.cancel()
        seat = table.seat_to_act()
        if seat is None and table.seeding:  # hand 1 waits for the contributions, not for ever
            if self.fence(table.game_id) is not None:
                wait = self._window() if delay is None else delay
                self.timers[table.game_id] = asyncio.create_task(
                    self._fire(table.game_id, table.version, -1, False, wait)
                )
            return
        if seat is None:
            if table.over:
                self._forget(table.game_id)
                ops.ACTIVE_GAMES.set(sum(1 for t in self.tables.values() if not t.over))
            return
        if self.fence(table.game_id) is None:
            return
        is_bot = seat in table.bot_seats()
        if not is_bot and table.untimed:
            # an untimed table: the person takes as long as he likes, but a table nobody acts
            # at closes SPADES_UNTIMED_IDLE_SECONDS after its last event (restarts included)
            if delay is None:
                idle = self.settings.untimed_idle_seconds
                delay = max(0.0, table.last_recorded + idle - time.time())
            self.timers[table.game_id] = asyncio.create_task(
                self._fire(table.game_id, table.version, seat, False, delay, idle=True)
            )
            return
        if delay is None:
            # a person's timer runs to the deadline the log recorded (and every watcher was
            # told); a game recorded before deadlines were: a full turn from now
            recorded = table.deadline - time.time() if table.deadline > 0 else None
            delay = self.bot_delay if is_bot else recorded
            if delay is None:
                delay = self.settings.turn_seconds
            delay = max(0.0, delay)
        self.timers[table.game_id] = asyncio.create_task(
            self._fire(table.game_id, table.version, seat, is_bot, delay)
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
        table = self.tables.get(game_id)
        self.log.warning(
            "timer failed, retrying", error=type(exc).__name__, attempt=attempt + 1, delay=delay
        )
        if table is not None and self.fence(game_id) is not None:
            self._schedule(table, delay=delay)

    async def _act_for(
        self, game_id: str, version: int, seat: int, is_bot: bool, *, idle: bool = False
    ) -> None:
        """Play the bot's move, time the seat out, or close an idle untimed table (``idle``),
        unless somebody acted in time."""
        move = None
        if seat >= 0 and not idle:
            table = self.tables.get(game_id)
            if table is None or table.version != version or self.rt.stop.is_set():
                return  # somebody acted in time
            # Outside the game's lock: the bot tier thinks while the table serves; the move
            # is played below only if the game is still where it was asked about.
            move = await self.bots.move(table, seat)
        async with self._lock(game_id):
            table = self.tables.get(game_id)
            if table is None or table.version != version or self.rt.stop.is_set():
                return  # somebody acted in time
            if self.fence(game_id) is None:
                return  # the partition is no longer ours
            if self.timers.get(game_id) is asyncio.current_task():
                del self.timers[game_id]
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
                    if self.faulted.get(game_id) == version and await self._restart_clock(table):
                        self.retries.pop(game_id, None)
                        return  # the timer failed at the deadline: a full turn again instead
                    events = table.timeout_events(seat, self.settings.abandon_streak, move)
                    actor = TIMEOUT_ACTOR
                    self.log.info("turn timed out", seat=seat)
                await self._append(table, events, id_seed=f"{game_id}:{version}", actor=actor)
            except Fenced:
                return  # another replica owns the game now and drives it
            except ConcurrencyConflict:
                reloaded = await self._load(game_id, fresh=True)
                if reloaded is None:
                    return
                table = reloaded
            except Rejected as exc:  # a bot must never be refused: that is a bug to see
                self.log.error("bot move refused", seat=seat, code=exc.code)
                return
            self.retries.pop(game_id, None)
            self.log.debug("seat acted for", seat=seat, actor=actor, version=table.version)
            self._schedule(table)

    def _window(self) -> float:
        """Return the seconds hand 1 waits for contributions (never more than a turn)."""
        return min(self.settings.contribution_seconds, self.settings.turn_seconds)


def _unavailable(game_id: str, exc: BaseException) -> wire.TableReply:
    return wire.TableReply(
        ok=False,
        code="unavailable",
        message=f"the table could not answer ({type(exc).__name__}): send it again",
        game_id=game_id,
    )


def _command_name(request: wire.SubmitCommand | wire.GetView | wire.LeaveTable) -> str:
    command = request.command if isinstance(request, wire.SubmitCommand) else request
    return type(command).__name__


def _answered(
    table: Table, request: wire.SubmitCommand | wire.LeaveTable, *, retry: bool
) -> wire.TableReply:
    """Return the answer to an applied command (``retry``: applied before, by this id)."""
    version = table.results.get(request.command_id, table.version)
    code = _left_code(table, request)
    return wire.TableReply(ok=True, code=code, game_id=table.game_id, version=version, retry=retry)


def _left_code(table: Table, request: wire.SubmitCommand | wire.LeaveTable) -> str:
    """Return what an accepted `LeaveTable` did (a reply's ``code``), "" for a seat command."""
    if not isinstance(request, wire.LeaveTable):
        return ""
    if table.opened is not None and table.opened.rated:
        return wire.LEFT_RESIGNED
    return wire.LEFT_CLOSED if table.over else wire.LEFT_BOT


async def main(rt: Runtime) -> None:
    """Run one table replica until ``rt.stop``."""
    import events.contracts.matchmaking  # noqa: F401  (registers MatchFound, which this service consumes)

    talk.check()  # a bad SPADES_TALK_* setting or word file stops the replica at its start
    await TableService(rt).run()
