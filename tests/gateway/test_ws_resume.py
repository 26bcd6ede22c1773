"""Reconnect and resume: mid-bid, mid-trick and across a gateway restart, the client's state
converges to the true one with no event missed or repeated; at the default turn timer a seat
that comes back within seconds keeps acting itself."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import httpx
from nats.aio.client import Client as NATS

import engine
from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.conftest import register_and_login, start_gateway
from tests.gateway.hidden import states
from tests.gateway.test_ws_play import open_casual
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually

NAMES = ["rena", "rolf", "rosa", "ruth"]


def tracked(sessions: list[WsClient], game_id: str) -> tuple[list[int], tuple[str, ...] | None]:
    """Return the seqs of every event the sessions received, and the hand they last told."""
    seqs: list[int] = []
    hand: tuple[str, ...] | None = None
    for session in sessions:
        for r in session.received:
            body: dict[str, Any] = r.body
            if body.get("game_id") != game_id:
                continue
            if body["type"] == "view":
                hand = tuple(body["view"]["hand"])
            elif body["type"] == "event":
                seqs.append(body["seq"])
                if body.get("hand") is not None:
                    hand = tuple(body["hand"])
    return seqs, hand


async def waits_for(store: PostgresEventStore, game_id: str, seat: int) -> None:
    """Return once the game waits for ``seat`` alone: no other seat has a legal action."""

    async def only_seat_can_act() -> bool:
        state = states(await store.read(stream_of(game_id)))[-1]
        others = [s for s in range(state.rules.players) if s != seat]
        return not any(engine.legal_actions(state, s) for s in others)

    await eventually(only_seat_can_act, within=60, what=f"the game to wait for seat {seat}")


async def true_hand(
    store: PostgresEventStore, game_id: str, seq: int, seat: int
) -> tuple[str, ...]:
    truth = states(await store.read(stream_of(game_id)))
    return wire.visible_hand(truth[seq], seat) or ()


async def test_a_seat_that_drops_mid_bid_and_mid_trick_resumes_exactly(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    for name in ("relay", "table"):
        processes.start(
            "-m",
            "services.tools.cli",
            "serve",
            name,
            env={"SPADES_OPS_PORT": "0", "SPADES_TURN_SECONDS": "600"},
        )
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = [await register_and_login(http, n) for n in NAMES]
    game_id = await open_casual(nc, subjects, NAMES)
    others = [WsClient(gateway.ws_url, t) for t in tokens[1:]]
    for client in others:
        await client.connect()
    rest = asyncio.gather(*(c.play(game_id) for c in others))

    sessions: list[WsClient] = []
    last: int | None = None
    for stop_after in (4, 30, 75):  # bidding of hand 1, then inside tricks
        session = WsClient(gateway.ws_url, tokens[0])
        await session.connect()
        await asyncio.wait_for(session.play(game_id, last_seq=last, until_seq=stop_after), 120)
        await session.close()
        sessions.append(session)
        last = max(s for s in tracked([session], game_id)[0])
        seqs, hand = tracked(sessions, game_id)
        first_view = next(r.body["seq"] for r in sessions[0].received if r.body["type"] == "view")
        assert seqs == list(range(first_view + 1, last + 1))  # no gap, no repeat, across drops
        assert hand == await true_hand(event_store, game_id, last, 0)
        await waits_for(event_store, game_id, seat=0)  # the others act meanwhile where they can
    final = WsClient(gateway.ws_url, tokens[0])
    await final.connect()
    await asyncio.wait_for(final.play(game_id, last_seq=last), 300)
    await asyncio.wait_for(rest, 300)
    sessions.append(final)
    stored = await event_store.read(stream_of(game_id))
    seqs, _ = tracked(sessions, game_id)
    first_view = next(r.body["seq"] for r in sessions[0].received if r.body["type"] == "view")
    assert seqs == list(range(first_view + 1, len(stored) + 1))
    assert isinstance(REGISTRY.decode(stored[-1]), wire.GameFinished)


async def test_a_seat_dropping_mid_trick_at_the_default_timer_still_acts_itself(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    for name in ("relay", "table"):  # SPADES_TURN_SECONDS unset: the default 25 s timer
        processes.start("-m", "services.tools.cli", "serve", name, env={"SPADES_OPS_PORT": "0"})
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = [await register_and_login(http, n) for n in NAMES]
    game_id = await open_casual(nc, subjects, NAMES)
    others = [WsClient(gateway.ws_url, t) for t in tokens[1:]]
    for client in others:
        await client.connect()
    rest = [asyncio.create_task(c.play(game_id)) for c in others]
    try:
        north = WsClient(gateway.ws_url, tokens[0])
        await north.connect()
        await north.send({"type": "subscribe", "game_id": game_id, "hints": True})
        in_trick = 0
        while True:  # play by the hints until north is to play into a trick already led
            body = await north.recv(120)
            if body["type"] == "event":
                kind = body["event"]["type"]
                in_trick = 0 if kind == "TrickWon" else in_trick + (kind == "CardPlayed")
            elif body["type"] == "your_turn":
                if in_trick and body["seq"] > 20:
                    break
                await north.command(game_id, north.move(game_id, body))
        due = body["seq"]
        last = north.last_seq(game_id)
        await north.close()  # the connection drops with north on turn, mid-trick

        back = WsClient(gateway.ws_url, tokens[0])
        await back.connect()
        await back.send({"type": "subscribe", "game_id": game_id, "last_seq": last, "hints": True})
        turn = await back.expect("your_turn")
        assert turn["seq"] == due  # the game waited for him: nothing happened meanwhile
        assert "suggestion" not in turn  # a casual table: no help, hints asked or not
        card = back.move(game_id, turn)
        assert card["type"] == "PlayCard"
        await back.command(game_id, card)
        ack = await back.expect("ack")
        assert ack["code"] == "applied"
        # His card reaches him too. It may come before the ack (`expect` keeps what it passes),
        # and it may be the last event for a while: when it wins the trick, the next turn is
        # his, which this test does not play (waiting for the event after it waited out the
        # 25 s timer: 81 s instead of 3 in one run of two).
        while not any(e["seq"] > due for e in back.events(game_id)):
            await back.recv()

        stored = await event_store.read(stream_of(game_id))
        decoded = [REGISTRY.decode(s) for s in stored]
        opened = decoded[0]
        assert isinstance(opened, wire.TableOpened)
        assert opened.turn_seconds == 25.0  # the default timer
        # His turn was not timed out while he was away: the event after seq `due` is his
        # own card. (A turn elsewhere in the game may run out on a very busy machine: that
        # is the timer doing its work, not what this test is about.)
        played = decoded[due]
        assert played == wire.CardPlayed(seat=0, card=card["card"])
        assert not [e for e in decoded if isinstance(e, wire.SeatAbandoned)]
        assert stored[due].metadata.actor == NAMES[0]  # his own command, not the bot's
        seqs = [e["seq"] for e in back.events(game_id)]
        assert seqs == list(range(last + 1, last + 1 + len(seqs)))
        assert due + 1 in seqs
        await back.close()
    finally:
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)
        for client in others:
            await client.close()


async def test_clients_resume_after_the_gateway_restarts(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    for name in ("relay", "table"):
        processes.start(
            "-m",
            "services.tools.cli",
            "serve",
            name,
            env={"SPADES_OPS_PORT": "0", "SPADES_TURN_SECONDS": "600"},
        )
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = [await register_and_login(http, n) for n in NAMES]
    # the least target: the resume is at event 40, in hand 1, and every later hand only played
    # on through the restarted gateway (to 500, ~80 s of a loaded run's 110 s)
    game_id = await open_casual(nc, subjects, NAMES, target=100)
    first = [WsClient(gateway.ws_url, t) for t in tokens]
    for client in first:
        await client.connect()
    # everyone plays; north stops after event 40 so the game waits for him mid-hand
    tasks = [asyncio.create_task(c.play(game_id)) for c in first[1:]]
    await asyncio.wait_for(first[0].play(game_id, until_seq=40), 120)
    await waits_for(event_store, game_id, seat=0)
    gateway.proc.send_signal(signal.SIGTERM)
    assert gateway.proc.wait(timeout=30) == 0
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, Exception) for r in results)  # their connections were closed

    restarted = await start_gateway(processes)
    # north resumes alone first (the game waits, the timer is long): once he has every event
    # up to the table's version, what he holds is what the table says he holds
    north = WsClient(restarted.ws_url, tokens[0])
    await north.connect()
    await north.send(
        {"type": "subscribe", "game_id": game_id, "last_seq": first[0].last_seq(game_id)}
    )
    await north.expect("subscribed")
    async with httpx.AsyncClient(base_url=restarted.url, timeout=30) as http:
        answer = await http.get(
            f"/api/games/{game_id}/view", headers={"Authorization": f"Bearer {tokens[0]}"}
        )
    assert answer.status_code == 200, answer.text
    table_view = answer.json()
    while north.last_seq(game_id) < table_view["version"]:
        await north.recv()
    resumed_seqs, resumed_hand = tracked([first[0], north], game_id)
    assert max(resumed_seqs) == table_view["version"]
    assert resumed_hand == tuple(table_view["hand"])
    assert resumed_hand == await true_hand(event_store, game_id, table_view["version"], 0)
    await north.close()

    second = [WsClient(restarted.ws_url, t) for t in tokens]
    for client in second:
        await client.connect()
    await asyncio.wait_for(
        asyncio.gather(
            *(
                c.play(game_id, last_seq=p.last_seq(game_id))
                for c, p in zip(second, first, strict=True)
            )
        ),
        300,
    )
    stored = await event_store.read(stream_of(game_id))
    assert isinstance(REGISTRY.decode(stored[-1]), wire.GameFinished)
    truth = states(stored)
    for seat, (before, after) in enumerate(zip(first, second, strict=True)):
        seqs, hand = tracked([before, after], game_id)
        start = next(r.body["seq"] for r in before.received if r.body["type"] == "view")
        assert seqs == list(range(start + 1, len(stored) + 1)), seat
        assert hand == (wire.visible_hand(truth[len(stored)], seat) or ())
    assert (
        engine.replay(
            [e for e in (wire.to_engine(REGISTRY.decode(s)) for s in stored) if e is not None]
        ).phase
        == "over"
    )
