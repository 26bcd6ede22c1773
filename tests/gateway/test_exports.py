"""The open-data endpoints of a real gateway process over a real database."""

from __future__ import annotations

import gzip
import json

import asyncpg
import httpx

import engine
from services.records import export
from services.records.fairness import verify
from services.tools.simulated_month import add_games
from tests.gateway.conftest import start_gateway
from tests.infra import Processes


async def test_a_players_games_and_a_finished_month_download(
    processes: Processes, pg_pool: asyncpg.Pool
) -> None:
    ids = await add_games(pg_pool, 2, seed=9, rules=engine.Ruleset(target=150))
    player = json.loads(
        await pg_pool.fetchval(
            "SELECT data::text FROM spades_events WHERE stream_id = $1 AND version = 1",
            f"game-{ids[0]}",
        )
    )["players"][2]
    # the first game finished last month, the second this month
    await pg_pool.execute(
        "UPDATE spades_events SET recorded_at = date_trunc('month', now()) - interval '2 days'"
        " WHERE stream_id = $1",
        f"game-{ids[0]}",
    )
    last_month = await pg_pool.fetchval(
        "SELECT to_char(date_trunc('month', now()) - interval '2 days', 'YYYY-MM')"
    )
    this_month = await pg_pool.fetchval("SELECT to_char(now(), 'YYYY-MM')")
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        mine = await http.get(f"/api/players/{player}/games.ndjson")
        assert mine.status_code == 200
        assert mine.headers["content-type"].startswith("application/x-ndjson")
        records = [json.loads(line) for line in mine.text.splitlines()]
        assert ids[0] in [r["game_id"] for r in records]
        assert all(player in [p["player_id"] for p in r["players"]] for r in records)
        for record in records:
            assert verify(export.events_of(record)).hands > 0

        month = await http.get(f"/api/exports/{last_month}/games.ndjson.gz")
        assert month.status_code == 200
        lines = gzip.decompress(month.content).splitlines()
        assert [json.loads(line)["game_id"] for line in lines] == [ids[0]]

        running = await http.get(f"/api/exports/{this_month}/games.ndjson.gz")
        assert running.status_code == 404
        assert running.json()["code"] == "month_not_finished"
        bad = await http.get("/api/exports/2026-1/games.ndjson.gz")
        assert bad.status_code == 400
        assert bad.json()["code"]  # the path format is refused with a code and a reason
        assert "month" in bad.json()["message"]
