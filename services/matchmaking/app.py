"""The matchmaking service: ladder queues in, MatchFound out; state rebuilt from its own log.

    cmd.matchmaking.join|leave|status ──▶ Matchmaker ──▶ queue-<ladder> stream (PostgreSQL)
    every PAIRING_INTERVAL: pair() per ladder ──▶ MatchFound appended to the same stream
    relay ──▶ ev.queue.<ladder>.MatchFound ──▶ table service opens the game
    ev.game.*.GameFinished ──▶ players leave the live-games read model
    ev.rating.*.RatingsUpdated ──▶ matchmaking's own rating projection

State: the queue of each ladder is the fold of its stream (`events.matchmaking.fold_queue`),
rebuilt at every start, so a restart or a kill -9 loses nobody. Every change is one append at
the stream's expected version; a MatchFound removes its players from the queue in the same
append that announces the match, and inserts them into `matchmaking_live_players` in the same
transaction, so a player is never both queued and seated, nor seated twice.

One active instance: the instance holding the ``matchmaking`` lease (`events.leases`) serves
requests and pairs; another instance waits as a standby and takes over when the lease frees
(at once on a graceful stop, within the lease's time to live when the active one dies). Every
append is fenced by the lease's epoch, so an instance that lost the lease (a database restart,
a pause) is refused by the store instead of writing beside the new active one; it stops
serving when its lease runs out, rebuilds the queues when it gains the lease again, and never
exits for a database restart. Within the active instance one asyncio lock orders requests and
pairing rounds, so the in-memory queue and the stream never disagree. Both instances consume
GameFinished and RatingsUpdated (exactly-once consumers: whichever gets a message applies it).

Fair play: a player queues with the accounts `services.fairplay` links to his (one client
address or device within its window, as the gateway saw them), and pairing never seats him
with any of them (`pairing.Waiting.avoid`).

Rules: a player is in at most one queue, and cannot queue while seated in a live ranked game
(set by MatchFound, cleared by that ladder's GameFinished). Ranked games never seat bots: only
queued players are paired. A player queues with his rating from the projection of
RatingsUpdated (a new player has the model's default), inactivity decay applied.

Answers are `events.matchmaking.Reply`: ok, a machine code, a human message, details.
Refusals (malformed, unknown_ladder, bot_not_allowed, already_queued, in_game, not_queued,
unavailable) append nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import asyncpg
import msgspec
from nats.aio.msg import Msg

from events.consumer import Received, Unprocessable
from events.envelope import REGISTRY, Metadata
from events.game import GameFinished
from events.leases import LeaseGroup, member_id
from events.matchmaking import (
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
from events.pgstore import Conn, PostgresEventStore, append_with
from events.rating import RatingsUpdated
from events.store import ConcurrencyConflict, Fence
from services import fairplay, logs, ops
from services.ladders import LADDERS, UnknownLadder, ruleset_of
from services.matchmaking.pairing import Pairing, Waiting, pair, window
from services.rating.model import Rating, decayed
from services.runtime import Runtime
from services.table.tables import game_id_of_match

__all__ = ["LEASE", "Matchmaker", "main", "seats_of"]

LEASE = "matchmaking"  # the lease held by the active instance
PAIRING_INTERVAL = 0.5  # seconds between pairing rounds
GAMES_CONSUMER = "matchmaking-games"
RATINGS_CONSUMER = "matchmaking-ratings"
MAX_PLAYER_ID = 200
BOT_PREFIX = "bot:"  # how a table names a seat played by a bot (events.game.TableOpened)

_encoder = msgspec.json.Encoder()
_join = msgspec.json.Decoder(JoinQueue)
_leave = msgspec.json.Decoder(LeaveQueue)
_status = msgspec.json.Decoder(QueueStatus)


def seats_of(pairing: Pairing) -> tuple[str, ...]:
    """Return the player per seat: (a, b) v (c, d) sits a=0, c=1, b=2, d=3; heads-up a=0, c=1."""
    ours, theirs = pairing.teams
    if len(ours) == 1:
        return (ours[0], theirs[0])
    return (ours[0], theirs[0], ours[1], theirs[1])


def _refuse(code: str, message: str) -> Reply:
    return Reply(ok=False, code=code, message=message)


class Matchmaker:
    """The active instance's queues: folded from the ladder streams, changed only by appends."""

    def __init__(
        self,
        store: PostgresEventStore,
        pool: asyncpg.Pool,
        log: Any,
        fence: Callable[[], Fence | None] | None = None,
        fairplay_days: float = fairplay.WINDOW_DAYS,
    ) -> None:
        self.fairplay_days = fairplay_days
        self._store = store
        self._pool = pool
        self._log = log
        self._fence = fence
        self.queues: dict[str, dict[str, PlayerQueued]] = {ladder: {} for ladder in LADDERS}
        self.versions: dict[str, int] = dict.fromkeys(LADDERS, 0)
        self.lock = asyncio.Lock()

    async def load(self, ladder: str | None = None) -> None:
        """Rebuild the queue of `ladder` (default: every ladder) from its stream."""
        for name in [ladder] if ladder else list(LADDERS):
            stored = await self._store.read(queue_stream(name))
            self.queues[name] = fold_queue(REGISTRY.decode(e) for e in stored)
            self.versions[name] = stored[-1].version if stored else 0
            ops.QUEUE_SIZE.labels(name).set(len(self.queues[name]))
            self._log.info(
                "queue rebuilt",
                ladder=name,
                version=self.versions[name],
                waiting=len(self.queues[name]),
            )

    def ladder_of(self, player_id: str) -> str | None:
        """Return the ladder whose queue holds `player_id`, if any."""
        for ladder, queue in self.queues.items():
            if player_id in queue:
                return ladder
        return None

    async def _append(
        self, ladder: str, new: list[MatchmakingEvent], metadata: Metadata | None = None
    ) -> None:
        """Append `new` to the ladder's stream (with the live players of any MatchFound)."""
        stream = queue_stream(ladder)
        fence = None if self._fence is None else self._fence()
        if self._fence is not None and fence is None:
            raise RuntimeError("this instance no longer holds the matchmaking lease")
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                stored = await append_with(
                    conn,
                    stream,
                    self.versions[ladder],
                    [REGISTRY.new_event(e, metadata) for e in new],
                    fence=fence,
                )
                live = [
                    (player, e.match_id, ladder)
                    for e in new
                    if isinstance(e, MatchFound)
                    for player in e.seats
                ]
                if live:
                    await conn.executemany(
                        "INSERT INTO matchmaking_live_players (player_id, match_id, ladder)"
                        " VALUES ($1, $2, $3) ON CONFLICT (player_id) DO UPDATE SET"
                        " match_id = EXCLUDED.match_id, ladder = EXCLUDED.ladder, since = now()",
                        live,
                    )
        except ConcurrencyConflict:
            # Only one instance writes; a conflict means our view is stale: rebuild it.
            self._log.warning("queue stream moved under us; rebuilding", ladder=ladder)
            await self.load(ladder)
            raise
        self.versions[ladder] = stored[-1].version
        self.queues[ladder] = fold_queue(new, self.queues[ladder])
        ops.QUEUE_SIZE.labels(ladder).set(len(self.queues[ladder]))

    async def join(self, request: JoinQueue, now: float) -> Reply:
        """Queue a player on a ladder with his current rating, or say why not."""
        player = request.player_id
        if not player.strip() or len(player) > MAX_PLAYER_ID:
            return _refuse("malformed", f"player_id must be 1..{MAX_PLAYER_ID} characters")
        if player.startswith(BOT_PREFIX):
            return _refuse("bot_not_allowed", "ranked games never seat bots")
        try:
            ruleset_of(request.ladder)
        except UnknownLadder as exc:
            return _refuse(exc.code, str(exc))
        async with self.lock:
            queued_on = self.ladder_of(player)
            if queued_on is not None:
                return Reply(
                    ok=False,
                    code="already_queued",
                    ladder=queued_on,
                    message=f"{player} is already waiting in the {queued_on} queue",
                )
            live = await self._pool.fetchrow(
                "SELECT match_id, ladder FROM matchmaking_live_players WHERE player_id = $1",
                player,
            )
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
            avoid = await fairplay.linked_accounts(self._pool, player, self.fairplay_days)
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
        async with self.lock:
            ladder = self.ladder_of(player)
            if ladder is None:
                return _refuse("not_queued", f"{player} is not waiting in any queue")
            await self._append(
                ladder, [PlayerLeftQueue(player_id=player, reason="left")], Metadata(actor=player)
            )
        self._log.info("player left the queue", player_id=player, ladder=ladder)
        return Reply(
            ok=True, code="left", ladder=ladder, message=f"{player} left the {ladder} queue"
        )

    async def status(self, request: QueueStatus, now: float) -> Reply:
        """Say where a player stands: his queue, wait and window, or his live match."""
        player = request.player_id
        sizes = {ladder: len(queue) for ladder, queue in self.queues.items()}
        ladder = self.ladder_of(player)
        if ladder is not None:
            waited = max(0.0, now - self.queues[ladder][player].joined_at)
            return Reply(
                ok=True,
                code="queued",
                ladder=ladder,
                waited=waited,
                window=window(waited),
                queue_sizes=sizes,
                message=f"{player} has waited {waited:.0f}s in {ladder}",
            )
        live = await self._pool.fetchrow(
            "SELECT match_id, ladder FROM matchmaking_live_players WHERE player_id = $1", player
        )
        if live is not None:
            return Reply(
                ok=True,
                code="in_game",
                ladder=live["ladder"],
                match_id=live["match_id"],
                queue_sizes=sizes,
                message=f"{player} is seated in match {live['match_id']}",
            )
        return Reply(ok=True, code="idle", queue_sizes=sizes, message=f"{player} is not queued")

    async def pair_round(self, now: float) -> int:
        """Form every table that can form now, one append per ladder; return how many."""
        formed = 0
        async with self.lock:
            for ladder, queue in self.queues.items():
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


