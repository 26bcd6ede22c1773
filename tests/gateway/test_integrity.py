"""Issue 13, the gateway's share: what an attacker tried with the public API, each answered
with its code (the items' numbers are the issue's)."""

from __future__ import annotations

import asyncio
import time
import uuid

import asyncpg
import httpx
import pytest
import websockets
from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.gateway.auth import Tokens
from services.gateway.config import ConfigError, parse_proxies
from tests.gateway.conftest import SECRET, GatewayProcess, register_and_login, start_gateway
from tests.gateway.test_sessions import PASSWORD, refresh, refused, sign_up
from tests.gateway.test_ws_play import open_casual, seated, start_platform
from tests.gateway.wsclient import WsClient
from tests.infra import Processes
from tests.services.tablekit import TableClient
from tests.shared import SLOW_TURNS, unique_name

DEEP = "[" * 1000 + "]" * 1000
JSON = {"content-type": "application/json"}


def malformed(answer: httpx.Response) -> None:
    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "malformed", answer.text


# -- 2. hints ---------------------------------------------------------------------------------


def test_only_a_practice_table_may_give_hints() -> None:
    def opened(ladder: str, rated: bool) -> wire.TableOpened:
        return wire.TableOpened(game_id="g", ladder=ladder, rated=rated, players=("a",) * 4)

    assert wire.hints_allowed(opened("practice", False))
    assert not wire.hints_allowed(opened("standard", True))
    assert not wire.hints_allowed(opened("casual", False))
    assert not wire.hints_allowed(opened("practice", True))  # a rated game is never practice


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_hints_asked_at_a_table_of_people_get_no_suggestion(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    gateway = await start_platform(processes, **SLOW_TURNS)
    names = [unique_name(n) for n in ("hno", "hea", "hso", "hwe")]
    clients = await seated(gateway, names)
    game_id = await open_casual(nc, subjects, names)
    turn = (await TableClient(nc, subjects, names[0]).view(game_id)).turn
    on_turn = clients[turn]
    await on_turn.send({"type": "subscribe", "game_id": game_id, "hints": True})
    snapshot = await on_turn.expect("view")
    assert snapshot["view"].get("suggestion") is None
    your_turn = await on_turn.expect("your_turn")
    assert your_turn["legal"]
    assert "suggestion" not in your_turn
    # HTTP, the seat's own view: no suggestion either
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        view = await http.get(
            f"/api/games/{game_id}/view", headers={"authorization": f"Bearer {on_turn.token}"}
        )
    assert view.status_code == 200, view.text
    assert view.json().get("suggestion") is None
    # while a practice table's seat still gets its suggestion
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        opened = await http.post(
            "/api/practice", json={}, headers={"authorization": f"Bearer {on_turn.token}"}
        )
    assert opened.status_code == 201, opened.text
    practice = opened.json()["game_id"]
    await on_turn.send({"type": "subscribe", "game_id": practice, "hints": True})
    while True:
        body = await on_turn.expect("your_turn", 60)
        if body["game_id"] == practice:
            break
    assert body["suggestion"] in body["legal"]


# -- 4. proxies ---------------------------------------------------------------------------------


def test_trusted_proxies_are_addresses_or_ranges() -> None:
    assert parse_proxies("") == ()
    assert parse_proxies(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8") == (
        "10.0.0.0/8",
        "192.168.1.7/32",
        "fd00::/8",
    )
    with pytest.raises(ConfigError, match="ingress"):
        parse_proxies("10.0.0.0/8,ingress")


async def test_forwarded_for_is_believed_only_from_a_configured_proxy(
    processes: Processes,
) -> None:
    async def wrong_logins(gateway_url: str) -> list[int]:
        async with httpx.AsyncClient(base_url=gateway_url, timeout=30) as http:
            return [
                (
                    await http.post(
                        "/api/tokens",
                        json={"name": "nobody", "password": "wrong"},
                        headers={"x-forwarded-for": f"203.0.113.{i}"},
                    )
                ).status_code
                for i in range(8)
            ]

    untrusting = await start_gateway(processes, SPADES_AUTH_RATE_PER_MINUTE="5")
    codes = await wrong_logins(untrusting.url)
    assert codes[:5] == [401] * 5
    assert codes[5:] == [429] * 3  # one address, whatever the header says
    trusting = await start_gateway(
        processes, SPADES_AUTH_RATE_PER_MINUTE="5", SPADES_TRUSTED_PROXIES="127.0.0.1"
    )
    assert await wrong_logins(trusting.url) == [401] * 8  # a proxy's word is taken


# -- 5, 6, 7, 10: crafted HTTP input --------------------------------------------------------------


async def test_a_deeply_nested_body_is_malformed_on_every_route(
    processes: Processes, pg_pool: asyncpg.Pool
) -> None:
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        token = await register_and_login(http, "deep")
        auth = {"authorization": f"Bearer {token}", **JSON}
        bodies = {
            "/api/accounts": '{"name": "deeper", "password": @}',
            "/api/tokens": '{"name": @, "password": "x"}',
            "/api/tokens/refresh": '{"refresh_token": @}',
            "/api/practice": '{"rules": {"target": @}}',
            "/api/queue": '{"ladder": @}',
        }
        for path, body in bodies.items():
            malformed(await http.post(path, content=body.replace("@", DEEP), headers=auth))
            malformed(await http.post(path, content=DEEP, headers=auth))
        malformed(await http.request("DELETE", "/api/tokens", content=DEEP, headers=auth))
        assert (await http.get("/api/me", headers=auth)).status_code == 200
    log = processes.log(gateway.proc)
    assert "RecursionError" not in log
    assert "Traceback" not in log
    assert await pg_pool.fetchval("SELECT count(*) FROM gateway_accounts") == 1


async def test_a_control_character_in_a_path_is_malformed(processes: Processes) -> None:
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        for path in (
            "/api/players/a%00b",
            "/api/players/a%00b/games",
            "/api/ladders/a%00b",
            "/api/games/a%0Ab",
            "/api/players/ann%0A",
        ):
            malformed(await http.get(path))
        assert (await http.get("/api/players/nobody/games")).json() == []
    log = processes.log(gateway.proc)
    assert "CharacterNotInRepertoire" not in log
    assert "Traceback" not in log


async def test_a_name_is_matched_to_its_very_end(
    processes: Processes, pg_pool: asyncpg.Pool
) -> None:
    gateway = await start_gateway(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        await register_and_login(http, "ann")
        for name in ("ann\n", "bob\n", "\nbob", "bob\r"):
            made = await http.post("/api/accounts", json={"name": name, "password": PASSWORD})
            malformed(made)
        login = await http.post("/api/tokens", json={"name": "ann\n", "password": PASSWORD})
        assert login.status_code == 401
    assert await pg_pool.fetchval("SELECT array_agg(name) FROM gateway_accounts") == ["ann"]


@pytest.mark.shared_platform  # a name of its own (tests/shared.py)
async def test_token_answers_are_not_cached_and_logins_are_json_only(
    gateway: GatewayProcess,
) -> None:
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        cache = unique_name("cache")
        login = await sign_up(http, cache)
        got = await http.post("/api/tokens", json={"name": cache, "password": PASSWORD})
        renewed = await refresh(http, login["refresh_token"])
        for answer in (got, renewed):
            assert answer.status_code == 200, answer.text
            assert answer.headers["cache-control"] == "no-store"
            assert answer.headers["pragma"] == "no-cache"
        # what a foreign page's form or text/plain fetch sends, without a preflight
        body = '{"name": "' + cache + '", "password": "' + PASSWORD + '"}'
        for content_type in ("text/plain", "application/x-www-form-urlencoded", ""):
            answer = await http.post(
                "/api/tokens", content=body, headers={"content-type": content_type}
            )
            assert answer.status_code == 415, answer.text
            assert answer.json()["code"] == "unsupported_media_type"
        charset = await http.post(
            "/api/tokens", content=body, headers={"content-type": "application/json; charset=utf-8"}
        )
        assert charset.status_code == 200, charset.text


# -- 8. a wrong secret beside a known session id ---------------------------------------------


@pytest.mark.shared_platform  # a name of its own (tests/shared.py)
async def test_a_refresh_with_a_wrong_secret_revokes_nothing(
    gateway: GatewayProcess, pg_pool: asyncpg.Pool
) -> None:
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        login = await sign_up(http, unique_name("owner"))
        session_id = login["refresh_token"].split(".")[0]
        for guess in ("A" * 43, "b" * 43):
            refused(await refresh(http, f"{session_id}.{guess}"), "refresh_invalid")
        revoked = await pg_pool.fetchval(
            "SELECT revoked_at FROM gateway_sessions WHERE session_id = $1", uuid.UUID(session_id)
        )
        assert revoked is None
        assert (await refresh(http, login["refresh_token"])).status_code == 200


# -- 9, 10: expired tokens and the auth timeout over the WebSocket -------------------------------


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_an_expired_token_can_only_authenticate_again(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    gateway = await start_platform(processes, **SLOW_TURNS)
    names = [unique_name(n) for n in ("xno", "xea", "xso", "xwe")]
    await seated(gateway, names)
    game_id = await open_casual(nc, subjects, names)
    client = WsClient(gateway.ws_url, "")
    await client.connect(auth=False)
    token, expires = Tokens(SECRET, 6).issue(names[0], False)
    await client.send({"type": "auth", "token": token})
    await client.expect("welcome")
    while time.time() <= expires:  # wait out the token's life (it cannot be issued expired)
        await client.send({"type": "ping"})
        await client.expect("pong")
        await asyncio.sleep(0.2)
    for message in (
        {"type": "subscribe", "game_id": game_id},
        {"type": "view", "game_id": game_id},
        {"type": "command", "game_id": game_id, "command_id": str(uuid.uuid4()), "command": {}},
    ):
        await client.send(message)
        error = await client.expect("error")
        assert error["code"] == "token_expired", error
    await client.send({"type": "ping"})
    await client.expect("pong")
    assert not [r for r in client.received if r.body["type"] in ("subscribed", "view")]
    fresh, _ = Tokens(SECRET, 900).issue(names[0], False)
    await client.send({"type": "auth", "token": fresh})
    await client.expect("welcome")
    await client.send({"type": "subscribe", "game_id": game_id})
    assert (await client.expect("subscribed"))["role"] == "seat"


@pytest.mark.shared_platform  # no account: one connection of its own
async def test_the_auth_timeout_closes_with_a_policy_code(gateway: GatewayProcess) -> None:
    client = WsClient(gateway.ws_url, "")
    await client.connect(auth=False)
    assert (await client.recv(20))["code"] == "auth_timeout"
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await client.recv(5)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1008


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_a_deeply_nested_frame_is_malformed_and_the_connection_kept(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    gateway = await start_platform(processes, **SLOW_TURNS)
    names = [unique_name(n) for n in ("dno", "dea", "dso", "dwe")]
    clients = await seated(gateway, names)
    game_id = await open_casual(nc, subjects, names)
    version = len(await event_store.read(stream_of(game_id)))
    client = clients[0]
    command_id = str(uuid.uuid4())
    for frame in (
        DEEP,
        f'{{"type": "subscribe", "game_id": {DEEP}}}',
        f'{{"type": {DEEP}}}',
        f'{{"type": "command", "game_id": "{game_id}", "command_id": "{command_id}",'
        f' "command": {{"type": {DEEP}}}}}',
    ):
        await client.send(frame)
        error = await client.expect("error")
        assert error["code"] == "malformed", error
    await client.send({"type": "ping"})
    await client.expect("pong")
    assert len(await event_store.read(stream_of(game_id))) == version
    assert "Traceback" not in processes.log(gateway.proc)


# -- 1. practice tables: bounded rules, a cap per account -------------------------------------


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_practice_tables_have_bounded_rules_and_a_cap_per_account(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    gateway = await start_platform(processes, **SLOW_TURNS)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        hoarder = unique_name("hoarder")
        token = await register_and_login(http, hoarder)
        auth = {"authorization": f"Bearer {token}"}
        endless = {"hand_cap": 1_000_000_000, "target": 1_000_000_000, "mercy": -1_000_000_000}
        refused_rules = await http.post("/api/practice", json={"rules": endless}, headers=auth)
        assert refused_rules.status_code == 400, refused_rules.text
        assert refused_rules.json()["code"] == "invalid_ruleset"
        assert "between" in refused_rules.json()["message"]

        command_ids = [str(uuid.uuid4()) for _ in range(20)]
        answers = await asyncio.gather(
            *(http.post("/api/practice", json={"command_id": c}, headers=auth) for c in command_ids)
        )
        codes = sorted(a.status_code for a in answers)
        assert codes == [201] * 3 + [409] * 17, [a.text for a in answers]
        assert {a.json()["code"] for a in answers if a.status_code == 409} == {"too_many_tables"}
        # a retry of an opened table still gets its game
        opened = [(c, a) for c, a in zip(command_ids, answers, strict=True) if a.status_code == 201]
        again = await http.post("/api/practice", json={"command_id": opened[0][0]}, headers=auth)
        assert again.status_code == 201, again.text
        assert again.json()["game_id"] == opened[0][1].json()["game_id"]
        games = (await http.get(f"/api/players/{hoarder}/games")).json()
        assert len(games) == 3
