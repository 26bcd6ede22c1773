"""What reaches the WebSocket sessions of one gateway replica from the bus: games and matches.

Games. The table publishes, after each commit, one `events.contracts.audience.Frame` per append on
the game's audience subject: every audience's messages already encoded. A replica takes them all
with ONE core NATS subscription (`Subjects.all_audiences`), whatever it watches: a frame for a game
nobody watches here is dropped by its subject, undecoded, and an idle game costs nothing (no
consumer, no timer). A game watched here is a `Room`: the queues of its watchers and a bounded
history of its recent frames, which serves a ``last_seq`` resume without asking the table; beyond
it, the watch asks the table (`events.contracts.game.Catchup`). The bus is not trusted alone: frames
carry the game's seqs, so a watcher that sees a gap asks the table for what it missed
(`services.gateway.watch`).

Matches. One JetStream ordered consumer per replica on MatchFound (`Matches`): each replica
tells the sessions of its own connections, so any number of replicas run side by side with no
shared consumer.
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
from events.subjects import Subjects

_stored = msgspec.json.Decoder(StoredEvent)

HISTORY_FRAMES = 64
"""Frames (appends: a command and what followed it) a room keeps for resumes."""


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
        self.queues: set[Inbox] = set()
        self.history: deque[Frame] = deque(maxlen=HISTORY_FRAMES)
        self.players: tuple[str, ...] | None = None
        """Who sits where, once a watcher learnt it from the table (to slice the history)."""

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
    """The rooms of every game some session of this replica watches, fed by one
    subscription."""

    def __init__(self, nc: NATS, js: JetStreamContext, subjects: Subjects, log: Any) -> None:
        self.nc = nc
        self.subjects = subjects
        self.log = log
        self._rooms: dict[str, Room] = {}
        self._subscription: Subscription | None = None
        self._lock = asyncio.Lock()
        self.matches = Matches(js, subjects, log)

    async def join(self, game_id: str) -> tuple[Room, Inbox]:
        """Return the game's room and an inbox that receives every frame of it from now on."""
        if self._subscription is None:
            async with self._lock:
                if self._subscription is None:
                    self._subscription = await self.nc.subscribe(
                        self.subjects.all_audiences(), cb=self._deliver
                    )
        room = self._rooms.get(game_id)
        if room is None:
            room = self._rooms[game_id] = Room(game_id)
        queue = Inbox()
        room.queues.add(queue)
        return room, queue

    def leave(self, game_id: str, queue: Inbox) -> None:
        """Stop delivering to ``queue``; the room goes when nobody watches the game here."""
        room = self._rooms.get(game_id)
        if room is None:
            return
        room.queues.discard(queue)
        if not room.queues:
            del self._rooms[game_id]

    def seats(self) -> dict[str, str]:
        """Return, for each player seated at a game watched on this replica, that game."""
        return {
            player: room.game_id for room in self._rooms.values() for player in room.players or ()
        }

    def watched(self) -> int:
        """Return how many games are watched on this replica."""
        return len(self._rooms)

    async def close(self) -> None:
        """Stop taking frames."""
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
            self._subscription = None

    async def _deliver(self, msg: Msg) -> None:
        room = self._rooms.get(msg.subject.rpartition(".")[2])
        if room is None:
            return  # nobody watches this game here: not even decoded
        try:
            frame = frame_decoder.decode(msg.data)
        except msgspec.DecodeError as exc:  # not ours to judge: a watcher sees the gap
            self.log.warning("undecodable frame on the bus", error=type(exc).__name__)
            return
        room.keep(frame)
        for queue in room.queues:
            queue.put_nowait(frame)


Notify = Callable[[MatchFound], None]


class Matches:
    """MatchFound for the sessions of this replica: one ordered consumer (events published
    from its start on), opened when the first session registers."""

    def __init__(self, js: JetStreamContext, subjects: Subjects, log: Any) -> None:
        self.js = js
        self.subjects = subjects
        self.log = log
        self._subscription: Subscription | None = None
        self._lock = asyncio.Lock()
        self._players: dict[str, set[Notify]] = {}

    async def register(self, player_id: str, notify: Notify) -> None:
        """Call ``notify`` with every MatchFound seating ``player_id`` from now on."""
        async with self._lock:
            if self._subscription is None:
                self._subscription = await self.js.subscribe(
                    self.subjects.match_found(),
                    stream=self.subjects.events_stream,
                    ordered_consumer=True,
                    deliver_policy=DeliverPolicy.NEW,
                    cb=self._deliver,
                )
        self._players.setdefault(player_id, set()).add(notify)

    def unregister(self, player_id: str, notify: Notify) -> None:
        """Stop notifying ``notify``."""
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
