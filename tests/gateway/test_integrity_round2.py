"""Issue 26, "Integrity, second round": what an attacker found after the first round, each
item closed with a stated limit and a code (the items' numbers are the issue's)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog
from litestar.testing import TestClient

from events.subjects import Subjects
from services.config import Settings
from services.gateway.app import create_app
from services.gateway.config import GatewayConfig
from services.gateway.http.web import SECURITY_HEADERS, WEB
from services.gateway.state import Gateway


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
