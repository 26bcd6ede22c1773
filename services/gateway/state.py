"""What every gateway handler is given: the process's connections and settings."""

from __future__ import annotations

import asyncio
import functools
import itertools
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import asyncpg
import msgspec
import nats.errors
from litestar import WebSocket
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from events.contracts.audience import CatchupReply, catchup_decoder
from events.contracts.game import Catchup, SubmitCommand, TableReply, TableRequest
from events.contracts.talk import Say
from events.errors import Refusal
from events.inline import publish_soon, subscribe_inline
from events.pgstore import PostgresEventStore
from events.retry import Backoff
from events.subjects import Subjects
from services.gateway import social
from services.gateway.auth import Tokens
from services.gateway.config import GatewayConfig
from services.runtime.config import Settings


class Pace:
    """A token bucket: ``burst`` at once, then ``rate`` a second."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.allowance, self.checked = burst, time.monotonic()

    def take(self) -> bool:
        """Spend one token; False (nothing spent) when none is left."""
        now = time.monotonic()
        self.allowance = min(self.burst, self.allowance + (now - self.checked) * self.rate)
        self.checked = now
        if self.allowance < 1:
            return False
        self.allowance -= 1
        return True


def receive(socket: WebSocket[Any, Any, Any], within: float | None) -> Awaitable[Any]:
    """Return the socket's next ASGI message, awaited for at most ``within`` s (a
    `TimeoutError` past it); with None, no timer at all: a connection past its auth deadline
    waits for its frames without an `asyncio.wait_for` around each."""
    if within is None:
        return socket.receive()
    return asyncio.wait_for(socket.receive(), within)


class ConnectionCaps:
    """The WebSocket connections of one replica, counted per client address, per account, and
    per address among those watching without an account (`GatewayConfig.ws_*`): one place
    cannot hold the replica's sockets. Each ``take_*`` that answers True is matched by the
    ``drop_*`` of the same key when the connection ends."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.addresses: Counter[str] = Counter()
        self.accounts: Counter[str] = Counter()
        self.anonymous: Counter[str] = Counter()

    @staticmethod
    def _take(counts: Counter[str], key: str, cap: int) -> bool:
        if counts[key] >= cap:
            return False
        counts[key] += 1
        return True

    @staticmethod
    def _drop(counts: Counter[str], key: str) -> None:
        counts[key] -= 1
        if counts[key] <= 0:
            del counts[key]

    def take_address(self, address: str) -> bool:
        """Count a new connection from ``address``; False when the address is at its cap."""
        return self._take(self.addresses, address, self.config.ws_per_address)

    def drop_address(self, address: str) -> None:
        self._drop(self.addresses, address)

    def take_account(self, player_id: str) -> bool:
        """Count a connection authenticated as ``player_id``; False at the account's cap."""
        return self._take(self.accounts, player_id, self.config.ws_per_account)

    def drop_account(self, player_id: str) -> None:
        self._drop(self.accounts, player_id)

    def take_anonymous(self, address: str) -> bool:
        """Count a connection of ``address`` watching without an account; False at the cap."""
        return self._take(self.anonymous, address, self.config.ws_anonymous_per_address)

    def drop_anonymous(self, address: str) -> None:
        self._drop(self.anonymous, address)


class Answers:
    """The answers to one request, in the order they came: what `Replies.open` gives.

    A list and at most one waiting future, instead of an `asyncio.Queue` and an
    `asyncio.timeout` per wait: the gateway waits for one of these per table command, and
    the queue's and the timeout's machinery cost more than the wait itself."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[Msg] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, msg: Msg) -> None:
        """Add an answer; wake whoever waits for one."""
        self._items.append(msg)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self, within: float) -> Msg | None:
        """Return the next answer, or None when none comes within ``within`` seconds."""
        if not self._items:
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = loop.call_later(within, _wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None
            if not self._items:
                return None
        return self._items.popleft()


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Replies:
    """One reply subscription per replica for the requests it may send more than once (see
    `_until_answered`): each request waits on a token of its own under the replica's inbox
    prefix, and every send of it names the same reply subject. Before, each such request
    subscribed an inbox of its own: a NATS SUB and UNSUB per table command, about a seventh of
    the gateway's CPU under play (`python -m benchmarks gateway` with SPADES_BENCH_PYSPY)."""

    def __init__(self, nc: NATS) -> None:
        self.nc = nc
        self.prefix = ""
        self.waiting: dict[str, Answers] = {}
        self._tokens = itertools.count()
        self._subscribed: asyncio.Task[None] | None = None

    async def open(self) -> tuple[str, Answers]:
        """Return a new reply subject and where its answers arrive (`close` it after)."""
        if self._subscribed is None:
            self._subscribed = asyncio.ensure_future(self._subscribe())
        subscribed = self._subscribed
        if not subscribed.done() or subscribed.exception() is not None:
            try:  # (once subscribed, a request waits for nothing here: no shield per command)
                await asyncio.shield(subscribed)
            except Exception:
                self._subscribed = None  # the next request subscribes again
                raise
        token = str(next(self._tokens))
        answers = self.waiting[token] = Answers()
        return f"{self.prefix}.{token}", answers

    def close(self, subject: str) -> None:
        """Stop waiting for answers to ``subject``: a late one is dropped."""
        self.waiting.pop(subject.rpartition(".")[2], None)

    async def _subscribe(self) -> None:
        prefix = self.nc.new_inbox()
        await subscribe_inline(self.nc, f"{prefix}.*", self._deliver)  # no task step an answer
        self.prefix = prefix

    def _deliver(self, msg: Msg) -> None:
        answers = self.waiting.get(msg.subject.rpartition(".")[2])
        if answers is not None:
            answers.put(msg)


