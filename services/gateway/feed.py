"""Live game events for the WebSocket sessions of one gateway replica.

One JetStream ordered consumer per game watched on this replica (however many sessions watch
it), delivering only events published from now on; every session gets each event in its own
queue. Ordered consumers restart themselves after a gap or a NATS reconnect, but a session
never trusts the bus alone: it reads what it missed from the event store (the log is the truth)
and uses the bus to learn that something new committed, dropping what it already has and
reading any gap from the store. So no event is skipped or sent twice, whatever the bus does.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

import msgspec
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

from events.envelope import REGISTRY, StoredEvent
from events.subjects import Subjects

_stored = msgspec.json.Decoder(StoredEvent)

Delivery = tuple[StoredEvent, Any]
"""A stored event and its decoded game event."""


@dataclass
class _Feed:
    subscription: Subscription | None = None
    queues: set[asyncio.Queue[Delivery]] = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Feeds:
    """The live feeds of every game some session of this replica watches."""

    def __init__(self, js: JetStreamContext, subjects: Subjects, log: Any) -> None:
        self.js = js
        self.subjects = subjects
        self.log = log
        self._feeds: dict[str, _Feed] = {}

    async def join(self, game_id: str) -> asyncio.Queue[Delivery]:
        """Return a queue that receives every event of ``game_id`` published from now on."""
        queue: asyncio.Queue[Delivery] = asyncio.Queue()
        while True:
            feed = self._feeds.setdefault(game_id, _Feed())
            async with feed.lock:
                if self._feeds.get(game_id) is not feed:
                    continue  # the last watcher left while we waited: take the new feed
                if feed.subscription is None:
                    feed.subscription = await self.js.subscribe(
                        self.subjects.game_events(game_id),
                        stream=self.subjects.events_stream,
                        ordered_consumer=True,
                        deliver_policy=DeliverPolicy.NEW,
                        cb=self._deliver(feed),
                    )
                feed.queues.add(queue)
                return queue

    async def leave(self, game_id: str, queue: asyncio.Queue[Delivery]) -> None:
        """Stop delivering to ``queue``; the game's consumer goes when nobody watches."""
        feed = self._feeds.get(game_id)
        if feed is None:
            return
        async with feed.lock:
            feed.queues.discard(queue)
            if feed.queues or feed.subscription is None:
                return
            subscription, feed.subscription = feed.subscription, None
            if self._feeds.get(game_id) is feed:
                del self._feeds[game_id]
        with contextlib.suppress(Exception):
            await subscription.unsubscribe()

    def watched(self) -> int:
        """Return how many games have a live feed on this replica."""
        return len(self._feeds)

    def _deliver(self, feed: _Feed) -> Any:
        async def callback(msg: Msg) -> None:
            try:
                stored = _stored.decode(msg.data)
                delivery = (stored, REGISTRY.decode(stored))
            except Exception as exc:  # not ours to judge: sessions read the store anyway
                self.log.warning("undecodable event on the bus", error=type(exc).__name__)
                return
            for queue in feed.queues:
                queue.put_nowait(delivery)

        return callback
