"""Issue 26, "Integrity, second round": what an attacker found after the first round, each
item closed with a stated limit and a code (the items' numbers are the issue's)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import asyncpg
import httpx
import pytest
import structlog
import websockets
from litestar.testing import TestClient

from events.subjects import Subjects
from services.gateway.app import create_app
from services.gateway.auth import Tokens
from services.gateway.config import GatewayConfig
from services.gateway.http.web import SECURITY_HEADERS, WEB
from services.gateway.state import Gateway
from services.runtime.config import Settings
from tests.gateway.conftest import SECRET, register_and_login, start_gateway
from tests.gateway.test_sessions import logout, refresh, refused, sign_up
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually


@pytest.fixture
def app_client() -> Iterator[TestClient]:  # type: ignore[type-arg]
    """The gateway's app in-process, with no connection: enough for what needs none."""
    gateway = Gateway(
        settings=Settings.from_env({}),
        config=GatewayConfig(jwt_secret="integrity-" + "x" * 40),
        subjects=Subjects(),
        pool=None,  # type: ignore[arg-type]
        store=None,  # type: ignore[arg-type]
        nc=None,  # type: ignore[arg-type]
        js=None,  # type: ignore[arg-type]
        log=structlog.get_logger("integrity"),
    )
    with TestClient(create_app(gateway)) as client:
        yield client


# -- 6. the security headers on every HTML answer ----------------------------------------------


def test_every_html_answer_carries_the_pages_security_headers(app_client: TestClient) -> None:  # type: ignore[type-arg]
    pages = ["/", *(f"/static/{p.relative_to(WEB)}" for p in sorted(WEB.rglob("*.html")))]
    assert "/static/index.html" in pages
    for path in pages:
        answer = app_client.get(path)
        assert answer.status_code == 200, (path, answer.text)
        assert answer.headers["content-type"].startswith("text/html"), path
        for name, value in SECURITY_HEADERS.items():
            assert answer.headers.get(name) == value, (path, name, answer.headers)
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    # other files keep their own headers: a script is not a page
    script = app_client.get("/static/js/app.js")
    assert script.status_code == 200
    assert "content-security-policy" not in script.headers


# -- 3. logout only with the session's secret -------------------------------------------------


async def test_a_logout_with_a_made_up_secret_ends_nothing(
    processes: Processes, pg_pool: asyncpg.Pool
) -> None:
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        login = await sign_up(http, "victim")
        session_id = login["refresh_token"].split(".")[0]
        for guess in ("A" * 43, "b" * 43):
            refused(await logout(http, f"{session_id}.{guess}"), "refresh_invalid")
        revoked = await pg_pool.fetchval(
            "SELECT revoked_at FROM gateway_sessions WHERE session_id = $1", uuid.UUID(session_id)
        )
        assert revoked is None
        renewed = await refresh(http, login["refresh_token"])
        assert renewed.status_code == 200, renewed.text
        # the owner's own token, even the one a renewal replaced, still logs out
        assert (await logout(http, login["refresh_token"])).status_code == 204
        refused(await refresh(http, renewed.json()["refresh_token"]), "refresh_invalid")
        # and again, or with a guess once it is over: nothing left to end
        assert (await logout(http, f"{session_id}.{'A' * 43}")).status_code == 204


# -- 4. WebSocket connections: caps per address and per account, anonymous watchers ----------


async def closed_with(client: WsClient, code: str) -> None:
    """Expect an `error` with ``code``, then the connection closed with 1008 and ``code``."""
    error = await client.recv(20)
    assert (error["type"], error["code"]) == ("error", code), error
    assert error["message"]
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await client.recv(10)
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, code)


async def connect_when_free(url: str) -> WsClient:
    """Return an anonymous connection, once the address has a place again (a connection that
    was just closed is counted down when the gateway sees it end)."""
    while True:
        client = WsClient(url, "")
        await client.connect(auth=False)
        await client.send({"type": "ping"})
        answer = await client.recv(20)
        if answer["type"] == "pong":
            return client
        assert answer["code"] == "too_many_connections", answer
        await client.close()
        await asyncio.sleep(0.05)


