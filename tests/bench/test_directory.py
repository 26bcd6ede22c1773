"""`benchmarks.directory`: the unfinished games' list against the reads it replaced. Nothing
here is timed: one small run on the test's database, whose old and new reads must agree."""

from __future__ import annotations

import pytest

from benchmarks import directory


async def test_the_old_and_new_reads_agree_on_a_filled_history(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(directory, "FINISHED", 400)
    monkeypatch.setattr(directory, "LIVE", 60)  # more than the lobby's 50: its limit matters
    monkeypatch.setattr(directory, "ROUNDS", 1)
    monkeypatch.setattr(directory, "ROWS", 100)
    # measure asserts that each old read and its new one return the same games, in order
    figures = await directory.measure(database_url)
    reads = [f"{read}_{way}" for read in ("resume", "lobby") for way in ("old_ms", "new_ms")]
    assert sorted(figures) == sorted([*reads, "insert_us_no_trigger", "insert_us_trigger"])
    assert all(value > 0 for value in figures.values())