async def game_finished(conn: Conn, received: Received) -> None:
    """A game ended: its players may queue again on that ladder."""
    finished = received.payload
    if not isinstance(finished, GameFinished):
        raise Unprocessable(f"expected GameFinished, got {received.event.type}")
    await conn.execute(
        "DELETE FROM matchmaking_live_players WHERE player_id = ANY($1::text[]) AND ladder = $2",
        list(finished.players),
        finished.ladder,
    )


async def ratings_updated(conn: Conn, received: Received) -> None:
    """Keep matchmaking's projection of ratings; an older update never overwrites a newer one."""
    update = received.payload
    if not isinstance(update, RatingsUpdated):
        raise Unprocessable(f"expected RatingsUpdated, got {received.event.type}")
    await conn.executemany(
        "INSERT INTO matchmaking_ratings AS r (ladder, player_id, mu, sigma, games, last_played)"
        " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (ladder, player_id) DO UPDATE SET"
        " mu = EXCLUDED.mu, sigma = EXCLUDED.sigma, games = EXCLUDED.games,"
        " last_played = EXCLUDED.last_played WHERE r.games < EXCLUDED.games",
        [
            (
                update.ladder,
                c.player_id,
                c.mu_after,
                c.sigma_after,
                c.games,
                update.rated_at or None,
            )
            for c in update.changes
        ],
    )


