"""Issue 13: generated crafted input (deeply nested JSON, binary bodies, control characters in
paths) thrown at every HTTP route of the OpenAPI document and every WebSocket message type.

Every answer is a 4xx with a code, or over the WebSocket an `error` (never `internal`); the
connection stays open; nothing reaches the log as a traceback; and the game under fire does
not move. Bounded: 150 HTTP and 150 WebSocket examples, well under a minute.
"""

from __future__ import annotations

import json
import urllib.parse
import uuid
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.middleware._utils import build_exclude_path_pattern, should_bypass_for_path_pattern
from nats.aio.client import Client as NATS
from websockets.sync.client import connect

from events.contracts.game import stream_of
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.gateway.http.limits import SCHEMA_PATHS, UNLIMITED
from services.gateway.protocol import Error, parse
from tests.gateway.conftest import register_and_login, start_gateway
from tests.gateway.test_ws_play import open_casual
from tests.infra import Processes

SERVICES = ("relay", "table", "matchmaking", "rating", "bots")
WS_TYPES = ("auth", "subscribe", "unsubscribe", "command", "view", "ping")

json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
nested = st.recursive(
    json_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def deep(draw: st.DrawFn) -> str:
    """Return JSON text nested hundreds to thousands deep (lists, objects or both)."""
    depth = draw(st.integers(min_value=200, max_value=3000))
    kind = draw(st.sampled_from(["list", "object", "mixed"]))
    if kind == "list":
        return "[" * depth + "]" * depth
    if kind == "object":
        return '{"a":' * depth + "1" + "}" * depth
    return '[{"a":' * (depth // 2) + "1" + "}]" * (depth // 2)


def field_value() -> st.SearchStrategy[str]:
    """JSON text for one field: a nested value, a deep one, or garbage that is not JSON."""
    return st.one_of(
        nested.map(json.dumps),
        deep(),
        st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
    )


def body_of(fields: dict[str, str]) -> str:
    return "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in fields.items()) + "}"


bodies = st.one_of(
    st.binary(max_size=300),
    deep().map(str.encode),
    nested.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(
        st.sampled_from(["name", "password", "rules", "ladder", "refresh_token", "command_id"]),
        field_value(),
        min_size=1,
        max_size=3,
    ).map(lambda f: body_of(f).encode("utf-8", "surrogatepass")),
)


@st.composite
def uuid_spellings(draw: st.DrawFn) -> str:
    """Return a UUID spelt any way `uuid.UUID` reads it: canonical, capitals, braces,
    `urn:uuid:`, without or with moved dashes."""
    value = draw(st.uuids())
    hex_ = draw(st.sampled_from([value.hex, value.hex.upper()]))
    if draw(st.booleans()):
        hex_ = "".join(c.upper() if draw(st.booleans()) else c for c in hex_)
    anywhere = tuple(sorted(draw(st.sets(st.integers(1, 31), max_size=4))))
    canonical, none, early, extra = (8, 12, 16, 20), (), (4, 8), (8, 12, 16, 20, 24)
    dashes = draw(st.sampled_from([canonical, none, early, extra, anywhere]))
    body = "".join(("-" if i in dashes else "") + c for i, c in enumerate(hex_))
    wrap = draw(st.sampled_from(["{}", "urn:uuid:{}", "{{{}}}", "uuid:{}", "urn:{}", "{}"]))
    return wrap.format(body)


@settings(max_examples=500, derandomize=True, deadline=None)
@given(game_id=uuid_spellings(), kind=st.sampled_from(["subscribe", "unsubscribe", "view"]))
def test_a_game_id_in_another_uuid_spelling_is_malformed(game_id: str, kind: str) -> None:
    """Issue 26, item 7: `{uuid}` and `urn:uuid:` passed the UUID check, then broke the NATS
    subject check and closed the socket with 4500. Only the canonical form gets through."""
    canonical = str(uuid.UUID(game_id))
    for message in (
        {"type": kind, "game_id": game_id},
        {"type": "command", "game_id": game_id, "command_id": str(uuid.uuid4()), "command": {}},
    ):
        parsed = parse(json.dumps(message))
        if game_id == canonical:
            assert not isinstance(parsed, Error), parsed
        else:
            assert isinstance(parsed, Error), (game_id, parsed)
            assert parsed.code == "malformed"
            assert canonical in parsed.message


schema_params = st.builds(
    lambda a, b: f"{a}schema{b}",
    st.from_regex(r"[a-z0-9]{0,4}", fullmatch=True),
    st.from_regex(r"[a-z0-9]{0,4}", fullmatch=True),
)
path_texts = st.one_of(
    st.text(min_size=1, max_size=20),
    st.binary(min_size=1, max_size=20).map(lambda b: b.decode("latin-1")),
    st.sampled_from(["a\x00b", "ann\n", "..", "%00", "\x7f"]),
)


schema_paths = st.builds(
    lambda before, after: f"{before}schema{after}",
    st.sampled_from(["/", "/api/players/", "/api/ladders/", "/static/../", "//", "/x/", ""])
    | st.text(min_size=0, max_size=12).map(lambda t: "/" + t),
    st.sampled_from(["", "zz", "/", "/openapi.json", "/openapi.jsonx", "/games", ".ndjson"])
    | st.text(min_size=0, max_size=12),
)
"""Paths with "schema" in them: the API's document, and everything that merely contains it."""


@settings(max_examples=500, derandomize=True, deadline=None)
@given(path=schema_paths)
def test_only_the_schemas_own_paths_skip_the_limits_and_the_auth(path: str) -> None:
    """Issue 26, item 2: litestar searches a path for the exclusion patterns, so an unanchored
    "/schema" once exempted `/api/players/schemazz` from every rate limit and from the
    authentication middleware (both use `UNLIMITED`)."""
    pattern = build_exclude_path_pattern(exclude=UNLIMITED)
    skipped = should_bypass_for_path_pattern({"path": path}, pattern)  # type: ignore[typeddict-item]
    exempt = path in SCHEMA_PATHS or path == "/" or path.startswith("/static/")
    assert skipped == exempt, path


def is_misspelt(text: str) -> bool:
    """Return whether ``text`` is a UUID, not in its canonical spelling."""
    try:
        return str(uuid.UUID(text)) != text
    except ValueError:
        return False


def routes(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """Return (method, path template) of every operation in the OpenAPI document."""
    return sorted(
        (method.upper(), path)
        for path, operations in schema["paths"].items()
        for method in operations
        if method in ("get", "post", "delete", "put", "patch")
    )


async def test_generated_crafted_input_gets_a_4xx_or_malformed_and_moves_nothing(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    for name in SERVICES:
        processes.start(
            "-m",
            "services.tools.cli",
            "serve",
            name,
            env={"SPADES_OPS_PORT": "0", "SPADES_TURN_SECONDS": "600"},
        )
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        players = ["cno", "cea", "cso", "cwe"]
        for name in players:
            await register_and_login(http, name)
        token = await register_and_login(http, "crafter")  # watches: never seated
        schema = (await http.get("/schema/openapi.json")).json()
    game_id = await open_casual(nc, subjects, players)
    version = len(await event_store.read(stream_of(game_id)))
    operations = routes(schema)
    assert ("POST", "/api/accounts") in operations
    assert ("GET", "/api/players/{player_id}") in operations
    auth = {"authorization": f"Bearer {token}"}
    answered: list[int] = []

    with httpx.Client(base_url=gateway.url, timeout=30) as client:

        @settings(
            max_examples=150,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(
            operation=st.sampled_from(operations),
            body=bodies,
            param=st.one_of(st.just(game_id), path_texts, schema_params, uuid_spellings()),
            content_type=st.sampled_from(["application/json", "text/plain", ""]),
        )
        def http_case(
            operation: tuple[str, str], body: bytes, param: str, content_type: str
        ) -> None:
            method, template = operation
            path = template
            while "{" in path:
                start, end = path.index("{"), path.index("}")
                path = path[:start] + urllib.parse.quote(param, safe="") + path[end + 1 :]
            sends_body = method in ("POST", "DELETE")
            answer = client.request(
                method,
                path,
                content=body if sends_body else None,
                headers={**auth, "content-type": content_type} if sends_body else auth,
            )
            answered.append(answer.status_code)
            if template.startswith("/api/games/{") and is_misspelt(param):
                assert answer.status_code == 400, (method, path, answer.text)
                assert answer.json()["code"] == "malformed", answer.text
            if "schema" in param and answer.status_code != 404:
                # a route's answer: the budgets counted it (their headers say so)
                assert "ratelimit-policy" in answer.headers, (method, path, answer.headers)
            assert answer.status_code < 500, (method, path, body[:80], answer.text)
            if answer.status_code >= 400:
                assert answer.json()["code"] != "internal", answer.text
            json_route = sends_body and method == "POST" and template != "/api/transcripts"
            if json_route and not (body.startswith(b"{") and content_type == "application/json"):
                assert 400 <= answer.status_code < 500, (path, body[:80], answer.text)

        http_case()

    with connect(gateway.ws_url, max_size=2**20) as ws:
        ws.send(json.dumps({"type": "auth", "token": token}))
        assert json.loads(ws.recv(30))["type"] == "welcome"

        @settings(
            max_examples=150,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(
            kind=st.sampled_from(WS_TYPES),
            fields=st.dictionaries(
                st.sampled_from(["game_id", "token", "last_seq", "command", "command_id", "x"]),
                field_value() | uuid_spellings().map(json.dumps),
                max_size=3,
            ),
            binary=st.one_of(st.none(), st.binary(min_size=1, max_size=200)),
        )
        def ws_case(kind: str, fields: dict[str, str], binary: bytes | None) -> None:
            if binary is not None:
                ws.send(binary)
            else:
                text = body_of({"type": json.dumps(kind), **fields})
                if kind == "ping" and not fields:
                    text = '{"type": "ping", "x": ' + "[" * 2000 + "]" * 2000 + "}"
                ws.send(text)
            answer = json.loads(ws.recv(30))
            if answer["type"] == "unsubscribed":  # a well-formed unsubscribe, of anything
                return
            assert answer["type"] == "error", answer
            assert answer["code"] != "internal", answer

        ws_case()
        # still open, still answering
        ws.send(json.dumps({"type": "ping"}))
        while (answer := json.loads(ws.recv(30)))["type"] != "pong":
            assert answer["type"] in ("view", "clock", "event", "error", "unsubscribed"), answer

    assert len(answered) >= 150
    assert len(await event_store.read(stream_of(game_id))) == version
    log = processes.log(gateway.proc)
    assert "Traceback" not in log
    assert "RecursionError" not in log


EVENT_FIELDS = (
    "name",
    "format",
    "minutes",
    "rules",
    "ladder",
    "boards_per_round",
    "rounds",
    "max_pairs",
    "starts_at",
    "signup_minutes",
    "command_id",
    "partner",
    "fill_with_bots",
)
event_bodies = st.one_of(
    bodies,
    st.dictionaries(st.sampled_from(EVENT_FIELDS), field_value(), min_size=1, max_size=4).map(
        lambda f: body_of(f).encode("utf-8", "surrogatepass")
    ),
)


async def test_crafted_input_to_the_events_routes_gets_a_4xx_and_changes_no_event(
    processes: Processes,
) -> None:
    """Issue 31: the events' routes (create, list, show, log, join, leave, resume, start) under
    the same fire, with bodies made of their own fields: every answer below 500 with a code
    (never `internal`), and another host's event is as it was unless an answer said it
    changed."""
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        host = {"authorization": f"Bearer {await register_and_login(http, 'evhost')}"}
        token = await register_and_login(http, "evcrafter")
        made = await http.post(
            "/api/events", json={"name": "Target", "format": "arena", "minutes": 30}, headers=host
        )
        assert made.status_code == 201, made.text
        event_id = made.json()["event"]["event_id"]
        joined = await http.post(
            f"/api/events/{event_id}/join", json={"partner": "bot"}, headers=host
        )
        assert joined.status_code == 200, joined.text
        before = (await http.get(f"/api/events/{event_id}/log")).json()
        schema = (await http.get("/schema/openapi.json")).json()
    operations = [op for op in routes(schema) if op[1].startswith("/api/events")]
    assert ("POST", "/api/events/{event_id}/resume") in operations
    assert len(operations) >= 8
    auth = {"authorization": f"Bearer {token}"}
    said_changed: list[str] = []
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        # a NUL is text JSON carries and PostgreSQL's text and jsonb do not
        for crafted in (
            {"name": "a\u0000b"},
            {"name": "x", "rules": {"a\u0000": 1}},
            {"name": "x", "format": "arena", "minutes": 5, "rules": {"target": "\u0000"}},
            {"name": "x", "ladder": "\u0000"},
        ):
            answer = await http.post("/api/events", json=crafted, headers=auth)
            assert 400 <= answer.status_code < 500, (crafted, answer.text)
            assert answer.json()["code"] != "internal", answer.text
        listed = await http.get("/api/events", headers=auth)
        assert listed.json() == [], listed.text

    with httpx.Client(base_url=gateway.url, timeout=30) as client:

        @settings(
            max_examples=150,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(
            operation=st.sampled_from(operations),
            body=event_bodies,
            param=st.one_of(st.just(event_id), path_texts, uuid_spellings()),
            content_type=st.sampled_from(["application/json", "text/plain", ""]),
        )
        def events_case(
            operation: tuple[str, str], body: bytes, param: str, content_type: str
        ) -> None:
            method, template = operation
            path = template.replace("{event_id}", urllib.parse.quote(param, safe=""))
            sends_body = method == "POST"
            answer = client.request(
                method,
                path,
                content=body if sends_body else None,
                headers={**auth, "content-type": content_type} if sends_body else auth,
            )
            assert answer.status_code < 500, (method, path, body[:80], answer.text)
            if answer.status_code >= 400:
                assert answer.json()["code"] != "internal", answer.text
            elif method == "POST" and param == event_id and "{event_id}" in template:
                said_changed.append(path)
            if sends_body and not (body.startswith(b"{") and content_type == "application/json"):
                assert 400 <= answer.status_code < 500, (path, body[:80], answer.text)

        events_case()

    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        after = (await http.get(f"/api/events/{event_id}/log")).json()
    if not said_changed:
        assert after == before
    assert "Traceback" not in processes.log(gateway.proc)
