"""Who may call what, against a real gateway process: the OpenAPI document is the contract.

A route whose operation declares the `BearerToken` security requirement answers 401 with the
reason of the token (`unauthenticated`, `token_invalid`, `token_expired`) before it reads its
body or asks a service; every other route answers a caller without a usable token as anyone
else, whatever his header says. The budget of an account is counted by the token's account,
from whichever address the requests come.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest

from services.gateway.auth import Tokens
from tests.gateway.conftest import SECRET, GatewayProcess, register_and_login, start_gateway
from tests.infra import Processes
from tests.shared import unique_name

TOKEN_CODES = {"unauthenticated", "token_invalid", "token_expired"}
SAMPLE = {
    "game_id": str(uuid.UUID(int=7)),
    "player_id": "nobody",
    "name": "nobody",
    "ladder": "standard",
    "month": "2001-01",
    "code": "NOBODY00",
    "event_id": str(uuid.UUID(int=7)),
}
"""A value for each path parameter of the document: names nothing, so nothing is changed."""

NEEDS_ACCOUNT = {
    ("GET", "/api/me"),
    ("POST", "/api/queue"),
    ("GET", "/api/queue"),
    ("DELETE", "/api/queue"),
    ("POST", "/api/practice"),
    ("GET", "/api/games/{game_id}/view"),
    ("POST", "/api/games/{game_id}/leave"),
    ("GET", "/api/practice/rules"),
    ("POST", "/api/practice/rules/check"),
    # friends' tables and rematches (#29)
    ("GET", "/api/friends"),
    ("POST", "/api/friends"),
    ("GET", "/api/friends/{code}"),
    ("POST", "/api/friends/{code}/join"),
    ("POST", "/api/friends/{code}/leave"),
    ("POST", "/api/friends/{code}/start"),
    ("POST", "/api/friends/{code}/swap"),
    ("GET", "/api/games/{game_id}/rematch"),
    ("POST", "/api/games/{game_id}/rematch"),
    # follows, blocks, mutes and reports (#29)
    ("GET", "/api/social/following"),
    ("PUT", "/api/social/following/{player_id}"),
    ("DELETE", "/api/social/following/{player_id}"),
    ("GET", "/api/social/blocks"),
    ("PUT", "/api/social/blocks/{player_id}"),
    ("DELETE", "/api/social/blocks/{player_id}"),
    ("GET", "/api/social/mutes/{game_id}"),
    ("PUT", "/api/social/mutes/{game_id}/{player_id}"),
    ("DELETE", "/api/social/mutes/{game_id}/{player_id}"),
    ("POST", "/api/social/reports"),
    # events (#31): the page and log are public (anyone checks the commitments)
    ("GET", "/api/events"),
    ("POST", "/api/events"),
    ("POST", "/api/events/{event_id}/join"),
    ("POST", "/api/events/{event_id}/leave"),
    ("POST", "/api/events/{event_id}/resume"),
    ("POST", "/api/events/{event_id}/start"),
}


def operations(document: dict[str, Any]) -> dict[tuple[str, str], bool]:
    """Return every (method, path template) of the document and whether it needs a token."""
    return {
        (method.upper(), path): {"BearerToken": []} in operation.get("security", [])
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }


def concrete(template: str) -> str:
    path = template
    for name, value in SAMPLE.items():
        path = path.replace(f"{{{name}}}", value)
    assert "{" not in path, f"no sample value for a parameter of {template}"
    return path


@pytest.mark.shared_platform  # names of its own; every request names nothing that exists
async def test_routes_need_a_token_exactly_where_the_document_says(
    gateway: GatewayProcess, http: httpx.AsyncClient
) -> None:
    document = (await http.get("/schema/openapi.json")).json()
    routes = operations(document)
    assert {route for route, secured in routes.items() if secured} == NEEDS_ACCOUNT
    assert len(routes) > len(NEEDS_ACCOUNT) + 10  # the public ones are listed too
    keyholder = unique_name("keyholder")
    await register_and_login(http, keyholder)
    forged, _ = Tokens("another-secret-" + "y" * 40, 900).issue(keyholder, False)
    expired, _ = Tokens(SECRET, 60).issue(keyholder, False, now=time.time() - 3600)
    callers: list[tuple[str, dict[str, str]]] = [
        ("unauthenticated", {}),
        ("unauthenticated", {"authorization": "Basic a2V5aG9sZGVyOnB3"}),  # not a bearer
        ("unauthenticated", {"authorization": "Bearer"}),  # no token after it
        ("token_invalid", {"authorization": f"Bearer {forged}"}),
        ("token_invalid", {"authorization": "Bearer junk"}),
        ("token_expired", {"authorization": f"Bearer {expired}"}),
    ]
    for (method, template), secured in sorted(routes.items()):
        for expected, headers in callers:
            body = {"json": {}} if method in ("POST", "DELETE") else {}
            answer = await http.request(method, concrete(template), headers=headers, **body)
            where = (method, template, expected, answer.status_code, answer.text[:200])
            if secured:
                assert answer.status_code == 401, where
                error = answer.json()
                assert set(error) == {"code", "message"}, where
                assert error["code"] == expected, where
                assert error["message"], where
            elif answer.status_code >= 400 and "json" in answer.headers["content-type"]:
                assert answer.json()["code"] not in TOKEN_CODES | {"internal"}, where
    # litestar's automatic OPTIONS answer says which methods a path takes, to anyone
    for template in {template for _, template in routes}:
        answer = await http.options(concrete(template))
        assert answer.status_code == 204, (template, answer.text)
        assert "OPTIONS" in answer.headers["allow"], template


@pytest.mark.shared_platform  # a name of its own (tests/shared.py)
async def test_a_route_that_needs_an_account_refuses_before_reading_the_body(
    http: httpx.AsyncClient,
) -> None:
    # neither the media type (415) nor the body's shape (400) is looked at for nobody
    for method, path in (("POST", "/api/practice"), ("POST", "/api/queue")):
        answer = await http.request(
            method, path, content=b"name=x", headers={"content-type": "text/plain"}
        )
        assert answer.status_code == 401, answer.text
        assert answer.json()["code"] == "unauthenticated"
    # and with a token, the body is judged as before
    token = await register_and_login(http, unique_name("bodyguard"))
    answer = await http.post(
        "/api/practice",
        content=b"name=x",
        headers={"content-type": "text/plain", "authorization": f"Bearer {token}"},
    )
    assert answer.status_code == 415, answer.text
    assert answer.json()["code"] == "unsupported_media_type"


async def test_an_accounts_budget_follows_its_token_across_addresses(
    processes: Processes,
) -> None:
    # behind a trusted proxy every request comes from a new address: only the account's
    # budget (3 a minute) can run out, and only for requests carrying its valid token
    gateway = await start_gateway(
        processes, SPADES_RATE_PER_MINUTE="3", SPADES_TRUSTED_PROXIES="127.0.0.1"
    )
    addresses = (f"198.51.100.{i}" for i in range(1, 200))

    def at(headers: dict[str, str] | None = None) -> dict[str, str]:
        return {"x-forwarded-for": next(addresses), **(headers or {})}

    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = {}
        for name in ("spender", "saver"):
            made = await http.post(
                "/api/accounts", json={"name": name, "password": "a good password"}, headers=at()
            )
            assert made.status_code == 201, made.text
            got = await http.post(
                "/api/tokens", json={"name": name, "password": "a good password"}, headers=at()
            )
            assert got.status_code == 200, got.text
            tokens[name] = {"authorization": f"Bearer {got.json()['access_token']}"}
        spent = [(await http.get("/api/me", headers=at(tokens["spender"]))).status_code]
        spent += [(await http.get("/api/ladders", headers=at(tokens["spender"]))).status_code]
        spent += [(await http.get("/api/me", headers=at(tokens["spender"]))).status_code]
        refused = await http.get("/api/me", headers=at(tokens["spender"]))
        assert spent == [200, 200, 200]
        assert refused.status_code == 429, refused.text
        assert refused.json()["code"] == "rate_limited"
        # another account, and callers without a usable token, have their own budgets
        assert (await http.get("/api/me", headers=at(tokens["saver"]))).status_code == 200
        for _ in range(4):
            anonymous = await http.get("/api/ladders", headers=at())
            assert anonymous.status_code == 200, anonymous.text
            junk = await http.get("/api/ladders", headers=at({"authorization": "Bearer junk"}))
            assert junk.status_code == 200, junk.text


async def test_an_unknown_name_costs_the_same_argon2_verification_as_a_wrong_password() -> None:
    """The hash verified when a name is unknown carries the hasher's own parameters, so a
    login with an unknown name costs what a wrong password costs (no timing tells them apart),
    and no password passes for an unknown account."""
    from services.gateway import auth

    real = await auth.hash_password("a password of someone")
    assert auth.DUMMY_HASH.split("$")[1:4] == real.split("$")[1:4]  # argon2id, version, m/t/p
    assert not auth._hasher.check_needs_rehash(auth.DUMMY_HASH)
    for guess in ("not a password of anyone", "a password of someone", "password"):
        assert not await auth.verify_password(None, guess)
    assert await auth.verify_password(real, "a password of someone")
