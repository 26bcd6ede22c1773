"""The matcher: the queues of the ladders this replica owns, each folded from its stream and
changed only by appends fenced by the ladder's lease (`services.matchmaking.app` says how the
service is put together). `Matchmaker.join` and `leave` answer the requests forwarded to the
ladder's owner, `pair_round` forms the tables; every change is one append at the stream's
expected version, with the read models kept in its transaction
(`services.matchmaking.readmodels.keep_members`) and a snapshot of the waiting list every
`SNAPSHOT_EVERY` events.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

import asyncpg
import msgspec

from events.contracts.game import game_id_of_match
from events.contracts.ladders import UnknownLadder, configured, ruleset_of
from events.contracts.matchmaking import (
    JoinQueue,
    LeaveQueue,
    MatchFound,
    MatchmakingEvent,
    PlayerLeftQueue,
    PlayerQueued,
    Reply,
    fold_queue,
    queue_stream,
)
from events.contracts.skill import Rating, decayed
from events.envelope import REGISTRY, Metadata
from events.pgstore import PostgresEventStore, append_with
from events.store import ConcurrencyConflict, Fence
from services.matchmaking import playbans
from services.matchmaking.freshness import Freshness
from services.matchmaking.pairing import Waiting, pair, seats_of, window
from services.matchmaking.readmodels import LIVE_SQL, QUEUED_SQL, AlreadyQueued, keep_members
from services.runtime import ops

__all__ = ["LEASE", "SNAPSHOT_EVERY", "Matchmaker", "lease_of", "refuse"]

LEASE = "matchmaking"  # the lease group; one lease per ladder, `matchmaking/<ladder>`
MAX_PLAYER_ID = 200
SNAPSHOT_EVERY = 100
"""Events of a queue stream between two snapshots of its waiting list (see the docstring)."""
_snapshot = msgspec.json.Decoder(list[PlayerQueued])
BOT_PREFIX = "bot:"  # how a table names a seat played by a bot (events.contracts.game.TableOpened)

_encoder = msgspec.json.Encoder()


def refuse(code: str, message: str) -> Reply:
    return Reply(ok=False, code=code, message=message)


def lease_of(ladder: str) -> str:
    """Return the name of the lease whose holder serves ``ladder``'s queue."""
    return f"{LEASE}/{ladder}"


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
            return refuse("malformed", f"player_id must be 1..{MAX_PLAYER_ID} characters")
        if player.startswith(BOT_PREFIX):
            return refuse("bot_not_allowed", "ranked games never seat bots")
        if banned := await playbans.refusal(self._pool, player):
            return banned  # a queue ban runs: the reason and its end
        try:
            ruleset_of(request.ladder)
        except UnknownLadder as exc:
            return refuse(exc.code, str(exc))
        if request.ladder not in self.queues:
            return refuse("unavailable", f"the {request.ladder} queue is changing hands")
        async with self.locks[request.ladder]:
            if self.fresh.stale(player, request.issued_at, now):
                return refuse("stale", f"{player} asked something else since: nothing done")
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
            return refuse("not_queued", f"{player} is not waiting in any queue")
        async with self.locks[ladder]:
            if self.fresh.stale(player, request.issued_at, now := time.time()):
                return refuse("stale", f"{player} asked something else since: nothing done")
            if player not in self.queues.get(ladder, {}):
                return refuse("not_queued", f"{player} is not waiting in any queue")
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
