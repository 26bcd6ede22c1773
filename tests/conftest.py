"""Session-wide PostgreSQL and NATS, and per-test isolation on top of them.

Fixtures (see tests/infra.py for how the servers are found):

- `servers`       session: `Servers` (admin `database_url`, `nats_url`, `origin`).
- `database_url`  a fresh database for this test, already migrated; dropped afterwards.
- `pg_pool`       an asyncpg pool on `database_url` (release without RESET ALL).
- `event_store`   a `PostgresEventStore` on `pg_pool`.
- `nats_url`      session: the NATS server's URL.
- `stream_prefix` a prefix unique to this test; `subjects` is `Subjects(stream_prefix)`.
- `nc`, `js`      a NATS connection and its JetStream context; the test's streams are deleted
                  and the connection drained afterwards.
- `service_env`   the environment a service process needs to join this test's world
                  (SPADES_DATABASE_URL, SPADES_NATS_URL, SPADES_NATS_PREFIX), and the
                  suite's cheap bot tier: a tiny review budget, a short strong-bot search
                  (a test of the review or of the bots' strength sets its own).
- `processes`     a `Processes` that starts `python ...` with `service_env`; kills leftovers.
- `private_nats`  a NATS server of the test's own (an `EmbeddedNats`), for tests that stop it.
- `shared_worlds` session: the platforms that tests marked `shared_platform` share (per xdist
                  worker one per set of settings the markers name, each started on first
                  use; see tests/shared.py).
- `shared_world`  the one this test runs on, or None. For such a test, `database_url` and
                  `stream_prefix` (and all built on them) are the shared ones.

Property tests (Hypothesis) run under the profile named by `SPADES_HYPOTHESIS_PROFILE`:
`ci` (the default, `make test` and CI) draws the same examples on every run and every machine
(derandomized, no example database), so a red test is red for everyone and a green run stays
green; `fuzz` (`make fuzz`) draws fresh random examples, `SPADES_FUZZ_EXAMPLES` (300) per
property, and prints how to reproduce a failure. A test's own `@settings(max_examples=...)`
keeps its count under both.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import nats
import pytest
from hypothesis import HealthCheck, settings
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from events.migrations import migrate
from events.pgstore import PostgresEventStore, create_pool
from events.subjects import Subjects
from services.tools.infra import EmbeddedNats
from tests.infra import (
    Processes,
    Servers,
    database_url_for,
    scratch_dir,
    start_servers,
    unique_token,
)
from tests.shared import SharedWorld, SharedWorlds, shared_settings, shares_platform

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    derandomize=False,
    database=None,
    deadline=None,
    max_examples=int(os.environ.get("SPADES_FUZZ_EXAMPLES", "300")),
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
HYPOTHESIS_PROFILE = os.environ.get("SPADES_HYPOTHESIS_PROFILE", "ci")
settings.load_profile(HYPOTHESIS_PROFILE)

LONGEST_FIRST = (
    # The tests that took longest in a full run (`--durations`), longest first. Run in the
    # order collected, these sat in the middle and at the end of `make test`, where one of them
    # kept a worker busy for minutes after the others had run out of tests. pytest-xdist hands
    # tests out in collection order, so these are moved to the front: they start at once, on
    # different workers, and the short tests fill in around them. A name that no longer exists
    # only misses its place; nothing else depends on this list.
    "tests/gateway/test_schemathesis.py::",
    "tests/browser/test_ranked.py::test_four_browsers_queue_form_a_ranked_game_that_a_fifth",
    "tests/services/test_failover.py::test_a_replica_paused_with_appends_in_flight",
    "tests/gateway/test_ws_play.py::test_no_seat_or_spectator_ever_learns_a_hidden_card",
    "tests/gateway/test_resend.py::test_opens_and_queue_requests_are_resent_past_a_paused",
    "tests/services/test_bot_tier.py::test_two_bot_workers_share_the_bot_seats",
    "tests/services/test_devstack.py::test_spades_dev_prints_an_address",
    "tests/services/test_printed_commands.py::test_every_command_spades_dev_prints",
    "tests/services/test_failover.py::test_a_replica_cut_off_from_nats_only",
    "tests/services/test_failover.py::test_a_replica_paused_past_its_lease",
    "tests/services/test_failover.py::test_a_service_that_gave_nats_up_exits_even_if",
    "tests/events/test_relay_pipeline.py::test_a_relay_killed_with_pages_in_flight",
    "tests/services/test_failover.py::test_a_database_crash_under_two_replicas",
    "tests/services/test_fairplay.py::test_a_pair_that_keeps_abandoning_while_losing",
    "tests/gateway/test_integrity_round2.py::test_websocket_connections_are_capped",
    "tests/gateway/test_integrity.py::test_the_auth_timeout_closes_with_a_policy_code",
    "tests/gateway/test_friends.py::test_a_flood_of_invitations_is_refused",
    "tests/services/test_slots_rescale.py::test_two_then_five_then_three_replicas",
    "tests/gateway/test_ws_resume.py::test_clients_resume_after_the_gateway_restarts",
    "tests/services/test_stored_analysis.py::test_a_review_killed_midway",
)


def _longest_first_rank(item: pytest.Item) -> int:
    for rank, prefix in enumerate(LONGEST_FIRST):
        if item.nodeid.startswith(prefix):
            return rank
    return len(LONGEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the longest tests (LONGEST_FIRST) to the front, keeping every other test's order.

    Every xdist worker collects the same items and sorts them the same way (a stable sort on a
    fixed list), so the workers agree on the order, as xdist requires.
    """
    items.sort(key=_longest_first_rank)


