"""The relay's publication: one chain of publishes in flight, each link expecting the one before.

The relay used to await JetStream's acknowledgement of each event before publishing the next
event of the same stream: one round trip, one socket write and one read per event. Here a page
of events is written to the socket at once and only its last message asks for an
acknowledgement; several pages may be in flight. Order is kept by the server, not by waiting:

- Every message carries ``Nats-Msg-Id`` (its event id) and, except the first of a chain,
  ``Nats-Expected-Last-Msg-Id`` = the event id of the message before it in log order (the
  relay's one total order over every stream: ``read_all``'s (transaction id, position)).
  JetStream stores a message only if the last message in the stream has that id, so a link
  whose predecessor is missing (refused, lost with a dropped connection, not yet there) is
  refused, and so is every link after it (each expects one that never got in). The same for
  a link that would land after a foreign message (another publisher, an old relay).
- The server checks ``Nats-Msg-Id`` *before* the expectation: a message already in the stream
  (within the duplicate window) is acknowledged as a duplicate and not stored again, whatever
  it expects. So republishing from the checkpoint after a crash, whose prefix is already in
  the stream, passes through; the first new message then expects its predecessor, which is the
  stream's last. (Checked against nats-server 2.15: the relay tests exercise both.)
- The first message of a chain expects nothing. A chain starts only right after the confirmed
  checkpoint, where every earlier event of the log is known to be in the stream, so wherever
  it lands nothing of its own stream is missing before it.

The argument, by induction over what the server stores: a message is stored only (a) as a
chain's first, whose log predecessors are all confirmed in the stream, or (b) right after its
log predecessor, which was itself stored (or confirmed) under the same rule. Hence the events
in the stream are always a prefix of the log order (plus, beyond the duplicate window, copies
that consumers drop by version), and no subscriber can see version n+1 of a stream without n
before it. In particular one acknowledged success of a page's last message confirms the whole
page and every page before it; nothing else is needed to move the checkpoint.

A busy relay (one that stopped listening for commits: `events.relayloops`) does not even ask
every page: one in ``ack_every`` seconds (0.1, its checkpoint's pace) or ``ack_pages`` (4)
does, and an answer confirms the pages before it by the argument above; each answer not asked
is a wake-up of the relay saved. When the flow pauses, the last page, if it asked for nothing,
is confirmed by `confirm_tail`: its last message published again, the same bytes with a reply
subject. A copy already stored is answered as a duplicate (so it, and by the chain everything
before it, is in the stream); a copy that was not stored is judged as the first one was, since
it expects the same predecessor: a refusal then says the chain broke. A page that asked for
nothing has no deadline of its own; a later page's (or the tail's) answer stands for it.

When a page's acknowledgement reports an error, or does not come within ``ack_wait``, the
chain is abandoned (late answers of it are ignored) and the relay goes on *carefully*: it
publishes again from the confirmed checkpoint with an acknowledgement asked of every message
(still pipelined, still chained), takes the leading run of successes as confirmed, and starts
the next chain, expectation-free, at the first message that failed. That always progresses
(a chain's first message is refused only when the server cannot store at all), which matters
when the expectation can never match: a server that forgot its last message id, or copies
re-stored after the duplicate window moved the stream's last message elsewhere. Then the
chain goes back to one acknowledgement per page.

What this does not change: exactly once in JetStream still rests on ``Nats-Msg-Id`` within
the duplicate window; the checkpoint is saved only at or before a confirmed position.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.errors import ConnectionClosedError, MaxPayloadError

from events.relayrows import Outgoing
from events.store import Checkpoint
from events.subjects import Subjects

__all__ = ["EXPECTED_LAST_MSG_ID", "MSG_ID", "ChainBroken", "Pipeline"]

MSG_ID = "Nats-Msg-Id"
EXPECTED_LAST_MSG_ID = "Nats-Expected-Last-Msg-Id"

# A message's protocol line, its headers and its payload, in one format each: the first link of
# a chain, and every other (the header sizes are the formats' fixed bytes plus the ids').
_FIRST = f"HPUB %s %s %d %d\r\nNATS/1.0\r\n{MSG_ID}: %s\r\n\r\n%s\r\n".encode()
_LINK = (
    f"HPUB %s %s %d %d\r\nNATS/1.0\r\n{MSG_ID}: %s\r\n{EXPECTED_LAST_MSG_ID}: %s\r\n\r\n%s\r\n"
).encode()
_FIRST_HEADER = len(f"NATS/1.0\r\n{MSG_ID}: \r\n\r\n")
_LINK_HEADER = len(f"NATS/1.0\r\n{MSG_ID}: \r\n{EXPECTED_LAST_MSG_ID}: \r\n\r\n")


class _Ack(msgspec.Struct):
    """JetStream's answer to a publish: a sequence in a stream, or an error."""

    stream: str = ""
    seq: int = 0
    duplicate: bool = False
    error: dict[str, Any] | None = None


