"""Opening a table on the replica that owns its slot, forwarding when it is another.

An open (practice, casual, or a MatchFound's rated game) reaches any replica, which picks the
game id first (`services.table.openings`) and then opens it itself if it owns the game's
slot, or forwards the request to the owner on the slot's subject, asking again while
nobody owns it (a failover). So a standby never holds a game it cannot drive. Opening is
idempotent: the game id comes from the request (a retry, a redelivered MatchFound).
"""

from __future__ import annotations

import secrets
import time
import uuid
from typing import Any

import msgspec
from nats.aio.msg import Msg

from events.consumer import Received, Unprocessable
from events.contracts import game as wire
from events.contracts.game import game_id_of_match, stream_of
from events.contracts.ladders import UnknownLadder, ruleset_of
from events.envelope import REGISTRY, Metadata
from events.logs import bound_ids
from events.pgstore import Conn
from events.retry import Backoff
from events.store import ConcurrencyConflict, Fenced
from services.runtime import logs
from services.runtime.service import Runtime
from services.table import audiences, replies
from services.table.games import Games
from services.table.openings import OpenRequest, opening_events, opening_of
from services.table.refusals import Rejected
from services.table.tables import Table, event_ids
from services.table.timers import Timers

FORWARD_WITHIN = 15.0  # seconds an open keeps looking for its slot's owner, 3 s a send
# An open forwarded while nobody owns its slot (a failover): ask again, less often.
FORWARD_BACKOFF = Backoff(first=0.05, factor=2.0, most=1.0)


class Opener:
    """Opens tables: here when this replica owns the slot, else at its owner."""

    def __init__(self, rt: Runtime, games: Games, timers: Timers) -> None:
        self.rt = rt
        self.settings = rt.settings
        self.log = rt.log
        self.games = games
        self.timers = timers

    async def on_open(self, msg: Msg) -> None:
        """Open an unrated table (practice or casual) on the replica owning its slot."""
        try:
            request = replies.REQUESTS.decode(msg.data)
            if not isinstance(request, wire.OpenPractice | wire.OpenCasual):
                raise msgspec.ValidationError("expected an OpenPractice or OpenCasual request")
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await replies.send(msg, wire.TableReply(ok=False, code="malformed", message=str(exc)))
            return
        await replies.send(msg, await self.at_owner(request))

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
            reply = await self.at_owner(request)
        if not reply.ok:  # no owner reachable yet: the consumer retries with a growing delay
            raise RuntimeError(f"could not open the match's game: {reply.code}")

    async def at_owner(self, request: OpenRequest) -> wire.TableReply:
        """Open here if this replica owns the game's slot, else ask the owner to."""
        try:
            game_id, _how = opening_of(request)
        except Rejected as exc:
            return wire.TableReply(ok=False, code=exc.code, message=str(exc))
        if self.games.fence(game_id) is not None:
            return await self.here(request)
        subject = self.rt.subjects.table_command(game_id)
        body = replies.ENCODER.encode(request)
        reply: wire.TableReply | None = None
        async for attempt in FORWARD_BACKOFF.attempts(within=FORWARD_WITHIN):
            if attempt > 1 and self.games.fence(game_id) is not None:  # the slot came to us
                return await self.here(request)
            try:
                answer = await self.rt.nc.request(subject, body, timeout=3)
                reply = replies.REPLY.decode(answer.data)
            except Exception as exc:  # nobody owns it this instant (a failover), or NATS away
                reply = replies.unavailable(game_id, exc)
            if reply.code != "unavailable":
                return reply
        assert reply is not None
        return reply

    async def here(self, request: OpenRequest) -> wire.TableReply:
        """Open the requested game as its slot's owner; refuse if this replica is not."""
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
                return replies.unavailable(game_id, exc)
        return wire.TableReply(ok=True, game_id=game_id, version=1)

    async def _open(self, game_id: str, **how: Any) -> None:
        # committed deals (docs/FAIRNESS.md): every seat not played by a bot may contribute
        window = self.settings.contribution_seconds > 0
        humans = tuple(s for s in range(len(how["players"])) if s not in how["bots"])
        games = self.games
        async with games.lock(game_id):
            fence = games.owner_fence(game_id)
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
                await games.fenced_off(game_id)
                raise Rejected("unavailable", "the table changed hands: send it again") from None
            table = await games.load(game_id, fresh=True)
            if table is not None:
                self.timers.schedule(table)
                await games.publish(table, audiences.nudge(table))  # a match's waiters look