@pytest.fixture(scope="session")
def scratch() -> Iterator[Path]:
    """A project-local folder for this session's server data, removed at the end."""
    yield from scratch_dir()


@pytest.fixture(scope="session")
def servers(scratch: Path) -> Iterator[Servers]:
    """PostgreSQL and NATS for the whole session: from the env, testcontainers, or embedded."""
    found = start_servers(scratch)
    try:
        yield found
    finally:
        found.stop()


@pytest.fixture(scope="session")
async def template_database(servers: Servers) -> AsyncIterator[str]:
    """Name of a migrated database that every test's database is cloned from."""
    name = unique_token("spades_template_")
    admin = await asyncpg.connect(servers.database_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        conn = await asyncpg.connect(database_url_for(servers.database_url, name))
        try:
            await migrate(conn)
        finally:
            await conn.close()
        yield name
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@pytest.fixture(scope="session")
async def shared_worlds(
    servers: Servers, template_database: str, scratch: Path
) -> AsyncIterator[SharedWorlds]:
    """The shared worlds of the `shared_platform` tests, one per set of settings: each its
    database, prefix and (once a test asks) platform."""
    admin = await asyncpg.connect(servers.database_url)
    databases: list[str] = []

    async def make(settings: dict[str, str]) -> SharedWorld:
        name = unique_token("spades_shared_")
        prefix = unique_token("s")
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template_database}"')
        databases.append(name)
        url = database_url_for(servers.database_url, name)
        processes = Processes(
            service_env_for(url, servers.nats_url, prefix), scratch / f"shared-logs-{prefix}"
        )
        return SharedWorld(url, prefix, processes, settings)

    registry = SharedWorlds(make)
    try:
        yield registry
    finally:
        for world in registry.worlds.values():
            world.processes.stop_all()
            with contextlib.suppress(Exception):
                conn = await nats.connect(servers.nats_url)
                js = conn.jetstream()
                for stream in (
                    Subjects(world.prefix).events_stream,
                    Subjects(world.prefix).parked_stream,
                ):
                    with contextlib.suppress(Exception):
                        await js.delete_stream(stream)
                await conn.close()
        for name in databases:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@pytest.fixture
async def shared_world(
    request: pytest.FixtureRequest, shared_worlds: SharedWorlds
) -> SharedWorld | None:
    """The shared world this test runs on (its marker's settings), None when it has its own."""
    settings = shared_settings(request)
    return None if settings is None else await shared_worlds.get(settings)


@pytest.fixture
async def database_url(
    servers: Servers,
    template_database: str,
    shared_world: SharedWorld | None,
) -> AsyncIterator[str]:
    """URL of a migrated database that only this test uses (the shared one for a
    `shared_platform` test)."""
    if shared_world is not None:
        yield shared_world.database_url
        return
    name = unique_token("spades_t_")
    admin = await asyncpg.connect(servers.database_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template_database}"')
        yield database_url_for(servers.database_url, name)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture
async def pg_pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    """An asyncpg pool on this test's database."""
    pool = await create_pool(database_url, min_size=1, max_size=10)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture
async def event_store(pg_pool: asyncpg.Pool) -> AsyncIterator[PostgresEventStore]:
    """The PostgreSQL event store on this test's database."""
    store = PostgresEventStore(pg_pool)
    yield store
    await store.aclose()


@pytest.fixture(scope="session")
def nats_url(servers: Servers) -> str:
    """URL of the session's NATS server."""
    return servers.nats_url


@pytest.fixture
def stream_prefix(shared_world: SharedWorld | None) -> str:
    """A subject/stream prefix that only this test uses (the shared one for a
    `shared_platform` test)."""
    return shared_world.prefix if shared_world is not None else unique_token("t")


@pytest.fixture
def subjects(stream_prefix: str) -> Subjects:
    """The subject and stream names under this test's prefix."""
    return Subjects(stream_prefix)


@pytest.fixture
async def nc(
    nats_url: str, subjects: Subjects, request: pytest.FixtureRequest
) -> AsyncIterator[NATS]:
    """A NATS connection; this test's JetStream streams are deleted after it (the shared
    platform's at the end of the session)."""
    conn = await nats.connect(nats_url, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
    try:
        yield conn
    finally:
        if conn.is_connected and not shares_platform(request):
            js = conn.jetstream()
            for name in (subjects.events_stream, subjects.parked_stream):
                with contextlib.suppress(Exception):
                    await js.delete_stream(name)
        with contextlib.suppress(Exception):
            await conn.drain()
        await conn.close()


@pytest.fixture
def js(nc: NATS) -> JetStreamContext:
    """The JetStream context of `nc`."""
    return nc.jetstream()


@pytest.fixture
def service_env(database_url: str, nats_url: str, stream_prefix: str) -> dict[str, str]:
    """Environment variables that put a service process in this test's database and prefix."""
    return service_env_for(database_url, nats_url, stream_prefix)


def service_env_for(database_url: str, nats_url: str, stream_prefix: str) -> dict[str, str]:
    """The environment of a service process in this database and prefix (`service_env`)."""
    return {
        "SPADES_DATABASE_URL": database_url,
        "SPADES_NATS_URL": nats_url,
        "SPADES_NATS_PREFIX": stream_prefix,
        # no contribution window: hand 1 is dealt with the start, as the tests written before
        # committed deals expect; tests/services/test_fairness_table.py opens one on purpose
        "SPADES_CONTRIBUTION_SECONDS": "0",
        # the bot tier reviews every rated game it sees finish: ~45 CPU s a game to 500 with
        # the rated budget, on a suite that is CPU-bound, in tests that never read the review
        # (and a bots process stopped mid-review holds the test's teardown). One sampled deal,
        # no double-dummy, no par: the same flow for ~1 CPU s. The review's own tests
        # (test_stored_analysis.py, browser/test_review.py) set the budget they test.
        "SPADES_ANALYSIS_BUDGET": "1,0,0",
        # the strong bot (every seat a person left, every hint) searches 0.02 s a decision,
        # not the deployed 0.15 s: its search is under test here, never its strength. One
        # worker decides one move at a time, so three games the bots finish for abandoned
        # seats (test_fairplay.py) waited ~0.15 s a move in turn: most of that test's 86 s
        # (test_bot_tier.py and browser/test_ranked.py used 0.02 s already)
        "SPADES_BOT_SECONDS": "0.02",
        # a failed review asked for again is queued anew at once, not after ten minutes: the
        # retry's own tests (test_stored_analysis.py, browser/test_review.py) test the flow
        "SPADES_ANALYSIS_RETRY_AFTER": "0",
    }


@pytest.fixture
def processes(
    service_env: dict[str, str],
    tmp_path: Path,
    shared_world: SharedWorld | None,
) -> Iterator[Processes]:
    """Starts `python ...` processes with `service_env`; kills any left at teardown. On a
    `shared_platform` test it carries the shared world (`processes.shared`), whose services
    must still run after the test."""
    procs = Processes(service_env, tmp_path / "logs", shared_world)
    try:
        yield procs
    finally:
        procs.stop_all()
        if shared_world is not None:
            shared_world.check_running()


@pytest.fixture
def private_nats(scratch: Path) -> Iterator[EmbeddedNats]:
    """A NATS server of this test's own, which the test may stop and restart."""
    server = EmbeddedNats(scratch / unique_token("nats-"))
    server.start()
    try:
        yield server
    finally:
        server.stop()
