"""The table's load -> decide -> append -> publish path: the games one replica serves.

`Games` keeps the live games of the slots this replica owns in memory (and finished games
read again, within a byte limit), loads a game from its stream when it is not there, appends
what a `services.table.tables.Table` decided under the slot's lease (the store refuses a
replica whose epoch is past), folds the states that deciding computed (`Decided`: never the
wire events back through the engine) and publishes every audience's messages in one `Frame`.
The requests (`services.table.handlers`), the timers (`services.table.timers`) and the
openings (`services.table.opener`) all go through it; `services.table.app` owns the leases.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
import uuid

from events.contracts.audience import FRAMES, Frame
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.inline import publish_soon
from events.leases import LeaseGroup
from events.store import ConcurrencyConflict, Fence, Fenced
from events.subjects import Subjects, slot_of
from services.runtime import ops
from services.runtime.service import Runtime
from services.table import commit
from services.table.decided import Decided
from services.table.finished import FinishedTables
from services.table.refusals import Rejected
from services.table.tables import Table

LEASE_GROUP = "table"
# Test hook (seconds): every append waits this long after taking its fence, so that a replica
# paused by a fault test has appends in flight, as a busy one does at any moment.
APPEND_DELAY = float(os.environ.get("SPADES_TABLE_APPEND_DELAY") or 0)


def lease_name(slot: int) -> str:
    """Return the lease of a table hash slot (`events.subjects.SLOTS` of them)."""
    return f"{LEASE_GROUP}/{slot}"


@functools.lru_cache(maxsize=65536)
def _lease_of(game_id: str) -> str:
    """Return the lease of a game's slot (hashed once per game, not four times per command)."""
    return lease_name(slot_of(game_id))


@functools.lru_cache(maxsize=65536)
def _audiences(subjects: Subjects, game_id: str) -> str:
    """Return a game's audience subject (checked and hashed once per game, not per frame)."""
    return subjects.audiences(game_id)


_APPENDED = ops.APPEND_LATENCY.labels(outcome="ok")
_CONFLICTED = ops.APPEND_LATENCY.labels(outcome="conflict")


class Games:
    """The games of the slots this replica owns: loaded, appended to, published."""

    def __init__(self, rt: Runtime, leases: LeaseGroup) -> None:
        self.rt = rt
        self.settings = rt.settings
        self.log = rt.log
        self.leases = leases
        self.tables: dict[str, Table] = {}
        """The live games of the owned slots."""
        self.finished = FinishedTables(self.settings.table_finished_cache_bytes)
        """Finished games read again, within a byte limit (SPADES_TABLE_FINISHED_CACHE_BYTES)."""
        self.locks: dict[str, asyncio.Lock] = {}

    def slot(self, game_id: str) -> int:
        """Return the hash slot of a game."""
        return slot_of(game_id)

    def fence(self, game_id: str) -> Fence | None:
        """Return the fence to append to ``game_id`` under, None if this replica may not."""
        return self.leases.fence(_lease_of(game_id))

    def in_doubt(self, game_id: str) -> bool:
        """Whether ``game_id``'s slot is still held but its lease's renewal is late: it will be
        renewed (served again) or given up (the game dropped with it) within a lease's time."""
        return self.fence(game_id) is None and self.leases.holds(_lease_of(game_id))

    def owner_fence(self, game_id: str) -> Fence:
        """Return the fence for ``game_id``; raise `Rejected` ``unavailable`` if not the owner."""
        fence = self.fence(game_id)
        if fence is None:
            raise Rejected(
                "unavailable",
                "the table serving this game is changing hands: send it again (same command id)",
            )
        return fence

    async def fenced_off(self, game_id: str) -> None:
        """The store refused our epoch: someone else owns the slot now; stop serving it."""
        name = lease_name(self.slot(game_id))
        self.log.warning("append fenced off: the slot has a new owner", lease=name)
        await self.leases.give_up({name}, "fenced")

    def lock(self, game_id: str) -> asyncio.Lock:
        """Return the lock every change of ``game_id`` holds."""
        return self.locks.setdefault(game_id, asyncio.Lock())

    def count_active(self) -> None:
        ops.ACTIVE_GAMES.set(sum(1 for t in self.tables.values() if not t.over))

    def count_finished(self) -> None:
        ops.FINISHED_CACHE_BYTES.set(self.finished.bytes)
        ops.FINISHED_CACHE_GAMES.set(len(self.finished))

    def drop(self, game_id: str) -> None:
        """Forget ``game_id``'s table, live or finished (its timer is `Timers.forget`'s)."""
        self.tables.pop(game_id, None)
        if game_id in self.finished.tables:
            self.finished.pop(game_id)
            self.count_finished()

    async def load(self, game_id: str, *, fresh: bool = False) -> Table | None:
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
            self.count_finished()
            return table
        self.tables[game_id] = table
        self.count_active()
        return table

    async def append(
        self,
        table: Table,
        events: Decided,
        *,
        id_seed: str,
        actor: str,
        command_id: uuid.UUID | None = None,
    ) -> None:
        """Append ``events`` after the table's version, fenced by the slot's lease, then
        fold the states their deciding computed (never the wire events back through the engine)
        and publish every audience's messages."""
        fence = self.owner_fence(table.game_id)
        states = events.after
        new = commit.records(
            table,
            events,
            states,
            time.time(),
            id_seed=id_seed,
            actor=actor,
            command_id=command_id,
            epoch=fence.epoch,
        )
        if APPEND_DELAY:  # a test's window: the fence taken, the append not yet sent
            await asyncio.sleep(APPEND_DELAY)
        started = time.perf_counter()
        try:
            stored = await self.rt.store.append(
                stream_of(table.game_id), table.version, new, fence=fence
            )
        except ConcurrencyConflict as exc:
            _CONFLICTED.observe(time.perf_counter() - started)
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
            await self.fenced_off(table.game_id)
            raise
        _APPENDED.observe(time.perf_counter() - started)
        if stored and stored[0].metadata.epoch != fence.epoch:
            # Our epoch is stale, yet the store answered: what we meant to write is what the
            # slot's new owner wrote at that version (a bot's or a resent command's same
            # move), so the store took it for a retry and handed back the new owner's
            # events. What is published below is theirs, as stored.
            self.log.info(
                "late append: the slot's new owner had written the same events",
                lease=lease_name(self.slot(table.game_id)),
                epoch=fence.epoch,
                owner_epoch=stored[0].metadata.epoch,
            )
        await self.publish(table, commit.fold(table, stored, events, states, time.time()))

    async def publish(self, table: Table, frame: Frame) -> None:
        """Publish what each audience is sent of a commit (core NATS, buffered: no flush per
        message). Never fails the command: a gateway that misses a frame sees the gap in the
        next one (or the nudge of a new owner) and asks for the rest."""
        if frame.last >= frame.first:
            table.recent.append(frame)
        subject = _audiences(self.rt.subjects, table.game_id)
        data = FRAMES.encode(frame)
        try:  # written with the command's answer, without a flusher step per message
            if not publish_soon(self.rt.nc, subject, data):
                await self.rt.nc.publish(subject, data)
        except Exception as exc:  # NATS away: the frame is lost, the log is not
            self.log.warning("frame not published", error=type(exc).__name__)
