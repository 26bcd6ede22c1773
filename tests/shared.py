"""Started platforms per test session (per xdist worker), shared by the tests marked
`shared_platform`, one per distinct set of settings.

Starting the whole platform (relay, table, matchmaking, rating, bots, gateway: six Python
processes) costs ~7 CPU s, 10-20 s on a loaded two-core machine, and a test that only signs up
a few people and plays them through the browser or a WebSocket needs no platform of its own.
Such a test is marked `@pytest.mark.shared_platform`; then, for that test,

- `database_url`, `stream_prefix` (so `subjects`, `nc`, `event_store`, `pg_pool`,
  `service_env`, `processes`) are the shared world's: what the test reads is what the shared
  services write;
- `start()` (browser), the `gateway` fixture and `start_platform(processes)` (gateway tests)
  return the shared platform's, started on first use and stopped at the end of the session;
- `processes.log(proc)` of a shared service is what that service wrote since the test began.

A test that needs settings of its own names them in the marker, the same ones it passes to
`start()` or `start_platform()`: `@pytest.mark.shared_platform(**SLOW_TURNS)` with
`start_platform(processes, **SLOW_TURNS)`. Every distinct set of settings is a world of its
own (database, NATS prefix, platform started with those settings), shared by the tests that
name the same set; asking for other settings than the marker's is refused. With the sharing
off the same test starts its own platform with those settings, as before.

The tests stay independent by their own accounts (`unique_name`), tables and games: a shared
test never counts what the whole platform holds. A test that stops, pauses or restarts a
service starts its own platform as before. After each shared test every shared service must
still be running, else that test fails with their logs. SPADES_TEST_SHARED_PLATFORM=0 turns the
sharing off: every test starts its own platform again.

Measured (2026-11-28, two cores at load average ~25 from other suites): 16 of these tests
(5 browser, 11 gateway), run serially with the sharing off and on at the same time, took
772 s and 417 s (setup, call and teardown summed). The twelve `shared_platform(**SLOW_TURNS)`
gateway tests, serially one after the other at load ~14: sharing off 12 platforms started,
208 s, 72.8 CPU s (pytest and its children); on, one platform, 78 s, 26.3 CPU s.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from tests.browser.stack import Stack, start_stack
from tests.gateway.conftest import GatewayProcess
from tests.infra import Processes, logged

MARKER = "shared_platform"

SLOW_TURNS = {"SPADES_TURN_SECONDS": "600"}
"""The settings of tests whose games must wait for their players while the test looks at them
(no turn timer plays a seat meanwhile): with `shared_platform(**SLOW_TURNS)` they share a world
of their own."""


def shared_settings(request: pytest.FixtureRequest) -> dict[str, str] | None:
    """Return the settings of the shared world the requesting test runs on (its marker's
    keyword arguments; {} for the default world), or None when it starts its own platform: it
    is not marked, or SPADES_TEST_SHARED_PLATFORM is 0 (which gives every test its own
    platform, as before, to tell a test's failure from a neighbour's)."""
    if os.environ.get("SPADES_TEST_SHARED_PLATFORM", "1").strip() == "0":
        return None
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        return None
    assert not marker.args, f"shared_platform takes settings by name only, not {marker.args}"
    return {str(name): str(value) for name, value in marker.kwargs.items()}


def shares_platform(request: pytest.FixtureRequest) -> bool:
    """Return whether the requesting test runs on one of the session's shared platforms."""
    return shared_settings(request) is not None


def unique_name(name: str) -> str:
    """Return ``name`` made unique to this call: account names are unique on a platform that
    many tests share (names have at most 24 characters: ``name`` keeps 14, six are added)."""
    return f"{name[:14]}{uuid.uuid4().hex[:6]}"


@dataclass
class SharedWorld:
    """A shared platform's database, NATS prefix, processes (started on first use) and the
    settings its services run with."""

    database_url: str
    prefix: str
    processes: Processes
    settings: dict[str, str] = field(default_factory=dict)
    _stack: Stack | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def stack(self) -> Stack:
        """Return the running platform, starting it on first use."""
        async with self._lock:
            if self._stack is None:
                self._stack = await start_stack(self.processes, **self.settings)
            return self._stack

    def check_settings(self, env: dict[str, str]) -> None:
        """Refuse a test that asks this world's platform for settings it was not started with."""
        assert env == self.settings, (
            f"a shared_platform test asked for settings {env}, its world runs with"
            f" {self.settings}: mark it shared_platform(**those settings), or start its own"
        )

    def log_marks(self) -> dict[int, int]:
        """Return how much each running shared service has logged so far, by process id (a
        test reads only what was logged after)."""
        if self._stack is None:
            return {}
        return {proc.pid: len(self.processes.log(proc)) for proc in self._stack.procs.values()}

    async def gateway(self) -> GatewayProcess:
        """Return the shared platform's gateway (the platform started on first use)."""
        stack = await self.stack()
        proc = stack.procs["gateway"]
        text = self.processes.log(proc)
        http_port, ops_port = logged(text, "http_port"), logged(text, "ops_port")
        assert http_port, text[-4000:]
        assert ops_port, text[-4000:]
        return GatewayProcess(proc, http_port, ops_port)

    def check_running(self) -> None:
        """Fail (with the logs) when a shared service has exited: the test that just ran
        stopped it, and every later shared test would fail for it."""
        if self._stack is None:
            return
        gone = [name for name, proc in self._stack.procs.items() if proc.poll() is not None]
        if gone:
            logs = self._stack.logs()
            self.processes.stop_all()
            self._stack = None  # the next shared test starts a fresh platform
            raise AssertionError(f"shared services exited during this test: {gone}\n{logs}")


Settings = tuple[tuple[str, str], ...]


@dataclass
class SharedWorlds:
    """The session's shared worlds, one per distinct set of settings, each made by `make` (its
    database and prefix) the first time a test asks for it."""

    make: Callable[[dict[str, str]], Awaitable[SharedWorld]]
    worlds: dict[Settings, SharedWorld] = field(default_factory=dict)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def get(self, settings: dict[str, str]) -> SharedWorld:
        """Return the world of these settings, made on first use."""
        key = tuple(sorted(settings.items()))
        async with self._lock:
            if key not in self.worlds:
                self.worlds[key] = await self.make(settings)
            return self.worlds[key]
