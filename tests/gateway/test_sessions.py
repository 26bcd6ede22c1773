"""Sessions and refresh tokens, against the real gateway process on real PostgreSQL.

A login opens a session; `POST /api/tokens/refresh` trades its refresh token for a new access
token and the next refresh token; a refresh token that was already traded revokes its session,
unless it is the one the last renewal replaced, presented within the grace
(SPADES_SESSION_REUSE_SECONDS); `DELETE /api/tokens` ends it. An expired session, or a grace
run out, is made by moving `expires_at` or `rotated_at` into the past in the database.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import uuid
from typing import Any

import asyncpg
import httpx
import jwt
import pytest

from services.gateway.auth import ISSUER
from tests.gateway.conftest import SECRET, start_gateway
from tests.infra import Processes
from tests.shared import unique_name

# the tests taking the `http` fixture run on the worker's shared platform (tests/shared.py):
# each signs up names of its own and reads only its own sessions' rows
shared = pytest.mark.shared_platform

PASSWORD = "a good password"
TOKEN_FORM = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[\w-]{43}")


async def sign_up(http: httpx.AsyncClient, name: str, *, bot: bool = False) -> dict[str, Any]:
    """Register ``name``, log in, and return the login's answer."""
    made = await http.post("/api/accounts", json={"name": name, "password": PASSWORD, "bot": bot})
    assert made.status_code == 201, made.text
    got = await http.post("/api/tokens", json={"name": name, "password": PASSWORD})
    assert got.status_code == 200, got.text
    body: dict[str, Any] = got.json()
    return body


async def refresh(http: httpx.AsyncClient, token: str) -> httpx.Response:
    return await http.post("/api/tokens/refresh", json={"refresh_token": token})


async def logout(http: httpx.AsyncClient, token: str) -> httpx.Response:
    return await http.request("DELETE", "/api/tokens", json={"refresh_token": token})


def refused(answer: httpx.Response, code: str) -> None:
    assert answer.status_code == 401, answer.text
    assert answer.json()["code"] == code, answer.text
    assert answer.json()["message"]


async def me(http: httpx.AsyncClient, access_token: str) -> httpx.Response:
    return await http.get("/api/me", headers={"Authorization": f"Bearer {access_token}"})


@shared
async def test_a_login_opens_a_session_and_a_refresh_renews_it(
    http: httpx.AsyncClient, pg_pool: asyncpg.Pool
) -> None:
    ann = unique_name("Ann")
    login = await sign_up(http, ann)
    assert TOKEN_FORM.fullmatch(login["refresh_token"]), login
    assert login["refresh_expires_in"] == 30 * 86_400  # SPADES_SESSION_DAYS

    renewed = await refresh(http, login["refresh_token"])
    assert renewed.status_code == 200, renewed.text
    body = renewed.json()
    assert set(body) == set(login)  # the same answer as a login
    assert body["player_id"] == ann.lower()
    assert body["bot"] is False
    assert body["token_type"] == "bearer"
    assert TOKEN_FORM.fullmatch(body["refresh_token"])
    assert body["refresh_token"] != login["refresh_token"]
    # the same session: its id is kept, its secret replaced
    assert body["refresh_token"].split(".")[0] == login["refresh_token"].split(".")[0]
    claims = jwt.decode(body["access_token"], SECRET, algorithms=["HS256"], issuer=ISSUER)
    assert claims["sub"] == ann.lower()
    assert claims["exp"] - claims["iat"] == body["expires_in"]
    answer = await me(http, body["access_token"])
    assert answer.status_code == 200, answer.text
    assert answer.json()["name"] == ann

    # and again with the next one: a session renews as often as it is used
    again = await refresh(http, body["refresh_token"])
    assert again.status_code == 200, again.text
    row = await pg_pool.fetchrow("SELECT * FROM gateway_sessions WHERE player_id = $1", ann.lower())
    assert row["player_id"] == ann.lower()
    assert row["revoked_at"] is None
    assert row["last_used_at"] > row["created_at"]


@shared
async def test_a_bot_keeps_its_bot_flag_through_a_refresh(http: httpx.AsyncClient) -> None:
    robo = unique_name("Robo")
    login = await sign_up(http, robo, bot=True)
    renewed = await refresh(http, login["refresh_token"])
    assert renewed.status_code == 200, renewed.text
    assert renewed.json()["player_id"] == f"bot:{robo.lower()}"
    assert renewed.json()["bot"] is True
    claims = jwt.decode(renewed.json()["access_token"], SECRET, algorithms=["HS256"], issuer=ISSUER)
    assert claims["bot"] is True


