"""The matchmaking service: ladder queues in, MatchFound out; state rebuilt from its own log.

    cmd.matchmaking.join|leave|status ──▶ Matchmaker ──▶ queue-<ladder> stream (PostgreSQL)
    every PAIRING_INTERVAL: pair() per ladder ──▶ MatchFound appended to the same stream
    relay ──▶ ev.queue.<ladder>.MatchFound ──▶ table service opens the game
    ev.game.*.GameFinished ──▶ players leave the live-games read model
    ev.rating.*.RatingsUpdated ──▶ matchmaking's own rating projection (ev.season.*.SeasonEnded:
        a soft reset of it)

State: each ladder's queue is the fold of its stream (`events.contracts.matchmaking.fold_queue`),
rebuilt at every start: a restart or a kill -9 loses nobody. Every change is one append at the
stream's expected version; a MatchFound removes its players from the queue in the same append that
announces the match, and inserts them into `matchmaking_live_players` in the same transaction, so a
player is never both queued and seated, nor seated twice.

Partitioned by ladder: each ladder's queue is served by the replica holding the lease
``matchmaking/<ladder>`` (`events.leases`, shared out among the live replicas like the table's
partitions). Only that owner subscribes to the ladder's own subjects
(`Subjects.ladder_join`/`ladder_leave`), keeps its queue in memory and pairs it. Every replica
answers the public subjects in one queue group: a join is forwarded to its ladder's owner, a leave
to the owner of the ladder the player waits in, and a status is answered from the database by
whichever replica got it. While a ladder changes hands a forwarded request is retried for a few
seconds (then ``unavailable``). Every append is fenced by the ladder lease's epoch, so an owner
that lost its lease (a database restart, a pause) is refused by the store instead of writing beside
the new owner; it stops serving when its lease runs out, rebuilds the queue when it gains the lease
again, and never exits for a database restart. Within one ladder an asyncio lock orders requests
and pairing rounds, so the in-memory queue and the stream never disagree. Every replica consumes
GameFinished and RatingsUpdated (exactly once).

Rules: a player is in at most one queue (`matchmaking_queued_players`, written in the append's
transaction: its primary key holds across ladders served by different replicas), and cannot queue
while seated in a live ranked game (set by MatchFound, cleared by that ladder's GameFinished).
Ranked games never seat bots. A player queues with his rating from the projection of
RatingsUpdated, inactivity decay applied. Fair play: he queues with the accounts the gateway links
to his (`JoinQueue.avoid`), and pairing never seats him with any of them (`pairing.Waiting.avoid`).

Snapshots: every `SNAPSHOT_EVERY` events the owner writes the queue's waiting list with the
stream's version (`matchmaking_queue_snapshots`, migration 12) in the transaction of that append,
so a start, a take-over or a rebuild after a conflict reads the snapshot and at most about
`SNAPSHOT_EVERY` events after it, however long the stream has grown. Answers are
`events.contracts.matchmaking.Reply`: ok, a machine code, a human message, details. Refusals
(malformed, unknown_ladder, bot_not_allowed, playban: `services.matchmaking.playbans`,
already_queued, in_game, not_queued, stale: `services.matchmaking.freshness`, unavailable)
append nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import asyncpg
import msgspec
from nats.aio.msg import Msg

from events.contracts.game import game_id_of_match
from events.contracts.ladders import UnknownLadder, configured, ruleset_of
from events.contracts.matchmaking import (
    JoinQueue,
    LeaveQueue,
    MatchFound,
    MatchmakingEvent,
    PlayerLeftQueue,
    PlayerQueued,
    QueueStatus,
    Reply,
    fold_queue,
    queue_stream,
)
from events.contracts.skill import Rating, decayed
from events.envelope import REGISTRY, Metadata
from events.leases import LeaseGroup, member_id
from events.pgstore import PostgresEventStore, append_with
from events.retry import Backoff
from events.store import ConcurrencyConflict, Fence
from services.matchmaking import playbans
from services.matchmaking.freshness import Freshness
from services.matchmaking.pairing import Waiting, pair, seats_of, window
from services.matchmaking.readmodels import (
    LIVE_SQL,
    QUEUED_SQL,
    AlreadyQueued,
    game_finished,
    keep_members,
    ratings_updated,
    season_ended,
    status,
)
from services.runtime import logs, ops
from services.runtime.service import Runtime

__all__ = ["LEASE", "Matchmaker", "lease_of", "main", "seats_of"]

LEASE = "matchmaking"  # the lease group; one lease per ladder, `matchmaking/<ladder>`
PAIRING_INTERVAL = 0.5  # seconds between pairing rounds
FORWARD_WITHIN = 15.0  # seconds a request keeps looking for its ladder's owner (a handover)
FORWARD_BACKOFF = Backoff(first=0.05, factor=2.0, most=1.0, jitter=0.2)
STOP_WAIT = 2.0  # seconds a handed-over ladder waits for its request in flight
GAMES_CONSUMER = "matchmaking-games"
RATINGS_CONSUMER, SEASONS_CONSUMER = "matchmaking-ratings", "matchmaking-seasons"
MAX_PLAYER_ID = 200
SNAPSHOT_EVERY = 100
"""Events of a queue stream between two snapshots of its waiting list (see the docstring)."""
_snapshot = msgspec.json.Decoder(list[PlayerQueued])
BOT_PREFIX = "bot:"  # how a table names a seat played by a bot (events.contracts.game.TableOpened)

_encoder = msgspec.json.Encoder()
_join = msgspec.json.Decoder(JoinQueue)
_leave = msgspec.json.Decoder(LeaveQueue)
_status = msgspec.json.Decoder(QueueStatus)
_reply = msgspec.json.Decoder(Reply)


def _refuse(code: str, message: str) -> Reply:
    return Reply(ok=False, code=code, message=message)


def lease_of(ladder: str) -> str:
    """Return the name of the lease whose holder serves ``ladder``'s queue."""
    return f"{LEASE}/{ladder}"


