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
slots). Only that owner subscribes to the ladder's own subjects
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

The modules, one job each: `matcher` (the owned ladders' queues: join, leave, pairing rounds,
fenced appends, snapshots), `owner` (the ladder leases: gaining and handing over a ladder, the
pairing loop), `responders` (the public subjects and forwarding to a ladder's owner),
`readmodels` (the SQL read models and the exactly-once consumers of GameFinished,
RatingsUpdated and SeasonEnded), `playbans`, `pairing`, `freshness`; this one wires them up.
"""

from __future__ import annotations

import asyncio
import contextlib

from events.contracts.ladders import configured
from services.matchmaking import playbans
from services.matchmaking.owner import Owner
from services.matchmaking.readmodels import game_finished, ratings_updated, season_ended
from services.matchmaking.responders import Public
from services.runtime.service import Runtime

__all__ = ["main"]

GAMES_CONSUMER = "matchmaking-games"
RATINGS_CONSUMER, SEASONS_CONSUMER = "matchmaking-ratings", "matchmaking-seasons"


async def main(rt: Runtime) -> None:
    """Answer the public subjects, consume, and serve and pair the ladders whose leases this
    replica holds, until `rt.stop`."""
    owner = Owner(rt)
    rt.checks["leases"] = owner.leases.check
    public = await Public(rt).subscribe()
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