@shared
async def test_reusing_a_refresh_token_revokes_the_whole_session(
    http: httpx.AsyncClient, pg_pool: asyncpg.Pool
) -> None:
    bob = unique_name("bob")
    login = await sign_up(http, bob)
    other = await http.post("/api/tokens", json={"name": bob, "password": PASSWORD})
    assert other.status_code == 200
    first = login["refresh_token"]
    second = (await refresh(http, first)).json()["refresh_token"]
    await pg_pool.execute(
        "UPDATE gateway_sessions SET rotated_at = now() - interval '31 seconds'"
        " WHERE player_id = $1",
        bob,
    )

    refused(await refresh(http, first), "refresh_invalid")  # a copy of a traded token: theft
    refused(await refresh(http, second), "refresh_invalid")  # so the session is over
    session_id = uuid.UUID(first.split(".")[0])
    revoked = await pg_pool.fetchval(
        "SELECT revoked_at FROM gateway_sessions WHERE session_id = $1", session_id
    )
    assert revoked is not None
    # another login's session is its own
    assert (await refresh(http, other.json()["refresh_token"])).status_code == 200


@shared
async def test_the_token_a_renewal_replaced_renews_within_the_grace_and_no_older_one(
    http: httpx.AsyncClient, pg_pool: asyncpg.Pool
) -> None:
    """Two tabs, or a retry whose answer was lost: the replaced token is the owner's own."""
    login = await sign_up(http, unique_name("fay"))
    first = login["refresh_token"]
    second = (await refresh(http, first)).json()["refresh_token"]
    again = await refresh(http, first)  # the sibling tab, a moment late
    assert again.status_code == 200, again.text
    third = again.json()["refresh_token"]
    assert len({first, second, third}) == 3
    assert (await me(http, again.json()["access_token"])).status_code == 200
    # the replaced one is now `second`: it is taken, `first` (two renewals old) is theft
    fourth = await refresh(http, second)
    assert fourth.status_code == 200, fourth.text
    refused(await refresh(http, first), "refresh_invalid")
    refused(await refresh(http, fourth.json()["refresh_token"]), "refresh_invalid")  # revoked


@shared
async def test_two_refreshes_racing_with_one_token_both_renew_the_session(
    http: httpx.AsyncClient, pg_pool: asyncpg.Pool
) -> None:
    cyd = unique_name("cyd")
    login = await sign_up(http, cyd)
    answers = await asyncio.gather(*(refresh(http, login["refresh_token"]) for _ in range(2)))
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    secrets = {a.json()["refresh_token"].split(".")[1] for a in answers}
    # serialised by the row lock: one renewal replaced the login's secret, the other (taking
    # it within the grace) replaced that one; the session holds the last, and the one before
    row = await pg_pool.fetchrow(
        "SELECT secret_hash, previous_hash, revoked_at FROM gateway_sessions WHERE player_id = $1",
        cyd,
    )
    assert row["revoked_at"] is None
    assert {bytes(row["secret_hash"]), bytes(row["previous_hash"])} == {
        hashlib.sha256(secret.encode()).digest() for secret in secrets
    }
    (current,) = [
        a.json()["refresh_token"]
        for a in answers
        if hashlib.sha256(a.json()["refresh_token"].split(".")[1].encode()).digest()
        == bytes(row["secret_hash"])
    ]
    assert (await refresh(http, current)).status_code == 200


@shared
async def test_an_expired_session_is_refused_as_expired(
    http: httpx.AsyncClient, pg_pool: asyncpg.Pool
) -> None:
    dia = unique_name("dia")
    login = await sign_up(http, dia)
    await pg_pool.execute(
        "UPDATE gateway_sessions SET expires_at = now() - interval '1 second' WHERE player_id = $1",
        dia,
    )
    refused(await refresh(http, login["refresh_token"]), "refresh_expired")
    refused(await refresh(http, login["refresh_token"]), "refresh_expired")  # and stays so
    # a new login opens a new session (and clears the ended one away)
    again = await http.post("/api/tokens", json={"name": dia, "password": PASSWORD})
    assert (await refresh(http, again.json()["refresh_token"])).status_code == 200
    assert (
        await pg_pool.fetchval("SELECT count(*) FROM gateway_sessions WHERE player_id = $1", dia)
        == 1
    )
    refused(await refresh(http, login["refresh_token"]), "refresh_invalid")  # now unknown