# -- requests ---------------------------------------------------------------------------------


def _responder(
    rt: Runtime, decoder: Any, answer: Callable[[Any], Awaitable[Reply]]
) -> Callable[[Msg], Awaitable[None]]:
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


async def _pairing_loop(mm: Matchmaker, rt: Runtime) -> None:
    while not rt.stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(rt.stop.wait(), timeout=PAIRING_INTERVAL)
        if rt.stop.is_set():
            return
        with logs.work(f"pairing:{logs.new_request_id()}"):
            try:
                await mm.pair_round(time.time())
            except Exception as exc:  # PostgreSQL away: the next round tries again
                rt.log.warning("pairing round failed", error=type(exc).__name__)


class _Active:
    """What the instance runs while it holds the lease: the queues, pairing, request handlers."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.leases = LeaseGroup(
            rt.pool,
            group=f"{rt.subjects.prefix}{LEASE}",
            names=[LEASE],
            member=rt.settings.replica_id or member_id("matchmaking"),
            on_gain=self.start,
            on_lose=self.stop,
            log=rt.log,
            ttl=rt.settings.lease_seconds,
            interval=rt.settings.lease_seconds / 5,
        )
        self.pairing: asyncio.Task[None] | None = None
        self.subs: list[Any] = []

    def fence(self) -> Fence | None:
        return self.leases.fence(LEASE)

    async def start(self, fences: Mapping[str, Fence]) -> None:
        rt = self.rt
        mm = Matchmaker(rt.store, rt.pool, rt.log, self.fence, fairplay.window_days(rt.settings))
        await mm.load()
        self.pairing = asyncio.create_task(_pairing_loop(mm, rt))
        self.subs = [
            await rt.nc.subscribe(
                rt.subjects.matchmaking_join(),
                cb=_responder(rt, _join, lambda r: mm.join(r, time.time())),
            ),
            await rt.nc.subscribe(
                rt.subjects.matchmaking_leave(), cb=_responder(rt, _leave, mm.leave)
            ),
            await rt.nc.subscribe(
                rt.subjects.matchmaking_status(),
                cb=_responder(rt, _status, lambda r: mm.status(r, time.time())),
            ),
        ]
        rt.log.info("matchmaking active", ladders=sorted(LADDERS), epoch=fences[LEASE].epoch)

    async def stop(self, names: set[str], why: str) -> None:
        subs, self.subs = self.subs, []
        for sub in subs:
            with contextlib.suppress(Exception):
                await sub.drain()  # type: ignore[no-untyped-call]  # answer what is in, take no more
        if self.pairing is not None:
            self.pairing.cancel()
            with contextlib.suppress(BaseException):
                await self.pairing
            self.pairing = None
        self.rt.log.info("matchmaking standby", why=why)


async def main(rt: Runtime) -> None:
    """Consume, and serve and pair while holding the lease, until `rt.stop`."""
    active = _Active(rt)
    rt.checks["leases"] = active.leases.check
    rt.log.info("matchmaking standby: waiting for the lease")
    consumers = [
        asyncio.create_task(
            rt.consume(GAMES_CONSUMER, rt.subjects.game_finished(), game_finished, ack_wait=10.0)
        ),
        asyncio.create_task(
            rt.consume(
                RATINGS_CONSUMER, rt.subjects.ratings_updated(), ratings_updated, ack_wait=10.0
            )
        ),
    ]
    try:
        await active.leases.run(rt.stop)  # returns once stopped, the lease released
    finally:
        rt.stop.set()
        for outcome in await asyncio.gather(*consumers, return_exceptions=True):
            if isinstance(outcome, BaseException):
                rt.log.error("consumer failed", error=type(outcome).__name__)
