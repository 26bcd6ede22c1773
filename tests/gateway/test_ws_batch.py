"""Batching connections (``/ws?batch=1``): every frame a JSON array of the messages ready at once.

The browser connects this way: a move then reaches a seat as one frame (its event, turn and
clock together) instead of three. What it is told must not change, only how it is framed.
"""

from __future__ import annotations

import asyncio

import pytest
from nats.aio.client import Client as NATS

from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.test_ws_play import assert_no_gap, open_casual, seated, start_platform
from tests.gateway.wsclient import WsClient
from tests.infra import Processes
from tests.shared import unique_name


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_a_batching_connection_is_told_exactly_what_a_plain_one_is(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    gateway = await start_platform(processes)
    names = [unique_name(n) for n in ("bnorth", "beast", "bsouth", "bwest")]
    seats = await seated(gateway, names)
    for seat in seats:
        await seat.close()
    # north and south batch, east and west do not: one game, both framings side by side
    seats = [WsClient(gateway.ws_url, s.token, batch=i % 2 == 0) for i, s in enumerate(seats)]
    for seat in seats:
        assert await seat.connect() is not None
    game_id = await open_casual(nc, subjects, names, target=150)
    plain = WsClient(gateway.ws_url, "")
    batched = WsClient(gateway.ws_url, "", batch=True)
    for spectator in (plain, batched):
        assert await spectator.connect(auth=False) is None
        await spectator.send({"type": "subscribe", "game_id": game_id})
        await spectator.expect("view")

    async def watch(spectator: WsClient) -> None:
        while True:
            body = await spectator.recv(120)
            if body["type"] == "event" and body["event"]["type"] == "GameFinished":
                return

    await asyncio.wait_for(
        asyncio.gather(*(s.play(game_id) for s in seats), watch(plain), watch(batched)), 600
    )

    # Two spectators who subscribed before the first move were told the very same messages
    # (but for the server's time in the clock each subscribe asked the table for).
    def told(client: WsClient) -> list[dict[str, object]]:
        return [{k: v for k, v in r.body.items() if k != "now"} for r in client.received]

    assert told(batched) == told(plain)
    assert len(told(plain)) > 100
    for seat, client in enumerate(seats):
        assert_no_gap(client, game_id)
        errors = [r.body for r in client.received if r.body["type"] == "error"]
        assert errors == [], errors
        if client.batch:
            # messages did travel together: fewer frames than messages
            assert client.frames < len(client.received), (seat, client.frames)
        else:
            assert client.frames == len(client.received)
    assert batched.frames < plain.frames == len(plain.received)
    stored = await event_store.read(f"game-{game_id}")
    assert stored[-1].type == "GameFinished"
    for client in (*seats, plain, batched):
        await client.close()
