"""Who is online: each replica writes its connected accounts every SPADES_PRESENCE_SECONDS
(30) seconds (`social.seen`), each with the game he is seated at when that game is watched here
(his own seat's watch). Followers read it (`GET /api/social/following`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated

from msgspec import Meta

from events.settings import from_environ
from services.gateway import social
from services.gateway.rooms import Rooms
from services.gateway.state import Gateway


@dataclass(frozen=True, slots=True)
class PresenceSettings:
    """SPADES_PRESENCE_SECONDS: how often a replica writes its connected accounts."""

    presence_seconds: Annotated[float, Meta(gt=0, le=social.ONLINE_SECONDS / 2)] = (
        social.PRESENCE_INTERVAL
    )


async def write_presence(gateway: Gateway, rooms: Rooms) -> int:
    """Record this replica's connected accounts as online now; return how many."""
    seats = rooms.seats()
    online = {player: seats.get(player) for player in gateway.connections.accounts}
    await social.seen(gateway.pool, online)
    return len(online)


async def _loop(gateway: Gateway, rooms: Rooms, interval: float) -> None:
    while True:
        try:
            await write_presence(gateway, rooms)
        except Exception as exc:  # the database away: presence is late, nothing else
            gateway.log.warning("presence not written", error=type(exc).__name__)
        await asyncio.sleep(interval)


@contextlib.asynccontextmanager
async def presence(gateway: Gateway, rooms: Rooms) -> AsyncIterator[None]:
    """Write presence in the background while the app runs."""
    interval = from_environ(PresenceSettings).presence_seconds
    task = asyncio.create_task(_loop(gateway, rooms, interval))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
