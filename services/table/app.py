"""The table service: owns game streams, validates every command through the engine, appends.

Ownership. Games hash into ``table_partitions`` partitions. A replica owns a partition while
it holds that partition's PostgreSQL advisory lock on a connection of its own, and only then
subscribes to the partition's command subject and runs its games' timers. When a replica dies
its connection drops, PostgreSQL releases the locks, and another replica takes the partitions
over within `CLAIM_INTERVAL`, rebuilding each live game from its events. Should two replicas
ever both believe they own a game (a network split), the store's expected version still lets
only one append win: games never fork.

Handlers are thin: decode, load, `Table.decide` (the engine), append, answer.

Logs: a command logs under its command id as `request_id` with its `game_id`; a timer or bot
move under `timer:<game_id>:<version>`; a MatchFound under its event id (the consumer binds
it). Lines name the command's type and the seat, never a card or the seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import msgspec
import structlog
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

import engine
from events import game as wire
from events.consumer import Received, Unprocessable
from events.envelope import REGISTRY, Metadata
from events.pgstore import Conn
from events.store import ConcurrencyConflict
from events.subjects import partition_of
from services import logs, ops
from services.ladders import UnknownLadder, ruleset_of
from services.runtime import Runtime
from services.table.tables import (
    BOT_ACTOR,
    TIMEOUT_ACTOR,
    Rejected,
    Table,
    event_ids,
    game_id_of_match,
    opening_events,
    stream_of,
)

CLAIM_INTERVAL = 1.0  # seconds between attempts to claim unowned partitions
LOCK_SPACE = 0x5ADE5  # first key of the two-key advisory locks of table partitions
BOT_DELAY = 0.0  # seconds a bot "thinks" before it plays (a UI may want ~0.5)

_requests = msgspec.json.Decoder(wire.AnyTableRequest)
_encoder = msgspec.json.Encoder()


class TableService:
    """One replica of the table service."""

    def __init__(self, rt: Runtime, *, bot_delay: float = BOT_DELAY) -> None:
        self.rt = rt
        self.settings = rt.settings
        self.log = rt.log
        self.bot_delay = bot_delay
        self.tables: dict[str, Table] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.timers: dict[str, asyncio.Task[None]] = {}
        self.owned: dict[int, Subscription] = {}
        self.inflight: set[asyncio.Task[Any]] = set()

    # -- lifecycle ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve until ``rt.stop`` is set, then finish in-flight work and let go."""
        rt = self.rt
        lock_conn: asyncpg.Connection = await asyncpg.connect(self.settings.database_url)
        opener = await rt.nc.subscribe(
            rt.subjects.table_open(),
            queue=rt.subjects.table_queue_group(),
            cb=self._spawn(self.on_open),
        )
        matches = asyncio.create_task(
            rt.consume("table-matches", rt.subjects.match_found(), self.on_match_found)
        )
        try:
            while not rt.stop.is_set():
                await self._claim_partitions(lock_conn)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(rt.stop.wait(), CLAIM_INTERVAL)
        finally:
            await opener.unsubscribe()
            for sub in self.owned.values():
                await sub.unsubscribe()
            for timer in self.timers.values():
                timer.cancel()
            if self.inflight:
                await asyncio.wait(self.inflight, timeout=10)
            await matches
            await lock_conn.close()  # releases every partition lock

    async def _claim_partitions(self, conn: asyncpg.Connection) -> None:
        claimed: set[int] = set()
        for partition in range(self.settings.table_partitions):
            if partition in self.owned:
                continue
            got = await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", LOCK_SPACE, partition)
            if not got:
                continue
            self.owned[partition] = await self.rt.nc.subscribe(
                self.rt.subjects.table_partition_commands(partition),
                cb=self._spawn(self.on_command),
            )
            claimed.add(partition)
        if claimed:
            self.log.info("partitions claimed", partitions=sorted(claimed))
            await self._resume(claimed)

    async def _resume(self, partitions: set[int]) -> None:
        """Load the live games of newly owned partitions so their timers run again."""
        rows = await self.rt.pool.fetch(
            "SELECT s.stream_id FROM spades_streams s WHERE s.stream_id LIKE 'game-%'"
            " AND NOT EXISTS (SELECT 1 FROM spades_events e WHERE e.stream_id = s.stream_id"
            " AND e.type = 'GameFinished')"
        )
        for row in rows:
            game_id = row["stream_id"].removeprefix("game-")
            if partition_of(game_id, self.settings.table_partitions) not in partitions:
                continue
            async with self._lock(game_id):
                table = await self._load(game_id, fresh=True)
                if table is not None:
                    self._schedule(table)

    def _spawn(self, handler: Callable[[Msg], Awaitable[None]]) -> Callable[[Msg], Awaitable[None]]:
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
        if not fresh and game_id in self.tables:
            return self.tables[game_id]
        table = Table(game_id)
        for stored in await self.rt.store.read(stream_of(game_id)):
            table.fold(stored, REGISTRY.decode(stored))
        if table.opened is None:
            self.tables.pop(game_id, None)
            return None
        self.tables[game_id] = table
        ops.ACTIVE_GAMES.set(sum(1 for t in self.tables.values() if not t.over))
        return table

    async def _append(
        self,
        table: Table,
        events: list[wire.GameEvent],
        *,
        id_seed: str,
        actor: str,
        command_id: uuid.UUID | None = None,
    ) -> None:
        """Append ``events`` after the table's version and fold them in."""
        metadata = Metadata(
            command_id=command_id, correlation_id=uuid.UUID(table.game_id), actor=actor
        )
        new = [
            REGISTRY.new_event(event, metadata, event_id=event_id)
            for event, event_id in zip(events, event_ids(id_seed, len(events)), strict=True)
        ]
        started = time.perf_counter()
        try:
            stored = await self.rt.store.append(stream_of(table.game_id), table.version, new)
        except ConcurrencyConflict:
            ops.APPEND_LATENCY.labels(outcome="conflict").observe(time.perf_counter() - started)
            raise
        ops.APPEND_LATENCY.labels(outcome="ok").observe(time.perf_counter() - started)
        for s, event in zip(stored, events, strict=True):
            table.fold(s, event)

    # -- requests -------------------------------------------------------------------------------

    async def on_command(self, msg: Msg) -> None:
        """Answer a seat's command: the events' version, or the rule it breaks."""
        try:
            request = _requests.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await self._reply(msg, wire.TableReply(ok=False, code="malformed", message=str(exc)))
            return
        if not isinstance(request, wire.SubmitCommand | wire.GetView):
            await self._reply(
                msg, wire.TableReply(ok=False, code="malformed", message="not a game request")
            )
            return
        request_id = str(request.command_id) if isinstance(request, wire.SubmitCommand) else None
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
            await self._reply(msg, reply)

    async def _answer(self, request: wire.SubmitCommand | wire.GetView) -> wire.TableReply:
        table = await self._load(request.game_id)
        if table is None:
            raise Rejected("unknown_game", f"there is no game {request.game_id}")
        if isinstance(request, wire.GetView):
            return wire.TableReply(
                ok=True,
                game_id=table.game_id,
                version=table.version,
                view=table.view(request.player_id),
            )
        if request.command_id in table.results:
            return wire.TableReply(
                ok=True,
                game_id=table.game_id,
                version=table.results[request.command_id],
                retry=True,
            )
        for _attempt in range(3):
            events = table.decide(request.player_id, request.command)
            try:
                await self._append(
                    table,
                    events,
                    id_seed=str(request.command_id),
                    actor=request.player_id,
                    command_id=request.command_id,
                )
            except ConcurrencyConflict:
                # another writer moved the game on: rebuild it and judge the command again
                reloaded = await self._load(request.game_id, fresh=True)
                if reloaded is None:
                    raise Rejected("unknown_game", f"there is no game {request.game_id}") from None
                table = reloaded
                if request.command_id in table.results:
                    version = table.results[request.command_id]
                    return wire.TableReply(
                        ok=True, game_id=table.game_id, version=version, retry=True
                    )
                continue
            break
        else:
            raise Rejected("conflict", "the game moved on three times; send the command again")
        ops.COMMANDS_HANDLED.labels(command=type(request.command).__name__).inc()
        self.log.debug(
            "command applied",
            command=type(request.command).__name__,
            player_id=request.player_id,
            version=table.version,
        )
        self._schedule(table)
        return wire.TableReply(
            ok=True,
            game_id=table.game_id,
            version=table.results.get(request.command_id, table.version),
            retry=False,
        )

    async def on_open(self, msg: Msg) -> None:
        """Open an unrated table: practice (the asker and bots) or casual (named players)."""
        try:
            request = _requests.decode(msg.data)
            if not isinstance(request, wire.OpenPractice | wire.OpenCasual):
                raise msgspec.ValidationError("expected an OpenPractice or OpenCasual request")
            rules = engine.Ruleset.from_options(dict(request.rules))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await self._reply(msg, wire.TableReply(ok=False, code="malformed", message=str(exc)))
            return
        except engine.InvalidRuleset as exc:
            await self._reply(
                msg, wire.TableReply(ok=False, code="invalid_ruleset", message=str(exc))
            )
            return
        if isinstance(request, wire.OpenPractice):
            kind = "practice"
            players = (request.player_id, *(f"bot:{seat}" for seat in range(1, rules.players)))
            bots = tuple(range(1, rules.players))
        else:
            kind, players, bots = "casual", request.players, ()
        if len(set(players)) != len(players):
            await self._reply(
                msg,
                wire.TableReply(ok=False, code="malformed", message="a player can sit only once"),
            )
            return
        game_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{kind}:{request.command_id}"))
        with logs.work(str(request.command_id), game_id=game_id):
            try:
                await self._open(
                    game_id, ladder=kind, rated=False, players=players, bots=bots, rules=rules
                )
            except Rejected as exc:
                await self._reply(msg, wire.TableReply(ok=False, code=exc.code, message=str(exc)))
                return
            await self._reply(msg, wire.TableReply(ok=True, game_id=game_id, version=1))

    async def on_match_found(self, conn: Conn, received: Received) -> None:
        """Turn a MatchFound into a rated game (idempotent: its id comes from the match)."""
        match = received.payload
        try:
            rules = ruleset_of(match.ladder)
        except UnknownLadder as exc:
            raise Unprocessable(str(exc)) from None
        game_id = game_id_of_match(match.match_id)
        # The consumer bound the event id as request_id; the game is known only from here on.
        with structlog.contextvars.bound_contextvars(game_id=game_id):
            await self._open(
                game_id,
                ladder=match.ladder,
                rated=True,
                players=tuple(match.seats),
                bots=(),
                rules=rules,
                match_id=match.match_id,
            )

    async def _open(self, game_id: str, **how: Any) -> None:
        events = opening_events(
            game_id, seed=secrets.randbits(63), turn_seconds=self.settings.turn_seconds, **how
        )
        metadata = Metadata(correlation_id=uuid.UUID(game_id), actor="table")
        new = [
            REGISTRY.new_event(e, metadata, event_id=i)
            for e, i in zip(events, event_ids(f"open:{game_id}", len(events)), strict=True)
        ]
        try:
            await self.rt.store.append(stream_of(game_id), 0, new)
        except ConcurrencyConflict:
            return  # opened already (a retry or a redelivered MatchFound)
        self.log.info("game opened", ladder=how["ladder"], rated=how["rated"])
        if partition_of(game_id, self.settings.table_partitions) in self.owned:
            async with self._lock(game_id):
                table = await self._load(game_id, fresh=True)
                if table is not None:
                    self._schedule(table)

    async def _reply(self, msg: Msg, reply: wire.TableReply) -> None:
        if msg.reply:
            await msg.respond(_encoder.encode(reply))

    # -- timers and bots ------------------------------------------------------------------------

    def _schedule(self, table: Table) -> None:
        """(Re)arm the game's one timer: a bot's move, or the turn timer of a person."""
        old = self.timers.pop(table.game_id, None)
        if old is not None and old is not asyncio.current_task():
            old.cancel()
        seat = table.seat_to_act()
        if seat is None:
            if table.over:
                self.tables.pop(table.game_id, None)
                ops.ACTIVE_GAMES.set(sum(1 for t in self.tables.values() if not t.over))
            return
        if partition_of(table.game_id, self.settings.table_partitions) not in self.owned:
            return
        is_bot = seat in table.bot_seats()
        delay = self.bot_delay if is_bot else self.settings.turn_seconds
        self.timers[table.game_id] = asyncio.create_task(
            self._fire(table.game_id, table.version, seat, is_bot, delay)
        )

    async def _fire(
        self, game_id: str, version: int, seat: int, is_bot: bool, delay: float
    ) -> None:
        await asyncio.sleep(delay)
        # The timer task was armed inside some command's context: log under its own id.
        with logs.work(f"timer:{game_id}:{version}", game_id=game_id):
            await self._act_for(game_id, version, seat, is_bot)

    async def _act_for(self, game_id: str, version: int, seat: int, is_bot: bool) -> None:
        """Play the bot's move, or time the seat out, unless somebody acted in time."""
        async with self._lock(game_id):
            table = self.tables.get(game_id)
            if table is None or table.version != version or self.rt.stop.is_set():
                return  # somebody acted in time
            if self.timers.get(game_id) is asyncio.current_task():
                del self.timers[game_id]
            try:
                if is_bot:
                    events = table.bot_events(seat)
                    actor = BOT_ACTOR
                else:
                    events = table.timeout_events(seat, self.settings.abandon_streak)
                    actor = TIMEOUT_ACTOR
                    self.log.info("turn timed out", seat=seat)
                await self._append(table, events, id_seed=f"{game_id}:{version}", actor=actor)
            except ConcurrencyConflict:
                table = await self._load(game_id, fresh=True)
                if table is None:
                    return
            except Rejected as exc:  # a bot must never be refused: that is a bug to see
                self.log.error("bot move refused", seat=seat, code=exc.code)
                return
            self.log.debug("seat acted for", seat=seat, actor=actor, version=table.version)
            self._schedule(table)


def _command_name(request: wire.SubmitCommand | wire.GetView) -> str:
    return type(request.command).__name__ if isinstance(request, wire.SubmitCommand) else "GetView"


async def main(rt: Runtime) -> None:
    """Run one table replica until ``rt.stop``."""
    import events.matchmaking  # noqa: F401  (registers MatchFound, which this service consumes)

    await TableService(rt).run()
