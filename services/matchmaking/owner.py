"""The lease owner: what a replica runs for the ladders whose leases it holds (one lease per
ladder, `matchmaking/<ladder>`, shared out among the live replicas by `events.leases`). On
gaining a ladder it rebuilds its queue and subscribes to the ladder's own subjects; on losing
it, it drains them, lets a request in flight finish (at most `STOP_WAIT` seconds: the store's
fence refuses a late append) and forgets the queue. One pairing loop runs over the ladders
served here.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from typing import Any

from events.contracts.ladders import configured
from events.leases import LeaseGroup, member_id
from events.store import Fence
from services.matchmaking.matcher import LEASE, Matchmaker, lease_of
from services.matchmaking.responders import join_decoder, leave_decoder, responder
from services.runtime import logs
from services.runtime.service import Runtime

__all__ = ["Owner", "ladder_of_lease"]

PAIRING_INTERVAL = 0.5  # seconds between pairing rounds
STOP_WAIT = 2.0  # seconds a handed-over ladder waits for its request in flight


def ladder_of_lease(name: str) -> str:
    """Return the ladder a lease name (`matchmaking/<ladder>`) stands for."""
    return name.removeprefix(f"{LEASE}/")


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


class Owner:
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
                    cb=responder(rt, join_decoder, lambda r: self.mm.join(r, time.time())),
                ),
                await rt.nc.subscribe(
                    rt.subjects.ladder_leave(ladder), cb=responder(rt, leave_decoder, self.mm.leave)
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
