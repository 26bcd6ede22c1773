"""What reaches the WebSocket sessions of one gateway replica from the bus: games and matches.

Games. One JetStream ordered consumer per game watched on this replica (however many sessions
watch it), delivering only events published from now on; every session gets each event in its
own queue. Ordered consumers restart themselves after a gap or a NATS reconnect, but a session
never trusts the bus alone: it reads what it missed from the event store (the log is the truth)
and uses the bus to learn that something new committed, dropping what it already has and
reading any gap from the store. So no event is skipped or sent twice, whatever the bus does.

The game is also folded once per replica (`GameFeed`), not once per session: folding is
deterministic, so the state after event N is the same for every session that has folded events
1..N-1, and a session takes it from the feed instead of applying the event again. Redacted,
encoded event messages are shared the same way per seat (every spectator of a game gets the
same bytes). The feed is seeded by the first session that has read the log, and re-seeded by
any session that gets ahead of it (after a bus gap), so it never needs the log itself.

The clock. Each watched game has one timer per replica (not per session): a `clock` message
(whose turn, the deadline of the table's turn timer, the server's time) goes to every watcher
when the turn changes, then ticks every TICK_SECONDS and every second in the last
FINAL_SECONDS, until the deadline passes or the game ends; games nobody watches here cost
nothing. Whose turn it is and when the timer runs out are public: a clock reveals no card.

Matches. One ordered consumer per replica on MatchFound (`Matches`): each replica tells the
sessions of its own connections, so any number of replicas run side by side with no shared
consumer.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from typing import Any

import msgspec
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy

import engine
from events import game as wire
from events.envelope import REGISTRY, StoredEvent
from events.matchmaking import MatchFound
from events.subjects import Subjects

_stored = msgspec.json.Decoder(StoredEvent)
_encoder = msgspec.json.Encoder()

Delivery = tuple[StoredEvent, Any]
"""A stored event and its decoded game event."""

Item = Delivery | bytes
"""What a session's queue holds: an event, or an encoded message to pass on as it is."""

TICK_SECONDS = 5.0
"""A clock tick every this many seconds of a turn..."""
FINAL_SECONDS = 5.0
"""...and every second in the last this many seconds."""
KEPT_STEPS = 64
"""Recent folds a feed keeps for sessions a little behind it."""
_EPSILON = 0.05


class Clock(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag="clock"):
    """Seat ``seat`` is on turn after event ``seq``; its timer runs out at ``deadline``.

    ``now`` is the server's time when this was sent (count down with ``deadline - now``, not
    the client's own clock); ``bot``: the seat is played by a bot, which acts long before.
    ``deadline`` is null at an untimed table (practice opened with ``untimed``): no ticks.
    """

    game_id: str
    seq: int
    seat: int
    deadline: float | None
    now: float
    bot: bool = False


def next_tick(remaining: float) -> float | None:
    """Return the seconds until the next tick of a turn with ``remaining`` seconds left, or
    None when no tick is left: ticks fall when whole multiples of 5 s are left, then 4, 3, 2,
    1 and 0 s."""
    if remaining <= _EPSILON:
        return None
    step = 1.0 if remaining <= FINAL_SECONDS + _EPSILON else TICK_SECONDS
    target = math.floor((remaining - _EPSILON) / step) * step
    return remaining - target


