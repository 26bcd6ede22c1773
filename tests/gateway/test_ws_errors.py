"""Bad input on the WebSocket: each answered with its code, nothing changed, connection kept."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
import websockets
from nats.aio.client import Client as NATS

from events.contracts.game import stream_of
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.gateway.auth import Tokens
from services.gateway.session import SUBSCRIBE_BURST
from services.gateway.ws import RATE_BURST
from tests.gateway.conftest import SECRET
from tests.gateway.test_ws_play import open_casual, seated, start_platform
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually
from tests.moves import choose
from tests.services.tablekit import TableClient
from tests.shared import SLOW_TURNS, unique_name

NAMES = ["anna", "bert", "cara", "dave", "outsider"]


async def error(client: WsClient, message: dict[str, object] | str) -> dict[str, object]:
    """Send ``message`` and return the error it gets; the connection must still answer."""
    await client.send(message)
    body = await client.expect("error")
    await client.send({"type": "ping"})
    await client.expect("pong")
    return body


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_bad_input_is_answered_with_its_code_and_changes_nothing(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    gateway = await start_platform(processes, **SLOW_TURNS)
    names = [unique_name(n) for n in NAMES]
    clients = await seated(gateway, names)
    seats, outsider = clients[:4], clients[4]
    game_id = await open_casual(nc, subjects, names[:4])
    other_game = await open_casual(nc, subjects, [unique_name(n) for n in ("x1", "x2", "x3", "x4")])
    view = await TableClient(nc, subjects, names[0]).view(game_id)
    on_turn, waiting = seats[view.turn], seats[(view.turn + 1) % 4]
    for client in seats:
        await client.send({"type": "subscribe", "game_id": game_id})
        await client.expect("view")
    version = len(await event_store.read(stream_of(game_id)))

    # not authenticated yet: it may watch (a spectator), not act
    fresh = WsClient(gateway.ws_url, "")
    await fresh.connect(auth=False)
    bid = {"type": "PlaceBid", "tricks": 3}
    acting = {
        "type": "command",
        "game_id": game_id,
        "command_id": str(uuid.uuid4()),
        "command": bid,
    }
    assert (await error(fresh, acting))["code"] == "unauthenticated"
    assert len(await event_store.read(stream_of(game_id))) == version
    forged, _ = Tokens("another-secret-" + "z" * 40, 900).issue("anna", False)
    expired, _ = Tokens(SECRET, 60).issue("anna", False, now=time.time() - 3600)
    assert (await error(fresh, {"type": "auth", "token": forged}))["code"] == "token_invalid"
    assert (await error(fresh, {"type": "auth", "token": expired}))["code"] == "token_expired"
    assert (await error(fresh, {"type": "auth", "token": "junk"}))["code"] == "token_invalid"

    # framing and typing
    cases: list[tuple[dict[str, object] | str, str]] = [
        ("{not json", "malformed"),
        ("[1, 2]", "malformed"),
        ({"type": "hello"}, "unknown_type"),
        ({"no": "type"}, "unknown_type"),
        ({"type": "subscribe", "game_id": 5}, "malformed"),
        ({"type": "subscribe", "game_id": game_id, "extra": 1}, "malformed"),
        ({"type": "ping", "pad": "x" * 5000}, "frame_too_large"),
        ({"type": "subscribe", "game_id": str(uuid.uuid4())}, "unknown_game"),
        ({"type": "subscribe", "game_id": "not-a-uuid"}, "unknown_game"),
        ({"type": "subscribe", "game_id": game_id, "last_seq": 10**6}, "malformed"),
        ({"type": "subscribe", "game_id": game_id, "last_seq": -1}, "malformed"),
    ]
    for message, code in cases:
        assert (await error(waiting, message))["code"] == code, message
    assert waiting.connection is not None
    await waiting.connection.send(b"\x00binary")
    assert (await waiting.expect("error"))["code"] == "binary_frame"

    # commands that must not reach the game
    def play(card: str) -> dict[str, object]:
        return {"type": "PlayCard", "card": card}

    bid = {"type": "PlaceBid", "tricks": 3}
    command_cases: list[tuple[WsClient, str, dict[str, object], str]] = [
        (waiting, game_id, bid, "out_of_turn"),
        (on_turn, game_id, play("AS"), "wrong_phase"),
        (on_turn, game_id, {"type": "PlaceBid", "tricks": 99}, "bid_out_of_range"),
        (on_turn, game_id, {"type": "PlaceBid", "tricks": "three"}, "malformed"),
        (on_turn, game_id, {**bid, "seat": 2}, "malformed"),
        (on_turn, game_id, {"type": "Resign"}, "malformed"),
        (on_turn, game_id, {"type": ["PlaceBid"], "tricks": 3}, "malformed"),  # unhashable
        (on_turn, game_id, {"type": {"PlaceBid": 1}}, "malformed"),
        (on_turn, other_game, bid, "not_subscribed"),
    ]
    for client, target, command, code in command_cases:
        command_id = await client.command(target, command)
        body = await client.expect("error")
        assert body["code"] == code, (command, body)
        assert body["command_id"] == command_id
        assert body["message"]
    # a spectator of another game cannot act in it
    await outsider.send({"type": "subscribe", "game_id": game_id})
    assert (await outsider.expect("subscribed"))["role"] == "spectator"
    await outsider.command(game_id, bid)
    assert (await outsider.expect("error"))["code"] == "not_your_seat"
    # a second account on the same connection is refused
    other_token, _ = Tokens(SECRET, 900).issue(names[(view.turn + 1) % 4], False)
    assert (await error(on_turn, {"type": "auth", "token": other_token}))["code"] == (
        "account_mismatch"
    )
    assert len(await event_store.read(stream_of(game_id))) == version  # nothing changed

    # a legal command is applied once; its id replayed changes nothing
    seat_view = await TableClient(nc, subjects, names[view.turn]).view(game_id)
    assert seat_view.suggestion is None  # a casual table: no help
    legal = choose(seat_view.legal, seat_view.hand)
    import msgspec

    command = msgspec.to_builtins(legal)
    command_id = await on_turn.command(game_id, command)
    first = await on_turn.expect("ack")
    assert first["code"] == "applied"
    after = len(await event_store.read(stream_of(game_id)))
    assert after > version
    await on_turn.command(game_id, command, command_id)
    again = await on_turn.expect("ack")
    assert again["code"] == "already_applied"
    assert again["seq"] == first["seq"]
    assert len(await event_store.read(stream_of(game_id))) == after


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_a_command_after_the_token_expired_is_refused(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    gateway = await start_platform(processes, **SLOW_TURNS)
    names = [unique_name(n) for n in NAMES[:4]]
    await seated(gateway, names)
    game_id = await open_casual(nc, subjects, names)
    view = await TableClient(nc, subjects, names[0]).view(game_id)
    # The token must still be valid when its auth frame arrives (its `exp` is whole seconds, so
    # it lives up to a second less than asked): issued on an open connection, just before the
    # auth frame, with seconds to spare even on a slow machine; then its expiry is waited out.
    client = WsClient(gateway.ws_url, "")
    await client.connect(auth=False)
    token, expires = Tokens(SECRET, 8).issue(names[view.turn], False)
    await client.send({"type": "auth", "token": token})
    await client.expect("welcome")
    await client.send({"type": "subscribe", "game_id": game_id})
    await client.expect("view")
    version = len(await event_store.read(stream_of(game_id)))
    await asyncio.sleep(max(0.0, expires - time.time()) + 1.0)
    await client.command(game_id, {"type": "DeclineBlindNil"})
    assert (await client.expect("error"))["code"] == "token_expired"
    assert len(await event_store.read(stream_of(game_id))) == version
    # a fresh token for the same account brings the connection back
    fresh, _ = Tokens(SECRET, 900).issue(names[view.turn], False)
    await client.send({"type": "auth", "token": fresh})
    await client.expect("welcome")


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_an_oversized_frame_is_refused_by_the_server(processes: Processes) -> None:
    gateway = await start_platform(processes)
    (client,) = await seated(gateway, [unique_name("bigfoot")])
    await client.send({"type": "ping", "pad": "x" * 100_000})
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await client.recv(10)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009


@pytest.mark.shared_platform  # no account at all
async def test_a_silent_connection_is_closed_after_the_auth_timeout(processes: Processes) -> None:
    gateway = await start_platform(processes)
    client = WsClient(gateway.ws_url, "")
    await client.connect(auth=False)
    body = await client.recv(20)
    assert body["code"] == "auth_timeout"
    with pytest.raises(websockets.ConnectionClosed):
        await client.recv(5)


@pytest.mark.shared_platform  # names of its own (tests/shared.py)
async def test_a_flooding_client_is_rate_limited_and_kept(processes: Processes) -> None:
    gateway = await start_platform(processes)
    (client,) = await seated(gateway, [unique_name("flood")])
    for _ in range(400):
        await client.send({"type": "ping"})
    answers = [(await client.recv(10))["type"] for _ in range(400)]
    assert answers.count("error") > 0
    # The whole burst is answered, less the one token the auth frame spent (refill while
    # the 400 frames arrive may add a few more, never fewer).
    assert answers.count("pong") >= RATE_BURST - 1
    assert answers[: int(RATE_BURST) - 1] == ["pong"] * (int(RATE_BURST) - 1)
    limited = [r.body for r in client.received if r.body["type"] == "error"]
    assert {e["code"] for e in limited} == {"rate_limited"}
    await asyncio.sleep(1.0)
    await client.send({"type": "ping"})
    assert (await client.expect("pong"))["type"] == "pong"


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_subscribe_catch_ups_are_paced_per_connection(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    """Each subscribe asks the game's table for a view or a catch-up, and ``last_seq`` 0 makes
    it re-read the game's log: past a burst of `SUBSCRIBE_BURST` a connection gets at most
    SPADES_WS_SUBSCRIBES_PER_MINUTE, one more is refused ``rate_limited`` (naming the game)
    and asks nothing; the connection stays, and subscribes again once the pace allows."""
    gateway = await start_platform(processes, **SLOW_TURNS)
    names = [unique_name(n) for n in ("reader", "r2", "r3", "r4")]
    (client,) = await seated(gateway, names[:1])
    game_id = await open_casual(nc, subjects, names)
    tries = int(SUBSCRIBE_BURST) + 10
    for _ in range(tries):
        await client.send({"type": "subscribe", "game_id": game_id, "last_seq": 0})
    outcomes = []
    while len(outcomes) < tries:
        body = await client.recv(30)
        if body["type"] in ("subscribed", "error"):
            outcomes.append(body)
    subscribed = [o for o in outcomes if o["type"] == "subscribed"]
    refused = [o for o in outcomes if o["type"] == "error"]
    # the burst is answered (refill while they arrive may add one or two more, never fewer)
    assert int(SUBSCRIBE_BURST) <= len(subscribed) < tries, outcomes
    assert {(e["code"], e["game_id"]) for e in refused} == {("rate_limited", game_id)}
    await client.send({"type": "ping"})
    await client.expect("pong")

    async def subscribed_again() -> bool:
        await client.send({"type": "subscribe", "game_id": game_id, "last_seq": 0})
        while (body := await client.recv(30))["type"] not in ("subscribed", "error"):
            pass
        return body["type"] == "subscribed"

    await eventually(subscribed_again, within=30, interval=0.5, what="the pace to allow one")
