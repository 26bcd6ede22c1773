"""Committed deals through the real table service: the commitment before hand 1, the seated
clients' contributions, the window that closes without them, the reveal and `spades verify`."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys

from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.records.fairness import verify
from tests.infra import Processes, eventually
from tests.services.tablekit import TableClient
from tests.services.test_table_service import game_events, play_to_the_end, start_table


async def test_hand_one_waits_for_both_people_and_the_game_verifies(
    processes: Processes,
    nc: NATS,
    subjects: Subjects,
    event_store: PostgresEventStore,
    service_env: dict[str, str],
) -> None:
    # a long window: hand 1 can only be dealt because both contributions came in
    start_table(processes, SPADES_CONTRIBUTION_SECONDS="600", SPADES_TURN_SECONDS="600")
    ann, bob = TableClient(nc, subjects, "ann"), TableClient(nc, subjects, "bob")
    opened = await ann.open_casual(("ann", "bob", "bot-c", "bot-d"), target=150)
    assert opened.ok, opened
    game_id = opened.game_id
    view = await ann.view(game_id)
    assert (view.phase, view.hand_number, view.contributors) == ("dealing", 0, (0, 1, 2, 3))
    assert len(view.commitment) == 64
    assert "hands" not in repr(view.hand)

    bad = await ann.send(game_id, wire.Contribute(value="xyz"))
    assert (bad.ok, bad.code) == (False, "contribution_refused")
    assert "64 lowercase hex" in bad.message
    first = await ann.send(game_id, wire.Contribute(value="a1" * 32))
    assert first.ok, first
    again = await ann.send(game_id, wire.Contribute(value="a2" * 32))
    assert (again.ok, again.code) == (False, "contribution_refused")
    assert (await ann.view(game_id)).hand_number == 0  # still waiting for the others
    for player, value in (("bob", "b1"), ("bot-c", "c1"), ("bot-d", "d1")):
        reply = await TableClient(nc, subjects, player).send(
            game_id, wire.Contribute(value=value * 32)
        )
        assert reply.ok, reply
    assert (await bob.view(game_id)).hand_number == 1

    players = [TableClient(nc, subjects, p) for p in ("ann", "bob", "bot-c", "bot-d")]

    async def all_play() -> bool:
        for p in players:
            await p.play_turn(game_id)
        return (await ann.view(game_id)).phase == "over"

    await eventually(all_play, within=300, what="the game to end")
    events = await game_events(event_store, game_id)
    started = next(e for e in events if isinstance(e, wire.GameStarted))
    revealed = next(e for e in events if isinstance(e, wire.SeedRevealed))
    assert hashlib.sha256(bytes.fromhex(revealed.server_seed)).hexdigest() == started.commitment
    assert verify(events).contributions == ("a1" * 32, "b1" * 32, "c1" * 32, "d1" * 32)

    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "services.tools.cli", "verify", game_id],
        env=service_env | {"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "deals verified" in done.stdout
    assert started.commitment in done.stdout


async def test_the_window_closes_without_contributions(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    start_table(processes, SPADES_CONTRIBUTION_SECONDS="0.5")
    client = TableClient(nc, subjects, "ann")
    opened = await client.open_practice(target=100)
    assert opened.ok, opened

    async def dealt() -> bool:
        return (await client.view(opened.game_id)).hand_number == 1

    await eventually(dealt, within=60, what="hand 1 after the window")
    events = await game_events(event_store, opened.game_id)
    started = next(e for e in events if isinstance(e, wire.GameStarted))
    assert started.contributors == (0,)  # the bots are not asked
    assert not any(isinstance(e, wire.SeedContributed) for e in events)
    late = await client.send(opened.game_id, wire.Contribute(value="ee" * 32))
    assert (late.ok, late.code) == (False, "contribution_refused")
    await play_to_the_end(client, opened.game_id)
    assert verify(await game_events(event_store, opened.game_id)).hands >= 1
