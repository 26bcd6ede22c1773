"""The ops surface answers probes and scrapes for real, over a socket, as the kubelet would."""

from __future__ import annotations

import asyncio
import json

import pytest
from litestar.testing import create_test_client
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram

from services.runtime import ops
from tests.infra import Processes, eventually
from tests.services.opskit import ops_port, scrape, start_gateway


async def fetch(
    port: int, path: str, method: str = "GET", raw: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    """Return status, headers and body of one HTTP/1.1 request to 127.0.0.1:port."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = f"{method} {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n"
    writer.write(raw or request.encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), timeout=10)
    writer.close()
    await writer.wait_closed()
    if not data:
        return 0, {}, b""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return status, headers, body


async def passes() -> bool:
    return True


async def refuses() -> None:
    raise ConnectionRefusedError("connect to postgresql://spades:hunter2@db:5432 refused")


async def hangs() -> None:
    await asyncio.sleep(60)


async def test_livez_answers_200_while_the_loop_runs() -> None:
    async with ops.ops_server(0) as server:
        status, headers, body = await fetch(server.port, ops.LIVEZ)
    assert (status, json.loads(body)) == (200, {"status": "alive"})
    assert headers["content-type"] == "application/json"


async def test_readyz_is_200_when_every_check_passes() -> None:
    async with ops.ops_server(0, {"postgres": passes, "nats": passes}) as server:
        status, _, body = await fetch(server.port, ops.READYZ)
    assert status == 200
    assert json.loads(body) == {
        "status": "ready",
        "checks": {"postgres": "ok", "nats": "ok"},
        "down": [],
    }


async def test_readyz_is_503_naming_the_dependencies_that_are_down() -> None:
    checks = {"postgres": refuses, "nats": hangs, "schema": passes}
    async with ops.ops_server(0, checks, check_timeout=0.2) as server:
        status, _, body = await fetch(server.port, ops.READYZ)
    doc = json.loads(body)
    assert status == 503
    assert doc["down"] == ["nats", "postgres"]
    assert doc["checks"] == {
        "postgres": "ConnectionRefusedError",
        "nats": "timeout",
        "schema": "ok",
    }


async def test_readyz_does_not_leak_a_failing_drivers_message() -> None:
    async with ops.ops_server(0, {"postgres": refuses}) as server:
        _, _, body = await fetch(server.port, ops.READYZ)
    assert b"hunter2" not in body


async def test_readyz_flips_with_its_dependency_and_back() -> None:
    up = {"nats": True}

    async def nats() -> bool:
        return up["nats"]

    async with ops.ops_server(0, {"nats": nats}) as server:
        before, _, _ = await fetch(server.port, ops.READYZ)
        up["nats"] = False
        during, _, body = await fetch(server.port, ops.READYZ)
        up["nats"] = True
        after, _, _ = await fetch(server.port, ops.READYZ)
        live, _, _ = await fetch(server.port, ops.LIVEZ)
    assert (before, during, after) == (200, 503, 200)
    assert json.loads(body)["checks"] == {"nats": "failed"}
    assert live == 200, "a dependency outage must not get the pod restarted"


async def test_metrics_exposes_every_platform_metric_by_name() -> None:
    async with ops.ops_server(0) as server:
        status, headers, body = await fetch(server.port, ops.METRICS)
    text = body.decode()
    assert status == 200
    # prometheus-client negotiates: a scraper that asks for nothing gets the classic text.
    assert headers["content-type"].startswith("text/plain; version=")
    missing = [name for name in ops.metric_names() if f"# HELP {name} " not in text]
    assert missing == []


async def test_metrics_shows_what_a_service_counted() -> None:
    ops.COMMANDS_REJECTED.labels(command="PlayCard", reason="out_of_turn").inc()
    ops.APPEND_LATENCY.labels(outcome="ok").observe(0.003)
    async with ops.ops_server(0) as server:
        _, _, body = await fetch(server.port, ops.METRICS)
    text = body.decode()
    assert 'spades_commands_rejected_total{command="PlayCard",reason="out_of_turn"}' in text
    assert 'spades_event_append_seconds_bucket{le="0.005",outcome="ok"}' in text


async def test_metrics_serves_the_registry_it_was_given() -> None:
    registry = CollectorRegistry()
    Counter("only_here", "a metric in a private registry", registry=registry).inc()
    async with ops.ops_server(0, registry=registry) as server:
        _, _, body = await fetch(server.port, ops.METRICS)
    assert b"only_here_total 1.0" in body
    assert b"_created" not in body
    assert b"spades_active_games" not in body


async def test_query_strings_are_ignored_and_head_has_no_body() -> None:
    async with ops.ops_server(0) as server:
        status, _, _ = await fetch(server.port, ops.LIVEZ + "?verbose=1")
        head_status, head_headers, head_body = await fetch(server.port, ops.LIVEZ, "HEAD")
    assert (status, head_status, head_body) == (200, 200, b"")
    assert int(head_headers["content-length"]) > 0


async def test_unknown_paths_and_methods_are_refused() -> None:
    async with ops.ops_server(0) as server:
        missing, _, body = await fetch(server.port, "/admin")
        post, _, _ = await fetch(server.port, ops.READYZ, "POST")
    assert (missing, post) == (404, 405)
    assert json.loads(body)["paths"] == list(ops.PATHS)


async def test_garbage_and_oversized_requests_are_refused_and_serving_goes_on() -> None:
    async with ops.ops_server(0) as server:
        garbage = await fetch(server.port, "", raw=b"NOT HTTP\r\n\r\n")
        huge = await fetch(server.port, "", raw=b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\n\r\n")
        status, _, _ = await fetch(server.port, ops.LIVEZ)
    assert garbage[0] == 400  # uvicorn (h11) answers a bad request line, then closes
    assert huge[0] == 400
    assert status == 200


async def test_the_server_stops_listening_on_exit() -> None:
    async with ops.ops_server(0) as server:
        port = server.port
    with pytest.raises(OSError, match=r"refused|Connect call failed"):
        await asyncio.open_connection("127.0.0.1", port)


@pytest.mark.parametrize(
    ("environ", "port"),
    [({}, 9000), ({"SPADES_OPS_PORT": "9100"}, 9100), ({"SPADES_OPS_PORT": " "}, 9000)],
)
def test_ops_port_comes_from_the_environment(environ: dict[str, str], port: int) -> None:
    assert ops.ops_port_from_env(environ) == port


def test_the_default_ops_port_is_the_settings_default() -> None:
    from services.runtime.config import Settings

    assert Settings().ops_port == ops.DEFAULT_OPS_PORT


def test_every_platform_metric_is_named_documented_and_registered() -> None:
    registered = set(REGISTRY._names_to_collectors)
    for metric in ops.PLATFORM_METRICS:
        assert metric._name.startswith("spades_")
        assert len(metric._documentation) > 20, metric._name
        assert metric._name in registered
    assert len(set(ops.metric_names())) == len(ops.PLATFORM_METRICS)


def test_the_issue_list_of_metrics_is_covered() -> None:
    wanted = {
        "commands handled": ops.COMMANDS_HANDLED,
        "commands rejected by reason": ops.COMMANDS_REJECTED,
        "append latency": ops.APPEND_LATENCY,
        "relay lag": ops.RELAY_LAG_EVENTS,
        "consumer lag": ops.CONSUMER_LAG,
        "active games": ops.ACTIVE_GAMES,
        "queue sizes": ops.QUEUE_SIZE,
        "wait times": ops.QUEUE_WAIT,
        "websocket connections": ops.WEBSOCKET_CONNECTIONS,
        "rating updates": ops.RATING_UPDATES,
    }
    assert all(m in ops.PLATFORM_METRICS for m in wanted.values())
    assert "reason" in ops.COMMANDS_REJECTED._labelnames
    assert isinstance(ops.APPEND_LATENCY, Histogram)
    assert isinstance(ops.QUEUE_WAIT, Histogram)


def test_the_gateway_router_answers_the_same_paths() -> None:
    up = {"postgres": True}

    async def postgres() -> bool:
        return up["postgres"]

    with create_test_client(route_handlers=[ops.ops_router({"postgres": postgres})]) as client:
        live = client.get(ops.LIVEZ)
        ready = client.get(ops.READYZ)
        up["postgres"] = False
        unready = client.get(ops.READYZ)
        metrics = client.get(ops.METRICS)
    assert (live.status_code, ready.status_code, unready.status_code) == (200, 200, 503)
    assert unready.json()["down"] == ["postgres"]
    assert metrics.headers["content-type"] == CONTENT_TYPE_LATEST
    assert "spades_commands_handled_total" in metrics.text


class FakePool:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    async def fetchval(self, query: str) -> object:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class FakeHealth:
    def __init__(self, alive: bool) -> None:
        self.alive = alive

    async def check(self) -> bool:
        return self.alive


async def test_postgres_and_nats_checks_report_what_they_see() -> None:
    checks = {
        "pg_up": ops.postgres_check(FakePool(1)),
        "pg_down": ops.postgres_check(FakePool(OSError("no route"))),
        "nats_up": ops.nats_check(FakeHealth(alive=True)),
        "nats_silent": ops.nats_check(FakeHealth(alive=False)),
    }
    readiness = await ops.run_checks(checks)
    assert dict(readiness.down) == {"pg_down": "OSError", "nats_silent": "failed"}


async def test_readyz_answers_503_within_its_deadline_when_a_check_ignores_cancellation() -> None:
    """Issue 25: in the first seconds of a black-hole partition /readyz did not answer at all;
    a check that outlives its limit must make it answer 503, not wait for the check to end.

    The stuck check is like a driver cancelling a query on a black-holed connection: once
    cancelled it still waits, here until the test has its answer (so waiting for it would
    never answer)."""
    released = asyncio.Event()

    async def deaf_to_cancellation() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await released.wait()
            raise

    checks = {"postgres": deaf_to_cancellation, "nats": passes}
    try:
        async with ops.ops_server(0, checks, check_timeout=0.2) as server:
            status, _, body = await asyncio.wait_for(fetch(server.port, ops.READYZ), timeout=30)
    finally:
        released.set()
    assert status == 503
    assert json.loads(body)["checks"] == {"postgres": "timeout", "nats": "ok"}


@pytest.mark.infra
async def test_the_gateway_process_serves_probes_and_every_metric_on_its_ops_port(
    processes: Processes,
) -> None:
    proc, http_port = await start_gateway(processes)
    port = await ops_port(processes, proc)
    assert port != http_port
    live, _, _ = await fetch(port, ops.LIVEZ)
    assert live == 200
    # ready once every check passes: a loaded machine may starve a new process's event loop
    # for a moment, which readiness says (the event_loop check) until the next sample
    answers: list[bytes] = []

    async def ready() -> bool:
        status, _, body = await fetch(port, ops.READYZ)
        answers.append(body)
        return status == 200

    await eventually(ready, within=60, what="the gateway to be ready")
    checks = {"postgres": "ok", "nats": "ok", "event_loop": "ok"}
    assert json.loads(answers[-1])["checks"] == checks
    text = scrape(port)
    missing = [m for m in ops.metric_names() if f"# HELP {m} " not in text]
    assert missing == []
