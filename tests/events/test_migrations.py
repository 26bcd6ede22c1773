"""The one migration runner over every owner's folder: the history kept byte for byte, the
order and numbering checked, and a fresh database equal to an upgraded one."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import asyncpg
import msgspec
import pytest

from events.envelope import NewEvent
from events.migrations import MIGRATION_DIRS, MIGRATIONS, MigrationError, discover, migrate
from events.pgstore import append_with
from tests.infra import Servers, database_url_for, unique_token

# sha256 of each migration's SQL as first committed: a migration is never edited.
APPLIED_HISTORY = {
    1: "a575634285b86f808b3a7e01755a6414f9f9086c327105bc64f5809242970958",
    2: "057ba92f2a9f39f246c446277b4eea798b1d88650cf4a8cbf7f93ea99b8a8a4d",
    3: "49b3c7c5325a4ee28b265006a9afb29a75a0a72c25795f40af154f85bbec664b",
    4: "f1d8fa7b537419f24ab82f9a765751a001223c1ba63ccfd38edd2a3e92449ef6",
    5: "0761ff8cd499919d42cfef06f7462c4df11983ed3a84209e78103d46b527a58a",
    6: "8bb8c0abe17eb6be6e45547af46e3faae3ae351d6a7320ab806e31731955f0ab",
    7: "1c795963c811fc871e113d2f6bb8feffe1cc08c02122aa5771564af74d6e9713",
    8: "15f4cebb3ca5aad0c6fc9044e427a35ac27557be8730c3b5f2d45344387e94d4",
    9: "0c77bf880782225bc3ee490bfe2ef13693ff0114c1910344674b40d5e7fbe68b",
    10: "036520bc69265c2d039f193e05214ef19460edd7e42606a06abf9dd7f56fe78b",
    11: "5e01dd714970ceaa29b99d4149453f3b30bf72788abfb6430ea4b55bfb64b30c",
    12: "a356682f00ef5c1378a616b3e172ad73994f6c7f62a6de1cd1406db2bd3e3017",
    16: "0c2cc5b3461c4486645939f0d2dc81f6324ea0bb51dc255f1933c61833c7e339",
    17: "a00c447ac9667069515af5a46726d7e6da5d8b15be5a6cf6b0381a7d40038449",
    31: "b66e33a34c8f8c8c34655e311db9d66e256af87dcc823f613f6c8617b1d30eb9",
    32: "9899adf7cdfbed4549cb303e47646b9e912919e6fef8021797323e652e470fd9",
    33: "a7f4d78beb1c173dd892299c8c5d4c852020bd26466ec5dbf02cc2f0a713e16b",
    41: "1050b140740becac567673e3d2078aa4218ed88f6c0ed32ab0cbe1853b14a3d4",
    42: "f7f1f0e13e2bc380e96c7646427f65ebdcd49d5e380fa7bc96d2d43d9f20cc1c",
    43: "176cfaede03c67f79d9f04b76f6e3eeebc4c402e5a4da9ded1b7d76e37229184",
    44: "aa04ffa2def43aff5903fc9dc2b7bd9e4e7ce8b4406679a71021b18794e04ad3",
    45: "e060b9e153d861171c92a5e64c6e4a773f6147c7d74793921c791c697952b50f",
}
# The folder each migration lives in: its owner.
OWNERS = {
    1: "events/schema",
    2: "services/rating/migrations",
    3: "services/gateway/migrations",
    4: "events/schema",
    5: "events/schema",
    6: "services/gateway/migrations",
    7: "services/gateway/migrations",
    8: "events/schema",
    9: "services/gateway/migrations",
    10: "services/gateway/migrations",
    11: "services/matchmaking/migrations",
    12: "services/matchmaking/migrations",
    16: "services/gateway/migrations",
    17: "services/gateway/migrations",
    31: "services/rating/migrations",
    32: "services/matchmaking/migrations",
    33: "services/rating/migrations",
    41: "services/gateway/migrations",
    42: "services/gateway/migrations",
    43: "services/gateway/migrations",
    44: "services/bots/migrations",
    45: "events/schema",
}


def test_no_migration_was_edited_once_committed() -> None:
    by_version = {m.version: m for m in MIGRATIONS}
    # a new migration is recorded here when it is committed, so that it is kept from then on
    assert set(by_version) == set(APPLIED_HISTORY)
    for version, digest in APPLIED_HISTORY.items():
        assert hashlib.sha256(by_version[version].sql.encode()).hexdigest() == digest, version


def test_every_migration_lives_in_its_owners_folder_in_one_sequence() -> None:
    assert [m.version for m in MIGRATIONS] == sorted({m.version for m in MIGRATIONS})
    assert {m.version: str(Path(m.source).parent) for m in MIGRATIONS} == OWNERS
    root = Path(__file__).resolve().parents[2]
    assert {str(d.relative_to(root)) for d in MIGRATION_DIRS} == set(OWNERS.values())


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


def test_one_number_in_two_folders_is_refused_naming_both(tmp_path: Path) -> None:
    write(tmp_path / "a", "0010_first.sql", "-- migration 10: first\nSELECT 1;\n")
    write(tmp_path / "b", "0010_second.sql", "-- migration 10: second\nSELECT 2;\n")
    with pytest.raises(
        MigrationError, match=r"migration 10 is both .*0010_first\.sql and .*0010_second\.sql"
    ):
        discover([tmp_path / "a", tmp_path / "b"])


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("10_short.sql", "-- migration 10: x\nSELECT 1;", "NNNN_name.sql"),
        ("0010_x.sql", "SELECT 1;\n", "first line"),
        ("0010_x.sql", "-- migration 11: x\nSELECT 1;\n", "header says migration 11"),
    ],
)
def test_a_malformed_migration_file_is_refused_with_its_path(
    tmp_path: Path, name: str, text: str, reason: str
) -> None:
    write(tmp_path, name, text)
    with pytest.raises(MigrationError, match=reason):
        discover([tmp_path])


def test_discovery_orders_by_number_across_folders_and_keeps_the_sql_exactly(
    tmp_path: Path,
) -> None:
    write(tmp_path / "store", "0002_b.sql", "-- migration 2: b\n\n   SELECT 2;\n   ")
    write(tmp_path / "svc", "0001_a.sql", "-- migration 1: a first\nSELECT 1;")
    found = discover([tmp_path / "store", tmp_path / "svc"])
    assert [(m.version, m.name, m.sql) for m in found] == [
        (1, "a first", "SELECT 1;"),
        (2, "b", "\n   SELECT 2;\n   "),
    ]


SCHEMA_QUERIES = {
    "columns": """
        SELECT table_name, column_name, data_type, is_nullable, column_default, ordinal_position
        FROM information_schema.columns WHERE table_schema = 'public'
        ORDER BY table_name, ordinal_position""",
    "indexes": "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
    " ORDER BY indexname",
    "constraints": """
        SELECT c.conrelid::regclass::text AS tbl, c.conname, pg_get_constraintdef(c.oid) AS def
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = 'public' ORDER BY tbl, c.conname""",
    "functions": """
        SELECT p.proname, p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' ORDER BY p.proname""",
    "triggers": "SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger"
    " WHERE NOT tgisinternal ORDER BY tgname",
    "migrations": "SELECT version, name FROM spades_schema_migrations ORDER BY version",
}