async def test_websocket_connections_are_capped_per_address_and_per_account(
    processes: Processes,
) -> None:
    gateway = await start_gateway(
        processes,
        SPADES_WS_PER_ADDRESS="3",
        SPADES_WS_PER_ACCOUNT="1",
        SPADES_WS_ANONYMOUS_PER_ADDRESS="1",
    )
    token, _ = Tokens(SECRET, 900).issue("capped", False)
    # per account: a second connection of the account is refused at its auth
    first, second = WsClient(gateway.ws_url, token), WsClient(gateway.ws_url, token)
    await first.connect()
    await second.connect(auth=False)
    await second.send({"type": "auth", "token": token})
    await closed_with(second, "too_many_connections")
    # per address: three open, the fourth refused at once
    watcher = await connect_when_free(gateway.ws_url)
    other = await connect_when_free(gateway.ws_url)
    fourth = WsClient(gateway.ws_url, "")
    await fourth.connect(auth=False)
    await closed_with(fourth, "too_many_connections")
    await first.send({"type": "ping"})  # the others are untouched
    await first.expect("pong")
    # one connection of the address may watch without an account ...
    await watcher.send({"type": "subscribe", "game_id": "not-a-game"})
    assert (await watcher.expect("error"))["code"] == "unknown_game"
    # ... another must authenticate, and within the auth deadline like any connection
    await other.send({"type": "subscribe", "game_id": "not-a-game"})
    refused_watch = await other.expect("error")
    assert refused_watch["code"] == "unauthenticated", refused_watch
    assert "address" in refused_watch["message"]
    await closed_with(other, "auth_timeout")
    assert "Traceback" not in processes.log(gateway.proc)


# -- 5. ranked queue joins and leaves: a budget per account -----------------------------------


async def test_queue_joins_and_leaves_are_limited_per_account(processes: Processes) -> None:
    processes.start(
        "-m", "services.tools.cli", "serve", "matchmaking", env={"SPADES_OPS_PORT": "0"}
    )
    gateway = await start_gateway(
        processes, SPADES_QUEUE_CHANGES_PER_MINUTE="3", SPADES_FAIRPLAY_DAYS="0"
    )
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        fickle = {"authorization": f"Bearer {await register_and_login(http, 'fickle')}"}
        other = {"authorization": f"Bearer {await register_and_login(http, 'steady')}"}
        standard = {"ladder": "standard"}

        async def join(auth: dict[str, str]) -> httpx.Response:
            async def answered() -> httpx.Response | None:
                answer = await http.post("/api/queue", json=standard, headers=auth)
                # matchmaking may still be taking its ladders: that refusal counts for nothing
                return None if answer.json()["code"] == "unavailable" else answer

            found: httpx.Response = await eventually(answered, within=60, what="a queue")
            return found

        assert (await join(fickle)).json()["code"] == "queued"
        assert (await http.delete("/api/queue", headers=fickle)).json()["code"] == "left"
        assert (await http.post("/api/queue", json=standard, headers=fickle)).status_code == 200
        for refused_change in (
            await http.delete("/api/queue", headers=fickle),
            await http.post("/api/queue", json=standard, headers=fickle),
        ):
            assert refused_change.status_code == 429, refused_change.text
            assert refused_change.json()["code"] == "rate_limited"
            assert "3 queue joins and leaves a minute" in refused_change.json()["message"]
            assert 1 <= int(refused_change.headers["retry-after"]) <= 60
        # the refused leave changed nothing: still queued; another account is untouched
        status = await http.get("/api/queue", headers=fickle)
        assert status.json()["code"] == "queued", status.text
        assert (await join(other)).json()["code"] == "queued"
