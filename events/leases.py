"""Leases with fencing epochs: which replica owns which slot, across replicas and failovers.

A group of replicas (the table service's, matchmaking's) shares a fixed set of named leases
(the table's 1,024 hash slots `table/0` ... `table/1023`, matchmaking's `matchmaking/<ladder>`).
Each lease is a row of `spades_leases`: ``owner``, ``epoch``, ``expires_at`` (the database's
clock). A `LeaseGroup` runs in every replica and, once a second (``interval``):

1. heartbeats its member row and renews the leases it holds (``expires_at = now() + ttl``,
   only where ``owner`` and ``epoch`` are still its own);
2. works out the share of every live member (seen within ``ttl``): a balanced rendezvous
   assignment, the same in every replica for the same members, moving few leases when one
   joins or leaves;
3. releases what is no longer its share (it stops serving first, then frees the row, so the
   next owner can claim at once), and claims its share where the row is free or expired,
   bumping the epoch. A member that dies stops heartbeating, drops out of the live set after
   ``ttl``, and its share is assigned to the others, who claim it as its rows expire.

At 1,024 leases a tick stays cheap: the renewal is one statement over the rows held, the
share is computed again only when the live members change (each member's scores hashed once,
in a thread: `assign`), and the service hears of a claim or a loss only for what moved
(`python -m benchmarks slots` measures it; the operator guide has the figures).

**Why two replicas never both apply commands to one slot.** Two independent fences:

- *The store refuses a stale writer.* Every append of a slot's game carries the
  writer's `Fence` (lease name, epoch). The append statement share-locks the lease row and
  commits only if the epoch is still the writer's (`events.pgstore`). A claim updates that row
  (epoch + 1), so it waits for every in-flight fenced append to commit, and every append that
  starts after the claim sees the new epoch and is refused with `Fenced`. Epochs only grow,
  so at any instant at most one epoch can commit, and in commit order a slot's events
  carry non-decreasing epochs (`Metadata.epoch`, which the tests check). This holds whatever
  the clocks, pauses or lost connections: it is the safety argument.
- *A replica stops answering before anyone else may claim.* A replica counts its lease valid
  until ``t0 + ttl - margin``, where ``t0`` is its monotonic clock read *before* it sent the
  renewal; the database sets ``expires_at = now() + ttl`` at a later instant, and a claim
  needs ``now() > expires_at``. So the replica stops (unsubscribes, cancels timers, drops
  its games, answers nothing from memory) at least ``margin`` before another replica can
  claim, provided clock *rates* differ by less than margin/ttl (offsets do not matter). This
  keeps refusals decided on stale state from reaching players; were it ever violated (a
  process paused longer than ``margin`` mid-request), the first fence still keeps the log
  whole, and the paused replica's append fails with `Fenced` instead of applying.

**Why a replica cut off from NATS gives its leases up (ownership needs both halves).** Leases
are renewed through PostgreSQL, but a slot is served through NATS: its commands arrive
on the slot's subject and its answers and frames leave on NATS. A replica that reaches
the database and not NATS would keep its leases and its turn timers, time out players whose
commands cannot reach it, and finally hand their seats to bots (a fault test saw all six games
of such a replica closed as abandoned within 30 s). So a group may be given ``able()``, the
second half of being able to serve: the table's (and matchmaking's) is "this replica's NATS
connection answered its own end-to-end probe within the last ``SPADES_NATS_GRACE_SECONDS``"
(`events.bus.NatsHealth`, a request to an inbox of its own, which cannot pass on a dead read
loop). When ``able()`` turns false, the next loop turn *withdraws*: it stops serving every
lease first (``on_lose``: timers cancelled, subscriptions dropped, games forgotten), then frees
the rows and deletes its member row, so the others count it out of the live set at their next
tick and claim its share at once instead of after a ``ttl``. While ``able()`` stays false it neither
heartbeats nor claims; when it turns true it heartbeats again (one settling tick), the others
see a new member and release its share, and it claims it back. Safety does not depend on
any of this (the fence still refuses a stale writer); it is liveness: a slot is owned by
a replica that both halves of the platform can reach. When the database is away too, the
rows cannot be freed: the validity runs out as above, and the others claim after the ``ttl``.

A database restart drops no lease (the rows are durable) and takes no advisory lock with it.
While the database is away no renewal succeeds, so every replica stops serving when its
validity runs out; when it is back, the first successful tick only heartbeats (every replica
gets to say it is alive), and the next claims the shares again: the same ones as before when
the members are the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from events.logs import bind_ids
from events.retry import Backoff
from events.sharing import assign, compact
from events.store import Fence

__all__ = ["LeaseGroup", "assign", "compact", "member_id"]

GainCallback = Callable[[Mapping[str, Fence]], Awaitable[None]]
LoseCallback = Callable[[set[str], str], Awaitable[None]]


def member_id(service: str) -> str:
    """Return a name for this process in a lease group: host (pod), pid and a random tag."""
    return f"{service}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass
class _Held:
    epoch: int
    valid_until: float  # time.monotonic(): the replica serves the lease until then


# The lease rows are written before the first tick; the database may still be starting.
_ROWS_BACKOFF = Backoff(first=0.2, factor=2.0, most=2.0)

_HEARTBEAT_AND_RENEW = """
WITH beat AS (
    INSERT INTO spades_lease_members (grp, member, seen_at) VALUES ($1, $2, now())
    ON CONFLICT (grp, member) DO UPDATE SET seen_at = now()
)
UPDATE spades_leases l SET expires_at = now() + make_interval(secs => $3)
FROM unnest($4::text[], $5::int8[]) AS h(name, epoch)
WHERE l.name = h.name AND l.epoch = h.epoch AND l.owner = $2 AND l.expires_at > now()
RETURNING l.name
"""

# A lease row created after its siblings (a group regrouped into more leases: the table's 16
# partitions became 1,024 slots) starts at their highest epoch, so work that moves from an
# old lease to a new one never sees its epochs go back (they only grow, per piece of work).
_ENSURE_ROWS = """
INSERT INTO spades_leases (name, epoch)
SELECT n, (SELECT coalesce(max(epoch), 0) FROM spades_leases WHERE name = ANY($1::text[]))
FROM unnest($1::text[]) AS n
ON CONFLICT (name) DO NOTHING
"""

_LIVE_MEMBERS = """
SELECT member FROM spades_lease_members
WHERE grp = $1 AND seen_at > now() - make_interval(secs => $2)
"""

_FREE = """
SELECT name FROM spades_leases WHERE name = ANY($1::text[]) AND expires_at <= now()
"""

_CLAIM = """
UPDATE spades_leases
SET owner = $2, epoch = epoch + 1, expires_at = now() + make_interval(secs => $3),
    claimed_at = now()
