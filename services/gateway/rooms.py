"""What reaches the WebSocket sessions of one gateway replica from the bus: games and matches.

Games. The table publishes, after each commit, one `events.contracts.audience.Frame` per append on
the game's audience subject: every audience's messages already encoded. A replica receives only
the games it serves: a game watched here is a `Room`, which holds one core NATS subscription to
that game's subject (`Subjects.game_audiences`) from its first watcher to its last; no frame of a
game nobody watches here crosses the network to this replica (with one subscription to every
game, each replica received every frame and dropped most of them: 5-7 us each, and a cost that
grew with every gateway added), and an idle game costs nothing (no consumer, no timer). A room
also keeps its watchers' queues and a bounded history of its recent frames, which serves a
``last_seq`` resume without asking the table; beyond it, the watch asks the table
(`events.contracts.game.Catchup`). The bus is not trusted alone: frames carry the game's seqs,
so a watcher that sees a gap asks the table for what it missed (`services.gateway.watch`);
that also covers the moment between a room's subscription being sent and the server having it
(the first joiner waits for the server's word, within `SUBSCRIBE_WAIT`).

Matches. One JetStream ordered consumer per replica on MatchFound (`Matches`): each replica
tells the sessions of its own connections, so any number of replicas run side by side with no
shared consumer. Notices (a friends' table changed, a rematch offered: `services.gateway.
notices`) come the same way to the same sessions, over one core NATS subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

from events.contracts.audience import Frame, frame_decoder
from events.contracts.matchmaking import MatchFound
from events.envelope import REGISTRY, StoredEvent
from events.inline import subscribe_inline
from events.subjects import Subjects
from services.gateway.notices import Notice

_stored = msgspec.json.Decoder(StoredEvent)
_notice = msgspec.json.Decoder(Notice)

HISTORY_FRAMES = 64
"""Frames (appends: a command and what followed it) a room keeps for resumes."""
SUBSCRIBE_WAIT = 1.0
"""Seconds a room's first joiner waits for the NATS server to confirm its subscription (a
round trip); past it the watch goes on, and a frame missed meanwhile is a gap it fills."""


class Inbox(asyncio.Queue[Frame]):
    """A watcher's frames, in order. While its reader waits on an empty inbox it may set
    ``inline``: a frame is then handed to it at once, in the bus callback, instead of being
    queued and waking the reader's task; ``inline`` returns False for a frame it leaves to
    the reader (which is then queued, and so is every frame after it until the reader has
    caught up). A card play reaches four seats: that is four task wake-ups saved per play."""

    def __init__(self) -> None:
        super().__init__()
        self.inline: Callable[[Frame], bool] | None = None

    def put_nowait(self, item: Frame) -> None:
        inline = self.inline
        if inline is not None and self.empty():
            try:
                if inline(item):
                    return
            except Exception:
                self.inline = None  # the reader meets the frame itself, and says what failed
        super().put_nowait(item)


class Room:
    """One game watched on this replica: its watchers' queues and its recent frames."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.subscribed: asyncio.Task[Subscription | None] | None = None
        """Subscribing to the game's frames; done once the server has the subscription."""
        self.queues: set[Inbox] = set()
        self.history: deque[Frame] = deque(maxlen=HISTORY_FRAMES)
        self.players: tuple[str, ...] | None = None
        """Who sits where, once a watcher learnt it from the table (to slice the history)."""
        self.unlisted = False
        """An unlisted friends' table: its seats' presence does not name it."""

    @property
    def version(self) -> int:
        """Return the last seq the history holds (0: none)."""
        return self.history[-1].last if self.history else 0

    def keep(self, frame: Frame) -> None:
        """Add a frame to the history, which stays consecutive (a gap starts it afresh)."""
        if frame.last < frame.first or (self.history and frame.last <= self.version):
            return  # a nudge, or a frame already kept
        if self.history and frame.first != self.version + 1:
            self.history.clear()
        self.history.append(frame)