def ladder_of_lease(name: str) -> str:
    """Return the ladder a lease name (`matchmaking/<ladder>`) stands for."""
    return name.removeprefix(f"{LEASE}/")


def _already_queued(player: str, ladder: str) -> Reply:
    return Reply(
        ok=False,
        code="already_queued",
        ladder=ladder,
        message=f"{player} is already waiting in the {ladder} queue",
    )


class Matchmaker:
    """The queues of the ladders this replica owns: folded from their streams, changed only
    by fenced appends."""

    def __init__(
        self,
        store: PostgresEventStore,
        pool: asyncpg.Pool,
        log: Any,
        fence: Callable[[str], Fence | None] | None = None,
    ) -> None:
        self._store = store
        self._pool = pool
        self._log = log
        self._fence = fence
        self.queues: dict[str, dict[str, PlayerQueued]] = {}
        self.versions: dict[str, int] = {}
        self.snapshots: dict[str, int] = {}
        """The version of each served ladder's last snapshot."""
        self.loaded_events: dict[str, int] = {}
        """Events each ladder's last rebuild read from its stream (after its snapshot)."""
        self.locks: dict[str, asyncio.Lock] = {ladder: asyncio.Lock() for ladder in configured()}
        self.fresh = Freshness()  # a late copy of a resent request changes nothing

    async def load(self, ladder: str | None = None) -> None:
        """Rebuild the queue of `ladder` (default: every ladder) from its stream, and the
        ladder's rows of `matchmaking_queued_players` from that queue."""
        for name in [ladder] if ladder else list(configured()):
            snapshot = await self._pool.fetchrow(
                "SELECT version, waiting FROM matchmaking_queue_snapshots WHERE ladder = $1", name
            )
            since = snapshot["version"] if snapshot else 0
            base = (
                {q.player_id: q for q in _snapshot.decode(snapshot["waiting"])} if snapshot else {}
            )
            stored = await self._store.read(queue_stream(name), from_version=since + 1)
            queue = fold_queue((REGISTRY.decode(e) for e in stored), base)
            async with self._pool.acquire() as conn, conn.transaction():
                await conn.execute(
                    "DELETE FROM matchmaking_queued_players"
                    " WHERE ladder = $1 AND NOT (player_id = ANY($2::text[]))",
                    name,
                    list(queue),
                )
                await conn.executemany(
                    "INSERT INTO matchmaking_queued_players (player_id, ladder, joined_at)"
                    " VALUES ($1, $2, $3) ON CONFLICT (player_id) DO NOTHING",
                    [(q.player_id, name, q.joined_at) for q in queue.values()],
                )
            self.queues[name] = queue
            self.versions[name] = stored[-1].version if stored else since
            self.snapshots[name] = since
            self.loaded_events[name] = len(stored)
            ops.QUEUE_SIZE.labels(name).set(len(queue))
            self._log.info(
                "queue rebuilt",
                ladder=name,
                version=self.versions[name],
                waiting=len(queue),
                snapshot=since,
                read=len(stored),
            )

    def drop(self, ladder: str) -> None:
        """Forget a ladder's queue: another replica serves it now."""
        self.queues.pop(ladder, None)
        self.versions.pop(ladder, None)

    def ladder_of(self, player_id: str) -> str | None:
        """Return the ladder (of those served here) whose queue holds `player_id`, if any."""
        for ladder, queue in self.queues.items():
            if player_id in queue:
                return ladder
        return None

    async def _append(
        self, ladder: str, new: list[MatchmakingEvent], metadata: Metadata | None = None
    ) -> None:
        """Append `new` to the ladder's stream, and in the same transaction keep the queued
        and live players of its events (raise AlreadyQueued if a joiner waits elsewhere)."""
        stream = queue_stream(ladder)
        fence = None if self._fence is None else self._fence(lease_of(ladder))
        if self._fence is not None and fence is None:
            raise RuntimeError(f"this replica no longer holds the {lease_of(ladder)} lease")
        if fence is not None:  # the audit trail of who wrote it, as the table's events carry
            metadata = msgspec.structs.replace(metadata or Metadata(), epoch=fence.epoch)
        snapshot = None
        base = self.queues.get(ladder)  # what `new` applies to (the ladder's lock is held)
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                stored = await append_with(
                    conn,
                    stream,
                    self.versions[ladder],
                    [REGISTRY.new_event(e, metadata) for e in new],
                    fence=fence,
                )
                await keep_members(conn, ladder, new)
                version = stored[-1].version
                if base is not None and version - self.snapshots.get(ladder, 0) >= SNAPSHOT_EVERY:
                    waiting = fold_queue(new, base)
                    await conn.execute(
                        "INSERT INTO matchmaking_queue_snapshots (ladder, version, waiting)"
                        " VALUES ($1, $2, $3) ON CONFLICT (ladder) DO UPDATE"
                        " SET version = $2, waiting = $3, taken_at = now()",
                        ladder,
                        version,
                        _encoder.encode(list(waiting.values())),
                    )
                    snapshot = version
        except ConcurrencyConflict:
            # Only the owner writes; a conflict means our view is stale: rebuild it.
            self._log.warning("queue stream moved under us; rebuilding", ladder=ladder)
            await self.load(ladder)
            raise
        if ladder not in self.queues:  # handed over meanwhile: the next owner rebuilds it
            return
        self.versions[ladder] = stored[-1].version
        self.queues[ladder] = fold_queue(new, self.queues[ladder])
        if snapshot is not None:
            self.snapshots[ladder] = snapshot
        ops.QUEUE_SIZE.labels(ladder).set(len(self.queues[ladder]))

    async def join(self, request: JoinQueue, now: float) -> Reply:
        """Queue a player on a ladder with his current rating, or say why not."""
        player = request.player_id
        if not player.strip() or len(player) > MAX_PLAYER_ID:
            return _refuse("malformed", f"player_id must be 1..{MAX_PLAYER_ID} characters")
        if player.startswith(BOT_PREFIX):
            return _refuse("bot_not_allowed", "ranked games never seat bots")
        if banned := await playbans.refusal(self._pool, player):
            return banned  # a queue ban runs: the reason and its end
        try:
            ruleset_of(request.ladder)
        except UnknownLadder as exc:
            return _refuse(exc.code, str(exc))
        if request.ladder not in self.queues:
            return _refuse("unavailable", f"the {request.ladder} queue is changing hands")
        async with self.locks[request.ladder]:
            if self.fresh.stale(player, request.issued_at, now):
                return _refuse("stale", f"{player} asked something else since: nothing done")
            queued = await self._pool.fetchrow(QUEUED_SQL, player)
            if queued is not None:
                return _already_queued(player, queued["ladder"])
            live = await self._pool.fetchrow(LIVE_SQL, player)
            if live is not None:
                return Reply(
                    ok=False,
                    code="in_game",
                    ladder=live["ladder"],
                    match_id=live["match_id"],
                    message=f"{player} is seated in a live game on {live['ladder']}; "
                    "queue again when it ends",
                )
            row = await self._pool.fetchrow(
                "SELECT mu, sigma, games, last_played FROM matchmaking_ratings"
                " WHERE ladder = $1 AND player_id = $2",
                request.ladder,
                player,
            )
            rating = decayed(
                Rating(row["mu"], row["sigma"], row["games"], row["last_played"])
                if row
                else Rating(),
                now,
            )
            avoid = set(request.avoid) - {player}
            try:
                await self._append(
                    request.ladder,
                    [
                        PlayerQueued(
                            player_id=player,
                            ladder=request.ladder,
                            mu=rating.mu,
                            sigma=rating.sigma,
                            joined_at=now,
                            avoid=tuple(sorted(avoid)),
                        )
                    ],
                    Metadata(actor=player),
                )
            except AlreadyQueued as exc:  # he joined another ladder at its owner meanwhile
                return _already_queued(player, exc.ladder)
            self.fresh.applied(player, request.issued_at, now)
        self._log.info(
            "player queued",
            player_id=player,
            ladder=request.ladder,
            mu=rating.mu,
            linked=len(avoid),
        )
        return Reply(
            ok=True,
            code="queued",
            ladder=request.ladder,
            waited=0.0,
            window=window(0.0),
            message=f"{player} is waiting in the {request.ladder} queue",
        )

    async def leave(self, request: LeaveQueue) -> Reply:
        """Take a player out of his queue, or say he is not in one."""
        player = request.player_id
        ladder = self.ladder_of(player)
        if ladder is None:
            return _refuse("not_queued", f"{player} is not waiting in any queue")
        async with self.locks[ladder]:
            if self.fresh.stale(player, request.issued_at, now := time.time()):
                return _refuse("stale", f"{player} asked something else since: nothing done")
            if player not in self.queues.get(ladder, {}):
                return _refuse("not_queued", f"{player} is not waiting in any queue")
            await self._append(
                ladder, [PlayerLeftQueue(player_id=player, reason="left")], Metadata(actor=player)
            )
            self.fresh.applied(player, request.issued_at, now)
        self._log.info("player left the queue", player_id=player, ladder=ladder)
        return Reply(
            ok=True, code="left", ladder=ladder, message=f"{player} left the {ladder} queue"
        )

    async def pair_round(self, now: float) -> int:
        """Form every table that can form now, one append per ladder; return how many."""
        formed = 0
        for ladder in list(self.queues):
            async with self.locks[ladder]:
                queue = self.queues.get(ladder)
                if queue is None:  # handed over while this round waited for the lock
                    continue
                ruleset = ruleset_of(ladder)
                waiting = [
                    Waiting(q.player_id, Rating(q.mu, q.sigma), q.joined_at, frozenset(q.avoid))
                    for q in queue.values()
                ]
                pairings = pair(waiting, ruleset.players, now)
                if not pairings:
                    continue
                matches = [
                    MatchFound(
                        match_id=str(uuid.uuid4()),
                        ladder=ladder,
                        rules=ruleset.to_dict(),
                        seats=seats_of(p),
                        win_probability=p.win_probability,
                    )
                    for p in pairings
                ]
                joined = {pid: queue[pid].joined_at for m in matches for pid in m.seats}
                await self._append(ladder, list(matches), Metadata(actor="matchmaking"))
                for waited in joined.values():
                    ops.QUEUE_WAIT.labels(ladder).observe(max(0.0, now - waited))
                for match in matches:
                    self._log.info(
                        "match found",
                        match_id=match.match_id,
                        game_id=game_id_of_match(match.match_id),
                        ladder=ladder,
                        players=list(match.seats),
                        win_probability=round(match.win_probability, 3),
                    )
                formed += len(matches)
        return formed


