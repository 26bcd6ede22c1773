"""The open database: a month of simulated rated games exported, and every game verified.

Fills a throwaway database with SPADES_BENCH_GAMES (default 1000) finished rated games played
by the baseline bots to 500 with committed deals, then times `spades export`'s month export
(NDJSON.gz + transcripts + sums) and `spades verify`'s check of every game. Figures are
printed and merged into artifacts/bench.json under "export".
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import tempfile
import time
from pathlib import Path

import asyncpg

from benchmarks import artifact
from benchmarks.store import _servers
from events.migrations import migrate
from events.pgstore import create_pool
from services.records import export
from services.records.fairness import verify
from services.tools.simulated_month import add_games

GAMES = int(os.environ.get("SPADES_BENCH_GAMES", "1000"))


async def _run(database_url: str) -> dict[str, float | int | str]:
    conn = await asyncpg.connect(database_url)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    pool = await create_pool(database_url)
    try:
        started = time.perf_counter()
        await add_games(pool, GAMES, seed=2026)
        filled = time.perf_counter() - started
        month = dt.datetime.now(dt.UTC).strftime("%Y-%m")
        with tempfile.TemporaryDirectory() as out:
            done = await export.export_month(pool, month, Path(out))
            ndjson = (Path(out) / f"spades-games-{month}.ndjson.gz").stat().st_size
            tars = (Path(out) / f"spades-transcripts-{month}.tar.gz").stat().st_size
            started = time.perf_counter()
            hands = 0
            async for record in export.records(
                pool, await export.finished_games(pool, *export.month_bounds(month))
            ):
                hands += verify(export.events_of(record)).hands
            verified = time.perf_counter() - started
    finally:
        await pool.close()
    return {
        "games": int(done["games"]),
        "hands": hands,
        "fill_seconds": round(filled, 2),
        "export_seconds": float(done["seconds"]),
        "games_ndjson_gz_bytes": ndjson,
        "transcripts_tar_gz_bytes": tars,
        "bytes_per_game": round((ndjson + tars) / max(1, int(done["games"])), 1),
        "verify_seconds": round(verified, 2),
        "verified_hands_per_second": round(hands / verified, 1),
    }


def main() -> None:
    """Print the export figures and merge them into artifacts/bench.json."""
    meta = artifact.run_metadata()
    with _servers() as (database_url, _nats):
        figures = asyncio.run(_run(database_url))
    print(
        f"export of {figures['games']} rated games ({figures['hands']} hands):"
        f" {figures['export_seconds']} s, games {figures['games_ndjson_gz_bytes']:,} B gz +"
        f" transcripts {figures['transcripts_tar_gz_bytes']:,} B"
        f" ({figures['bytes_per_game']} B a game)"
    )
    print(
        f"verify every game: {figures['verify_seconds']} s"
        f" ({figures['verified_hands_per_second']} hands/s, reading included)"
    )
    print(f"wrote {artifact.record('export', {'export': figures}, meta)}")


if __name__ == "__main__":
    main()
