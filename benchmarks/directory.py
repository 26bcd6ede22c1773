"""The games' directory on a long history: the unfinished games read from migration 45's list
against the scans they replaced, and what its trigger adds to an append, in one run.

    uv run --frozen python -m benchmarks directory

Fills a database of its own with SPADES_BENCH_DIR_FINISHED (100,000) finished games (an
opening, three events, an end) and SPADES_BENCH_DIR_LIVE (200) live ones spread among them,
then times, median of SPADES_BENCH_DIR_ROUNDS (7), by turns:

- **resume**: the games a table replica resumes when it gains slots; `unfinished_games()`
  against the scan of every game stream it replaced (`OLD_RESUME`, the SQL of before);
- **lobby**: the 50 newest live games (`openings(unfinished=True)`) against the walk of
  the openings newest first past every finished game (`OLD_LOBBY`);
- **insert**: 20,000 cards inserted in one statement (not an opening or an end, so the
  trigger's WHEN clause skips each), with the trigger enabled and disabled, by turns: its
  cost per event on the play path, without the client's round trips in the figure.

Figures go to ``directory.*`` in ``artifacts/bench.json``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
import uuid

import asyncpg

from benchmarks import artifact
from benchmarks.e2e import servers
from benchmarks.gateway import fresh_database
from events.pgstore import PostgresEventStore, create_pool

FINISHED = int(os.environ.get("SPADES_BENCH_DIR_FINISHED", "100000"))
LIVE = int(os.environ.get("SPADES_BENCH_DIR_LIVE", "200"))
ROUNDS = int(os.environ.get("SPADES_BENCH_DIR_ROUNDS", "7"))
ROWS = 20_000
CARDS = (
    "INSERT INTO spades_events (event_id, stream_id, version, type, data)"
    " SELECT gen_random_uuid(), $1, v, 'CardPlayed', '{}'::json FROM generate_series(1, $2) v"
)
"""Rows of cards inserted in one statement: what the trigger's WHEN clause costs a row that
is not an opening or an end, without the client's round trips in the figure."""

OLD_RESUME = (
    "SELECT s.stream_id FROM spades_streams s WHERE s.stream_id LIKE 'game-%'"
    " AND NOT EXISTS (SELECT 1 FROM spades_events e"
    " WHERE e.stream_id = s.stream_id AND e.type = 'GameFinished')"
    " ORDER BY (SELECT o.recorded_at FROM spades_events o"
    " WHERE o.stream_id = s.stream_id AND o.version = 1), s.stream_id"
)
"""`open_streams("game", "GameFinished")` as it read before migration 45."""

OLD_LOBBY = (
    "SELECT o.stream_id FROM spades_events o"
    " LEFT JOIN spades_events f ON f.stream_id = o.stream_id AND f.type = 'GameFinished'"
    " WHERE o.type = 'TableOpened' AND o.version = 1 AND f.stream_id IS NULL"
    " ORDER BY o.recorded_at DESC, o.stream_id LIMIT 50"
)
"""`openings(unfinished=True, limit=50)` as it read before migration 45 (its joins of the
final event's data and the unlisted flag left out: they only make it dearer)."""


