"""Quitters pay (`events/contracts/playbans.py`, `services/matchmaking/playbans.py`): who is
an offender, and a playban escalating over three abandonments through real relay,
matchmaking and gateway processes on a test clock (SPADES_CLOCK_FILE)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.contracts.playbans import CLOCK_TIMEOUTS, PlaybanIssued, ban_seconds
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.matchmaking.playbans import offenders
from tests.gateway.conftest import register_and_login, start_gateway
from tests.gateway.test_http import bearer
from tests.infra import Processes, eventually
from tests.services.test_matchmaking_service import OPS, SERVICE, answering, ask, join

PLAYERS = ("ann", "bob", "cy", "di")


def opened(players: tuple[str, ...] = PLAYERS) -> wire.TableOpened:
    return wire.TableOpened(game_id="g", ladder="standard", rated=True, players=players)


def test_the_offenders_of_a_game() -> None:
    events: list[Any] = [
        opened(("ann", "bob", "cy", "bot:3")),
        wire.SeatAbandoned(seat=0, player_id="ann", streak=3),
        wire.SeatAbandoned(seat=1, player_id="bob", streak=0, left=True),
        *(wire.TurnTimedOut(seat=2, streak=1) for _ in range(CLOCK_TIMEOUTS)),
        *(wire.TurnTimedOut(seat=3, streak=1) for _ in range(CLOCK_TIMEOUTS)),  # a bot's seat
    ]
    assert offenders(events) == {"ann": "abandoned", "bob": "left", "cy": "clock"}
    end = wire.GameFinished(winner=1, reason="target", scores=(0, 500), abandoned=(3,))
    assert offenders([opened(), end]) == {"di": "abandoned"}  # the end names the seat too
    fewer = [opened(), *(wire.TurnTimedOut(seat=2, streak=1) for _ in range(CLOCK_TIMEOUTS - 1))]
    assert offenders(fewer) == {}


def test_the_steps_warn_then_ban_longer() -> None:
    assert [ban_seconds(n) for n in (1, 2, 3, 4, 9)] == [0, 900, 3600, 86400, 86400]


@pytest.mark.infra
async def test_a_playban_escalates_over_three_abandonments(
    processes: Processes,
    event_store: PostgresEventStore,
    nc: NATS,
    subjects: Subjects,
    tmp_path: Path,
) -> None:
    clock = tmp_path / "clock"
    now = 1_900_000_000.0
    clock.write_text(str(now))
    env = {**OPS, "SPADES_CLOCK_FILE": str(clock)}
    for service in ("relay", "matchmaking"):
        processes.start(*SERVICE, service, env=env)
    gateway = await start_gateway(processes, SPADES_CLOCK_FILE=str(clock), SPADES_FAIRPLAY_DAYS="0")
    await eventually(lambda: answering(nc, subjects), within=60, what="matchmaking answers")
    name = f"q{uuid.uuid4().hex[:8]}"

    async def abandon() -> None:
        players = (name, "p1", "p2", "p3")
        game = [
            opened(players),
            wire.SeatAbandoned(seat=0, player_id=name, streak=3),
            wire.GameFinished(
                winner=1,
                reason="target",
                scores=(100, 500),
                ladder="standard",
                rated=True,
                players=players,
                abandoned=(0,),
            ),
        ]
        await event_store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(e) for e in game])

    async def offences(n: int) -> list[PlaybanIssued] | None:
        stored = await event_store.read(f"playban-{name}")
        found = [REGISTRY.decode(e) for e in stored]
        return found if len(found) == n else None

    async def queue_and_leave() -> None:
        assert (await join(nc, subjects, name))["code"] == "queued"
        assert (await ask(nc, subjects.matchmaking_leave(), {"player_id": name}))["ok"]

    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        token = await register_and_login(http, name)
        await abandon()
        (first,) = await eventually(lambda: offences(1), within=60, what="the 1st offence")
        assert (first.offence, first.reason, first.ends_at) == (1, "abandoned", now)  # a warning
        await queue_and_leave()

        await abandon()
        second = (await eventually(lambda: offences(2), within=60, what="the 2nd offence"))[1]
        assert (second.offence, second.ends_at) == (2, now + 15 * 60)
        refused = await http.post("/api/queue", json={"ladder": "standard"}, headers=bearer(token))
        assert (refused.status_code, refused.json()["code"]) == (403, "playban")
        assert refused.json()["ends_at"] == now + 15 * 60
        assert "missed three turns" in refused.json()["message"]
        assert "15 min from now" in refused.json()["message"]
        over_nats = await join(nc, subjects, name)
        assert (over_nats["ok"], over_nats["code"]) == (False, "playban")

        now += 16 * 60  # the ban has run out
        clock.write_text(str(now))
        await queue_and_leave()

        await abandon()
        third = (await eventually(lambda: offences(3), within=60, what="the 3rd offence"))[2]
        assert (third.offence, third.at, third.ends_at) == (3, now, now + 3600)
        again = await http.post("/api/queue", json={"ladder": "standard"}, headers=bearer(token))
        assert (again.status_code, again.json()["ends_at"]) == (403, now + 3600)

    listing = processes.start(
        "-m",
        "services.tools.cli",
        "playbans",
        "--player",
        name,
        env={"SPADES_CLOCK_FILE": str(clock)},
    )
    assert await asyncio.to_thread(listing.wait, 120) == 0
    printed = processes.log(listing)
    assert "offences at rated games in the last 30 days: 3" in printed
    assert f"{name}: abandoned on standard" in printed
    assert "offence 1: warning" in printed
    assert "offence 3: banned 1 hour" in printed
    assert "(running)" in printed
