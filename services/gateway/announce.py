"""A session's match announcements: ``match_found`` once per game per connection, when the
match forms and right after ``auth`` while the account sits in a live ranked game.

A mixin of `services.gateway.session.Session` (its own job, kept apart from the connection's
reading, writing and watching): it uses the session's account, rooms, gateway and writer.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import msgspec

from events.contracts import game as wire
from events.contracts import matchmaking as mm
from events.contracts.game import game_id_of_match, stream_of
from events.envelope import REGISTRY
from services.gateway import auth
from services.gateway.protocol import MatchReady, _Out
from services.gateway.rooms import Rooms
from services.gateway.state import Gateway, Unavailable, ask

MATCH_WAIT = 30.0
"""Seconds a match_found waits for the table to open the game before it is given up."""

_mm_reply = msgspec.json.Decoder(mm.Reply)


class Announcements:
    """What a session does with the matches of its account."""

    gateway: Gateway
    rooms: Rooms
    claims: auth.Claims | None
    matched: set[str]
    log: Any

    def send(self, message: _Out) -> None:
        raise NotImplementedError  # the session's writer

    def _spawn(self, work: Any) -> None:
        raise NotImplementedError  # the session's background tasks

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
        _, queue = await self.rooms.join(game_id)
        try:
            stored = await self.gateway.store.read(stream_of(game_id))
            if not stored:  # the table has not opened the game yet: wait for its first frame
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(queue.get(), MATCH_WAIT)
                stored = await self.gateway.store.read(stream_of(game_id))
        finally:
            self.rooms.leave(game_id, queue)
        if not stored:
            self.log.warning("matched game did not open", game_id=game_id)
            return
        opened = REGISTRY.decode(stored[0])
        if isinstance(opened, wire.TableOpened) and opened.match_id == match_id:
            self._announce(match_id, opened.ladder, opened.players, game_id)