async def fill(conn: asyncpg.Connection) -> None:
    """Write the history: games numbered 0.., every (total / LIVE)-th left unfinished."""
    total = FINISHED + LIVE
    every = max(1, total // max(1, LIVE))
    await conn.execute(
        "CREATE TEMP TABLE bench_games AS SELECT g,"
        " 'game-' || md5(g::text)::uuid::text AS stream_id,"
        " (g % $2 = 0 AND g / $2 < $3) AS live,"
        " now() - make_interval(secs => $1 - g) AS opened_at"
        " FROM generate_series(0, $1 - 1) g",
        total,
        every,
        LIVE,
    )
    await conn.execute(
        "INSERT INTO spades_streams (stream_id, version)"
        " SELECT stream_id, CASE WHEN live THEN 4 ELSE 5 END FROM bench_games"
    )
    await conn.execute(
        "INSERT INTO spades_events (event_id, stream_id, version, type, data, recorded_at)"
        " SELECT gen_random_uuid(), b.stream_id, v,"
        " CASE WHEN v = 1 THEN 'TableOpened' WHEN v = 5 THEN 'GameFinished'"
        " ELSE 'CardPlayed' END, '{}'::json, b.opened_at + make_interval(secs => v)"
        " FROM bench_games b, generate_series(1, 5) v WHERE v < 5 OR NOT b.live"
    )
    # the steady state autovacuum keeps (the fill left 100,000 dead rows of games opened and
    # finished in the list, and the log's visibility map unset), for the old reads and the new
    for table in ("spades_events", "spades_streams", "spades_unfinished_games"):
        await conn.execute(f"VACUUM ANALYZE {table}")


async def timed(run: object) -> float:
    started = time.perf_counter()
    await run  # type: ignore[misc]
    return time.perf_counter() - started


async def measure(url: str) -> dict[str, float]:
    pool = await create_pool(url)
    store = PostgresEventStore(pool)
    try:
        async with pool.acquire() as conn:
            await fill(conn)
            new_resume = await store.unfinished_games()
            old_resume = [r["stream_id"] for r in await conn.fetch(OLD_RESUME)]
            assert new_resume == old_resume, "the reads disagree"
            assert len(new_resume) == LIVE, "the history was not filled as meant"
            lobby = await store.openings("TableOpened", "GameFinished", limit=50, unfinished=True)
            old_lobby = [r["stream_id"] for r in await conn.fetch(OLD_LOBBY)]
            assert [o.event.stream_id for o in lobby] == old_lobby, "the lobbies disagree"
        times: dict[str, list[float]] = {}
        for _ in range(ROUNDS):
            async with pool.acquire() as conn:
                for name, run in (
                    ("resume_old_ms", conn.fetch(OLD_RESUME)),
                    ("resume_new_ms", store.unfinished_games()),
                    ("lobby_old_ms", conn.fetch(OLD_LOBBY)),
                    (
                        "lobby_new_ms",
                        store.openings("TableOpened", "GameFinished", limit=50, unfinished=True),
                    ),
                ):
                    times.setdefault(name, []).append(await timed(run) * 1000)
        for _ in range(ROUNDS):
            for state in ("ENABLE", "DISABLE"):
                await pool.execute(
                    f"ALTER TABLE spades_events {state} TRIGGER spades_unfinished_games"
                )
                stream = f"game-{uuid.uuid4()}"
                started = time.perf_counter()
                await pool.execute(CARDS, stream, ROWS)
                name = "insert_us_trigger" if state == "ENABLE" else "insert_us_no_trigger"
                times.setdefault(name, []).append((time.perf_counter() - started) / ROWS * 1e6)
        await pool.execute("ALTER TABLE spades_events ENABLE TRIGGER spades_unfinished_games")
    finally:
        await pool.close()
    return {name: round(statistics.median(values), 3) for name, values in times.items()}


def main() -> None:
    meta = artifact.run_metadata()
    with servers() as urls:
        url = asyncio.run(
            fresh_database(urls["SPADES_DATABASE_URL"], f"bench_directory_{os.getpid()}")
        )
        figures: dict[str, object] = dict(asyncio.run(measure(url)))
    figures |= {"finished_games": FINISHED, "live_games": LIVE, "rounds": ROUNDS}
    for key in ("resume", "lobby"):
        old, new = figures[f"{key}_old_ms"], figures[f"{key}_new_ms"]
        print(f"{key}: before {old} ms, now {new} ms (median of {ROUNDS})")
    print(
        f"a card row inserted: {figures['insert_us_trigger']} us with the trigger,"
        f" {figures['insert_us_no_trigger']} us without"
    )
    recorded = {f"directory.{name}": value for name, value in figures.items()}
    print(f"wrote {artifact.record('directory', recorded, meta)}")


if __name__ == "__main__":
    main()
