"""`benchmarks.slots`: what 1,024 slot leases cost a tick. Nothing here is timed: one short run
on the test's database, checked for what each measurement held while it was measured."""

from __future__ import annotations

import asyncpg
import pytest

from benchmarks import slots
from events.sharing import compact


async def test_a_tick_is_measured_holding_every_slot_then_a_fifth(
    pg_pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slots, "TICKS", 3)
    # _tick_ms asserts what the member held: all 1,024 alone, its balanced share among five
    wall, cpu = await slots._tick_ms(pg_pool, "alone", 0)
    assert wall > 0
    assert cpu >= 0
    wall, cpu = await slots._tick_ms(pg_pool, "five", 4)
    assert wall > 0
    assert cpu >= 0
    assert await pg_pool.fetchval("SELECT count(*) FROM spades_leases WHERE owner IS NOT NULL") == 0


def test_the_assignment_figures_name_every_member_count() -> None:
    figures = slots._assign_figures()
    assert sorted(figures) == sorted(
        f"assign_ms.members_{n}.{kind}" for n in (1, 5, 50, 200) for kind in ("cold", "warm")
    )
    assert all(value > 0 for value in figures.values())


def test_a_log_line_names_a_thousand_leases_as_ranges() -> None:
    names = [f"table/{s}" for s in range(1024) if s != 7] + ["matchmaking/standard"]
    assert compact(names) == "matchmaking/standard,table/0-6,8-1023"
    assert compact([]) == ""