_ack_decoder = msgspec.json.Decoder(_Ack)


class ChainBroken(Exception):
    """JetStream refused a link of the chain, or did not confirm it in time."""

    def __init__(self, reason: str, *, no_stream: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.no_stream = no_stream  # the server answered that no stream captures the subject


@dataclass
class _Batch:
    """A page in flight: the checkpoint after its last event, and its acknowledgement."""

    end: Checkpoint
    events: int
    deadline: float  # math.inf for a page that asked for no acknowledgement
    asked: bool = True  # its last message asked for an acknowledgement
    answer: str | None = None  # "ok", or why not; None while nobody answered


class Pipeline:
    """Publishes the relay's events as one chain (see the module docstring).

    `sent` is where the next page is read from; `confirmed` is how far the server confirmed
    the stream holds every event. Acknowledgements arrive on one wildcard subscription of the
    connection; `changed` is set at each while `wake_on_ack` (the relay may hand its own
    wake-up event in, and clear `wake_on_ack` while it has no need to hear of each answer: an
    answer it does not wait for is taken at its next look, without waking it).
    """

    def __init__(
        self,
        nc: NATS,
        subjects: Subjects,
        confirmed: Checkpoint,
        *,
        ack_wait: float = 5.0,
        changed: asyncio.Event | None = None,
        ack_every: float = 0.1,
        ack_pages: int = 4,
    ) -> None:
        self.nc = nc
        self.subjects = subjects
        self.ack_wait = ack_wait
        self.ack_every = ack_every  # a busy relay's pages ask for an acknowledgement this often
        self.ack_pages = ack_pages  # or every this many pages (`ask_due`)
        self._asked_at = -math.inf
        self._unasked = 0  # pages sent since the last that asked
        self._tail: tuple[Outgoing, bytes | None] | None = None  # last page's last, if unasked
        self.changed = changed or asyncio.Event()
        self.confirmed = confirmed
        self.sent = confirmed
        self.head: bytes | None = None  # the event id the next link expects last; None: a start
        self._batches: deque[_Batch] = deque()
        self._by_token: dict[str, _Batch] = {}
        self._tokens = itertools.count()
        self._inbox = ""
        self._sub: Any = None
        self._careful: dict[str, str | None] = {}
        self.wake_on_ack = True
        self._max_payload = 0  # the server's limit, read at each write (a reconnect may change it)
        self.subject = functools.lru_cache(maxsize=4096)(self._subject_of)

    def _subject_of(self, stream_id: str, event_type: str) -> bytes:
        """The subject of an event (`subject` caches it: a game's events share a few)."""
        return self.subjects.event(stream_id, event_type).encode()

    async def start(self) -> None:
        """Subscribe the inbox every acknowledgement comes back to."""
        self._inbox = self.nc.new_inbox()
        self._sub = await self.nc.subscribe(f"{self._inbox}.*", cb=self._on_ack)

    async def close(self) -> None:
        """Stop listening for acknowledgements (the connection itself is the caller's)."""
        if self._sub is not None:
            with contextlib.suppress(Exception):  # the connection is closed: nothing to undo
                await self._sub.unsubscribe()
            self._sub = None

    @property
    def in_flight(self) -> int:
        """Pages sent and not yet confirmed."""
        return len(self._batches)

    @property
    def deadline(self) -> float | None:
        """When the oldest page in flight that asked for an acknowledgement counts as lost
        (monotonic), None if none is in flight."""
        return next((b.deadline for b in self._batches if b.asked), None)

    def _command(self, event: Outgoing, reply: bytes) -> bytes:
        """The HPUB protocol line of `event` as the next link of the chain, with its headers
        and payload.

        Built here rather than through `Client.publish`, which validates the subject and
        every header with regular expressions and flushes per message: a third of a busy
        relay's CPU. The subject is made of subject-safe tokens (`Subjects.event` checks
        them), and the header values are UUIDs. One bytes format per message: this runs once
        per event published.
        """
        event_id, head, payload = event.event_id, self.head, event.payload
        if head is None:
            header = _FIRST_HEADER + len(event_id)
            size = header + len(payload)
            command = _FIRST % (event.subject, reply, header, size, event_id, payload)
        else:
            header = _LINK_HEADER + len(event_id) + len(head)
            size = header + len(payload)
            command = _LINK % (event.subject, reply, header, size, event_id, head, payload)
        if size > self._max_payload:
            # The server would close the connection on it: refuse it here, as publish() does.
            raise MaxPayloadError
        self.head = event_id
        return command

    async def _write(self, commands: list[bytes]) -> None:
        """Hand `commands` to the connection's buffer as one write, and kick its flusher (what
        `Client.publish` does per message)."""
        if self.nc.is_closed:
            raise ConnectionClosedError
        await self.nc._send_command(b"".join(commands))
        if self.nc._flush_queue is not None and self.nc._flush_queue.empty():
            await self.nc._flush_pending()

    def _abandon(self) -> None:
        """Forget the chain in flight: its late answers are ignored; the next link starts one."""
        self._batches.clear()
        self._by_token.clear()
        self._careful.clear()
        self.head = None
        self.sent = self.confirmed
        self._tail, self._unasked = None, 0

    def ask_due(self) -> bool:
        """Whether the next page should ask for an acknowledgement although the relay is busy:
        `ack_every` seconds since the last page that asked, or `ack_pages` pages."""
        return (
            time.monotonic() - self._asked_at >= self.ack_every
            or self._unasked + 1 >= self.ack_pages
        )

    async def send(self, page: Sequence[Outgoing], *, ask: bool = True) -> None:
        """Publish `page` after what was sent, asking an acknowledgement of its last message
        unless `ask` is False (then a later page's acknowledgement confirms it, or
        `confirm_tail`'s).

        Raises ChainBroken, with the chain abandoned, when the connection is down (the page is
        read and published again from the confirmed checkpoint once it is back).
        """
        if not self.nc.is_connected:
            self._abandon()
            raise ChainBroken("not connected")
        token = str(next(self._tokens)) if ask else ""
        self._max_payload = self.nc.max_payload
        try:
            commands = [self._command(event, b"") for event in page[:-1]]
            before = self.head
            reply = f"{self._inbox}.{token}".encode() if ask else b""
            commands.append(self._command(page[-1], reply))
            await self._write(commands)
        except Exception as exc:
            self._abandon()
            raise ChainBroken(type(exc).__name__) from exc
        now = time.monotonic()
        batch = _Batch(
            page[-1].checkpoint, len(page), now + self.ack_wait if ask else math.inf, ask
        )
        self._batches.append(batch)
        if ask:
            self._by_token[token] = batch
            self._asked_at, self._unasked, self._tail = now, 0, None
        else:
            self._unasked += 1
            self._tail = (page[-1], before)
        self.sent = batch.end

    @property
    def unconfirmed_tail(self) -> bool:
        """Whether the last page sent asked for no acknowledgement (`confirm_tail`)."""
        return self._tail is not None

    async def confirm_tail(self) -> None:
        """Ask for an acknowledgement of the last page sent, if it asked for none: its last
        message is published again, the same bytes with a reply subject. JetStream answers a
        copy already stored as a duplicate (its message id), which says the event, and by the
        chain every event before it, is in the stream; a copy that was not stored is judged
        as the first was (it expects the same predecessor), so the answer is the truth.
        Raises ChainBroken as `send` does."""
        if self._tail is None:
            return
        if not self.nc.is_connected:
            self._abandon()
            raise ChainBroken("not connected")
        event, self.head = self._tail  # built as it was: it expects what it expected
        token = str(next(self._tokens))
        self._max_payload = self.nc.max_payload
        try:
            command = self._command(event, f"{self._inbox}.{token}".encode())
            await self._write([command])
        except Exception as exc:
            self._abandon()
            raise ChainBroken(type(exc).__name__) from exc
        now = time.monotonic()
        batch = _Batch(event.checkpoint, 0, now + self.ack_wait)
        self._batches.append(batch)
        self._by_token[token] = batch
        self._asked_at, self._unasked, self._tail = now, 0, None

    def collect(self) -> int:
        """Take the answered pages: return how many events are newly confirmed.

        An acknowledged page confirms every page before it too (the chain: the stream is a
        prefix of the log), those that asked for none included. Raises ChainBroken (and
        abandons the chain) when a page was refused or its answer is overdue; the events
        confirmed before it stay confirmed.
        """
        confirmed = 0
        now = time.monotonic()
        while self._batches:
            asked = next((b for b in self._batches if b.asked), None)
            if asked is None or asked.answer is None:
                if asked is None or now < asked.deadline:
                    break
                self._abandon()
                raise ChainBroken("no acknowledgement in time")
            if asked.answer != "ok":
                reason = asked.answer
                self._abandon()
                raise ChainBroken(reason, no_stream=reason == "no stream")
            while True:
                batch = self._batches.popleft()
                confirmed += batch.events
                self.confirmed = batch.end
                if batch is asked:
                    break
        return confirmed

    async def careful(self, page: Sequence[Outgoing]) -> int:
        """Publish `page` from the confirmed checkpoint, an acknowledgement asked of every
        message; return how many of its leading events the server confirmed (all of them, or
        raise ChainBroken after confirming the leading run, so the next chain starts, without
        an expectation, at the first event that failed)."""
        self._abandon()
        if not self.nc.is_connected:  # nothing buffered for a server that is away
            raise ChainBroken("not connected")
        tokens = [f"c{next(self._tokens)}" for _ in page]
        self._max_payload = self.nc.max_payload
        for token in tokens:
            self._careful[token] = None
        try:
            await self._write(
                [
                    self._command(event, f"{self._inbox}.{token}".encode())
                    for token, event in zip(tokens, page, strict=True)
                ]
            )
        except Exception as exc:
            self._abandon()
            raise ChainBroken(type(exc).__name__) from exc
        deadline = time.monotonic() + self.ack_wait
        while any(self._careful.get(t) is None for t in tokens):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except TimeoutError:
                break
        answers = [self._careful.get(t) for t in tokens]
        good = 0
        for answer in answers:
            if answer != "ok":
                break
            good += 1
        if good:
            self.confirmed = page[good - 1].checkpoint
        if good == len(page):
            self._careful.clear()
            self.head = page[-1].event_id
            self.sent = self.confirmed
            return good
        reason = answers[good] or "no acknowledgement in time"
        self._abandon()
        raise ChainBroken(reason, no_stream=reason == "no stream")

    async def _on_ack(self, msg: Msg) -> None:
        token = msg.subject[len(self._inbox) + 1 :]
        if token in self._careful:
            self._careful[token] = _verdict(msg, self.subjects.events_stream)
            self.changed.set()  # careful() waits for every answer
            return
        batch = self._by_token.pop(token, None)
        if batch is None:
            return  # an abandoned chain's late answer
        batch.answer = _verdict(msg, self.subjects.events_stream)
        if self.wake_on_ack:
            self.changed.set()


def _verdict(msg: Msg, stream: str) -> str:
    """Return "ok" when `msg` says the event is in `stream` (stored or a duplicate), else why
    not ("no stream" when no stream captures the subject)."""
    if not msg.data:
        status = (msg.headers or {}).get("Status", "")
        return "no stream" if status == "503" else f"status {status or 'empty'}"
    try:
        ack = _ack_decoder.decode(msg.data)
    except msgspec.DecodeError:
        return "unreadable acknowledgement"
    if ack.error is not None:
        return f"refused {ack.error.get('err_code', ack.error.get('code', '?'))}"
    if ack.stream != stream or ack.seq <= 0:
        return "acknowledged by another stream"
    return "ok"
