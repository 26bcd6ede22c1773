"""The WebSocket protocol at `/ws`: play and watch games (PROTOCOL.md has examples).

Every message is one JSON text frame with a ``type``; both directions are msgspec Structs, so
what this module declares is exactly what is accepted and sent.

Client to server:

- ``auth {token}``: first, within 10 s: the access token of POST /api/tokens. It may be sent
  again later with a fresh token for the same account (tokens are short-lived). Watching needs
  no account: without ``auth``, ``subscribe`` (up to ANONYMOUS_WATCHES games at once),
  ``view`` and ``unsubscribe`` work as a spectator (one trick behind, no hands, the same view
  as any account without a seat there); ``command`` answers ``unauthenticated``. A
  connection that neither authenticates nor watches a game within 10 s is closed.
- ``subscribe {game_id, last_seq?, hints?}``: watch a game: as its seat if the account sits at
  it, else as a spectator. Without ``last_seq`` the server sends ``view`` (a snapshot at seq
  N) then every event after N. With ``last_seq`` it sends exactly the events after it: a
  client that reconnects resumes with no gap and no duplicate. ``hints``: add the searching
  bot's suggestion to ``your_turn``, at a practice table only (`events.game.hints_allowed`:
  the server decides from the game's kind; at a rated or casual table the flag is ignored).
- ``command {game_id, command_id, command}``: act at the seat: ``command`` is one of
  PlaceBid {tricks, blind?}, DeclareBlindNil, DeclineBlindNil, PassCards {cards},
  PlayCard {card}, DrawCard {keep} (``type`` names it; the seat is always the sender's own).
  ``command_id`` (a UUID the client makes) makes a retry safe: the same id is applied once.
- ``view {game_id}``: a fresh snapshot; ``unsubscribe {game_id}``; ``ping``.

Once the connection's access token has expired, only ``auth`` (with a fresh token) and
``ping`` are answered; anything else gets ``token_expired``. Watches opened before the expiry
keep streaming (the client renews its token before it runs out).

Server to client:

- ``welcome {player_id, bot, expires_at}``, ``subscribed {game_id, role, seat, players}``.
- ``view {game_id, seq, view}``: the seat's view at seq (own hand only, legal commands).
  Replace your state with it and ignore events with a seq at or below it.
- ``event {game_id, seq, event, hand?}``: one event of the game as this seat may know it
  (`events.game.redact`: no seed, no other seat's cards before they are played, exchanged
  cards only to giver and receiver); ``seq`` is the event's number in the game, from 1, with
  no gap. ``hand`` is the seat's whole hand whenever it changes (deal, blind choice, exchange,
  play); a blind-nil candidate gets none until he has chosen. Spectators are kept one trick
  behind: they receive events in batches ending with a completed trick (or the game's end).
- ``your_turn {game_id, seq, legal, suggestion?, deadline}``: the seat is on turn; ``legal``
  lists every command it may send, ``deadline`` (unix seconds) is when the turn timer lets the
  bot act for it (null at an untimed practice table: no timer).
- ``clock {game_id, seq, seat, deadline, now, bot?}``: to every watcher (seats and spectators):
  ``seat`` is on turn after event ``seq`` until ``deadline`` (the table's turn timer), ``now``
  the server's time; sent on subscribing, whenever the turn passes, and as ticks (each whole
  5 s left, then each second of the last 5) until the deadline or the game's end
  (`services.gateway.feed`: one timer per game per replica). ``bot``: a bot holds the seat.
- ``match_found {game_id, match_id, ladder, seat, players}``: the account was matched in a
  ranked game: to each of its connections when the match forms, and right after ``auth`` while
  it is seated in a live ranked game (what GET /api/queue answers). Once per game per
  connection.
- ``ack {game_id, command_id, seq, code}``: ``applied`` (its events end at seq) or
  ``already_applied`` (a retried command id: nothing new happened).
- ``error {code, message, game_id?, command_id?}``: ``code`` names the reason: ``malformed``,
  ``unknown_type``, ``frame_too_large``, ``binary_frame``, ``rate_limited``,
  ``unauthenticated``, ``token_expired``, ``token_invalid``, ``account_mismatch``,
  ``unknown_game``, ``not_subscribed``, ``unavailable``, or the table's rule codes
  (``out_of_turn``, ``must_follow_suit``, ``not_your_seat``, ...). An error never closes the
  connection, except ``auth_timeout`` (close 1008, policy violation) and a client too slow
  to read what it is sent (close 1013: reconnect and resume with ``last_seq``). A frame nested
  too deeply to decode is ``malformed`` like any other. Frames over 64 KiB are refused by the server
  itself (close 1009).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
import uuid
from typing import Any

import msgspec
import structlog
from litestar import WebSocket, websocket
from litestar.datastructures import State
from litestar.exceptions import WebSocketDisconnect

import engine
import engine.search
from events import game as wire
from events import matchmaking as mm
from events.envelope import REGISTRY, StoredEvent
from events.game import game_id_of_match, stream_of
from services import ops
from services.gateway import auth
from services.gateway.config import MAX_FRAME_BYTES
from services.gateway.feed import Clock, Feeds, GameFeed, Item
from services.gateway.state import Gateway, Unavailable, ask, ask_table

AUTH_SECONDS = 10.0
HINT_SECONDS = 0.15
"""The searching bot's time cap for one hint (the connection's loop waits for it)."""
MAX_OUTBOX = 2000
"""Messages waiting for a client before it is judged too slow and disconnected."""
RATE_PER_SECOND = 50.0
RATE_BURST = 200.0
MATCH_WAIT = 30.0
"""Seconds a match_found waits for the table to open the game before it is given up."""
COMMAND_NAMESPACE = uuid.UUID("5ade5000-0000-4000-8000-00000000a7e5")
ANONYMOUS_WATCHES = 3
"""Games one connection without an account may watch at once (spectators only)."""


# -- client -> server ---------------------------------------------------------------------------


class _In(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of the client's messages."""