@shared
async def test_logout_ends_the_session_and_is_idempotent(http: httpx.AsyncClient) -> None:
    eve = unique_name("eve")
    login = await sign_up(http, eve)
    other = (await http.post("/api/tokens", json={"name": eve, "password": PASSWORD})).json()
    renewed = (await refresh(http, login["refresh_token"])).json()

    out = await logout(http, renewed["refresh_token"])
    assert out.status_code == 204, out.text
    assert out.content == b""
    refused(await refresh(http, renewed["refresh_token"]), "refresh_invalid")
    assert (await logout(http, renewed["refresh_token"])).status_code == 204  # again: the same
    assert (await logout(http, f"{uuid.uuid4()}.{'x' * 43}")).status_code == 204  # nobody's
    assert (await logout(http, "not a token")).status_code == 204
    # the access token lives out its few minutes; the other login's session is untouched
    assert (await me(http, renewed["access_token"])).status_code == 200
    assert (await refresh(http, other["refresh_token"])).status_code == 200


@shared
async def test_garbled_tokens_and_bodies_are_refused_with_a_code(http: httpx.AsyncClient) -> None:
    login = await sign_up(http, unique_name("fay"))
    session_id, secret = login["refresh_token"].split(".")
    for token in (
        "garbage",
        session_id,
        f"{session_id}.",
        f"{session_id}.{secret}x",
        f"{session_id}.{'A' * 43}",  # the right session, a secret it never had
        f"{session_id.upper()}.{secret}",
        f"{{{session_id}}}.{secret}",
        f"{uuid.uuid4()}.{secret}",
        login["access_token"][:256],
        "\x00" * 80,
    ):
        refused(await refresh(http, token), "refresh_invalid")
    for body in ({}, {"refresh_token": 5}, {"refresh_token": ""}, {"refresh_token": "x" * 300}):
        answer = await http.post("/api/tokens/refresh", json=body)
        assert answer.status_code == 400, (body, answer.text)
        assert answer.json()["code"] == "malformed"
    unknown_field = {"refresh_token": login["refresh_token"], "extra": 1}
    for method in ("POST", "DELETE"):
        path = "/api/tokens/refresh" if method == "POST" else "/api/tokens"
        for content in (b"not json", b"", b"[]"):
            answer = await http.request(
                method, path, content=content, headers={"Content-Type": "application/json"}
            )
            assert answer.status_code == 400, (method, content, answer.text)
            assert answer.json()["code"] == "malformed"
        answer = await http.request(method, path, json=unknown_field)
        assert answer.status_code == 400, answer.text
        assert answer.json()["code"] == "malformed"


@shared
async def test_the_database_never_holds_a_secret(
    http: httpx.AsyncClient, pg_pool: asyncpg.Pool
) -> None:
    gus = unique_name("gus")
    login = await sign_up(http, gus)
    renewed = (await refresh(http, login["refresh_token"])).json()
    current = renewed["refresh_token"].split(".")[1]
    rows = await pg_pool.fetch("SELECT * FROM gateway_sessions WHERE player_id = $1", gus)
    assert len(rows) == 1
    assert rows[0]["secret_hash"] == hashlib.sha256(current.encode()).digest()
    for token in (login["refresh_token"], renewed["refresh_token"]):
        secret = token.split(".")[1]
        for row in rows:
            for column, value in row.items():
                as_bytes = value if isinstance(value, bytes) else str(value).encode()
                for piece in (secret[:12], secret[12:24], secret[24:36], secret[-8:]):
                    assert piece.encode() not in as_bytes, column
                    assert piece not in as_bytes.hex(), column


async def test_refreshes_are_rate_limited_like_logins(processes: Processes) -> None:
    gateway = await start_gateway(processes, SPADES_AUTH_RATE_PER_MINUTE="3")
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        token = f"{uuid.uuid4()}.{'x' * 43}"
        codes = [(await refresh(client, token)).status_code for _ in range(4)]
        assert codes == [401, 401, 401, 429]
        limited = await refresh(client, token)
        assert limited.json()["code"] == "rate_limited"


@shared
async def test_the_openapi_document_describes_sessions(http: httpx.AsyncClient) -> None:
    document = (await http.get("/schema/openapi.json")).json()
    paths = document["paths"]
    assert {"post", "delete"} <= set(paths["/api/tokens"])
    assert "post" in paths["/api/tokens/refresh"]
    schemas = document["components"]["schemas"]
    assert {"refresh_token", "refresh_expires_in"} <= set(schemas["Token"]["properties"])
    assert schemas["Refresh"]["required"] == ["refresh_token"]
    refresh_401 = paths["/api/tokens/refresh"]["post"]["responses"]["401"]["description"]
    assert "refresh_invalid" in refresh_401
    assert "refresh_expired" in refresh_401