# -- consumers --------------------------------------------------------------------------------


def _responder(
    rt: Runtime, decoder: Any, answer: Callable[[Any], Awaitable[Reply]]
) -> Callable[[Msg], Coroutine[Any, Any, None]]:
    """Return a subscription callback: decode, answer, reply; never leave a request hanging."""

    async def handle(msg: Msg) -> None:
        with logs.work(logs.request_id_of(msg.headers)):
            try:
                request = decoder.decode(msg.data)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                reply = _refuse("malformed", f"cannot read the request: {exc}")
            else:
                try:
                    reply = await answer(request)
                except Exception as exc:
                    rt.log.exception("request failed", subject=msg.subject)
                    reply = _refuse("unavailable", f"try again: {type(exc).__name__}")
            if reply.ok is False:
                rt.log.info("request refused", subject=msg.subject, code=reply.code)
            if msg.reply:
                await msg.respond(_encoder.encode(reply))

    return handle


def _each_in_a_task(
    handle: Callable[[Msg], Coroutine[Any, Any, None]],
) -> Callable[[Msg], Awaitable[None]]:
    """Return a callback that answers every message in its own task: nats-py runs one
    subscription's callbacks one after another, and a forwarded request may wait seconds
    for its ladder's owner (a handover) while other requests go on."""
    running: set[asyncio.Task[None]] = set()

    async def spawn(msg: Msg) -> None:
        task = asyncio.create_task(handle(msg))
        running.add(task)
        task.add_done_callback(running.discard)

    return spawn


