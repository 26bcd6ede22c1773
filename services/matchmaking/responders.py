"""The public subjects, answered by every replica in one queue group: a join is forwarded to
its ladder's owner, a leave to the owner of the ladder the player waits in (retried for a few
seconds while the ladder changes hands, then ``unavailable``), and a status is answered from
the database (`services.matchmaking.readmodels.status`). `responder` is the one way a
subscription decodes, answers and replies, for the public subjects and the owner's own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import msgspec
from nats.aio.msg import Msg

from events.contracts.ladders import UnknownLadder, ruleset_of
from events.contracts.matchmaking import JoinQueue, LeaveQueue, QueueStatus, Reply
from events.retry import Backoff
from services.matchmaking.matcher import refuse
from services.matchmaking.readmodels import QUEUED_SQL, status
from services.runtime import logs
from services.runtime.service import Runtime

__all__ = ["Public", "join_decoder", "leave_decoder", "responder"]

FORWARD_WITHIN = 15.0  # seconds a request keeps looking for its ladder's owner (a handover)
FORWARD_BACKOFF = Backoff(first=0.05, factor=2.0, most=1.0, jitter=0.2)

_encoder = msgspec.json.Encoder()
join_decoder = msgspec.json.Decoder(JoinQueue)
leave_decoder = msgspec.json.Decoder(LeaveQueue)
_status = msgspec.json.Decoder(QueueStatus)
_reply = msgspec.json.Decoder(Reply)


def responder(
    rt: Runtime, decoder: Any, answer: Callable[[Any], Awaitable[Reply]]
) -> Callable[[Msg], Coroutine[Any, Any, None]]:
    """Return a subscription callback: decode, answer, reply; never leave a request hanging."""

    async def handle(msg: Msg) -> None:
        with logs.work(logs.request_id_of(msg.headers)):
            try:
                request = decoder.decode(msg.data)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                reply = refuse("malformed", f"cannot read the request: {exc}")
            else:
                try:
                    reply = await answer(request)
                except Exception as exc:
                    rt.log.exception("request failed", subject=msg.subject)
                    reply = refuse("unavailable", f"try again: {type(exc).__name__}")
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


async def _forward(rt: Runtime, subject: str, body: bytes, ladder: str) -> Reply:
    """Ask the owner of ``ladder``'s queue; while nobody owns it (a handover), ask again."""
    reply = refuse("unavailable", f"nobody serves the {ladder} queue now: try again")
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


class Public:
    """The public subjects, answered by every replica (one queue group)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    async def join(self, request: JoinQueue) -> Reply:
        try:
            ruleset_of(request.ladder)
        except UnknownLadder as exc:
            return refuse(exc.code, str(exc))
        subject = self.rt.subjects.ladder_join(request.ladder)
        return await _forward(self.rt, subject, _encoder.encode(request), request.ladder)

    async def leave(self, request: LeaveQueue) -> Reply:
        queued = await self.rt.pool.fetchrow(QUEUED_SQL, request.player_id)
        if queued is None:
            return refuse("not_queued", f"{request.player_id} is not waiting in any queue")
        ladder = queued["ladder"]
        subject = self.rt.subjects.ladder_leave(ladder)
        return await _forward(self.rt, subject, _encoder.encode(request), ladder)

    async def status(self, request: QueueStatus) -> Reply:
        return await status(self.rt.pool, request, time.time())

    async def subscribe(self) -> list[Any]:
        rt, group = self.rt, self.rt.subjects.matchmaking_queue_group()
        answers = (
            (rt.subjects.matchmaking_join(), responder(rt, join_decoder, self.join)),
            (rt.subjects.matchmaking_leave(), responder(rt, leave_decoder, self.leave)),
            (rt.subjects.matchmaking_status(), responder(rt, _status, self.status)),
        )
        return [
            await rt.nc.subscribe(subject, queue=group, cb=_each_in_a_task(answer))
            for subject, answer in answers
        ]
