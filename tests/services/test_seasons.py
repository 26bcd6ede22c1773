"""Seasons rolled over on a test clock (SPADES_CLOCK_FILE) through real relay, two rating
replicas, matchmaking and a gateway: the ended season's leaderboard is frozen and kept,
closed exactly once, and a soft reset moves every rating halfway back to the start, in
matchmaking's copy too."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from events.contracts.game import GameFinished
from events.contracts.ladders import load
from events.contracts.seasons import SeasonEnded, season_stream
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from services.rating.model import MU0
from tests.gateway.conftest import start_gateway
from tests.infra import Processes, eventually

pytestmark = pytest.mark.infra


def ladders_file(tmp_path: Path, start: dt.date) -> Path:
    path = tmp_path / "ladders.toml"
    path.write_text(
        '[[ladder]]\nname = "standard"\n\n'
        f'[[ladder]]\nname = "daily"\nseason_days = 1\nseason_start = "{start.isoformat()}"\n'
        'season_reset = "soft"\n'
    )
    return path


async def test_a_season_rolls_over_frozen_and_kept_with_a_soft_reset(
    processes: Processes, event_store: PostgresEventStore, pg_pool: Any, tmp_path: Path
) -> None:
    today = dt.datetime.now(dt.UTC).date()
    path = ladders_file(tmp_path, today)
    daily = load(path)["daily"]
    clock = tmp_path / "clock"
    clock.write_text(str(time.time()))
    env = {"SPADES_OPS_PORT": "0", "SPADES_LADDERS": str(path), "SPADES_CLOCK_FILE": str(clock)}
    processes.start("-m", "services.tools.cli", "serve", "relay", env=env)
    processes.start("-m", "services.tools.cli", "serve", "matchmaking", env=env)
    for replica in ("rating-a", "rating-b"):  # both look for ended seasons: one closes each
        processes.start(
            "-m", "services.tools.cli", "serve", "rating", env={**env, "SPADES_REPLICA_ID": replica}
        )
    gateway = await start_gateway(processes, SPADES_LADDERS=str(path), SPADES_CLOCK_FILE=str(clock))
    tag = uuid.uuid4().hex[:6]
    winners, losers = (f"w1{tag}", f"w2{tag}"), (f"l1{tag}", f"l2{tag}")
    finished = GameFinished(
        winner=0,
        reason="target",
        scores=(500, 100),
        ladder="daily",
        rated=True,
        players=(winners[0], losers[0], winners[1], losers[1]),
    )
    await event_store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(finished)])

    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:

        async def board(season: int, frozen: bool) -> Any:
            answer = await http.get(f"/api/ladders/daily/leaderboard?season={season}")
            body = answer.json()
            ready = answer.status_code == 200 and body["total"] == 4 and body["frozen"] == frozen
            return body if ready else None

        running = await eventually(lambda: board(1, False), within=90, what="season 1 ranked")
        assert (running["season"], running["current"]) == (1, 1)
        assert running["ends_at"] == daily.season_bounds(1)[1]
        before = {p["player_id"]: p["mu"] for p in running["players"]}
        assert {p["player_id"] for p in running["players"][:2]} == set(winners)

        async def queued_by(reset: bool) -> dict[str, float] | None:  # matchmaking's copy
            rows = await pg_pool.fetch(
                "SELECT player_id, mu FROM matchmaking_ratings WHERE ladder = 'daily'"
            )
            mine = {r["player_id"]: r["mu"] for r in rows}
            want = {p: MU0 + (mu - MU0) / 2 if reset else mu for p, mu in before.items()}
            return mine if mine == pytest.approx(want) else None

        await eventually(lambda: queued_by(False), within=90, what="matchmaking's ratings")
        ahead = await http.get("/api/ladders/daily/leaderboard?season=2")
        assert (ahead.status_code, ahead.json()["code"]) == (404, "unknown_season")
        listed = {x["ladder"]: x for x in (await http.get("/api/ladders")).json()}
        assert (listed["daily"]["season"], listed["daily"]["season_reset"]) == (1, "soft")

        clock.write_text(str(daily.season_bounds(1)[1] + 5))  # season 1 is over
        frozen = await eventually(lambda: board(1, True), within=90, what="season 1 frozen")
        assert [p["player_id"] for p in frozen["players"]] == [
            p["player_id"] for p in running["players"]
        ]
        assert {p["player_id"]: p["mu"] for p in frozen["players"]} == pytest.approx(before)
        second = (await http.get("/api/ladders/daily/leaderboard?season=2")).json()
        assert (second["season"], second["current"], second["frozen"]) == (2, 2, False)
        live = (await http.get("/api/ladders/daily")).json()["players"]
        after = {p["player_id"]: p["mu"] for p in live}
        for player, mu in before.items():  # a soft reset: halfway back to the start
            assert after[player] == pytest.approx(MU0 + (mu - MU0) / 2)
        await eventually(lambda: queued_by(True), within=90, what="matchmaking's soft reset")
        again = await board(1, True)  # kept as it was
        assert again is not None
        assert [p["mu"] for p in again["players"]] == [p["mu"] for p in frozen["players"]]
        listed = {x["ladder"]: x for x in (await http.get("/api/ladders")).json()}
        assert listed["daily"]["season"] == 2

    (ended,) = [REGISTRY.decode(e) for e in await event_store.read(season_stream("daily", 1))]
    assert isinstance(ended, SeasonEnded)
    assert (ended.season, ended.players, ended.reset) == (1, 4, "soft")
    assert await pg_pool.fetchval("SELECT count(*) FROM rating_seasons") == 1