@dataclass
class Gateway:
    """One gateway replica's resources; it keeps no game state of its own."""

    settings: Settings
    config: GatewayConfig
    subjects: Subjects
    pool: asyncpg.Pool
    store: PostgresEventStore
    nc: NATS
    js: JetStreamContext
    log: Any
    tokens: Tokens = field(init=False)
    connections: ConnectionCaps = field(init=False)
    replies: Replies = field(init=False)
    """The replica's reply inbox for requests sent until answered (`_until_answered`)."""
    queue_changes: dict[str, deque[float]] = field(init=False, default_factory=dict)
    """When each account last joined or left a ranked queue (`http.queue.spend_change`)."""

    def __post_init__(self) -> None:
        self.tokens = Tokens(self.config.jwt_secret, self.config.token_seconds)
        self.connections = ConnectionCaps(self.config)
        self.replies = Replies(self.nc)


class Unavailable(Refusal):
    """A service did not answer in time (or nobody listens on its subject)."""

    def __init__(self, reason: str) -> None:
        super().__init__("unavailable", f"the service did not answer: try again ({reason})")


REQUEST_TIMEOUT = 5.0
_table_reply = msgspec.json.Decoder(TableReply)


async def ask(gateway: Gateway, subject: str, body: msgspec.Struct) -> bytes:
    """Send a NATS request and return the answer's bytes; raise Unavailable on no answer."""
    try:
        msg = await gateway.nc.request(subject, _encoder.encode(body), timeout=REQUEST_TIMEOUT)
    except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as exc:
        raise Unavailable(type(exc).__name__) from None
    return msg.data


# How long a table request keeps being sent while the game's slot changes hands (a
# replica died, was paused or cut off from NATS, or the database restarted): nobody listens,
# the replica answers ``unavailable``, or it does not answer at all (a paused or cut-off owner
# whose subscription the server still holds swallows the request). The take-over of such a
# slot takes a lease's time to live (SPADES_LEASE_SECONDS, 5 s) and a tick, or the NATS
# grace (SPADES_NATS_GRACE_SECONDS, 3 s) and a tick; this covers either with room to spare.
# Safe to resend: a command carries its id, and a retried id is not applied twice. Past this
# the player gets ``unavailable`` and resends himself. (SPADES_FAILOVER_SECONDS, 12 by default:
# `GatewayConfig.failover_seconds`.)
# How long one send waits for its answer before it is sent again (same bytes, same command
# id): a live owner answers in milliseconds. Every send shares one reply inbox, so a slow
# owner's answer to the first send still counts after a resend (which it answers ``retry``).
OWNER_TIMEOUT = 3.0


# The pauses between two sends of a table request while its slot changes hands.
OWNER_BACKOFF = Backoff(first=0.05, factor=2.0, most=1.0)
STATUS_HEADER, NO_RESPONDERS = "Status", "503"
"""How the NATS server tells a request's inbox that nobody listens on its subject."""

Reply = TypeVar("Reply", TableReply, CatchupReply)


class _Coded(msgspec.Struct):
    code: str = ""
    raw: bytes = b""


_coded = msgspec.json.Decoder(_Coded)


def _raw(data: bytes) -> _Coded:
    return _Coded(code=_coded.decode(data).code, raw=data)


class _Answer(Protocol):
    @property
    def code(self) -> str: ...


Answer = TypeVar("Answer", bound=_Answer)


