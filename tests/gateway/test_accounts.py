"""Gateway process, accounts and access tokens, against the real process on real PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import jwt
import pytest

from services.gateway.auth import ISSUER, Tokens
from tests.gateway.conftest import SECRET, GatewayProcess, register_and_login, start_gateway
from tests.infra import REPO, Processes
from tests.shared import unique_name

# the tests taking the `http` fixture run on the worker's shared platform (tests/shared.py):
# each signs up names of its own
shared = pytest.mark.shared_platform


def test_the_gateway_refuses_to_start_without_a_signing_key() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SPADES_JWT_SECRET"}
    env.pop("SPADES_GATEWAY_DEV", None)
    done = subprocess.run(
        [sys.executable, "-m", "services.tools.cli", "serve", "gateway"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "SPADES_JWT_SECRET" in done.stderr
    short = subprocess.run(
        [sys.executable, "-m", "services.tools.cli", "serve", "gateway"],
        cwd=REPO,
        env={**env, "SPADES_JWT_SECRET": "short"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert short.returncode == 2
    assert "at least 32" in short.stderr


@shared
async def test_register_log_in_and_read_the_account(http: httpx.AsyncClient) -> None:
    ann = unique_name("Ann")
    made = await http.post("/api/accounts", json={"name": ann, "password": "a good password"})
    assert made.status_code == 201, made.text
    assert made.json()["player_id"] == ann.lower()
    assert made.json()["bot"] is False
    assert "password" not in made.text

    token = await http.post(
        "/api/tokens", json={"name": ann.upper(), "password": "a good password"}
    )
    assert token.status_code == 200, token.text
    body = token.json()
    assert body["token_type"] == "bearer"
    assert body["player_id"] == ann.lower()
    assert 0 < body["expires_in"] <= 3600
    claims = jwt.decode(body["access_token"], SECRET, algorithms=["HS256"], issuer=ISSUER)
    assert claims["sub"] == ann.lower()
    assert claims["exp"] - claims["iat"] == body["expires_in"]

    me = await http.get("/api/me", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.status_code == 200, me.text
    assert me.json()["name"] == ann


@shared
async def test_bot_accounts_are_marked_and_named_as_bots(http: httpx.AsyncClient) -> None:
    robo = unique_name("Robo")
    token = await register_and_login(http, robo, bot=True)
    me = (await http.get("/api/me", headers={"Authorization": f"Bearer {token}"})).json()
    assert me["bot"] is True
    assert me["player_id"] == f"bot:{robo.lower()}"  # the prefix ranked queues refuse
    assert jwt.decode(token, SECRET, algorithms=["HS256"], issuer=ISSUER)["bot"] is True


@shared
async def test_names_are_unique_ignoring_case_across_people_and_bots(
    http: httpx.AsyncClient,
) -> None:
    cyd = unique_name("cyd")
    await register_and_login(http, cyd)
    for body in (
        {"name": cyd.upper(), "password": "another password"},
        {"name": cyd.capitalize(), "password": "another password", "bot": True},
    ):
        again = await http.post("/api/accounts", json=body)
        assert again.status_code == 409
        assert again.json()["code"] == "name_taken"


@shared
async def test_wrong_password_and_unknown_name_get_the_same_answer(
    http: httpx.AsyncClient,
) -> None:
    dia, nobody = unique_name("dia"), unique_name("nobody")
    await register_and_login(http, dia)
    wrong = await http.post("/api/tokens", json={"name": dia, "password": "not the password"})
    unknown = await http.post("/api/tokens", json={"name": nobody, "password": "whatever1"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    assert wrong.json()["code"] == "invalid_credentials"


@shared
async def test_bad_requests_get_a_code_and_a_message(http: httpx.AsyncClient) -> None:
    cases = [
        (
            http.post(
                "/api/accounts", content=b"{not json", headers={"content-type": "application/json"}
            ),
            400,
            "malformed",
        ),
        (
            http.post("/api/accounts", json={"name": 7, "password": "a good password"}),
            400,
            "malformed",
        ),
        (
            http.post("/api/accounts", json={"name": "ok_name", "password": "short"}),
            400,
            "malformed",
        ),
        (
            http.post("/api/accounts", json={"name": "1abc", "password": "a good password"}),
            400,
            "malformed",
        ),
        (
            http.post(
                "/api/accounts", json={"name": "abc", "password": "a good password", "admin": True}
            ),
            400,
            "malformed",
        ),
        (
            http.post("/api/accounts", json={"name": "abc", "password": "p" * 100_000}),
            413,
            "too_large",
        ),
        (http.get("/api/nowhere"), 404, "not_found"),
        (http.delete("/api/accounts"), 405, "method_not_allowed"),
    ]
    for request, status, code in cases:
        answer = await request
        assert answer.status_code == status, answer.text
        body = answer.json()
        assert body["code"] == code, body
        assert isinstance(body["message"], str)
        assert body["message"]
    listed = await http.get("/api/me")
    assert listed.status_code == 401
    assert listed.json()["code"] == "unauthenticated"


@shared
async def test_forged_and_expired_tokens_are_refused_with_their_reason(
    http: httpx.AsyncClient,
) -> None:
    eve = unique_name("eve")
    await register_and_login(http, eve)
    forged, _ = Tokens("another-secret-" + "y" * 40, 900).issue(eve, False)
    expired, _ = Tokens(SECRET, 60).issue(eve, False, now=time.time() - 3600)
    unsigned = jwt.encode(
        {"sub": eve, "iss": ISSUER, "iat": 0, "exp": 2**40}, None, algorithm="none"
    )
    for token, code in (
        (forged, "token_invalid"),
        (expired, "token_expired"),
        (unsigned, "token_invalid"),
        ("junk", "token_invalid"),
    ):
        answer = await http.get("/api/me", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 401
        assert answer.json()["code"] == code, (token, answer.text)


@shared
async def test_the_openapi_document_lists_the_api(http: httpx.AsyncClient) -> None:
    answer = await http.get("/schema/openapi.json")
    assert answer.status_code == 200
    document = answer.json()
    assert document["openapi"].startswith("3.")
    assert {"/api/accounts", "/api/tokens", "/api/me"} <= set(document["paths"])
    assert "BearerToken" in document["components"]["securitySchemes"]


async def test_logins_are_rate_limited_per_address(processes: Processes) -> None:
    gateway = await start_gateway(processes, SPADES_AUTH_RATE_PER_MINUTE="3")
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as client:
        codes = [
            (
                await client.post("/api/tokens", json={"name": "x", "password": "whatever1"})
            ).status_code
            for _ in range(4)
        ]
        assert codes == [401, 401, 401, 429]
        limited = await client.post("/api/tokens", json={"name": "x", "password": "whatever1"})
        assert limited.json()["code"] == "rate_limited"
        # other paths are not throttled by the login limit
        assert (await client.get("/schema/openapi.json")).status_code == 200


async def test_requests_are_rate_limited_per_account(processes: Processes) -> None:
    gateway = await start_gateway(processes, SPADES_RATE_PER_MINUTE="6")
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as client:
        token = await register_and_login(client, "fay")
        auth = {"Authorization": f"Bearer {token}"}
        # the address limit (6) has 2 used by register and login; the account's has none used
        codes = [(await client.get("/api/me", headers=auth)).status_code for _ in range(5)]
        assert codes == [200, 200, 200, 200, 429]


async def test_ops_probes_answer_and_sigterm_stops_the_gateway(
    gateway: GatewayProcess, processes: Processes
) -> None:
    async with httpx.AsyncClient(timeout=30) as client:
        ready = await client.get(f"http://127.0.0.1:{gateway.ops_port}/readyz")
        assert ready.status_code == 200, ready.text
    gateway.proc.send_signal(signal.SIGTERM)
    assert gateway.proc.wait(timeout=30) == 0, processes.log(gateway.proc)
