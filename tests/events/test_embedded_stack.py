"""`spades infra up|status|down` and `spades migrate` as real commands on the embedded stack."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import nats
import pytest

from events.settings import read_infra_env
from tests.infra import REPO, scratch_root, unique_token


def spades(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPADES_")}
    env["SPADES_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "services.tools.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def port_open(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def home() -> Iterator[Path]:
    path = scratch_root() / unique_token("spades-cli-")
    try:
        yield path
    finally:
        spades(path, "infra", "down")
        shutil.rmtree(path, ignore_errors=True)


async def test_infra_up_status_migrate_down(home: Path) -> None:
    up = spades(home, "infra", "up")
    assert up.returncode == 0, up.stderr
    env = read_infra_env(home)
    assert set(env) == {"SPADES_DATABASE_URL", "SPADES_NATS_URL"}
    assert f"SPADES_DATABASE_URL={env['SPADES_DATABASE_URL']}" in up.stdout
    assert f"SPADES_NATS_URL={env['SPADES_NATS_URL']}" in up.stdout
    assert (home / "postgres" / "data" / "PG_VERSION").exists()

    again = spades(home, "infra", "up")
    assert again.returncode == 0
    assert "already running" in again.stdout
    assert read_infra_env(home) == env

    assert spades(home, "infra", "status").returncode == 0
    migrated = spades(home, "migrate")
    assert migrated.returncode == 0, migrated.stderr
    assert "applied migrations" in migrated.stdout
    assert "up to date" in spades(home, "migrate").stdout

    conn = await asyncpg.connect(env["SPADES_DATABASE_URL"])
    try:
        assert await conn.fetchval("SELECT count(*) FROM spades_events") == 0
        assert await conn.fetchval("SELECT current_setting('fsync')") == "on"  # durable: dev data
    finally:
        await conn.close()
    nc = await nats.connect(env["SPADES_NATS_URL"])
    try:
        assert (await nc.jetstream().account_info()).limits is not None  # JetStream is on
    finally:
        await nc.close()

    down = spades(home, "infra", "down")
    assert down.returncode == 0
    assert not port_open(env["SPADES_DATABASE_URL"])
    assert not port_open(env["SPADES_NATS_URL"])
    assert read_infra_env(home) == {}
    assert spades(home, "infra", "status").returncode == 1

    # Data survives a restart (on new free ports).
    assert spades(home, "infra", "up").returncode == 0
    conn = await asyncpg.connect(read_infra_env(home)["SPADES_DATABASE_URL"])
    try:
        assert await conn.fetchval("SELECT max(version) FROM spades_schema_migrations") >= 1
    finally:
        await conn.close()