class Auth(_In, tag="auth"):
    """Authenticate with an access token."""

    token: str


class Subscribe(_In, tag="subscribe"):
    """Watch a game (as its seat, or a spectator); resume after ``last_seq`` if given."""

    game_id: str
    last_seq: int | None = None
    hints: bool = False


class Unsubscribe(_In, tag="unsubscribe"):
    """Stop watching a game."""

    game_id: str


class Command(_In, tag="command"):
    """Act at one's seat; ``command`` is a seat command (see the module docstring)."""

    game_id: str
    command_id: uuid.UUID
    command: dict[str, Any]


class ViewRequest(_In, tag="view"):
    """Ask for a fresh snapshot of a watched game."""

    game_id: str


class Ping(_In, tag="ping"):
    """Ask for a pong."""


ClientMessage = Auth | Subscribe | Unsubscribe | Command | ViewRequest | Ping
CLIENT_TYPES = frozenset({"auth", "subscribe", "unsubscribe", "command", "view", "ping"})

# -- server -> client ---------------------------------------------------------------------------


class _Out(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of the server's messages."""


class Welcome(_Out, tag="welcome"):
    """Authenticated as ``player_id`` until ``expires_at`` (unix seconds)."""

    player_id: str
    bot: bool
    expires_at: float


class Subscribed(_Out, tag="subscribed"):
    """Watching ``game_id`` as ``role`` ("seat" or "spectator") at ``seat`` (-1: none)."""

    game_id: str
    role: str
    seat: int
    players: tuple[str, ...]


class View(_Out, tag="view"):
    """A snapshot of the game at ``seq`` as this seat may see it."""

    game_id: str
    seq: int
    view: wire.SeatViewWire


class Event(_Out, tag="event"):
    """Event number ``seq`` of the game, redacted for this seat; ``hand`` when it changed."""

    game_id: str
    seq: int
    event: wire.SeatEvent
    hand: tuple[wire.Card, ...] | None = None


class YourTurn(_Out, tag="your_turn"):
    """The seat is on turn after event ``seq``: what it may send, and until when."""

    game_id: str
    seq: int
    legal: tuple[wire.AnySeatCommand, ...]
    deadline: float | None
    suggestion: wire.AnySeatCommand | None = None


class Ack(_Out, tag="ack"):
    """A command was applied (``applied``), or had been already (``already_applied``)."""

    game_id: str
    command_id: uuid.UUID
    seq: int
    code: str


class Error(_Out, tag="error"):
    """Something was refused or went wrong; ``code`` names the reason."""

    code: str
    message: str
    game_id: str | None = None
    command_id: uuid.UUID | None = None


class Unsubscribed(_Out, tag="unsubscribed"):
    """No longer watching ``game_id``."""

    game_id: str


class Pong(_Out, tag="pong"):
    """The answer to a ping."""


class MatchReady(_Out, tag="match_found"):
    """The player was matched: ``game_id`` is his ranked game, at ``seat`` of ``players``."""

    game_id: str
    match_id: str
    ladder: str
    seat: int
    players: tuple[str, ...]


ServerMessage = (
    Welcome
    | Subscribed
    | View
    | Event
    | YourTurn
    | Clock
    | MatchReady
    | Ack
    | Error
    | Unsubscribed
    | Pong
)

_decoder = msgspec.json.Decoder(ClientMessage)
_encoder = msgspec.json.Encoder()
_mm_reply = msgspec.json.Decoder(mm.Reply)
_wire_command = functools.lru_cache(maxsize=4096)(wire.command_to_wire)
"""Engine commands are frozen and few (a card, a bid): convert each once per process."""
_COMMAND_FIELDS = {
    cls.__name__: set(cls.__struct_fields__)
    for cls in (
        wire.PlaceBid,
        wire.DeclareBlindNil,
        wire.DeclineBlindNil,
        wire.PassCards,
        wire.PlayCard,
        wire.DrawCard,
        wire.Contribute,
    )
}


def parse(data: str | bytes) -> ClientMessage | Error:
    """Return the client message in a frame, or the Error that answers it."""
    try:
        message: ClientMessage = _decoder.decode(data)
    except msgspec.ValidationError as exc:  # JSON, but not a message (a DecodeError subclass)
        try:
            raw = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError):
            raw = None
        kind = raw.get("type") if isinstance(raw, dict) else None
        if isinstance(raw, dict) and kind not in CLIENT_TYPES:
            return Error(
                code="unknown_type",
                message=f"unknown message type {kind!r}: one of {sorted(CLIENT_TYPES)}",
            )
        return Error(code="malformed", message=str(exc))
    except msgspec.DecodeError as exc:
        return Error(code="malformed", message=f"not JSON: {exc}")
    except RecursionError:  # deeper than the decoder goes: a crafted frame, not a message
        return Error(code="malformed", message="the message is nested too deeply")
    return message