async def _pairing_loop(mm: Matchmaker, rt: Runtime) -> None:
    while not rt.stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(rt.stop.wait(), timeout=PAIRING_INTERVAL)
        if rt.stop.is_set():
            return
        with logs.work(f"pairing:{logs.new_request_id()}"):
            try:
                await mm.pair_round(time.time())
            except Exception as exc:  # PostgreSQL away, or a ladder handed over: next round
                rt.log.warning("pairing round failed", error=type(exc).__name__)


async def _forward(rt: Runtime, subject: str, body: bytes, ladder: str) -> Reply:
    """Ask the owner of ``ladder``'s queue; while nobody owns it (a handover), ask again."""
    reply = _refuse("unavailable", f"nobody serves the {ladder} queue now: try again")
    async for _attempt in FORWARD_BACKOFF.attempts(within=FORWARD_WITHIN, stop=rt.stop):
        try:
            answer = await rt.nc.request(subject, body, timeout=3.0)  # a paused owner: again
        except Exception as exc:  # no responders (no owner this instant), NATS away, timeout
            rt.log.debug("ladder owner not reached", ladder=ladder, error=type(exc).__name__)
            continue
        reply = _reply.decode(answer.data)
        if reply.code != "unavailable":
            return reply
    return reply


class _Public:
    """The public subjects, answered by every replica (one queue group)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    async def join(self, request: JoinQueue) -> Reply:
        try:
            ruleset_of(request.ladder)
        except UnknownLadder as exc:
            return _refuse(exc.code, str(exc))
        subject = self.rt.subjects.ladder_join(request.ladder)
        return await _forward(self.rt, subject, _encoder.encode(request), request.ladder)

    async def leave(self, request: LeaveQueue) -> Reply:
        queued = await self.rt.pool.fetchrow(QUEUED_SQL, request.player_id)
        if queued is None:
            return _refuse("not_queued", f"{request.player_id} is not waiting in any queue")
        ladder = queued["ladder"]
        subject = self.rt.subjects.ladder_leave(ladder)
        return await _forward(self.rt, subject, _encoder.encode(request), ladder)

    async def status(self, request: QueueStatus) -> Reply:
        return await status(self.rt.pool, request, time.time())

    async def subscribe(self) -> list[Any]:
        rt, group = self.rt, self.rt.subjects.matchmaking_queue_group()
        answers = (
            (rt.subjects.matchmaking_join(), _responder(rt, _join, self.join)),
            (rt.subjects.matchmaking_leave(), _responder(rt, _leave, self.leave)),
            (rt.subjects.matchmaking_status(), _responder(rt, _status, self.status)),
        )
        return [
            await rt.nc.subscribe(subject, queue=group, cb=_each_in_a_task(answer))
            for subject, answer in answers
        ]


class _Owner:
    """What the replica runs for the ladders whose leases it holds: their queues, their
    subjects, one pairing loop over them."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        health, grace = rt.nats_health, rt.settings.nats_grace_seconds
        self.leases = LeaseGroup(
            rt.pool,
            group=f"{rt.subjects.prefix}{LEASE}",
            names=[lease_of(ladder) for ladder in configured()],
            member=rt.settings.replica_id or member_id("matchmaking"),
            on_gain=self.start,
            on_lose=self.stop,
            log=rt.log,
            ttl=rt.settings.lease_seconds,
            interval=rt.settings.lease_seconds / 5,
            # a ladder is served through NATS too: cut off from it, give the ladder up
            able=None if health is None else lambda: health.answered_within(grace),
        )
        self.mm = Matchmaker(rt.store, rt.pool, rt.log, self.leases.fence)
        self.pairing: asyncio.Task[None] | None = None
        self.subs: dict[str, list[Any]] = {}

    async def start(self, fences: Mapping[str, Fence]) -> None:
        rt = self.rt
        for name, fence in fences.items():
            ladder = ladder_of_lease(name)
            await self.mm.load(ladder)
            self.subs[ladder] = [
                await rt.nc.subscribe(
                    rt.subjects.ladder_join(ladder),
                    cb=_responder(rt, _join, lambda r: self.mm.join(r, time.time())),
                ),
                await rt.nc.subscribe(
                    rt.subjects.ladder_leave(ladder), cb=_responder(rt, _leave, self.mm.leave)
                ),
            ]
            rt.log.info("serving ladder", ladder=ladder, epoch=fence.epoch)
        if self.pairing is None:
            self.pairing = asyncio.create_task(_pairing_loop(self.mm, rt))

    async def stop(self, names: set[str], why: str) -> None:
        for name in names:
            ladder = ladder_of_lease(name)
            for sub in self.subs.pop(ladder, []):
                with contextlib.suppress(Exception):
                    await sub.drain()  # answer what is in
            # Let a request or pairing round in flight finish, but never hold up the lease
            # machinery behind a stalled database: the store's fence refuses a late append.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(STOP_WAIT):
                    await self.mm.locks[ladder].acquire()
                    self.mm.locks[ladder].release()
            self.mm.drop(ladder)
            self.rt.log.info("ladder handed over", ladder=ladder, why=why)
        if not self.subs and self.pairing is not None:
            self.pairing.cancel()
            with contextlib.suppress(BaseException):
                await self.pairing
            self.pairing = None


async def main(rt: Runtime) -> None:
    """Answer the public subjects, consume, and serve and pair the ladders whose leases this
    replica holds, until `rt.stop`."""
    owner = _Owner(rt)
    rt.checks["leases"] = owner.leases.check
    public = await _Public(rt).subscribe()
    rt.log.info("matchmaking started: sharing the ladders", ladders=sorted(configured()))
    consumers = [
        asyncio.create_task(
            rt.consume(GAMES_CONSUMER, rt.subjects.game_finished(), game_finished, ack_wait=10.0)
        ),
        asyncio.create_task(playbans.start(rt)),  # offences at rated games, queue bans
        asyncio.create_task(rt.consume(SEASONS_CONSUMER, rt.subjects.season_ended(), season_ended)),
        asyncio.create_task(
            rt.consume(
                RATINGS_CONSUMER, rt.subjects.ratings_updated(), ratings_updated, ack_wait=10.0
            )
        ),
    ]
    try:
        await owner.leases.run(rt.stop)  # returns once stopped, the leases released
    finally:
        rt.stop.set()
        for sub in public:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        for outcome in await asyncio.gather(*consumers, return_exceptions=True):
            if isinstance(outcome, BaseException):
                rt.log.error("consumer failed", error=type(outcome).__name__)
