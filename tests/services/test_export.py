"""`spades export`: a month of finished rated games round-trips through the engine."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import asyncpg
import pytest

import engine
from events.contracts import game as wire
from events.contracts.analysis import AnalysisFinished, AnalysisQueued, Budget, analysis_stream
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from services.bots.analysis import analyse_transcript
from services.records import export
from services.records import transcript as transcripts
from services.records.fairness import verify
from services.tools.simulated_month import add_games
from tests.infra import REPO


async def test_a_month_exports_every_rated_game_and_round_trips(
    pg_pool: asyncpg.Pool, tmp_path: Path
) -> None:
    ids = await add_games(pg_pool, 3, seed=4, rules=engine.Ruleset(target=200))
    month = dt.datetime.now(dt.UTC).strftime("%Y-%m")
    done = await export.export_month(pg_pool, month, tmp_path)
    assert done["games"] == 3
    lines = gzip.decompress((tmp_path / f"spades-games-{month}.ndjson.gz").read_bytes())
    records = [json.loads(line) for line in lines.splitlines()]
    assert [r["game_id"] for r in records] == ids
    store = PostgresEventStore(pg_pool)
    for record in records:
        stored = await store.read(f"game-{record['game_id']}")
        original = engine.replay(
            [e for e in (wire.to_engine(REGISTRY.decode(s)) for s in stored) if e is not None]
        )
        assert export.replay_record(record) == original
        assert record["players"][0]["rating"]["mu_after"] == 26
        assert verify(export.events_of(record)).hands > 0
        started = next(e for e in record["events"] if e["type"] == "GameStarted")
        assert "seed" not in started["event"]
    with tarfile.open(tmp_path / f"spades-transcripts-{month}.tar.gz") as texts:
        names = texts.getnames()
        assert names == [f"{i}.txt" for i in ids]
        text = texts.extractfile(names[0]).read().decode()  # type: ignore[union-attr]
    assert transcripts.parse(text).state.scores == tuple(records[0]["scores"])
    for line in (tmp_path / f"SHA256SUMS-{month}").read_text().splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest


async def test_other_months_and_bad_months(pg_pool: asyncpg.Pool, tmp_path: Path) -> None:
    await add_games(pg_pool, 1, seed=5, rules=engine.Ruleset(target=150))
    assert (await export.export_month(pg_pool, "2001-02", tmp_path))["games"] == 0
    with pytest.raises(export.BadMonth, match="YYYY-MM"):
        export.month_bounds("2026-13")
    assert export.month_bounds("2026-12")[1] == dt.datetime(2027, 1, 1, tzinfo=dt.UTC)


async def test_the_openspiel_format_writes_hands_and_says_what_it_skipped(
    pg_pool: asyncpg.Pool, tmp_path: Path
) -> None:
    await add_games(pg_pool, 2, seed=6, rules=engine.Ruleset(target=150))
    month = dt.datetime.now(dt.UTC).strftime("%Y-%m")
    done = await export.export_openspiel(pg_pool, month, tmp_path)
    assert done["games"] == 2
    hands = gzip.decompress((tmp_path / f"spades-openspiel-{month}.ndjson.gz").read_bytes())
    episodes = [json.loads(line) for line in hands.splitlines()]
    skipped = [
        json.loads(line)
        for line in (tmp_path / f"spades-openspiel-skipped-{month}.ndjson").read_text().splitlines()
    ]
    assert len(episodes) == done["hands"]
    assert len(episodes) + len(skipped) > 2
    assert all(len(e["actions"]) == 108 for e in episodes)
    assert all(s["reason"] for s in skipped)


def test_spades_export_refuses_the_running_month_as_the_http_route_does(tmp_path: Path) -> None:
    """The running month still changes: `spades export` refuses it (exit 2, nothing written),
    as GET /api/exports/MONTH/... answers 404 `month_not_finished`."""
    month = dt.datetime.now(dt.UTC).strftime("%Y-%m")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "services.tools.cli",
            "export",
            "--month",
            month,
            "--out",
            str(tmp_path),
        ],
        cwd=REPO,
        env={**os.environ, "SPADES_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not over" in done.stdout
    assert "month_not_finished" in done.stdout
    assert list(tmp_path.iterdir()) == []
    assert export.month_over("2001-02")
    assert not export.month_over(month)


async def test_a_game_exports_with_its_stored_review_byte_for_byte(
    pg_pool: asyncpg.Pool, tmp_path: Path
) -> None:
    reviewed, plain = await add_games(pg_pool, 2, seed=7, rules=engine.Ruleset(target=100))
    store = PostgresEventStore(pg_pool)
    game = [REGISTRY.decode(s) for s in await store.read(f"game-{reviewed}")]
    made = analyse_transcript(transcripts.export(game), seed=reviewed, worlds=2, dd_tricks=1)
    assert made.ok, made
    # stored as the bot tier stores it (services/bots/analyst.py)
    stream = [
        AnalysisQueued(game_id=reviewed, rated=True, budget=Budget(worlds=2), seed=reviewed),
        AnalysisFinished(game_id=reviewed, ok=True, review=made.body),
    ]
    await store.append(analysis_stream(reviewed), 0, [REGISTRY.new_event(e) for e in stream])
    month = dt.datetime.now(dt.UTC).strftime("%Y-%m")
    await export.export_month(pg_pool, month, tmp_path)
    lines = gzip.decompress((tmp_path / f"spades-games-{month}.ndjson.gz").read_bytes())
    by_id = {json.loads(line)["game_id"]: line for line in lines.splitlines()}
    assert bytes(made.body) in by_id[reviewed]  # the stored bytes, not a re-encoding
    assert json.loads(by_id[reviewed])["analysis"] == json.loads(bytes(made.body))
    assert json.loads(by_id[reviewed])["analysis"]["decisions"]
    assert json.loads(by_id[plain])["analysis"] is None  # none stored: null