def seat_command(body: dict[str, Any]) -> wire.AnySeatCommand:
    """Return the seat command of a ``command`` message; raise ValueError saying what is wrong.

    Unknown fields are refused rather than ignored: a ``seat`` field in particular, since a
    command always acts for the sender's own seat.
    """
    fields = _COMMAND_FIELDS.get(body.get("type", ""))
    if fields is None:
        raise ValueError(f"unknown command {body.get('type')!r}: one of {sorted(_COMMAND_FIELDS)}")
    extra = set(body) - fields - {"type"}
    if extra:
        raise ValueError(f"unknown field(s) {sorted(extra)}: a command acts for your own seat")
    try:
        command: wire.AnySeatCommand = msgspec.convert(body, wire.AnySeatCommand)
    except msgspec.ValidationError as exc:
        raise ValueError(str(exc)) from None
    return command


def scoped_command_id(player_id: str, game_id: str, command_id: uuid.UUID) -> uuid.UUID:
    """Return the command id the table sees: the client's, scoped to its player and game, so
    no client can collide with (or pre-empt) another's ids."""
    return uuid.uuid5(COMMAND_NAMESPACE, f"{player_id}\n{game_id}\n{command_id}")


# -- one watched game ---------------------------------------------------------------------------


class Watch:
    """One session's view of one game: folds its events, redacts them for the seat.

    The fold and the encoded messages come from the game's feed when another session of this
    replica made them already (the fold is deterministic: the state after event N is the same
    for everyone who folded 1..N-1).
    """

    def __init__(
        self, game_id: str, opened: wire.TableOpened, player_id: str, feed: GameFeed | None = None
    ) -> None:
        self.game_id = game_id
        self.opened = opened
        self.feed = feed
        self.seat = opened.players.index(player_id) if player_id in opened.players else -1
        self.state = engine.initial_state()
        self.version = 0
        self.held: list[bytes] = []
        self.released_state = self.state
        self.released_version = 0
        self.deadline: float | None = None
        self.signalled = -1
        self.abandoned = False
        self.bots = frozenset(opened.bots)

    @property
    def role(self) -> str:
        """Return "seat" or "spectator"."""
        return "seat" if self.seat >= 0 else "spectator"

    def fold(self, stored: StoredEvent, event: wire.GameEvent) -> wire.GameEvent:
        """Fold one event silently (it is before what the client asked for)."""
        shared = self.feed.after.get(stored.version) if self.feed is not None else None
        if shared is not None:
            self.state = shared
        else:
            engine_event = wire.to_engine(event)
            if engine_event is not None:
                self.state = engine.apply(self.state, engine_event)
        self.version = stored.version
        self.deadline = wire.deadline_of(stored, self.opened)
        if isinstance(event, wire.SeatAbandoned):
            self.bots = self.bots | {event.seat}
            if event.seat == self.seat:
                self.abandoned = True
        if self.seat >= 0 or wire.releases_spectators(event):
            self.released_state, self.released_version = self.state, self.version
        return event

    def offer(self) -> bool:
        """Seed the feed with this fold if it is ahead; return whether a clock went out."""
        if self.feed is None or self.version <= self.feed.version:
            return False
        return self.feed.offer(self.version, self.state, self.deadline, self.opened, self.bots)

    def step(self, stored: StoredEvent, event: wire.GameEvent) -> list[bytes]:
        """Fold one event and return the messages it gives this seat (spectators: batched)."""
        feed, version = self.feed, stored.version
        data = feed.shared_messages(version, self.seat) if feed is not None else None
        if data is None:
            before = wire.visible_hand(self.state, self.seat)
            self.fold(stored, event)
            after = wire.visible_hand(self.state, self.seat)
            message = Event(
                game_id=self.game_id,
                seq=version,
                event=wire.redact(event, self.seat),
                hand=after if after is not None and after != before else None,
            )
            data = _encoder.encode(message)
            if feed is not None:
                feed.share_messages(version, self.seat, data)
        else:
            self.fold(stored, event)
        if self.seat >= 0:
            return [data]
        self.held.append(data)
        if not wire.releases_spectators(event):
            return []
        released, self.held = self.held, []
        return released

    def clock(self) -> Clock | None:
        """Return the clock of the game as this session's fold has it (None: nobody's turn)."""
        state = self.state
        if state.phase == "over" or state.turn < 0:
            return None
        return Clock(
            game_id=self.game_id,
            seq=self.version,
            seat=state.turn,
            deadline=self.deadline,
            now=time.time(),
            bot=state.turn in self.bots,
        )

    def local_view(self) -> View:
        """Return the snapshot this seat may have now (spectators: at the last release)."""
        state = self.released_state if self.seat < 0 else self.state
        seat = self.seat if self.seat >= 0 else engine.SPECTATOR
        view = wire.view_to_wire(
            engine.view(state, seat),
            players=self.opened.players,
            version=self.released_version,
        )
        return View(game_id=self.game_id, seq=self.released_version, view=view)

    def your_turn(self, hints: bool) -> YourTurn | None:
        """Return the your_turn signal if the seat is on turn and was not told yet."""
        state = self.state
        if (
            self.seat < 0
            or self.abandoned
            or state.turn != self.seat
            or state.phase == "over"
            or self.signalled == self.version
        ):
            return None
        seat_view = engine.view(state, self.seat)
        legal = tuple(
            _wire_command(c) for c in seat_view.legal if not isinstance(c, engine.StartGame)
        )
        if not legal:
            return None
        self.signalled = self.version
        suggestion = None
        if hints:
            # Only practice tables get hints (the caller checks), from the searching bot.
            hint = engine.search.player("strong", seconds=HINT_SECONDS)
            choice = hint(seat_view, random.Random(self.version))
            suggestion = _wire_command(choice)
        return YourTurn(
            game_id=self.game_id,
            seq=self.version,
            legal=legal,
            deadline=self.deadline,
            suggestion=suggestion,
        )