WHERE name = ANY($1::text[]) AND expires_at <= now()
RETURNING name, epoch
"""

_RELEASE = """
UPDATE spades_leases l SET owner = NULL, expires_at = now()
FROM unnest($1::text[], $3::int8[]) AS h(name, epoch)
WHERE l.name = h.name AND l.epoch = h.epoch AND l.owner = $2
"""


class LeaseGroup:
    """This replica's side of a lease group: what it holds, until when, and the loop keeping it.

    ``on_gain(fences)`` runs after leases are claimed (load their work, start serving);
    ``on_lose(names, why)`` runs when they are released, lost or run out (stop serving):
    by the time it is called `fence` already answers None for those names.
    """

    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        group: str,
        names: Sequence[str],
        member: str,
        on_gain: GainCallback,
        on_lose: LoseCallback,
        log: Any,
        ttl: float = 5.0,
        interval: float = 1.0,
        margin: float | None = None,
        tick_timeout: float | None = None,
        able: Callable[[], bool] | None = None,
    ) -> None:
        if ttl <= 2 * interval:
            raise ValueError(f"a lease's ttl ({ttl} s) must exceed two renewals ({interval} s)")
        self.pool = pool
        self.group = group
        self.names = tuple(names)
        self.member = member
        self.ttl = ttl
        self.interval = interval
        self.margin = margin if margin is not None else min(1.5 * interval, ttl / 3)
        # How long one renewal may take before it counts as failed. A renewal is measured
        # from before it was sent, so one that takes long is still sound; it is useful for as
        # long as the leases it renews are valid. (With a timeout of two intervals, a busy
        # node whose every renewal took a little longer never renewed: its leases lapsed and
        # moved although nobody had died, and it could not claim them back.)
        self.tick_timeout = tick_timeout if tick_timeout is not None else ttl - self.margin
        self._on_gain = on_gain
        self._on_lose = on_lose
        self.able = able
        """Besides the database, whether this replica can serve (the table: NATS answers)."""
        self.withdrawn = False
        self.log = log
        self.held: dict[str, _Held] = {}
        self.last_sync = -math.inf
        self._changed = asyncio.Event()
        self._assigned: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        """(the live members, this member's share among them): recomputed when they change."""

    # -- what the service asks ------------------------------------------------------------------

    def fence(self, name: str) -> Fence | None:
        """Return the fence to append under ``name``, or None if this replica may not serve it."""
        held = self.held.get(name)
        if held is None or time.monotonic() >= held.valid_until:
            return None
        return Fence(name, held.epoch)

    def holds(self, name: str) -> bool:
        """Whether this replica still holds ``name``, valid or not: a lease whose renewal is
        late (`fence` None meanwhile) is either renewed or dropped (`_on_lose`) soon."""
        return name in self.held

    @property
    def healthy(self) -> bool:
        """Whether the last renewal succeeded within a lease's time to live."""
        return time.monotonic() - self.last_sync < self.ttl

    async def give_up(self, names: set[str], why: str) -> None:
        """Stop serving ``names`` now (the store fenced us off: someone else holds them)."""
        await self._drop(names, why)

    def share(self, members: Iterable[str]) -> frozenset[str]:
        """Return this member's leases among ``members`` (cached until the members change)."""
        key = frozenset(members)
        if key != self._assigned[0]:
            owners = assign(self.names, key)
            mine = frozenset(name for name, owner in owners.items() if owner == self.member)
            self._assigned = (key, mine)
        return self._assigned[1]

    async def _share(self, members: Iterable[str]) -> frozenset[str]:
        """`share`, computed in a thread when the members changed: among hundreds of members
        it takes tens of milliseconds (a new member's scores hashed), which the event loop
        serving games must not wait for."""
        if frozenset(members) == self._assigned[0]:
            return self._assigned[1]
        return await asyncio.to_thread(self.share, members)

    async def check(self) -> bool:
        """A /readyz check: the replica can reach the database to keep its leases."""
        return self.healthy

    def _able(self) -> bool:
        if self.able is None:
            return True
        try:
            return bool(self.able())
        except Exception:
            return False

    # -- the loop -------------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Keep this replica's share of the leases until ``stop``; then release them."""
        # Every line the lease work logs (claims, losses, the games a claim resumes) carries
        # one request id naming the group, like the consumers' `lag:<consumer>`.
        bind_ids(request_id=f"leases:{self.group}")
        watchdog = asyncio.create_task(self._watchdog(stop))
        settle = True  # the first tick after (re)connecting only heartbeats
        failing = False
        try:
            await self._ensure_rows(stop)
            while not stop.is_set():
                if not self._able():
                    if not self.withdrawn:
                        await self._withdraw()
                    settle = True
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.interval)
                    continue
                if self.withdrawn:
                    self.withdrawn = False
                    self.log.info("able to serve again: rejoining", group=self.group)
                try:
                    async with asyncio.timeout(self.tick_timeout):
                        gained = await self._tick(claim=not settle)
                    settle = False
                    # Outside the tick's timeout: a slow take-over (the service loading the
                    # slots' work on a busy machine) must not be cancelled half-done
                    # while the leases stay held, or that work is never picked up again.
                    if gained:
                        await self._take_on(gained)
                    if failing:
                        self.log.info("leases reachable again", group=self.group)
                        failing = False
                except Exception as exc:  # the database is away or slow: try again
                    if not failing:
                        self.log.warning(
                            "lease renewal failed", group=self.group, error=type(exc).__name__
                        )
                    failing, settle = True, True
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.interval)
        finally:
            watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watchdog
            await self._release_all()

    async def _ensure_rows(self, stop: asyncio.Event) -> None:
        async for _attempt in _ROWS_BACKOFF.attempts(stop=stop):
            try:
                await self.pool.execute(_ENSURE_ROWS, list(self.names))
                return
            except Exception as exc:
                self.log.warning("lease rows not ready", error=type(exc).__name__)

    async def _tick(self, *, claim: bool) -> dict[str, Fence]:
        """Renew, rebalance and (with ``claim``) claim; return the leases newly claimed."""
        snapshot = {name: held.epoch for name, held in self.held.items()}
        started = time.monotonic()
        async with self.pool.acquire() as conn:
            renewed = {
                row["name"]
                for row in await conn.fetch(
                    _HEARTBEAT_AND_RENEW,
                    self.group,
                    self.member,
                    self.ttl,
                    list(snapshot),
                    list(snapshot.values()),
                )
            }
            self.last_sync = started
            lost = set()
            for name, epoch in snapshot.items():
                held = self.held.get(name)
                if held is None or held.epoch != epoch:
                    continue
                if name in renewed:
                    held.valid_until = started + self.ttl - self.margin
                else:
                    lost.add(name)
            if lost:
                await self._drop(lost, "lost")
            live = [row["member"] for row in await conn.fetch(_LIVE_MEMBERS, self.group, self.ttl)]
            mine = set(await self._share({*live, self.member}))
            surplus = set(self.held) - mine
            if surplus:
                epochs = [self.held[name].epoch for name in surplus]
                await self._drop(surplus, "rebalanced")  # stop serving before freeing the row
                await conn.execute(_RELEASE, list(surplus), self.member, epochs)
            if not claim:
                return {}
            wanted = [row["name"] for row in await conn.fetch(_FREE, sorted(mine - set(self.held)))]
            if not wanted:
                return {}
            started = time.monotonic()
            claimed = await conn.fetch(_CLAIM, wanted, self.member, self.ttl)
        gained: dict[str, Fence] = {}
        for row in claimed:
            self.held[row["name"]] = _Held(row["epoch"], started + self.ttl - self.margin)
            gained[row["name"]] = Fence(row["name"], row["epoch"])
        if gained:
            self._changed.set()
            self.log.info(
                "leases claimed",
                group=self.group,
                leases=compact(gained),
                epochs=sorted({f.epoch for f in gained.values()}),
            )
        return gained

    async def _take_on(self, gained: dict[str, Fence]) -> None:
        """Hand newly claimed leases to the service; give them back if it cannot take them.

        A take-over that hangs (a database that stopped answering without closing the
        connection) is cut off after a lease's time to live and given back the same way:
        ``on_lose`` then undoes whatever half of it was done, and the next tick claims again.
        """
        try:
            async with asyncio.timeout(self.ttl):
                await self._on_gain(gained)
        except Exception as exc:  # TimeoutError included
            self.log.warning("could not take leases on", error=type(exc).__name__)
            await self._release(set(gained))

    async def _watchdog(self, stop: asyncio.Event) -> None:
        """Stop serving each lease the moment its validity runs out (renewals failing)."""
        while not stop.is_set():
            now = time.monotonic()
            expired = {name for name, held in self.held.items() if now >= held.valid_until}
            if expired:
                await self._drop(expired, "expired")
            soonest = min((h.valid_until for h in self.held.values()), default=now + 1.0)
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), max(0.0, min(soonest - now, 1.0)))

    async def _drop(self, names: set[str], why: str) -> None:
        names = {name for name in names if self.held.pop(name, None) is not None}
        if not names:
            return
        log = self.log.warning if why in ("lost", "expired", "withdrawn") else self.log.info
        log("leases given up", group=self.group, leases=compact(names), why=why)
        try:
            await self._on_lose(names, why)
        except Exception:
            self.log.exception("stopping leased work failed", leases=compact(names))

    async def _release(self, names: set[str], why: str = "released") -> None:
        """Stop serving ``names``, then free their rows so the next owner claims at once."""
        epochs = {name: self.held[name].epoch for name in names if name in self.held}
        await self._drop(set(epochs), why)
        if not epochs:
            return
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2.0):
                await self.pool.execute(_RELEASE, list(epochs), self.member, list(epochs.values()))

    async def _withdraw(self) -> None:
        """Stop serving everything, free the rows, and leave the live set (see the module doc)."""
        self.withdrawn = True
        self.log.warning(
            "cannot serve: withdrawing from the lease group",
            group=self.group,
            leases=compact(self.held),
        )
        # stop serving first (on_lose: timers, subscriptions), then free the rows
        await self._release(set(self.held), why="withdrawn")
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2.0):
                await self.pool.execute(
                    "DELETE FROM spades_lease_members WHERE grp = $1 AND member = $2",
                    self.group,
                    self.member,
                )

    async def _release_all(self) -> None:
        await self._release(set(self.held))
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2.0):
                await self.pool.execute(
                    "DELETE FROM spades_lease_members WHERE grp = $1 AND member = $2",
                    self.group,
                    self.member,
                )