async def schema_of(conn: asyncpg.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {what: [tuple(r) for r in await conn.fetch(sql)] for what, sql in SCHEMA_QUERIES.items()}


@pytest.fixture
async def blank_database(
    servers: Servers,
) -> AsyncIterator[Callable[[], Awaitable[asyncpg.Connection]]]:
    """Return a maker of connections to new, empty databases (dropped after the test)."""
    admin = await asyncpg.connect(servers.database_url)
    made: list[tuple[str, asyncpg.Connection]] = []

    async def make() -> asyncpg.Connection:
        name = unique_token("spades_m_")
        await admin.execute(f'CREATE DATABASE "{name}"')
        conn = await asyncpg.connect(database_url_for(servers.database_url, name))
        made.append((name, conn))
        return conn

    try:
        yield make
    finally:
        for name, conn in made:
            await conn.close()
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_a_fresh_database_and_an_upgraded_one_end_identical(
    blank_database: Callable[[], Awaitable[asyncpg.Connection]],
) -> None:
    """Fresh: every migration at once. Upgraded: the database of the release before the
    split (migrations 1-10, from the single list) brought up to date one step at a time."""
    fresh, upgraded = await blank_database(), await blank_database()
    assert await migrate(fresh) == [m.version for m in MIGRATIONS]
    assert await migrate(upgraded, upto=10) == list(range(1, 11))
    for migration in MIGRATIONS[10:]:
        assert await migrate(upgraded, upto=migration.version) == [migration.version]
    assert await migrate(upgraded) == []  # up to date: nothing left to do
    assert await migrate(fresh) == []
    before, after = await schema_of(fresh), await schema_of(upgraded)
    assert {what: len(rows) for what, rows in before.items()}["indexes"] > 10
    assert before == after


async def test_the_review_queue_starts_with_the_reviews_waiting_and_none_finished(
    blank_database: Callable[[], Awaitable[asyncpg.Connection]],
) -> None:
    """Migration 44 fills the bot tier's queue from the analysis streams of a database that
    had none: the ones without an AnalysisFinished, nothing else."""
    conn = await blank_database()
    await migrate(conn, upto=43)

    def events(*types: str) -> list[NewEvent]:
        return [NewEvent(event_id=uuid.uuid4(), type=t, data=msgspec.Raw(b"{}")) for t in types]

    await append_with(conn, "analysis-waiting", 0, events("AnalysisQueued"))
    await append_with(conn, "analysis-done", 0, events("AnalysisQueued", "AnalysisFinished"))
    await append_with(conn, "game-waiting2", 0, events("TableOpened"))  # not a review
    assert await migrate(conn, upto=44) == [44]
    rows = await conn.fetch("SELECT game_id FROM bots_analysis_queue")
    assert [r["game_id"] for r in rows] == ["waiting"]


async def test_the_unfinished_games_start_with_the_games_not_finished_and_follow_the_log(
    blank_database: Callable[[], Awaitable[asyncpg.Connection]],
) -> None:
    """Migration 45 lists the games of a database that had no such list: the game streams
    opened without a GameFinished, nothing else; from then on each opening and end appended
    updates it in the append's own transaction, and an append rolled back leaves it as it was."""
    conn = await blank_database()
    await migrate(conn, upto=44)

    def events(*types: str) -> list[NewEvent]:
        return [NewEvent(event_id=uuid.uuid4(), type=t, data=msgspec.Raw(b"{}")) for t in types]

    async def unfinished() -> list[str]:
        rows = await conn.fetch("SELECT stream_id FROM spades_unfinished_games ORDER BY opened_at")
        return [r["stream_id"] for r in rows]

    await append_with(conn, "game-live", 0, events("TableOpened", "BidPlaced"))
    await append_with(conn, "game-over", 0, events("TableOpened", "GameFinished", "Said"))
    await append_with(conn, "practice-other", 0, events("TableOpened"))  # not a game stream
    assert await migrate(conn) == [45]
    assert await unfinished() == ["game-live"]

    await append_with(conn, "game-new", 0, events("TableOpened"))
    await append_with(conn, "game-live", 2, events("CardPlayed", "GameFinished"))
    assert await unfinished() == ["game-new"]
    transaction = conn.transaction()
    await transaction.start()
    await append_with(conn, "game-rolled", 0, events("TableOpened"))
    await append_with(conn, "game-new", 1, events("GameFinished"))
    assert await unfinished() == ["game-rolled"]  # seen inside the transaction
    await transaction.rollback()  # the command failed after its appends
    assert await unfinished() == ["game-new"]
