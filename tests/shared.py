"""One started platform per test session (per xdist worker), shared by the tests marked
`shared_platform`.

Starting the whole platform (relay, table, matchmaking, rating, bots, gateway: six Python
processes) costs ~7 CPU s, 10-20 s on a loaded two-core machine, and a test that only signs up
a few people and plays them through the browser or a WebSocket needs no platform of its own.
Such a test is marked `@pytest.mark.shared_platform`; then, for that test,

- `database_url`, `stream_prefix` (so `subjects`, `nc`, `event_store`, `pg_pool`,
  `service_env`, `processes`) are the shared world's: what the test reads is what the shared
  services write;
- `start()` (browser), the `gateway` fixture and `start_platform(processes)` (gateway tests)
  return the shared platform's, started on first use and stopped at the end of the session.

The tests stay independent by their own accounts (`unique_name`), tables and games: a shared
test never counts what the whole platform holds. A test that stops, pauses or restarts a
service, or needs a setting of its own, starts its own platform as before (`start(**env)` on
the shared platform is refused). After each shared test every shared service must still be
running, else that test fails with their logs. SPADES_TEST_SHARED_PLATFORM=0 turns the
sharing off: every test starts its own platform again.

Measured (2026-11-28, two cores at load average ~25 from other suites): 16 of these tests
(5 browser, 11 gateway), run serially with the sharing off and on at the same time, took
772 s and 417 s (setup, call and teardown summed).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from dataclasses import dataclass, field

import pytest

from tests.browser.stack import Stack, start_stack
from tests.gateway.conftest import GatewayProcess
from tests.infra import Processes, logged

MARKER = "shared_platform"


def shares_platform(request: pytest.FixtureRequest) -> bool:
    """Return whether the requesting test runs on the session's shared platform: it is
    marked so, and SPADES_TEST_SHARED_PLATFORM is not 0 (which gives every test its own
    platform, as before, to tell a test's failure from a neighbour's)."""
    if os.environ.get("SPADES_TEST_SHARED_PLATFORM", "1").strip() == "0":
        return False
    return request.node.get_closest_marker(MARKER) is not None


def unique_name(name: str) -> str:
    """Return ``name`` made unique to this call: account names are unique on a platform that
    many tests share (names have at most 24 characters: ``name`` keeps 14, six are added)."""
    return f"{name[:14]}{uuid.uuid4().hex[:6]}"


@dataclass
class SharedWorld:
    """The shared platform's database, NATS prefix and processes (started on first use)."""

    database_url: str
    prefix: str
    processes: Processes
    _stack: Stack | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def stack(self) -> Stack:
        """Return the running platform, starting it on first use."""
        async with self._lock:
            if self._stack is None:
                self._stack = await start_stack(self.processes)
            return self._stack

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