class GameFeed:
    """One game watched on this replica: its consumer, its watchers' queues, its one fold and
    its one clock."""

    def __init__(self, game_id: str, log: Any) -> None:
        self.game_id = game_id
        self.log = log
        self.subscription: Subscription | None = None
        self.queues: set[asyncio.Queue[Item]] = set()
        self.lock = asyncio.Lock()
        self.opened: wire.TableOpened | None = None
        self.state: engine.GameState | None = None
        self.version = 0
        self.deadline: float | None = None
        self.bots: frozenset[int] = frozenset()
        self.after: dict[int, engine.GameState] = {}
        self.messages: dict[tuple[int, int], bytes] = {}
        self.clock: Clock | None = None
        self._timer: asyncio.TimerHandle | None = None

    # -- the shared fold -----------------------------------------------------------------------

    def offer(
        self,
        version: int,
        state: engine.GameState,
        deadline: float | None,
        opened: wire.TableOpened,
        bots: frozenset[int],
    ) -> bool:
        """Adopt a session's fold when it is ahead of the feed's; return whether a new clock
        went to the watchers."""
        if version <= self.version:
            return False
        self.opened, self.state, self.version = opened, state, version
        self.deadline, self.bots = deadline, bots
        clock = self._retime()
        if clock is not None:
            self.broadcast(clock)
        return clock is not None

    def fold(self, stored: StoredEvent, event: Any) -> bytes | None:
        """Fold the next event of the game (anything else is left to the sessions); return the
        new clock, encoded, when the turn changed."""
        if self.state is None or self.opened is None or stored.version != self.version + 1:
            return None
        try:
            engine_event = wire.to_engine(event)
            if engine_event is not None:
                self.state = engine.apply(self.state, engine_event)
        except Exception as exc:  # a session folds it again and says what is wrong
            self.log.warning("feed fold failed", game_id=self.game_id, error=type(exc).__name__)
            self.state, self.version = None, 0
            return None
        self.version = stored.version
        self.deadline = wire.deadline_of(stored, self.opened)
        if isinstance(event, wire.SeatAbandoned):
            self.bots = self.bots | {event.seat}
        self.after[self.version] = self.state
        self.after.pop(self.version - KEPT_STEPS, None)
        return self._retime()

    def shared_messages(self, version: int, seat: int) -> bytes | None:
        """Return the encoded event message ``version`` gives ``seat``, if a session made it."""
        return self.messages.get((version, seat))

    def share_messages(self, version: int, seat: int, data: bytes) -> None:
        """Keep the encoded event message of ``version`` for ``seat`` for other sessions."""
        self.messages[(version, seat)] = data
        if len(self.messages) > 8 * KEPT_STEPS:
            floor = version - KEPT_STEPS
            self.messages = {k: v for k, v in self.messages.items() if k[0] > floor}

    # -- the clock -----------------------------------------------------------------------------

    def _retime(self) -> bytes | None:
        """Set the clock from the fold; return it, encoded, when the turn or deadline changed."""
        state, opened, old = self.state, self.opened, self.clock
        if state is None or opened is None or state.phase == "over" or state.turn < 0:
            if old is not None:
                self.clock = None
                self._arm()
            return None
        deadline = self.deadline
        if old is not None and (old.seat, old.deadline) == (state.turn, deadline):
            return None
        self.clock = Clock(
            game_id=self.game_id,
            seq=self.version,
            seat=state.turn,
            deadline=deadline,
            now=time.time(),
            bot=state.turn in self.bots,
        )
        self._arm()
        return _encoder.encode(self.clock)

    def current_clock(self) -> bytes | None:
        """Return the clock as it stands now, encoded (None: nobody is on turn)."""
        if self.clock is None:
            return None
        return _encoder.encode(msgspec.structs.replace(self.clock, now=time.time()))

    def broadcast(self, data: bytes) -> None:
        """Give an encoded message to every watcher of the game on this replica."""
        for queue in self.queues:
            queue.put_nowait(data)

    def _arm(self) -> None:
        """(Re)schedule the game's one timer for the next tick of the clock, if any is left."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.clock is None or self.clock.deadline is None or not self.queues:
            return  # nobody on turn, an untimed table, or nobody watching: no ticks
        delay = next_tick(self.clock.deadline - time.time())
        if delay is not None:
            self._timer = asyncio.get_running_loop().call_later(delay, self._tick)

    def _tick(self) -> None:
        self._timer = None
        data = self.current_clock()
        if data is not None and self.queues:
            self.broadcast(data)
        self._arm()

    def stop(self) -> None:
        """Stop the clock (nobody watches here any more)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class Feeds:
    """The live feeds of every game some session of this replica watches."""

    def __init__(self, js: JetStreamContext, subjects: Subjects, log: Any) -> None:
        self.js = js
        self.subjects = subjects
        self.log = log
        self._feeds: dict[str, GameFeed] = {}
        self.matches = Matches(js, subjects, log)

    async def join(self, game_id: str) -> tuple[GameFeed, asyncio.Queue[Item]]:
        """Return the game's feed, and a queue that receives every event of ``game_id``
        published from now on (and the game's clock)."""
        queue: asyncio.Queue[Item] = asyncio.Queue()
        while True:
            feed = self._feeds.setdefault(game_id, GameFeed(game_id, self.log))
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
                return feed, queue

    def feed(self, game_id: str) -> GameFeed | None:
        """Return the live feed of a game watched here."""
        return self._feeds.get(game_id)

    async def leave(self, game_id: str, queue: asyncio.Queue[Item]) -> None:
        """Stop delivering to ``queue``; the game's consumer goes when nobody watches."""
        feed = self._feeds.get(game_id)
        if feed is None:
            return
        async with feed.lock:
            feed.queues.discard(queue)
            if feed.queues or feed.subscription is None:
                return
            subscription, feed.subscription = feed.subscription, None
            feed.stop()
            if self._feeds.get(game_id) is feed:
                del self._feeds[game_id]
        with contextlib.suppress(Exception):
            await subscription.unsubscribe()

    def watched(self) -> int:
        """Return how many games have a live feed on this replica."""
        return len(self._feeds)

    def _deliver(self, feed: GameFeed) -> Any:
        async def callback(msg: Msg) -> None:
            try:
                stored = _stored.decode(msg.data)
                delivery = (stored, REGISTRY.decode(stored))
            except Exception as exc:  # not ours to judge: sessions read the store anyway
                self.log.warning("undecodable event on the bus", error=type(exc).__name__)
                return
            clock = feed.fold(*delivery)
            for queue in feed.queues:
                queue.put_nowait(delivery)
            if clock is not None:
                feed.broadcast(clock)  # after the event that moved the turn

        return callback


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
