"""The one migration runner: every owner's schema migrations, applied in order.

Each part of the platform owns its migrations, one folder each:

| folder | owner |
|---|---|
| `events/schema/` | the event store, the bus bookkeeping, leases, the unfinished games |
| `services/gateway/migrations/` | accounts, sessions, fair-play sightings |
| `services/rating/migrations/` | ratings and history (2 also made matchmaking's first tables) |
| `services/matchmaking/migrations/` | matchmaking's read models |
| `services/bots/migrations/` | the bot tier's queue of game reviews |

A migration is a file `NNNN_name.sql` whose first line is `-- migration N: <name>`; the rest
is the SQL, run as it is. Numbers are global and give the dependency order (a service's
tables may refer to the store's): a new migration takes the next free number, whoever owns it,
and two files with one number are refused. `spades migrate` applies the ones a database
lacks, in order, each in its own transaction, under an advisory lock so two starting services
never race. A migration is never edited once committed (tests/events/test_migrations.py
holds the hash of each): a change is a new migration.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from events.settings import infra_setting, no_database

__all__ = [
    "MIGRATIONS",
    "MIGRATION_DIRS",
    "Migration",
    "MigrationError",
    "database_url",
    "discover",
    "migrate",
    "run",
]

# pg_advisory_lock key for "someone is migrating" (any constant unique to this project).
_MIGRATION_LOCK = 0x5BADE5_0001

_ROOT = Path(__file__).resolve().parents[1]
MIGRATION_DIRS: tuple[Path, ...] = (
    _ROOT / "events" / "schema",
    *sorted((_ROOT / "services").glob("*/migrations")),
)
"""Where migrations live: the store's folder and every service's `migrations/`."""

_FILE = re.compile(r"^(?P<version>\d{4})_[a-z0-9_]+\.sql$")
_HEADER = re.compile(r"^-- migration (?P<version>\d+): (?P<name>.+)$")


class MigrationError(Exception):
    """The migrations on disk are not a valid sequence; the message names the files."""


@dataclass(frozen=True)
class Migration:
    """One schema step: its number, a name, the SQL that applies it, and where it came from."""

    version: int
    name: str
    sql: str
    source: str = ""


def _read(path: Path) -> Migration:
    if not _FILE.match(path.name):
        raise MigrationError(f"{path}: a migration file is named NNNN_name.sql")
    header, newline, sql = path.read_text().partition("\n")
    found = _HEADER.match(header)
    if not newline or found is None:
        raise MigrationError(f"{path}: the first line must be '-- migration N: name'")
    version = int(found["version"])
    if version != int(path.name[:4]):
        raise MigrationError(f"{path}: its header says migration {version}")
    source = path.relative_to(_ROOT) if path.is_relative_to(_ROOT) else path
    return Migration(version, found["name"], sql, str(source))


def discover(dirs: Iterable[Path] = MIGRATION_DIRS) -> tuple[Migration, ...]:
    """Return every migration under ``dirs``, in version order; refuse a number used twice."""
    by_version: dict[int, Migration] = {}
    for folder in dirs:
        for path in sorted(folder.glob("*.sql")):
            migration = _read(path)
            other = by_version.get(migration.version)
            if other is not None:
                raise MigrationError(
                    f"migration {migration.version} is both {other.source} and "
                    f"{migration.source}: give the newer one the next free number"
                )
            by_version[migration.version] = migration
    return tuple(by_version[v] for v in sorted(by_version))


MIGRATIONS: tuple[Migration, ...] = discover()


async def migrate(
    conn: asyncpg.Connection,
    *,
    upto: int | None = None,
    migrations: tuple[Migration, ...] | None = None,
) -> list[int]:
    """Apply the migrations `conn`'s database lacks (up to ``upto``, default all), in order,
    and return the versions applied."""
    await conn.execute(
        """
        CREATE TABLE IF NOT EXISTS spades_schema_migrations (
            version    integer PRIMARY KEY,
            name       text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    applied: list[int] = []
    await conn.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
    try:
        done = {
            r["version"] for r in await conn.fetch("SELECT version FROM spades_schema_migrations")
        }
        for migration in MIGRATIONS if migrations is None else migrations:
            if migration.version in done or (upto is not None and migration.version > upto):
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO spades_schema_migrations (version, name) VALUES ($1, $2)",
                    migration.version,
                    migration.name,
                )
            applied.append(migration.version)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)
    return applied


def database_url() -> str:
    """Return the database URL: $SPADES_DATABASE_URL, else the running embedded stack's."""
    return infra_setting("SPADES_DATABASE_URL", no_database())


async def _migrate_url(url: str) -> list[int]:
    conn = await asyncpg.connect(url)
    try:
        return await migrate(conn)
    finally:
        await conn.close()


def run(args: argparse.Namespace) -> int:
    """`spades migrate`: apply pending migrations to the configured database; exit code."""
    applied = asyncio.run(_migrate_url(database_url()))
    print(f"applied migrations: {applied}" if applied else "schema is up to date")
    return 0
