"""One session's watch of one game: forward what the table built for its audience.

A watch never folds, redacts or times anything: its seat (or the spectators) is decided by
the table, and every message about the game is bytes the table encoded
(`events.contracts.audience`). The watch only keeps the seqs straight:

- It joins the game's room before it asks the table anything, so whatever commits after the
  table's answer arrives in its queue; frames at or below what it has are dropped, so
  nothing is sent twice.
- A frame that does not follow what it has (the bus lost one, the owner died between commit
  and publish, the slot moved: a new owner sends an empty "nudge") makes it ask the
  table for the messages after its last seq: nothing is skipped.
- A ``last_seq`` resume is served from the room's history when it reaches back that far,
  and from the table (which reads its log if need be) when it does not.
- A ``view`` asked again before the game has moved past the last one this watch had is
  answered with that one's bytes: a version names one state for good, and the table's answer
  at a version is final (a practice seat's hint is awaited before it answers, and a turn is
  asked of the bot tier once), so a client asking fifty times a second costs the table one
  request per change of the game, not fifty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from events.contracts.audience import CatchupReply, Frame, messages_after
from events.contracts.game import Catchup
from events.errors import Refusal
from services.gateway import eventrun
from services.gateway.protocol import Error, Subscribed
from services.gateway.rooms import Inbox, Room
from services.gateway.state import Gateway, Unavailable, ask_catchup


class Refused(Refusal):
    """The table refused the watch (``code`` for programs)."""


class Watch:
    """One session's view of one game: its seat, how far it got, what it forwards."""

    def __init__(
        self,
        gateway: Gateway,
        room: Room,
        queue: Inbox,
        player_id: str,
        send_raw: Callable[[bytes], None],
        send: Callable[[Any], None],
        *,
        hints: bool,
    ) -> None:
        self.gateway = gateway
        self.room = room
        self.game_id = room.game_id
        self.queue = queue
        self.player_id = player_id
        self.send_raw = send_raw
        self.send = send
        self.asks_hints = hints
        self.hints = False
        self.seat = -1
        self.version = 0
        """The last seq of the game this watch has dealt with (every frame up to it)."""
        self.released = 0
        """A spectator's last seq sent (kept one trick behind the game)."""
        self.signalled = -1
        self.kept_view: tuple[int, bytes] = (-1, b"")
        """The last `view` message this watch had, and the seq it shows (a spectator's: the
        last release)."""

    @property
    def role(self) -> str:
        """Return "seat" or "spectator"."""
        return "seat" if self.seat >= 0 else "spectator"

    async def _ask(self, after: int | None, *, hints: bool | None = None) -> CatchupReply:
        request = Catchup(
            game_id=self.game_id,
            player_id=self.player_id,
            after=after,
            hints=self.hints if hints is None else hints,
        )
        try:
            reply = await ask_catchup(self.gateway, request)
        except Unavailable:
            raise Refused("unavailable", "the table did not answer: subscribe again") from None
        if not reply.ok:
            raise Refused(reply.code, reply.message)
        return reply

    async def prepare(self, last_seq: int | None) -> tuple[CatchupReply, list[bytes]]:
        """Ask the table where this watch starts (the view, or the messages after
        ``last_seq`` the room's history does not hold); raise `Refused` if it refuses."""
        room = self.room
        held: list[bytes] | None = None
        after = last_seq
        if last_seq is not None and room.players is not None:
            seat = room.players.index(self.player_id) if self.player_id in room.players else -1
            upto = room.version
            if seat < 0:  # spectators: up to the last release the history holds
                upto = max((f.released for f in room.history), default=0)
            if last_seq <= upto:
                held = messages_after(room.history, seat, last_seq, upto)
                if held is not None:
                    after = upto
        reply = await self._ask(after, hints=self.asks_hints)
        if reply.seat < 0 and await eventrun.sealed(self.gateway.pool, self.game_id):
            raise Refused("board_in_play", "this board is still being played at other tables")
        room.players, room.unlisted = reply.players, reply.unlisted
        return reply, held or []

    def begin(self, reply: CatchupReply, held: list[bytes], last_seq: int | None) -> None:
        """Tell the client where it stands: ``subscribed``, then the view (or the events
        after ``last_seq``), the turn and the clock."""
        self.seat, self.hints = reply.seat, self.asks_hints and reply.hints
        self.send(
            Subscribed(game_id=self.game_id, role=self.role, seat=self.seat, players=reply.players)
        )
        if reply.view:
            self._keep_view(reply)
            self.send_raw(reply.view)
        for data in held:
            self.send_raw(data)
        for data in reply.messages:
            self.send_raw(data)
        self.version = reply.version
        self.released = max(reply.released, last_seq or 0) if self.seat < 0 else reply.version
        self._turn(reply.turn, reply.version)
        if reply.clock:
            self.send_raw(reply.clock)

    async def follow(self) -> None:
        """Forward every frame of the game, asking the table across any gap.

        While it waits with nothing queued, the frames that follow on are forwarded as the
        bus delivers them (`Inbox.inline`); the rest (a gap, a practice table's hint) are
        queued for this loop, and so is everything behind them, so the order holds."""
        try:
            while True:
                self.queue.inline = self._forward_now
                frame = await self.queue.get()
                self.queue.inline = None
                if frame.last <= self.version:
                    continue  # had it already (or a nudge at our seq)
                if frame.first > self.version + 1:
                    await self._catch_up()
                    continue
                await self._forward(frame)
        finally:
            self.queue.inline = None

    def stop(self) -> None:
        """Forward nothing more from the bus callback (the loop is being cancelled)."""
        self.queue.inline = None

    def _forward_now(self, frame: Frame) -> bool:
        """Forward a frame that follows on without waiting for anything (True), or leave it
        to `follow` (False): a gap to ask the table across, or a turn that wants a hint."""
        if frame.last <= self.version:
            return True
        if frame.first > self.version + 1 or self._wants_hint(frame):
            return False
        self._send_frame(frame)
        return True

    def _wants_hint(self, frame: Frame) -> bool:
        return (
            self.hints
            and self.seat >= 0
            and bool(frame.turns)
            and bool(frame.turns[self.seat])
            and self.signalled < frame.last
        )

    async def _forward(self, frame: Frame) -> None:
        if self._wants_hint(frame):
            self._send_frame(frame, turn=False)
            # a practice table: the table adds the searching bot's suggestion (the rest of
            # its answer comes in the frames)
            reply = await self._ask(self.version)
            self._turn(reply.turn, reply.version)
            if frame.clock:
                self.send_raw(frame.clock)
            return
        self._send_frame(frame)

    def _send_frame(self, frame: Frame, *, turn: bool = True) -> None:
        """Send a seat's (or the spectators') share of a frame that follows on; its turn and
        clock too, unless ``turn`` is False (the caller sends them after asking for a hint)."""
        if self.seat >= 0:
            for data in frame.seats[self.seat][self.version + 1 - frame.first :]:
                self.send_raw(data)
        elif frame.released > self.released:
            for data in messages_after((frame,), -1, self.released, frame.released) or ():
                self.send_raw(data)
            self.released = frame.released
        self.version = frame.last
        if not turn:
            return
        if self.seat >= 0 and frame.turns and frame.turns[self.seat]:
            self._turn(frame.turns[self.seat], frame.last)
        if frame.clock:
            self.send_raw(frame.clock)

    async def _catch_up(self) -> None:
        after = self.version if self.seat >= 0 else self.released
        reply = await self._ask(after)
        for data in reply.messages:
            self.send_raw(data)
        self.version = reply.version
        if self.seat < 0:
            self.released = max(self.released, reply.released)
        self._turn(reply.turn, reply.version)
        if reply.clock:
            self.send_raw(reply.clock)

    async def ask_view(self) -> bytes:
        """Return the `view` message of the game for this watch: the last one it had while
        the game has not moved past it (nothing changed it since), else the table's."""
        shown, data = self.kept_view
        if data and shown >= (self.version if self.seat >= 0 else self.released):
            return data
        reply = await self._ask(None)
        self._keep_view(reply)
        return reply.view

    def _keep_view(self, reply: CatchupReply) -> None:
        self.kept_view = (reply.version if self.seat >= 0 else reply.released, reply.view)

    def _turn(self, turn: bytes, seq: int) -> None:
        """Send a your_turn once per turn (a seat acts once on each)."""
        if turn and self.signalled < seq:
            self.signalled = seq
            self.send_raw(turn)

    def error(self, code: str, message: str) -> Error:
        """Return the error that ends this watch."""
        return Error(code=code, message=message, game_id=self.game_id)
