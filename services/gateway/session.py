"""One WebSocket connection: authentication, subscriptions, commands, one writer.

The protocol is described in `services.gateway.ws` and PROTOCOL.md; the messages are in
`services.gateway.protocol`; each watched game is a `services.gateway.watch.Watch`; the
account's match announcements are `services.gateway.announce`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from typing import Any

import msgspec
from litestar import WebSocket
from litestar.exceptions import WebSocketDisconnect
from litestar.types import Send

from events.contracts import game as wire
from events.logs import bind_ids, bound_ids
from services.gateway import auth
from services.gateway.announce import Announcements
from services.gateway.config import MAX_FRAME_BYTES
from services.gateway.outbox import Outbox, text_frame
from services.gateway.protocol import (
    Ack,
    Auth,
    ClientMessage,
    Command,
    Error,
    Ping,
    Pong,
    Subscribe,
    Unsubscribe,
    Unsubscribed,
    ViewRequest,
    Welcome,
    _Out,
    parse,
    scoped_command_id,
    seat_command,
)
from services.gateway.rawsend import RAW_SEND, text_writer
from services.gateway.rooms import Rooms
from services.gateway.state import Gateway, Pace, Unavailable, ask_table, receive
from services.gateway.watch import Refused, Watch
from services.runtime import ops

AUTH_SECONDS = 10.0
MAX_OUTBOX = 2000
"""Messages waiting for a client before it is judged too slow and disconnected."""
MAX_BATCH = 256
"""Messages one frame carries at most on a batching connection (``/ws?batch=1``)."""
RATE_BURST = 200.0  # messages at once, before SPADES_WS_MESSAGES_PER_SECOND paces them
SUBSCRIBE_BURST = 20.0  # subscribes at once, before SPADES_WS_SUBSCRIBES_PER_MINUTE paces them
ANONYMOUS_WATCHES = 3
"""Games one connection without an account may watch at once (spectators only)."""

_encoder = msgspec.json.Encoder()


class Session(Announcements):
    """One WebSocket connection: authentication, subscriptions, commands, one writer.

    Every line logged while a client message is handled carries ``request_id`` (the client's
    ``command_id`` for a command, a fresh id otherwise), ``connection_id`` and, for a message
    about a game, ``game_id`` (`events.logs.bound_ids`); a watch keeps those of the
    ``subscribe`` that started it.
    """

    def __init__(self, gateway: Gateway, rooms: Rooms, socket: WebSocket[Any, Any, Any]) -> None:
        self.gateway = gateway
        self.rooms = rooms
        self.socket = socket
        self.connection_id = uuid.uuid4().hex
        self.claims: auth.Claims | None = None
        self._send: Send = socket.scope.get(RAW_SEND) or socket.send  # type: ignore[assignment]
        self._write = text_writer(self._send)
        """Writes a frame's bytes at once when the server can (`services.gateway.rawsend`)."""
        self.outbox = Outbox(None if self._write is None else self._flush)
        self.batch = socket.query_params.get("batch") == "1"
        """The client asked for every frame to be a JSON array of the messages ready at once."""
        self.close_code, self.close_reason = 1013, "too slow: resume with last_seq"
        self.watches: dict[str, Watch] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.background: set[asyncio.Task[None]] = set()
        self.matched: set[str] = set()
        config = gateway.connections.config
        self.pace = Pace(config.ws_messages_per_second, RATE_BURST)
        self.subscribes = Pace(config.ws_subscribes_per_minute / 60, SUBSCRIBE_BURST)
        self.role = ""
        self.log = gateway.log
        self.closing = False
        client = socket.client
        self.address = client.host if client else "unknown"
        """The client's address (the forwarded one only from a trusted proxy): its caps."""
        self.held: list[tuple[str, str]] = []
        """The connection caps this connection counts in (`ConnectionCaps`), dropped at the end."""
        self.awaiting = 0  # commands of this connection waiting for the table's answer

    # -- output --------------------------------------------------------------------------------

    def send(self, message: _Out) -> None:
        """Queue a message for the client (the writer sends them in order)."""
        self.send_raw(_encoder.encode(message))

    def send_raw(self, data: bytes) -> None:
        """Queue an encoded message for the client."""
        if self.closing:
            return
        outbox = self.outbox
        if len(outbox.items) >= MAX_OUTBOX:
            self.closing = True
            outbox.put(None)  # the writer closes: the client resumes later
            return
        outbox.put(data)

    def _flush(self) -> bool | None:
        """Write what is queued, as the writer would, from the loop's turn after it was queued
        (`services.gateway.outbox`); False (the rest left to the writer) when the writer must:
        the connection is closing or the transport is paused; None while a table's answer is
        awaited (a turn later, so that the ack leaves with the move)."""
        write, items = self._write, self.outbox.items
        if write is None or self.closing:
            return False
        if self.awaiting:
            return None
        while items:
            if not self.batch:
                data = items[0]
                if data is None or not write(data):
                    return False
                items.popleft()
                continue
            batch: list[bytes] = []
            for data in itertools.islice(items, MAX_BATCH):
                if data is None:
                    break
                batch.append(data)
            if not batch or not write(b"[" + b",".join(batch) + b"]"):
                return False
            for _ in batch:
                items.popleft()
        return True

    async def _writer(self) -> None:
        items, send, write = self.outbox.items, self._send, self._write
        while True:
            if not items:
                await self.outbox.wait()
            data = items.popleft()
            if data is None:
                await self._close()
                return
            if not self.batch:
                if write is None or not write(data):
                    await send(text_frame(data))
                continue
            # Everything queued by now goes in one frame: a move reaches a seat as its event, turn
            # and clock together. The table's answer to a command of ours comes a turn of the loop
            # after its frame: wait that turn, and the ack leaves with the move in the same write.
            if self.awaiting:
                await asyncio.sleep(0)
            batch, closing = [data], False
            while items and len(batch) < MAX_BATCH:
                more = items.popleft()
                if more is None:
                    closing = True
                    break
                batch.append(more)
            data = b"[" + b",".join(batch) + b"]"
            if write is None or not write(data):
                await send(text_frame(data))
            if closing:
                await self._close()
                return

    async def _close(self) -> None:
        with contextlib.suppress(Exception):
            await self.socket.close(code=self.close_code, reason=self.close_reason)

    # -- the connection ------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve the connection until the client leaves (or must be let go)."""
        with bound_ids(connection_id=self.connection_id):
            await self._run()

    def _refuse_connection(self, message: str) -> None:
        """Say why the connection is over (`too_many_connections`), then close it with 1008."""
        self.log.info("connection refused", code="too_many_connections", address=self.address)
        self.send(Error(code="too_many_connections", message=message))
        self.close_code, self.close_reason = 1008, "too_many_connections"
        self.closing = True
        self.outbox.put(None)

    async def _run(self) -> None:
        await self.socket.accept()
        writer = asyncio.create_task(self._writer())
        deadline = time.monotonic() + AUTH_SECONDS
        caps = self.gateway.connections
        if caps.take_address(self.address):
            self.held.append(("address", self.address))
        else:
            self._refuse_connection(
                f"at most {caps.config.ws_per_address} connections from one address"
            )
        try:
            while not writer.done():
                watching = bool(self.tasks)  # an anonymous spectator needs no token
                timeout = None if self.claims or watching else max(0.0, deadline - time.monotonic())
                try:
                    frame = await receive(self.socket, timeout)
                except TimeoutError:
                    self.send(Error(code="auth_timeout", message="authenticate within 10 s"))
                    # 1008 policy violation: not 1013 "try again later", which invites a retry
                    self.close_code, self.close_reason = 1008, "auth_timeout"
                    self.outbox.put(None)
                    await writer
                    return
                if frame["type"] == "websocket.disconnect":
                    return
                data = frame.get("text")
                if not isinstance(data, str):
                    self.send(Error(code="binary_frame", message="send JSON in text frames"))
                    continue
                await self._on_frame(data)
        except WebSocketDisconnect:
            return
        finally:
            if self.claims is not None:
                self.rooms.matches.unregister(self.claims.player_id, self._on_match)
            for watch in self.watches.values():
                watch.stop()
            tasks = [*self.tasks.values(), *self.background]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
            if self.role:
                ops.WEBSOCKET_CONNECTIONS.labels(role=self.role).dec()
            for kind, key in self.held:
                getattr(caps, f"drop_{kind}")(key)

    async def _on_frame(self, data: str) -> None:
        if not self.pace.take():
            rate = self.gateway.connections.config.ws_messages_per_second
            self.send(Error(code="rate_limited", message=f"at most {rate} messages a second"))
            return
        if len(data) > MAX_FRAME_BYTES:
            self.send(
                Error(
                    code="frame_too_large", message=f"messages are at most {MAX_FRAME_BYTES} bytes"
                )
            )
            return
        message = parse(data)
        ids: dict[str, str] = {}
        if isinstance(message, Command):
            ids["request_id"] = str(message.command_id)
        else:
            ids["request_id"] = uuid.uuid4().hex
        game_id = getattr(message, "game_id", None)
        if game_id is not None:
            ids["game_id"] = game_id
        with bound_ids(**ids):
            await self._dispatch(message)

    async def _dispatch(self, message: ClientMessage | Error) -> None:
        match message:
            case Error():
                self.send(message)
            case Auth():
                await self._on_auth(message)
            case Ping():
                self.send(Pong())
            case Command() if self.claims is None:
                self.send(
                    Error(
                        code="unauthenticated",
                        message="send auth {token} first: watching needs no account, playing does",
                    )
                )
            case Subscribe() if self.claims is None and (why := self._anonymous_refusal(message)):
                self.send(Error(code="unauthenticated", message=why, game_id=message.game_id))
            case _ if self.claims is not None and self.claims.expires_at <= time.time():
                # an expired token only re-authenticates: it opens no watch and reads no view
                self.send(
                    Error(
                        code="token_expired",
                        message="the access token expired: send auth with a fresh one",
                        game_id=getattr(message, "game_id", None),
                        command_id=getattr(message, "command_id", None),
                    )
                )
            case Subscribe():
                await self._on_subscribe(message)
            case Unsubscribe():
                await self._unsubscribe(message.game_id)
                self.send(Unsubscribed(game_id=message.game_id))
            case Command():
                await self._on_command(message)
            case ViewRequest():
                await self._on_view(message)

    def _anonymous_refusal(self, message: Subscribe) -> str:
        """Return why an anonymous connection may not watch this game ("" when it may). It may
        watch a few games; the first one counts it a spectator, one of the few connections of
        its address allowed to stay without an account past the auth deadline."""
        if message.game_id not in self.tasks and len(self.tasks) >= ANONYMOUS_WATCHES:
            return (
                f"without an account, watch at most {ANONYMOUS_WATCHES} games at once:"
                " send auth {token} for more"
            )
        if not self.role:
            caps = self.gateway.connections
            if not caps.take_anonymous(self.address):
                return (
                    f"at most {caps.config.ws_anonymous_per_address} connections of one address"
                    " watch without an account: send auth {token}"
                )
            self.held.append(("anonymous", self.address))
            self.role = "spectator"
            ops.WEBSOCKET_CONNECTIONS.labels(role=self.role).inc()
        return ""

    async def _on_auth(self, message: Auth) -> None:
        try:
            claims = self.gateway.tokens.verify(message.token)
        except auth.TokenError as exc:
            self.log.info("auth refused", code=exc.code)
            self.send(Error(code=exc.code, message=str(exc)))
            return
        if self.claims is not None and claims.player_id != self.claims.player_id:
            self.send(Error(code="account_mismatch", message="a connection stays with one account"))
            return
        first = self.claims is None
        if first:
            caps = self.gateway.connections
            if not caps.take_account(claims.player_id):
                self._refuse_connection(
                    f"at most {caps.config.ws_per_account} connections of one account"
                )
                return
            self.held.append(("account", claims.player_id))
            if ("anonymous", self.address) in self.held:  # no longer watching anonymously
                self.held.remove(("anonymous", self.address))
                caps.drop_anonymous(self.address)
            if self.role:  # it watched anonymously before: counted as a spectator until now
                ops.WEBSOCKET_CONNECTIONS.labels(role=self.role).dec()
            self.role = "bot" if claims.bot else "player"
            ops.WEBSOCKET_CONNECTIONS.labels(role=self.role).inc()
        self.claims = claims
        self.send(Welcome(player_id=claims.player_id, bot=claims.bot, expires_at=claims.expires_at))
        if first and not claims.bot:  # ranked games never seat bots
            bind_ids(player_id=claims.player_id)
            await self.rooms.matches.register(claims.player_id, self._on_match, self.send_raw)
            self._spawn(self._live_match(claims.player_id))

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    # -- subscriptions -------------------------------------------------------------------------

    async def _on_subscribe(self, message: Subscribe) -> None:
        """Replace any watch of the same game by a new one (`services.gateway.watch`): its
        room is joined before the table is asked, so nothing falls between the two."""
        game_id = message.game_id

        def refuse(code: str, text: str) -> None:
            self.log.info("subscribe refused", code=code)
            self.send(Error(code=code, message=text, game_id=game_id))

        if message.last_seq is not None and message.last_seq < 0:
            refuse("malformed", "last_seq is >= 0")
            return
        if not self.subscribes.take():  # each asks a table, a catch-up may read a whole log
            pace = self.gateway.connections.config.ws_subscribes_per_minute
            refuse("rate_limited", f"at most {pace} subscribes a minute: subscribe again later")
            return
        try:
            uuid.UUID(game_id)
        except ValueError:
            refuse("unknown_game", "no such game")
            return
        room, queue = await self.rooms.join(game_id)
        # without an account: "" sits nowhere, so the watch is a spectator's
        player = self.claims.player_id if self.claims else ""
        watch = Watch(
            self.gateway, room, queue, player, self.send_raw, self.send, hints=message.hints
        )
        try:
            reply, held = await watch.prepare(message.last_seq)
        except Refused as exc:
            self.rooms.leave(game_id, queue)
            refuse(exc.code, str(exc))  # a refused subscribe leaves any watch of it as it was
            return
        except BaseException:
            self.rooms.leave(game_id, queue)
            raise
        await self._unsubscribe(game_id)
        watch.begin(reply, held, message.last_seq)
        self.log.info("subscribed", role=watch.role, seat=watch.seat, last_seq=message.last_seq)
        self.watches[game_id] = watch
        self.tasks[game_id] = asyncio.create_task(self._watch(watch))

    async def _unsubscribe(self, game_id: str) -> None:
        task = self.tasks.pop(game_id, None)
        watch = self.watches.pop(game_id, None)
        if watch is not None:
            watch.stop()  # now: a frame delivered before the task sees its cancel is not sent
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _watch(self, watch: Watch) -> None:
        game_id = watch.game_id
        try:
            await watch.follow()
        except asyncio.CancelledError:
            raise
        except Refused as exc:  # the table refused a catch-up: subscribe again
            self.log.info("watch ended", code=exc.code)
            self.send(Error(code=exc.code, message=str(exc), game_id=game_id))
        except Exception as exc:
            self.log.exception("watch failed", error=type(exc).__name__)
            self.send(Error(code="internal", message="watching failed", game_id=game_id))
        finally:
            self.rooms.leave(game_id, watch.queue)
            if self.watches.get(game_id) is watch:
                del self.watches[game_id]
                if self.tasks.get(game_id) is asyncio.current_task():
                    del self.tasks[game_id]

    async def _on_view(self, message: ViewRequest) -> None:
        watch = self.watches.get(message.game_id)
        if watch is None:
            self.send(
                Error(code="not_subscribed", message="subscribe first", game_id=message.game_id)
            )
            return
        try:
            reply = await watch.ask_view()
        except Refused as exc:
            self.send(Error(code=exc.code, message=str(exc), game_id=message.game_id))
            return
        self.send_raw(reply)

    # -- commands ------------------------------------------------------------------------------

    async def _on_command(self, message: Command) -> None:
        assert self.claims is not None
        game_id, command_id = message.game_id, message.command_id

        def refuse(code: str, text: str) -> None:
            self.log.info("command refused", code=code)
            self.send(Error(code=code, message=text, game_id=game_id, command_id=command_id))

        if self.claims.expires_at <= time.time():
            refuse("token_expired", "the access token expired: send auth with a fresh one")
            return
        if game_id not in self.watches:
            refuse("not_subscribed", "subscribe to the game before sending commands to it")
            return
        try:
            command = seat_command(message.command)
        except ValueError as exc:
            refuse("malformed", str(exc))
            return
        player = self.claims.player_id
        request = wire.SubmitCommand(
            game_id=game_id,
            player_id=player,
            command_id=scoped_command_id(player, game_id, command_id),
            command=command,
        )
        self.awaiting += 1
        try:
            reply = await ask_table(self.gateway, game_id, request)
        except Unavailable:
            self.log.warning("table did not answer", command=type(command).__name__)
            refuse("unavailable", "the table did not answer: send it again, same command_id")
            return
        finally:
            self.awaiting -= 1
        if not reply.ok:
            refuse(reply.code, reply.message)
            return
        self.log.debug("command applied", command=type(command).__name__, seq=reply.version)
        self.send(
            Ack(
                game_id=game_id,
                command_id=command_id,
                seq=reply.version,
                code="already_applied" if reply.retry else "applied",
            )
        )