class Rooms:
    """The rooms of every game some session of this replica watches, each fed by its own
    subscription while it has a watcher."""

    def __init__(self, nc: NATS, js: JetStreamContext, subjects: Subjects, log: Any) -> None:
        self.nc = nc
        self.subjects = subjects
        self.log = log
        self._rooms: dict[str, Room] = {}
        self._ending: set[asyncio.Task[None]] = set()
        self.received = 0
        """Frames this replica received from the bus (one per append of a game it serves)."""
        self.matches = Matches(js, subjects, log, nc)

    async def join(self, game_id: str) -> tuple[Room, Inbox]:
        """Return the game's room and an inbox that receives every frame of it from now on."""
        room = self._rooms.get(game_id)
        if room is None:
            room = self._rooms[game_id] = Room(game_id)
            room.subscribed = asyncio.create_task(self._subscribe(room))
        queue = Inbox()
        room.queues.add(queue)
        assert room.subscribed is not None
        await asyncio.shield(room.subscribed)
        return room, queue

    async def _subscribe(self, room: Room) -> Subscription | None:
        """Subscribe to the room's game and wait (at most SUBSCRIBE_WAIT) until the server has
        it. None when the connection refused it: the watch still works from the table's
        catch-ups, and the next room of the game subscribes again."""

        def deliver(msg: Msg) -> None:
            # Bound to its room: a room of the same game opened while this one's subscription
            # was ending has its own, and never gets a frame twice.
            self.received += 1
            if self._rooms.get(room.game_id) is room:
                self._deliver(room, msg)

        subject = self.subjects.game_audiences(room.game_id)
        try:  # handled as the client reads it: no queue and task step per frame
            sub = await subscribe_inline(self.nc, subject, deliver)
        except Exception as exc:
            self.log.warning("room not subscribed", error=type(exc).__name__, game_id=room.game_id)
            return None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.nc.flush(), SUBSCRIBE_WAIT)
        return sub

    def leave(self, game_id: str, queue: Inbox) -> None:
        """Stop delivering to ``queue``; the room and its subscription go when nobody watches
        the game here."""
        room = self._rooms.get(game_id)
        if room is None:
            return
        room.queues.discard(queue)
        if not room.queues:
            del self._rooms[game_id]
            if room.subscribed is not None:
                task = asyncio.create_task(self._unsubscribe(room.subscribed))
                self._ending.add(task)
                task.add_done_callback(self._ending.discard)

    async def _unsubscribe(self, subscribed: asyncio.Task[Subscription | None]) -> None:
        # A room of the same game opened meanwhile has a subscription of its own (another sid),
        # which this one's end leaves alone.
        with contextlib.suppress(Exception):
            sub = await subscribed
            if sub is not None:
                await sub.unsubscribe()

    async def settled(self) -> None:
        """Wait until every subscription of a room that was left has ended."""
        while self._ending:
            await asyncio.gather(*self._ending, return_exceptions=True)

    def seats(self) -> dict[str, str]:
        """Return, for each player seated at a listed game watched on this replica, that game
        (an unlisted table is named in no public list while it runs, followers' included)."""
        return {
            player: room.game_id
            for room in self._rooms.values()
            if not room.unlisted
            for player in room.players or ()
        }

    def watched(self) -> int:
        """Return how many games are watched on this replica."""
        return len(self._rooms)

    async def close(self) -> None:
        """Stop taking frames."""
        rooms, self._rooms = list(self._rooms.values()), {}
        for room in rooms:
            if room.subscribed is not None:
                await self._unsubscribe(room.subscribed)
        await asyncio.gather(*self._ending, return_exceptions=True)

    def _deliver(self, room: Room, msg: Msg) -> None:
        try:
            frame = frame_decoder.decode(msg.data)
        except msgspec.DecodeError as exc:  # not ours to judge: a watcher sees the gap
            self.log.warning("undecodable frame on the bus", error=type(exc).__name__)
            return
        room.keep(frame)
        for queue in room.queues:
            queue.put_nowait(frame)


Notify = Callable[[MatchFound], None]
SendRaw = Callable[[bytes], None]


class Matches:
    """MatchFound for the sessions of this replica: one ordered consumer (events published
    from its start on), opened when the first session registers."""

    def __init__(self, js: JetStreamContext, subjects: Subjects, log: Any, nc: NATS) -> None:
        self.js = js
        self.nc = nc
        self.subjects = subjects
        self.log = log
        self._subscription: Subscription | None = None
        self._notices: Subscription | None = None
        self._lock = asyncio.Lock()
        self._players: dict[str, set[Notify]] = {}
        self._raw: dict[Notify, SendRaw] = {}

    async def register(
        self, player_id: str, notify: Notify, send_raw: SendRaw | None = None
    ) -> None:
        """Call ``notify`` with every MatchFound seating ``player_id`` from now on, and
        ``send_raw`` with every notice for him (`services.gateway.notices`)."""
        async with self._lock:
            if self._notices is None and send_raw is not None:
                self._notices = await self.nc.subscribe(
                    self.subjects.player_notices(), cb=self._notice
                )
            if self._subscription is None:
                self._subscription = await self.js.subscribe(
                    self.subjects.match_found(),
                    stream=self.subjects.events_stream,
                    ordered_consumer=True,
                    deliver_policy=DeliverPolicy.NEW,
                    cb=self._deliver,
                )
        self._players.setdefault(player_id, set()).add(notify)
        if send_raw is not None:
            self._raw[notify] = send_raw

    def unregister(self, player_id: str, notify: Notify) -> None:
        """Stop notifying ``notify``."""
        self._raw.pop(notify, None)
        notifies = self._players.get(player_id)
        if notifies is not None:
            notifies.discard(notify)
            if not notifies:
                del self._players[player_id]

    async def _deliver(self, msg: Msg) -> None:
        try:
            match = REGISTRY.decode(_stored.decode(msg.data))
        except Exception as exc:
            self.log.warning("undecodable event on the bus", error=type(exc).__name__)
            return
        if not isinstance(match, MatchFound):
            return
        for player in match.seats:
            for notify in list(self._players.get(player, ())):
                notify(match)

    async def _notice(self, msg: Msg) -> None:
        try:
            notice = _notice.decode(msg.data)
        except msgspec.DecodeError as exc:
            self.log.warning("undecodable notice on the bus", error=type(exc).__name__)
            return
        data = notice.message.encode()
        for player in set(notice.players):
            for notify in list(self._players.get(player, ())):
                send_raw = self._raw.get(notify)
                if send_raw is not None:
                    send_raw(data)