# -- one connection -----------------------------------------------------------------------------


class Session:
    """One WebSocket connection: authentication, subscriptions, commands, one writer.

    Every line logged while a client message is handled carries ``request_id`` (the client's
    ``command_id`` for a command, a fresh id otherwise), ``connection_id`` and, for a message
    about a game, ``game_id`` (structlog context variables); a watch keeps those of the
    ``subscribe`` that started it.
    """

    def __init__(self, gateway: Gateway, feeds: Feeds, socket: WebSocket[Any, Any, Any]) -> None:
        self.gateway = gateway
        self.feeds = feeds
        self.socket = socket
        self.connection_id = uuid.uuid4().hex
        self.claims: auth.Claims | None = None
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.close_code, self.close_reason = 1013, "too slow: resume with last_seq"
        self.watches: dict[str, Watch] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.background: set[asyncio.Task[None]] = set()
        self.matched: set[str] = set()
        self.allowance = RATE_BURST
        self.checked = time.monotonic()
        self.role = ""
        self.log = gateway.log
        self.closing = False

    # -- output --------------------------------------------------------------------------------

    def send(self, message: _Out) -> None:
        """Queue a message for the client (the writer sends them in order)."""
        self.send_raw(_encoder.encode(message))

    def send_raw(self, data: bytes) -> None:
        """Queue an encoded message for the client."""
        if self.closing:
            return
        if self.outbox.qsize() >= MAX_OUTBOX:
            self.closing = True
            self.outbox.put_nowait(None)  # the writer closes: the client resumes later
            return
        self.outbox.put_nowait(data)

    async def _writer(self) -> None:
        while True:
            data = await self.outbox.get()
            if data is None:
                with contextlib.suppress(Exception):
                    await self.socket.close(code=self.close_code, reason=self.close_reason)
                return
            await self.socket.send_data(data.decode(), mode="text")

    # -- the connection ------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve the connection until the client leaves (or must be let go)."""
        with structlog.contextvars.bound_contextvars(connection_id=self.connection_id):
            await self._run()

    async def _run(self) -> None:
        await self.socket.accept()
        writer = asyncio.create_task(self._writer())
        deadline = time.monotonic() + AUTH_SECONDS
        try:
            while not writer.done():
                watching = bool(self.tasks)  # an anonymous spectator needs no token
                timeout = None if self.claims or watching else max(0.0, deadline - time.monotonic())
                try:
                    frame = await asyncio.wait_for(self.socket.receive(), timeout)
                except TimeoutError:
                    self.send(Error(code="auth_timeout", message="authenticate within 10 s"))
                    # 1008 policy violation: not 1013 "try again later", which invites a retry
                    self.close_code, self.close_reason = 1008, "auth_timeout"
                    self.outbox.put_nowait(None)
                    await writer
                    return
                if frame["type"] == "websocket.disconnect":
                    return
                data = frame.get("text")
                if data is None:
                    self.send(Error(code="binary_frame", message="send JSON in text frames"))
                    continue
                await self._on_frame(data)
        except WebSocketDisconnect:
            return
        finally:
            if self.claims is not None:
                self.feeds.matches.unregister(self.claims.player_id, self._on_match)
            tasks = [*self.tasks.values(), *self.background]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
            if self.role:
                ops.WEBSOCKET_CONNECTIONS.labels(role=self.role).dec()

    def _allowed(self) -> bool:
        now = time.monotonic()
        self.allowance = min(RATE_BURST, self.allowance + (now - self.checked) * RATE_PER_SECOND)
        self.checked = now
        if self.allowance < 1:
            return False
        self.allowance -= 1
        return True

    async def _on_frame(self, data: str) -> None:
        if not self._allowed():
            self.send(Error(code="rate_limited", message=f"at most {RATE_PER_SECOND:.0f}/s"))
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
        with structlog.contextvars.bound_contextvars(**ids):
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
            case Subscribe() if self.claims is None and not self._may_watch_anonymously(message):
                self.send(
                    Error(
                        code="unauthenticated",
                        message=f"without an account, watch at most {ANONYMOUS_WATCHES} games"
                        " at once: send auth {token} for more",
                        game_id=message.game_id,
                    )
                )
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

    def _may_watch_anonymously(self, message: Subscribe) -> bool:
        """An anonymous connection may watch a few games; the first one counts it a spectator."""
        if message.game_id not in self.tasks and len(self.tasks) >= ANONYMOUS_WATCHES:
            return False
        if not self.role:
            self.role = "spectator"
            ops.WEBSOCKET_CONNECTIONS.labels(role=self.role).inc()
        return True

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
            if self.role:  # it watched anonymously before: counted as a spectator until now
                ops.WEBSOCKET_CONNECTIONS.labels(role=self.role).dec()
            self.role = "bot" if claims.bot else "player"
            ops.WEBSOCKET_CONNECTIONS.labels(role=self.role).inc()
        self.claims = claims
        self.send(Welcome(player_id=claims.player_id, bot=claims.bot, expires_at=claims.expires_at))
        if first and not claims.bot:  # ranked games never seat bots
            structlog.contextvars.bind_contextvars(player_id=claims.player_id)
            await self.feeds.matches.register(claims.player_id, self._on_match)
            self._spawn(self._live_match(claims.player_id))

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    # -- matches -------------------------------------------------------------------------------

    def _announce(
        self, match_id: str, ladder: str, players: tuple[str, ...], game_id: str | None = None
    ) -> None:
        """Send match_found once per game on this connection."""
        assert self.claims is not None
        player = self.claims.player_id
        game_id = game_id or game_id_of_match(match_id)
        if game_id in self.matched or player not in players:
            return
        self.matched.add(game_id)
        self.log.info("match found", game_id=game_id, match_id=match_id)
        self.send(
            MatchReady(
                game_id=game_id,
                match_id=match_id,
                ladder=ladder,
                seat=players.index(player),
                players=players,
            )
        )

    def _on_match(self, match: mm.MatchFound) -> None:
        # MatchFound is appended before the table opens the game: announce it once the game
        # exists, so a client that subscribes on match_found is never told `unknown_game`.
        self._spawn(self._announce_when_open(match.match_id))

    async def _live_match(self, player: str) -> None:
        """Announce the ranked game the player is seated in, if any: a player who connects
        after his match was found learns it too (the answer GET /api/queue gives)."""
        try:
            reply = _mm_reply.decode(
                await ask(
                    self.gateway,
                    self.gateway.subjects.matchmaking_status(),
                    mm.QueueStatus(player_id=player),
                )
            )
        except Unavailable:
            self.log.info("matchmaking did not answer: no match lookup")
            return
        if not reply.ok or reply.code != "in_game" or not reply.match_id:
            return
        await self._announce_when_open(reply.match_id)

    async def _announce_when_open(self, match_id: str) -> None:
        """Announce the match's game once the table has opened it (up to MATCH_WAIT s)."""
        game_id = game_id_of_match(match_id)
        if game_id in self.matched:
            return
        _, queue = await self.feeds.join(game_id)
        try:
            stored = await self.gateway.store.read(stream_of(game_id))
            if not stored:  # the table has not opened the game yet: wait for its first event
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(queue.get(), MATCH_WAIT)
                stored = await self.gateway.store.read(stream_of(game_id))
        finally:
            await self.feeds.leave(game_id, queue)
        if not stored:
            self.log.warning("matched game did not open", game_id=game_id)
            return
        opened = REGISTRY.decode(stored[0])
        if isinstance(opened, wire.TableOpened) and opened.match_id == match_id:
            self._announce(match_id, opened.ladder, opened.players, game_id)

    # -- subscriptions -------------------------------------------------------------------------

    async def _on_subscribe(self, message: Subscribe) -> None:
        """Check the request against the log, then replace any watch of the same game.

        The feed is joined before the log is read: whatever commits after the read arrives
        on the feed, so nothing falls between the two.
        """
        game_id = message.game_id

        def refuse(code: str, text: str) -> None:
            self.log.info("subscribe refused", code=code)
            self.send(Error(code=code, message=text, game_id=game_id))

        if message.last_seq is not None and message.last_seq < 0:
            refuse("malformed", "last_seq is >= 0")
            return
        try:
            uuid.UUID(game_id)
        except ValueError:
            refuse("unknown_game", "no such game")
            return
        feed, queue = await self.feeds.join(game_id)
        try:
            stored = await self.gateway.store.read(stream_of(game_id))
            if not stored:
                refuse("unknown_game", "no such game")
            elif message.last_seq is not None and message.last_seq > len(stored):
                refuse("malformed", f"last_seq {message.last_seq} is past the last event")
            else:
                await self._unsubscribe(game_id)
                self.tasks[game_id] = asyncio.create_task(self._watch(message, feed, queue, stored))
                return
        except BaseException:
            await self.feeds.leave(game_id, queue)
            raise
        await self.feeds.leave(game_id, queue)

    async def _unsubscribe(self, game_id: str) -> None:
        task = self.tasks.pop(game_id, None)
        self.watches.pop(game_id, None)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    # -- watching a game -----------------------------------------------------------------------

    async def _watch(
        self,
        message: Subscribe,
        feed: GameFeed,
        queue: asyncio.Queue[Item],
        stored: list[StoredEvent],
    ) -> None:
        game_id = message.game_id
        try:
            await self._follow(message, feed, queue, stored)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.log.exception("watch failed", error=type(exc).__name__)
            self.send(Error(code="internal", message="watching failed", game_id=game_id))
        finally:
            await self.feeds.leave(game_id, queue)

    async def _follow(
        self,
        message: Subscribe,
        feed: GameFeed,
        queue: asyncio.Queue[Item],
        stored: list[StoredEvent],
    ) -> None:
        game_id = message.game_id
        store = self.gateway.store
        decoded = [REGISTRY.decode(s) for s in stored]
        opened = decoded[0]
        assert isinstance(opened, wire.TableOpened)
        # without an account: "" sits nowhere, so the watch is a spectator's
        watch = Watch(game_id, opened, self.claims.player_id if self.claims else "", feed)
        last = message.last_seq
        self.watches[game_id] = watch
        self.log.info("subscribed", role=watch.role, seat=watch.seat, last_seq=last)
        self.send(
            Subscribed(game_id=game_id, role=watch.role, seat=watch.seat, players=opened.players)
        )
        pending = list(zip(stored, decoded, strict=True))
        if last is None:
            snapshot = await self._snapshot(watch, pending)
            last = snapshot.seq
            if len(pending) < last:  # the table is ahead of our read: read the rest
                more = await store.read(stream_of(game_id), len(pending) + 1)
                pending += [(s, REGISTRY.decode(s)) for s in more]
            for s, e in pending[:last]:
                watch.fold(s, e)
            self.send(snapshot)
        else:
            for s, e in pending[:last]:
                watch.fold(s, e)
        for s, e in pending[last:]:
            self._emit(watch, s, e)
        if not watch.offer():  # no clock went to every watcher: tell this one
            if feed.version == watch.version:
                data = feed.current_clock()
            else:
                clock = watch.clock()
                data = None if clock is None else _encoder.encode(clock)
            if data is not None:
                self.send_raw(data)
        hints = message.hints and wire.hints_allowed(opened)
        self._signal(watch, hints)
        while True:
            item = await queue.get()
            if isinstance(item, bytes):
                self.send_raw(item)  # the game's clock
            else:
                s, e = item
                if s.version > watch.version:
                    if s.version > watch.version + 1:  # missed on the bus: the log has it
                        for gap in await store.read(stream_of(game_id), watch.version + 1):
                            if gap.version < s.version:
                                self._emit(watch, gap, REGISTRY.decode(gap))
                    self._emit(watch, s, e)
                    watch.offer()
            if queue.empty():
                self._signal(watch, hints)

    async def _table_view(self, watch: Watch) -> View | None:
        """Return the seat's view from the table (with the bot's suggestion), or None."""
        if watch.seat < 0 or self.claims is None:
            return None
        with contextlib.suppress(Unavailable):
            reply = await ask_table(
                self.gateway,
                watch.game_id,
                wire.GetView(game_id=watch.game_id, player_id=self.claims.player_id),
            )
            if reply.ok and reply.view is not None:
                return View(game_id=watch.game_id, seq=reply.version, view=reply.view)
        return None

    async def _snapshot(
        self, watch: Watch, pending: list[tuple[StoredEvent, wire.GameEvent]]
    ) -> View:
        """Return the first view of a fresh subscription: the table's, for a seat."""
        view = await self._table_view(watch)
        if view is not None:
            return view
        # a spectator (or the table is away): fold the log here, up to what the seat may see
        probe = Watch(watch.game_id, watch.opened, self.claims.player_id if self.claims else "")
        for s, e in pending:
            probe.fold(s, e)
        return probe.local_view()

    def _emit(self, watch: Watch, stored: StoredEvent, event: wire.GameEvent) -> None:
        for data in watch.step(stored, event):
            self.send_raw(data)

    def _signal(self, watch: Watch, hints: bool) -> None:
        turn = watch.your_turn(hints)
        if turn is not None:
            self.send(turn)

    async def _on_view(self, message: ViewRequest) -> None:
        watch = self.watches.get(message.game_id)
        if watch is None:
            self.send(
                Error(code="not_subscribed", message="subscribe first", game_id=message.game_id)
            )
            return
        self.send(await self._table_view(watch) or watch.local_view())

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
        try:
            reply = await ask_table(self.gateway, game_id, request)
        except Unavailable:
            self.log.warning("table did not answer", command=type(command).__name__)
            refuse("unavailable", "the table did not answer: send it again, same command_id")
            return
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


@websocket("/ws")
async def play(socket: WebSocket[Any, Any, Any], state: State) -> None:
    """The WebSocket endpoint (see the module docstring for the protocol)."""
    gateway: Gateway = state.gateway
    await Session(gateway, state.feeds, socket).run()
