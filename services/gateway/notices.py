"""Messages for some players' WebSocket connections, wherever they are connected.

A gateway replica that changed a friends' table or a rematch publishes one `Notice` on the core
NATS subject `Subjects.player_notices`; every replica hands its ``message`` (one WebSocket
message, already encoded) to the connections of the named players it holds
(`services.gateway.rooms.Matches`). A notice is a nudge: the state it carries can always be read
again over HTTP (`GET /api/friends/{code}`, `GET /api/games/{game_id}/rematch`), so a client
that was away misses nothing it cannot ask for.
"""

from __future__ import annotations

from typing import Any

import msgspec

from services.gateway.protocol import _Out
from services.gateway.state import Gateway


class Notice(msgspec.Struct, frozen=True, kw_only=True):
    """Gateway to gateways: ``message`` (a JSON WebSocket message) for ``players``."""

    players: tuple[str, ...]
    message: str


class FriendsTableChanged(_Out, frozen=True, tag="friends_table"):
    """A friends' table you host, sit at or are invited to changed (somebody joined or left,
    seats were swapped, it started: then ``table.game_id`` is the game to subscribe to)."""

    table: Any


class RematchChanged(_Out, frozen=True, tag="rematch"):
    """The rematch of finished game ``game_id``: who ``accepted`` of its ``players``, who
    ``declined``; ``new_game_id`` once everyone accepted (subscribe to it)."""

    game_id: str
    players: tuple[str, ...]
    accepted: tuple[str, ...]
    declined: str | None = None
    new_game_id: str | None = None


class AnalysisReady(_Out, frozen=True, tag="analysis_ready"):
    """The review of finished game ``game_id`` is stored: ``status`` "ready" (read it with
    `GET /api/games/{game_id}/analysis`) or "failed". Sent to the game's players and to
    the account that asked for the review."""

    game_id: str
    status: str


_encoder = msgspec.json.Encoder()


async def publish(gateway: Gateway, players: tuple[str, ...], message: _Out) -> None:
    """Tell ``players``' connections on every replica; NATS away: they read it over HTTP."""
    notice = Notice(players=players, message=_encoder.encode(message).decode())
    try:
        await gateway.nc.publish(gateway.subjects.player_notices(), _encoder.encode(notice))
    except Exception as exc:  # a nudge lost: the state is in the database
        gateway.log.warning("notice not published", error=type(exc).__name__)
