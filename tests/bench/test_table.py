"""`benchmarks.table`: the table bench plays whole games through the table and records what it
says it measured. Nothing here is timed or compared with a rate: one tiny round, checked for
the shape of its figures and for games that really ended."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from benchmarks import table


def test_a_round_times_every_play_and_its_deciding_part() -> None:
    cpu, deciding = asyncio.run(table._round(7))
    assert len(cpu) == len(deciding) > table.GAMES * 50  # whole games: bids and cards
    assert all(0 < part <= whole for part, whole in zip(deciding, cpu, strict=True))


def test_the_figures_go_to_the_artifact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "bench.json"
    monkeypatch.setenv("SPADES_BENCH_ARTIFACT", str(target))
    monkeypatch.setattr(table, "GAMES", 1)
    monkeypatch.setattr(table, "ROUNDS", 1)
    table.main()
    data = json.loads(target.read_text())
    figures = data["table"]
    assert figures["plays"] > 50
    assert figures["decide_us_per_play_median"] < figures["cpu_us_per_play_median"]
    assert figures["cpu_us_per_play"] > 0
    assert "load_average_start" in data["meta"]["table"]
