"""Issue 26, "Integrity, second round": what an attacker found after the first round, each
item closed with a stated limit and a code (the items' numbers are the issue's)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import asyncpg
import httpx
import pytest
import structlog
from litestar.testing import TestClient

from events.subjects import Subjects
from services.config import Settings
from services.gateway.app import create_app
from services.gateway.config import GatewayConfig
from services.gateway.http.web import SECURITY_HEADERS, WEB
from services.gateway.state import Gateway
from tests.gateway.conftest import start_gateway
from tests.gateway.test_sessions import logout, refresh, refused, sign_up
from tests.infra import Processes


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
