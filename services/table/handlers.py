"""The table's requests on a slot's subject: a seat's command, a view, a catch-up, an open.

Handlers are thin: decode, load, `Table.decide` (the engine), append (`services.table.games`),
answer. A command that lost the race for the game's next version is judged again on the new
state (`CONFLICT_ATTEMPTS` times); a command id the game has applied already gets the same
answer again (``retry``). A database or NATS error fails the one request (``unavailable``:
send it again, same command id); nothing dies of it.

Logs: a command logs under its command id as `request_id` with its `game_id`. Lines name the
command's type and the seat, never a card or the seed.
"""

from __future__ import annotations

import contextlib
import functools
import time

import msgspec
from nats.aio.msg import Msg
from prometheus_client import Counter

from events.contracts import game as wire
from events.contracts.audience import FRAMES, CatchupReply
from events.contracts.game import stream_of
from events.retry import Backoff
from events.store import ConcurrencyConflict, Fenced
from services.runtime import logs, ops
from services.runtime.service import Runtime
from services.table import audiences, replies
from services.table.catchups import Catchups
from services.table.games import Games
from services.table.opener import Opener
from services.table.openings import OpenRequest
from services.table.refusals import Rejected
from services.table.tables import Table
from services.table.tier import BotTier
from services.table.timers import Timers

# A command that lost the race for the game's next version: judge it again on the new state;
# the jittered pause lets two replicas that keep colliding (a failover) fall out of step.
CONFLICT_BACKOFF = Backoff(first=0.005, factor=4.0, most=0.08, jitter=0.5)
CONFLICT_ATTEMPTS = 3


class Handlers:
    """Answers the requests on the subjects of the slots this replica owns."""

    def __init__(
        self, rt: Runtime, games: Games, timers: Timers, opener: Opener, bots: BotTier
    ) -> None:
        self.rt = rt
        self.log = rt.log
        self.games = games
        self.timers = timers
        self.opener = opener
        self.bots = bots
        self.catchups = Catchups()

    async def on_command(self, msg: Msg) -> None:
        """Answer a request on a slot's subject: a seat's command, a view, or an open."""
        try:
            request = replies.REQUESTS.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await replies.send(msg, wire.TableReply(ok=False, code="malformed", message=str(exc)))
            return
        if isinstance(request, OpenRequest):
            await replies.send(msg, await self.opener.here(request))
            return
        if isinstance(request, wire.Catchup):
            with logs.work(None, game_id=request.game_id):
                async with self.games.lock(request.game_id):
                    answer = await self._catchup(request)
            if msg.reply:
                with contextlib.suppress(Exception):
                    await replies.respond(msg, FRAMES.encode(answer))
            return
        request_id = (
            str(request.command_id)
            if isinstance(request, wire.SubmitCommand | wire.LeaveTable)
            else None
        )
        with logs.work(request_id, game_id=request.game_id):
            async with self.games.lock(request.game_id):
                try:
                    reply = await self._answer(request)
                except Rejected as exc:
                    command = _command_name(request)
                    ops.COMMANDS_REJECTED.labels(command=command, reason=exc.code).inc()
                    # bound here, not per command: an accepted command logs nothing at info
                    log = self.log.bind(player_id=request.player_id)
                    log.info("command rejected", command=command, code=exc.code)
                    reply = wire.TableReply(
                        ok=False, code=exc.code, message=str(exc), game_id=request.game_id
                    )
                except Exception as exc:  # the database or NATS away: the sender tries again
                    reply = replies.unavailable(request.game_id, exc)
                    ops.COMMANDS_REJECTED.labels(
                        command=_command_name(request), reason="unavailable"
                    ).inc()
                    log = self.log.bind(player_id=request.player_id)
                    log.warning("command failed", error=type(exc).__name__)
            await replies.send(msg, reply)

    async def _answer(
        self, request: wire.SubmitCommand | wire.GetView | wire.LeaveTable
    ) -> wire.TableReply:
        games = self.games
        games.owner_fence(request.game_id)
        table = await games.load(request.game_id)
        if table is None:
            raise Rejected("unknown_game", f"there is no game {request.game_id}")
        games.owner_fence(request.game_id)  # still ours after the read
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
                await games.append(
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
                reloaded = await games.load(request.game_id, fresh=True)
                if reloaded is None:
                    raise Rejected("unknown_game", f"there is no game {request.game_id}") from None
                table = reloaded
                self.timers.schedule(table)  # whatever the command's fate, the timer runs on
                if request.command_id in table.results:
                    return _answered(table, request, retry=True)
                continue
            break
        else:
            raise Rejected("conflict", "the game moved on three times; send the command again")
        _handled(_command_name(request)).inc()
        self.log.debug(
            "command applied",
            command=_command_name(request),
            player_id=request.player_id,
            version=table.version,
        )
        self.timers.schedule(table)
        return _answered(table, request, retry=False)

    async def _catchup(self, request: wire.Catchup) -> CatchupReply:
        """Answer a gateway: the view or the messages after a seq, the turn and the clock."""
        try:
            self.games.owner_fence(request.game_id)
            table = await self.games.load(request.game_id)
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


@functools.cache
def _handled(command: str) -> Counter:
    """Return the accepted-commands counter of one command type (looked up once per type)."""
    return ops.COMMANDS_HANDLED.labels(command=command)


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
