"""Schemathesis against the gateway's own OpenAPI document, on the real processes.

Every generated request must get an answer that matches the document (status, content type,
body schema) and never a 5xx. The token of a registered account is sent with every request, so
the authenticated paths are exercised too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.gateway.conftest import register_and_login, start_gateway
from tests.infra import REPO, Processes

# The routes whose bodies the schema cannot fully describe (see CHECKS).
CROSS_FIELD_PATHS = (
    "/api/practice",
    "/api/practice/rules/check",
    "/api/transcripts",
    "/api/friends",
    "/api/events",
)

# Findings we answer for by design, each left out only where it applies:
# - allow_header_conformance: litestar's automatic OPTIONS answer names only the methods of
#   the first handler registered on a path (OPTIONS /api/queue says "OPTIONS, POST").
# - positive_data_acceptance on /api/practice: rule options depend on each other (the draw
#   deal excludes blind bids ...), which a JSON schema cannot say; the engine answers
#   400 invalid_ruleset naming the conflict (so does /api/practice/rules/check, whose whole
#   point is that answer). Likewise on /api/transcripts: its body is any
#   string to the schema, a transcript's grammar to the server (400 with the line's code).
#   And /api/friends: its rules as /api/practice's, its seats name accounts that must exist.
#   And /api/events: its rules as /api/friends', or a ladder that must exist, not both.
CHECKS = {
    "routes": ["--checks", "all", "--exclude-checks", "allow_header_conformance"],
    "cross-field-routes": [
        "--checks",
        "all",
        "--exclude-checks",
        "allow_header_conformance,positive_data_acceptance",
    ],
}

# Every route of the document is fuzzed in exactly one test: the cross-field routes in one,
# every other route in one of SHARDS (the document's other paths, sorted, dealt round). Each
# test runs on a platform of its own, so pytest-xdist runs them at the same time: as one test
# (two schemathesis runs one after the other) this was the suite's longest test (181 s of a
# 21 min `make test`, and past pytest-timeout's 300 s on a loaded machine). One shard: the
# stateful phase follows links between the routes of one run, so a route's links stay whole.
SHARDS = 1
SELECTIONS = [*(f"routes-{i + 1}-of-{SHARDS}" for i in range(SHARDS)), "cross-field-routes"]


def paths_of(selection: str, document: dict[str, object]) -> list[str]:
    """Return the paths of `document` that the test `selection` fuzzes."""
    paths = sorted(document)
    if selection == "cross-field-routes":
        return list(CROSS_FIELD_PATHS)
    shard = int(selection.split("-")[1]) - 1
    return [path for path in paths if path not in CROSS_FIELD_PATHS][shard::SHARDS]


def test_the_selections_fuzz_every_route_of_the_document_exactly_once() -> None:
    golden = json.loads((REPO / "tests/gateway/openapi.json").read_text())["paths"]
    chosen = [path for selection in SELECTIONS for path in paths_of(selection, golden)]
    assert sorted(chosen) == sorted(golden)
    assert set(CROSS_FIELD_PATHS) <= set(golden)
    assert all(paths_of(selection, golden) for selection in SELECTIONS)


@pytest.mark.parametrize("selection", SELECTIONS)
async def test_schemathesis_finds_no_server_error_or_schema_mismatch(
    processes: Processes, tmp_path: object, selection: str
) -> None:
    for name in ("relay", "table", "matchmaking", "rating", "bots"):
        processes.start("-m", "services.tools.cli", "serve", name, env={"SPADES_OPS_PORT": "0"})
    gateway = await start_gateway(processes)
    schema = Path(str(tmp_path)) / "openapi.json"
    async with httpx.AsyncClient(base_url=gateway.url, timeout=120) as http:
        token = await register_and_login(http, "fuzzer")
        # the gateway builds its document on the first request (seconds on a loaded machine,
        # past schemathesis's own 10 s): fetched here, handed to it as a file
        document = await http.get("/schema/openapi.json")
        assert document.status_code == 200, document.text
        schema.write_bytes(document.content)
    served = document.json()["paths"]
    paths = paths_of(selection, served)
    assert paths, selection
    assert set(paths) <= set(served), (selection, paths)
    checks = CHECKS["cross-field-routes" if selection == "cross-field-routes" else "routes"]
    argv = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "run",
        str(schema),
        "--url",
        gateway.url,
        "--request-timeout",
        "60",
        "--max-examples",
        "25",
        "--seed",
        "1",
        "--no-color",
        "--header",
        f"Authorization: Bearer {token}",
        *checks,
        *(arg for path in paths for arg in ("--include-path", path)),
    ]
    done = subprocess.run(  # noqa: ASYNC221 - the test has nothing else to do meanwhile
        argv, cwd=REPO, capture_output=True, text=True, timeout=600
    )
    print(done.stdout[-20_000:], done.stderr[-5_000:])
    assert done.returncode == 0, done.stdout[-5_000:]
