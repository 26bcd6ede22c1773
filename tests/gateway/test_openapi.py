"""The OpenAPI document is the HTTP API's contract with its clients: it changes only on
purpose. `openapi.json` beside this file is the document as `/schema/openapi.json` serves it
(keys sorted, indented); a change to a route, a body or a docstring that reaches the document
fails here until the golden file is regenerated and the diff reviewed:

    uv run --frozen python -m tests.gateway.test_openapi --update
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path
from typing import Any

import structlog
from litestar.testing import TestClient

from events.subjects import Subjects
from services.gateway.app import create_app
from services.gateway.config import GatewayConfig
from services.gateway.state import Gateway
from services.runtime.config import Settings

GOLDEN = Path(__file__).with_name("openapi.json")
UPDATE = "uv run --frozen python -m tests.gateway.test_openapi --update"


def served_document() -> dict[str, Any]:
    """Return the document the gateway's app serves (built in-process: no connection is
    opened, none is needed to describe the routes)."""
    gateway = Gateway(
        settings=Settings.from_env({}),
        config=GatewayConfig(jwt_secret="openapi-" + "x" * 40),
        subjects=Subjects(),
        pool=None,  # type: ignore[arg-type]
        store=None,  # type: ignore[arg-type]
        nc=None,  # type: ignore[arg-type]
        js=None,  # type: ignore[arg-type]
        log=structlog.get_logger("openapi"),
    )
    with TestClient(create_app(gateway)) as client:
        answer = client.get("/schema/openapi.json")
        assert answer.status_code == 200, answer.text
        document: dict[str, Any] = answer.json()
    return document


def text_of(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def test_the_openapi_document_is_the_golden_one() -> None:
    assert GOLDEN.exists(), f"no golden document {GOLDEN}; create it with: {UPDATE}"
    served, golden = text_of(served_document()), GOLDEN.read_text()
    diff = list(
        difflib.unified_diff(
            golden.splitlines(), served.splitlines(), "golden", "served", lineterm="", n=2
        )
    )
    assert not diff, "\n".join([*diff[:60], f"if the change is intended: {UPDATE}"])


def test_the_golden_document_describes_the_api_and_its_security() -> None:
    golden = json.loads(GOLDEN.read_text())
    assert golden["components"]["securitySchemes"]["BearerToken"]["scheme"] == "bearer"
    assert {"/api/accounts", "/api/tokens", "/api/me", "/api/queue"} <= set(golden["paths"])
    for item in golden["paths"].values():
        for operation in item.values():
            assert "401" in operation["responses"], operation["operationId"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(f"usage: python -m tests.gateway.test_openapi --update  (writes {GOLDEN})")
    GOLDEN.write_text(text_of(served_document()))
    print(f"wrote {GOLDEN}")
