"""A WebSocket client of the gateway for tests and benches: plays its seat by the hints."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

from tests.moves import choose_json


@dataclass
class Received:
    """One message a client received, with when (time.time()) it arrived."""

    at: float
    text: str
    body: dict[str, Any]


@dataclass
class WsClient:
    """One connection: sends JSON messages, keeps everything it receives."""

    url: str
    token: str
    connection: ClientConnection | None = None
    received: list[Received] = field(default_factory=list)
    batch: bool = False
    """Connect with ``?batch=1``: every frame is a JSON array of messages (the browser's way)."""
    frames: int = 0
    """Text frames received."""
    _pending: deque[tuple[float, str, dict[str, Any]]] = field(default_factory=deque)

    async def connect(self, *, auth: bool = True) -> dict[str, Any] | None:
        """Open the connection (and authenticate: return the welcome)."""
        url = self.url + ("?batch=1" if self.batch else "")
        self.connection = await websockets.connect(url, max_size=2**20)
        if not auth:
            return None
        await self.send({"type": "auth", "token": self.token})
        return await self.expect("welcome")

    async def close(self) -> None:
        """Close the connection."""
        if self.connection is not None:
            await self.connection.close()

    async def send(self, message: dict[str, Any] | str) -> None:
        """Send one message (a dict as JSON, a str as it is)."""
        assert self.connection is not None
        await self.connection.send(message if isinstance(message, str) else json.dumps(message))

    async def recv(self, within: float = 30.0) -> dict[str, Any]:
        """Return the next message (on a batching connection, the next one of its frame)."""
        assert self.connection is not None
        if not self._pending:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the result when it
            # is cancelled just as the message arrives, so a `play` task cancelled at the end of
            # a test played on (test_ws_resume's seat-drop test: 80 s more, waiting on timers).
            async with asyncio.timeout(within):
                text = await self.connection.recv()
            assert isinstance(text, str)
            self.frames += 1
            decoded = json.loads(text)
            at = time.time()
            if self.batch:
                assert isinstance(decoded, list), f"not a batch: {text[:200]}"
                assert decoded, "an empty batch"
                self._pending.extend((at, json.dumps(body), body) for body in decoded)
            else:
                assert isinstance(decoded, dict), f"not one message: {text[:200]}"
                self._pending.append((at, text, decoded))
        at, text, body = self._pending.popleft()
        self.received.append(Received(at, text, body))
        return body

    async def expect(self, kind: str, within: float = 30.0) -> dict[str, Any]:
        """Return the next message of type ``kind`` (others are kept in ``received``)."""
        deadline = time.monotonic() + within
        while True:
            body = await self.recv(max(0.01, deadline - time.monotonic()))
            if body["type"] == kind:
                return body

    async def command(
        self, game_id: str, command: dict[str, Any], command_id: str | None = None
    ) -> str:
        """Send a command; return its command id."""
        command_id = command_id or str(uuid.uuid4())
        await self.send(
            {"type": "command", "game_id": game_id, "command_id": command_id, "command": command}
        )
        return command_id

    async def play(
        self,
        game_id: str,
        *,
        last_seq: int | None = None,
        until_seq: int = 0,
        prefer: str = "",
    ) -> None:
        """Subscribe with hints and play every turn by the suggestion (`tests.moves` where the
        table gives none) until the game ends
        (or, with ``until_seq``, until an event past it has arrived); a legal command of type
        ``prefer`` is played instead of the suggestion."""
        subscribe: dict[str, Any] = {"type": "subscribe", "game_id": game_id, "hints": True}
        if last_seq is not None:
            subscribe["last_seq"] = last_seq
        await self.send(subscribe)
        while True:
            body = await self.recv(120)
            kind = body["type"]
            if kind == "error":
                assert body["code"] in ("out_of_turn",), body
            elif kind == "your_turn":
                preferred = [c for c in body["legal"] if c["type"] == prefer]
                await self.command(game_id, preferred[0] if preferred else self.move(game_id, body))
            elif kind == "event":
                if body["event"]["type"] == "GameFinished":
                    return
                if until_seq and body["seq"] > until_seq:
                    return

    def hand(self, game_id: str) -> list[str]:
        """Return the seat's hand as last received (a view's, or an event's ``hand``)."""
        for got in reversed(self.received):
            body = got.body
            if body.get("game_id") != game_id:
                continue
            if body["type"] == "event" and body.get("hand") is not None:
                return list(body["hand"])
            if body["type"] == "view":
                return list(body["view"]["hand"])
        return []

    def move(self, game_id: str, turn: dict[str, Any]) -> dict[str, Any]:
        """Return the move for a your_turn: its suggestion (practice), else `tests.moves`'."""
        suggestion = turn.get("suggestion")
        if suggestion:
            return dict(suggestion)
        return choose_json(turn["legal"], self.hand(game_id))

    def events(self, game_id: str) -> list[dict[str, Any]]:
        """Return the event messages received for ``game_id``, in order."""
        return [
            r.body
            for r in self.received
            if r.body["type"] == "event" and r.body["game_id"] == game_id
        ]

    def last_seq(self, game_id: str) -> int:
        """Return the highest seq seen for ``game_id`` (events and views)."""
        seqs = [
            r.body["seq"]
            for r in self.received
            if r.body["type"] in ("event", "view") and r.body.get("game_id") == game_id
        ]
        return max(seqs, default=0)