async def ask_again(gateway: Gateway, subject: str, body: msgspec.Struct) -> tuple[bytes, bool]:
    """Send a request its receiver answers idempotently (an open with its command id, a queue
    join or leave) until one answers with anything but ``unavailable`` or the failover wait runs
    out; return the answer and whether an earlier send went unanswered (then the request may
    have been applied already, and a refusal of a duplicate means it was). Raise `Unavailable`
    when the last try found nobody listening or went unanswered.

    Such requests reach any replica of a queue group, which forwards them to the owner: a
    paused or cut-off replica swallows what it is sent, and the owner may be changing hands
    (issue 25: the gateway gave up at its first timeout, and a player saw ``unavailable``)."""
    answer, lost = await _until_answered(gateway, subject, body, _raw)
    return answer.raw, lost > 0


async def _until_answered(
    gateway: Gateway, subject: str, request: msgspec.Struct, decode: Callable[[bytes], Answer]
) -> tuple[Answer, int]:
    """Send until an answer whose code is not ``unavailable`` (see `_ask_owner`); return it
    and how many sends were made before the last. Every send shares one reply inbox, so the
    answer to an earlier send that came late (its receiver waited for a take-over) counts as
    much as the answer to the last: a send swallowed by a paused replica of a queue group
    costs nothing once another send reached a live one."""
    body = _encoder.encode(request)
    nc, loop = gateway.nc, asyncio.get_running_loop()
    try:
        inbox, answers = await gateway.replies.open()
    except Exception as exc:  # the connection refused the subscription: not served now
        raise Unavailable(type(exc).__name__) from None
    answer: Answer | None = None
    failure, sends = "TimeoutError", 0
    deadline = loop.time() + gateway.config.failover_seconds
    resend = loop.time()
    try:
        while (now := loop.time()) < deadline:
            if now >= resend:  # nothing came back in time: send it again, same bytes
                if not publish_soon(nc, subject, body, inbox):  # no flusher step per command
                    await nc.publish(subject, body, reply=inbox)
                sends += 1
                resend = now + OWNER_TIMEOUT
            msg = await answers.get(max(0.01, min(resend, deadline) - now))
            if msg is None:
                continue
            if msg.headers and msg.headers.get(STATUS_HEADER) == NO_RESPONDERS:
                failure = "NoRespondersError"  # nobody serves it this instant: soon again
                resend = min(resend, loop.time() + OWNER_BACKOFF.delay(sends))
                continue
            answer = decode(msg.data)
            if answer.code != "unavailable":
                return answer, sends - 1
            resend = min(resend, loop.time() + OWNER_BACKOFF.delay(sends))
    finally:
        gateway.replies.close(inbox)
    if answer is None:
        raise Unavailable(failure)
    return answer, sends - 1


async def _ask_owner(
    gateway: Gateway, game_id: str, request: TableRequest, decode: Callable[[bytes], Reply]
) -> Reply:
    """Send ``request`` to the table replica owning ``game_id`` until one answers with
    anything but ``unavailable`` or the failover wait runs out; raise `Unavailable` when the
    last try found no replica listening or went unanswered.

    A send left unanswered is sent again, to whoever owns the game by then: the owner may have
    been paused or cut off and the slot be changing hands (issue 25: the gateway gave up
    at its first timeout, and a player saw ``unavailable`` during a 5 s take-over).
    """
    subject = _table_subject(gateway.subjects, game_id)
    reply, _ = await _until_answered(gateway, subject, request, decode)
    return reply


async def ask_table(gateway: Gateway, game_id: str, request: TableRequest) -> TableReply:
    """Send a request to the table replica owning ``game_id`` and return its reply. A seat's
    `Say` goes with whom the speaker is apart from (blocks) and who muted him here."""
    if isinstance(request, SubmitCommand) and isinstance(request.command, Say):
        speaker, pool = request.player_id, gateway.pool
        said = msgspec.structs.replace(
            request.command,
            apart=tuple(sorted(await social.apart_from(pool, speaker))),
            deaf=tuple(sorted(await social.deaf_to(pool, game_id, speaker))),
        )
        request = msgspec.structs.replace(request, command=said)
    return await _ask_owner(gateway, game_id, request, _table_reply.decode)


def _catchup_reply(data: bytes) -> CatchupReply:
    try:
        return catchup_decoder.decode(data)
    except msgspec.DecodeError:  # a refusal before the table read the request
        refused = _table_reply.decode(data)
        return CatchupReply(ok=False, code=refused.code, message=refused.message)


async def ask_catchup(gateway: Gateway, request: Catchup) -> CatchupReply:
    """Ask the owner of a game what an audience is to be sent (`events.contracts.audience`); raise
    Unavailable when no owner answers within the failover wait."""
    return await _ask_owner(gateway, request.game_id, request, _catchup_reply)


@functools.lru_cache(maxsize=65536)
def _table_subject(subjects: Subjects, game_id: str) -> str:
    """Return a game's command subject (checked and hashed once per game, not per command)."""
    return subjects.table_command(game_id)


_encoder = msgspec.json.Encoder()
