"""A real gateway process (beside whatever services a test starts), and HTTP/WS clients of it."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httpx
import pytest

from tests.infra import Processes, logged

SECRET = "test-secret-" + "x" * 40
GATEWAY_ENV = {
    "SPADES_OPS_PORT": "0",
    "SPADES_HTTP_PORT": "0",
    "SPADES_HTTP_HOST": "127.0.0.1",
    "SPADES_JWT_SECRET": SECRET,
    "SPADES_LOG_FORMAT": "json",
    # tests register many accounts from one address; the limit tests set their own
    "SPADES_AUTH_RATE_PER_MINUTE": "10000",
    "SPADES_RATE_PER_MINUTE": "10000",
    # and open many WebSocket connections from it; the cap tests set their own
    "SPADES_WS_PER_ADDRESS": "10000",
    "SPADES_WS_PER_ACCOUNT": "10000",
    "SPADES_WS_ANONYMOUS_PER_ADDRESS": "10000",
    "SPADES_QUEUE_CHANGES_PER_MINUTE": "10000",
    "SPADES_EVENT_CHANGES_PER_MINUTE": "10000",
    # passwords at argon2id's smallest cost: ~0.3 CPU s a hash by default, two a new account
    # (sign up, log in), hundreds of accounts a suite. tests/gateway/test_http_auth.py checks
    # the deployed hasher in-process.
    "SPADES_TEST_CHEAP_HASHING": "1",
}
"""What a test's gateway runs with: any free ports, loopback, a fixed key, JSON logs."""


@dataclass
class GatewayProcess:
    """A running `spades serve gateway`: its process, API and ops ports."""

    proc: subprocess.Popen[bytes]
    http_port: int
    ops_port: int

    @property
    def url(self) -> str:
        """Base URL of the HTTP API."""
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def ws_url(self) -> str:
        """URL of the WebSocket endpoint."""
        return f"ws://127.0.0.1:{self.http_port}/ws"


async def start_gateway(processes: Processes, **env: str) -> GatewayProcess:
    """Start a gateway process and wait until it listens; return its ports."""
    proc = processes.start(
        "-m",
        "services.tools.cli",
        "serve",
        "gateway",
        env={**GATEWAY_ENV, **env},
    )
    # a gateway took 10-22 s to listen beside four other starting services and two CPU hogs
    deadline = asyncio.get_running_loop().time() + 120
    while True:
        text = processes.log(proc)
        http_port, ops_port = logged(text, "http_port"), logged(text, "ops_port")
        if http_port and ops_port:
            return GatewayProcess(proc, http_port, ops_port)
        if proc.poll() is not None or asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"gateway did not start:\n{text}")
        await asyncio.sleep(0.05)


@pytest.fixture
async def gateway(processes: Processes) -> AsyncIterator[GatewayProcess]:
    """A gateway process in this test's database and NATS prefix (its log shown on failure);
    the shared platform's on a `shared_platform` test."""
    if processes.shared is not None:
        shared: GatewayProcess = await processes.shared.gateway()
        yield shared
        print(processes.log(shared.proc)[-20_000:])  # what it logged during this test
        return
    started = await start_gateway(processes)
    yield started
    print(processes.log(started.proc)[-20_000:])


@pytest.fixture
async def http(gateway: GatewayProcess) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the gateway."""
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as client:
        yield client


Login = Callable[..., Awaitable[str]]


async def register_and_login(
    client: httpx.AsyncClient, name: str, *, bot: bool = False, password: str = "a good password"
) -> str:
    """Register ``name`` and return an access token for it."""
    made = await client.post("/api/accounts", json={"name": name, "password": password, "bot": bot})
    assert made.status_code == 201, made.text
    got = await client.post("/api/tokens", json={"name": name, "password": password})
    assert got.status_code == 200, got.text
    token: str = got.json()["access_token"]
    return token
