"""Friends' tables against the real gateway, table and bots: open with a code, join, swap,
start (or fill with bots); every refusal has its own code and changes nothing; two joins for
the last seat at once: exactly one wins."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from events.contracts import game as wire
from events.pgstore import PostgresEventStore
from tests.gateway.conftest import GatewayProcess, register_and_login, start_gateway
from tests.gateway.test_leave import bearer, logged
from tests.gateway.wsclient import WsClient
from tests.infra import Processes


async def platform(processes: Processes, **env: str) -> GatewayProcess:
    """Start relay, table and a bot worker, then a gateway with ``env``; return the gateway (a
    `shared_platform` test's: its world's, whose services all run with the same settings)."""
    if processes.shared is not None:
        processes.shared.check_settings(env)
        shared: GatewayProcess = await processes.shared.gateway()
        return shared
    for name in ("relay", "table", "bots"):
        processes.start("-m", "services.tools.cli", "serve", name, env={"SPADES_OPS_PORT": "0"})
    return await start_gateway(processes, **env)


async def tokens_of(http: httpx.AsyncClient, *names: str) -> dict[str, dict[str, str]]:
    """Register ``names``; return each one's Authorization header."""
    return {name: bearer(await register_and_login(http, name)) for name in names}


def refused(answer: httpx.Response, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code, answer.text


async def test_a_table_opens_fills_swaps_and_starts_and_refuses_what_it_must(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, "ann", "bob", "cyd", "dan")
        # bad openings: each its own code, nothing opened
        refused(
            await http.post("/api/friends", json={"rules": {"target": 5}}, headers=h["ann"]),
            400,
            "invalid_ruleset",
        )
        refused(
            await http.post("/api/friends", json={"seats": [{"kind": "host"}]}, headers=h["ann"]),
            400,
            "wrong_player_count",
        )
        refused(
            await http.post(
                "/api/friends", json={"seats": [{"kind": "open"}] * 4}, headers=h["ann"]
            ),
            400,
            "malformed",
        )
        nobody = [
            {"kind": "host"},
            {"kind": "player", "player_id": "zed"},
            {"kind": "open"},
            {"kind": "bot"},
        ]
        refused(
            await http.post("/api/friends", json={"seats": nobody}, headers=h["ann"]),
            404,
            "unknown_player",
        )
        refused(
            await http.post("/api/friends", json={"bot_level": "godlike"}, headers=h["ann"]),
            400,
            "unknown_bot_level",
        )
        refused(await http.post("/api/friends", json={}), 401, "unauthenticated")
        refused(
            await http.post("/api/friends", json={"unlisted": 0}, headers=h["ann"]),
            400,
            "malformed",
        )
        assert (await http.get("/api/friends", headers=h["ann"])).json()["mine"] == []

        seats = [
            {"kind": "host"},
            {"kind": "player", "player_id": "Bob"},
            {"kind": "open"},
            {"kind": "bot"},
        ]
        opened = await http.post(
            "/api/friends", json={"seats": seats, "options": {}}, headers=h["ann"]
        )
        assert opened.status_code == 201, opened.text
        table = opened.json()
        code = table["code"]
        assert len(code) == 8
        assert table["link"] == f"/#/join/{code}"
        assert table["status"] == "waiting"
        assert table["open_seats"] == 1
        assert [(s["kind"], s.get("player_id"), s["seated"]) for s in table["seats"]] == [
            ("reserved", "ann", True),
            ("reserved", "bob", False),
            ("open", None, False),
            ("bot", None, False),
        ]
        # the lobby lists it (public, a seat open), and it is bob's invitation
        listed = (await http.get("/api/friends", headers=h["dan"])).json()
        assert code in [t["code"] for t in listed["open"]]
        assert code in [
            t["code"] for t in (await http.get("/api/friends", headers=h["bob"])).json()["mine"]
        ]

        refused(await http.get("/api/friends/NOSUCHCD", headers=h["bob"]), 404, "unknown_code")
        refused(
            await http.post("/api/friends/NOSUCHCD/join", json={}, headers=h["bob"]),
            404,
            "unknown_code",
        )
        refused(
            await http.post(f"/api/friends/{code}/join", json={"seat": 1}, headers=h["cyd"]),
            409,
            "seat_reserved",
        )
        refused(
            await http.post(f"/api/friends/{code}/join", json={"seat": 3}, headers=h["cyd"]),
            409,
            "seat_not_open",
        )
        refused(
            await http.post(f"/api/friends/{code}/join", json={"seat": 9}, headers=h["cyd"]),
            400,
            "bad_seat",
        )
        refused(
            await http.post(f"/api/friends/{code}/start", json={}, headers=h["ann"]),
            409,
            "seats_not_filled",
        )

        # bob takes the seat kept for him (the code typed in small letters with a dash)
        typed = f"{code[:4].lower()}-{code[4:].lower()}"
        bob = await http.post(f"/api/friends/{typed}/join", json={}, headers=h["bob"])
        assert bob.status_code == 200, bob.text
        assert bob.json()["seats"][1]["seated"] is True
        again = await http.post(f"/api/friends/{code}/join", json={}, headers=h["bob"])
        assert again.status_code == 200
        assert again.json() == bob.json()
        cyd = await http.post(f"/api/friends/{code}/join", json={}, headers=h["cyd"])
        assert cyd.json()["seats"][2] == {
            "seat": 2,
            "kind": "open",
            "player_id": "cyd",
            "seated": True,
        }
        before = (await http.get(f"/api/friends/{code}", headers=h["dan"])).json()
        refused(
            await http.post(f"/api/friends/{code}/join", json={}, headers=h["dan"]),
            409,
            "table_full",
        )
        refused(
            await http.post(f"/api/friends/{code}/join", json={"seat": 2}, headers=h["dan"]),
            409,
            "seat_taken",
        )
        refused(
            await http.post(f"/api/friends/{code}/join", json={"seat": 2}, headers=h["bob"]),
            409,
            "already_seated",
        )
        refused(await http.post(f"/api/friends/{code}/leave", headers=h["dan"]), 409, "not_seated")
        refused(
            await http.post(f"/api/friends/{code}/swap", json={"seats": [0, 3]}, headers=h["bob"]),
            403,
            "not_host",
        )
        refused(
            await http.post(f"/api/friends/{code}/swap", json={"seats": [1, 1]}, headers=h["ann"]),
            400,
            "bad_seat",
        )
        refused(
            await http.post(f"/api/friends/{code}/start", json={}, headers=h["cyd"]),
            403,
            "not_host",
        )
        assert (await http.get(f"/api/friends/{code}", headers=h["dan"])).json() == before

        # cy gets up and sits again; the host swaps the bot to seat 0, himself to seat 3
        assert (await http.post(f"/api/friends/{code}/leave", headers=h["cyd"])).json()[
            "open_seats"
        ] == 1
        assert (
            await http.post(f"/api/friends/{code}/join", json={}, headers=h["cyd"])
        ).status_code == 200
        swapped = await http.post(
            f"/api/friends/{code}/swap", json={"seats": [0, 3]}, headers=h["ann"]
        )
        assert swapped.status_code == 200, swapped.text
        assert [s.get("player_id") for s in swapped.json()["seats"]] == [None, "bob", "cyd", "ann"]

        started = await http.post(f"/api/friends/{code}/start", json={}, headers=h["ann"])
        assert started.status_code == 200, started.text
        game_id = started.json()["game_id"]
        assert started.json()["status"] == "started"
        events = await logged(event_store, game_id)
        opening = events[0]
        assert isinstance(opening, wire.TableOpened)
        assert opening.players == ("bot:0", "bob", "cyd", "ann")
        assert opening.bots == (0,)
        assert not opening.rated
        assert not opening.unlisted
        live = [g["game_id"] for g in (await http.get("/api/games")).json()]
        assert game_id in live  # a public table's game is listed

        # a started table takes nobody and changes no more
        refused(
            await http.post(f"/api/friends/{code}/join", json={}, headers=h["dan"]),
            409,
            "table_started",
        )
        refused(
            await http.post(f"/api/friends/{code}/start", json={}, headers=h["ann"]),
            409,
            "table_started",
        )
        refused(
            await http.post(f"/api/friends/{code}/swap", json={"seats": [0, 1]}, headers=h["ann"]),
            409,
            "table_started",
        )
        again = await http.post(
            f"/api/friends/{code}/start", json={"fill_with_bots": True}, headers=h["ann"]
        )
        refused(again, 409, "table_started")
        assert len(await logged(event_store, game_id)) >= len(events)
        listed = (await http.get("/api/friends", headers=h["dan"])).json()
        assert code not in [t["code"] for t in listed["open"]]

        # everybody leaves the game: it ends, and the table answers it is finished
        for name in ("bob", "cyd", "ann"):
            gone = await http.post(f"/api/games/{game_id}/leave", json={}, headers=h[name])
            assert gone.status_code == 200, gone.text
        refused(
            await http.post(f"/api/friends/{code}/join", json={}, headers=h["dan"]),
            409,
            "table_finished",
        )


async def test_fill_with_bots_unlisted_and_closing(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, "eve", "fay")
        rules = {"players": 3}
        opened = await http.post(
            "/api/friends",
            json={"rules": rules, "unlisted": True, "bot_level": "strong"},
            headers=h["eve"],
        )
        assert opened.status_code == 201, opened.text
        code = opened.json()["code"]
        assert opened.json()["unlisted"] is True
        assert len(opened.json()["seats"]) == 3
        # unlisted: not in the lobby's open seats, but joinable by its code
        assert code not in [
            t["code"] for t in (await http.get("/api/friends", headers=h["fay"])).json()["open"]
        ]
        assert (
            await http.post(f"/api/friends/{code}/join", json={}, headers=h["fay"])
        ).status_code == 200
        started = await http.post(
            f"/api/friends/{code}/start", json={"fill_with_bots": True}, headers=h["eve"]
        )
        assert started.status_code == 200, started.text
        game_id = started.json()["game_id"]
        assert [s["kind"] for s in started.json()["seats"]] == ["reserved", "open", "bot"]
        opening = (await logged(event_store, game_id))[0]
        assert isinstance(opening, wire.TableOpened)
        assert opening.players == ("eve", "fay", "bot:2")
        assert opening.unlisted
        assert opening.bot_level == "strong"
        # an unlisted game is in no public list while it runs, and is watched by its id only
        assert game_id not in [g["game_id"] for g in (await http.get("/api/games")).json()]
        mine = (await http.get("/api/players/eve/games")).json()
        assert game_id not in [g["game_id"] for g in mine]
        # once over (everybody left), it is listed among their games
        for name in ("eve", "fay"):
            assert (
                await http.post(f"/api/games/{game_id}/leave", json={}, headers=h[name])
            ).status_code == 200
        mine = (await http.get("/api/players/eve/games")).json()
        assert game_id in [g["game_id"] for g in mine]

        # the host closes a waiting table: nobody may join it then
        second = (await http.post("/api/friends", json={}, headers=h["eve"])).json()["code"]
        closed = await http.post(f"/api/friends/{second}/leave", headers=h["eve"])
        assert closed.status_code == 200
        assert closed.json()["status"] == "closed"
        refused(
            await http.post(f"/api/friends/{second}/join", json={}, headers=h["fay"]),
            409,
            "table_closed",
        )


async def test_two_joins_for_the_last_seat_exactly_one_wins(processes: Processes) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, "gil", "hal", "ivy")
        for _ in range(4):
            seats = [{"kind": "host"}, {"kind": "open"}, {"kind": "bot"}, {"kind": "bot"}]
            table = (
                await http.post("/api/friends", json={"seats": seats}, headers=h["gil"])
            ).json()
            code = table["code"]
            # two clients, two connections, at once: for the one seat named, and for any seat
            for body in ({"seat": 1}, {}):
                answers = await asyncio.gather(
                    *(
                        http.post(f"/api/friends/{code}/join", json=body, headers=h[name])
                        for name in ("hal", "ivy")
                    )
                )
                won = [a for a in answers if a.status_code == 200]
                lost = [a for a in answers if a.status_code != 200]
                assert len(won) == 1, [a.text for a in answers]
                assert len(lost) == 1
                assert lost[0].status_code == 409
                assert lost[0].json()["code"] in ("seat_taken", "table_full")
                final = (await http.get(f"/api/friends/{code}", headers=h["gil"])).json()
                winner = final["seats"][1]["player_id"]
                assert winner in ("hal", "ivy")
                assert final["open_seats"] == 0
                # the loser is nowhere at the table
                assert sum(1 for s in final["seats"] if s.get("player_id") in ("hal", "ivy")) == 1
                assert (
                    await http.post(f"/api/friends/{code}/leave", headers=h[winner])
                ).status_code == 200
            await http.post(f"/api/friends/{code}/leave", headers=h["gil"])  # closed: a fresh one


async def test_a_flood_of_invitations_is_refused(processes: Processes) -> None:
    gateway = await platform(processes, SPADES_FRIENDS_TABLES_PER_HOUR="3")
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, "joe")
        codes = []
        for _ in range(3):
            made = await http.post("/api/friends", json={}, headers=h["joe"])
            assert made.status_code == 201, made.text
            codes.append(made.json()["code"])
            await http.post(f"/api/friends/{codes[-1]}/leave", headers=h["joe"])  # closed
        flood = await http.post("/api/friends", json={}, headers=h["joe"])
        refused(flood, 429, "too_many_invitations")
        assert flood.headers["Retry-After"]
        mine: list[Any] = (await http.get("/api/friends", headers=h["joe"])).json()["mine"]
        assert mine == []  # nothing was opened (the closed ones are no longer his)


async def test_waiting_tables_are_capped_and_a_retry_opens_nothing_new(
    processes: Processes,
) -> None:
    gateway = await platform(processes, SPADES_LIVE_TABLES_PER_ACCOUNT="2")
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, "kim")
        command_id = "8d3b3c52-4a49-4c1e-9a4e-0b2a1f9e7d11"
        first = await http.post("/api/friends", json={"command_id": command_id}, headers=h["kim"])
        retry = await http.post("/api/friends", json={"command_id": command_id}, headers=h["kim"])
        assert first.status_code == retry.status_code == 201
        assert first.json()["code"] == retry.json()["code"]
        assert (await http.post("/api/friends", json={}, headers=h["kim"])).status_code == 201
        refused(await http.post("/api/friends", json={}, headers=h["kim"]), 409, "too_many_tables")
        assert len((await http.get("/api/friends", headers=h["kim"])).json()["mine"]) == 2


async def test_seated_players_are_told_over_the_websocket(processes: Processes) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        tokens = {n: await register_and_login(http, n) for n in ("lux", "max")}
        h = {n: bearer(t) for n, t in tokens.items()}
        watcher = WsClient(gateway.ws_url, tokens["lux"], batch=True)
        await watcher.connect()
        code = (
            await http.post("/api/friends", json={"rules": {"players": 2}}, headers=h["lux"])
        ).json()["code"]
        told = await watcher.expect("friends_table")
        assert told["table"]["code"] == code
        await http.post(f"/api/friends/{code}/join", json={}, headers=h["max"])
        told = await watcher.expect("friends_table")
        assert told["table"]["seats"][1]["player_id"] == "max"
        started = await http.post(f"/api/friends/{code}/start", json={}, headers=h["lux"])
        told = await watcher.expect("friends_table")
        assert told["table"]["status"] == "started"
        assert told["table"]["game_id"] == started.json()["game_id"]
        await watcher.close()

        # a seat kept for max: he is told when the table opens, and when a bot takes his seat
        invited = WsClient(gateway.ws_url, tokens["max"], batch=True)
        await invited.connect()
        seats = [{"kind": "host"}, {"kind": "player", "player_id": "max"}]
        body = {"rules": {"players": 2}, "seats": seats}
        code = (await http.post("/api/friends", json=body, headers=h["lux"])).json()["code"]
        while (told := await invited.expect("friends_table"))["table"]["code"] != code:
            pass
        assert told["table"]["seats"][1] == {
            "seat": 1,
            "kind": "reserved",
            "player_id": "max",
            "seated": False,
        }
        await http.post(
            f"/api/friends/{code}/start", json={"fill_with_bots": True}, headers=h["lux"]
        )
        while (told := await invited.expect("friends_table"))["table"]["status"] != "started":
            pass
        assert told["table"]["code"] == code
        assert told["table"]["seats"][1]["kind"] == "bot"
        await invited.close()


async def test_blocks_keep_friends_tables_apart_and_the_host_may_allow_free_text(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, "gil", "hal", "ivy")
        assert (await http.put("/api/social/blocks/gil", headers=h["hal"])).status_code == 204
        # the host cannot keep a seat for whoever blocked him (or whom he blocked)...
        kept = [{"kind": "host"}, {"kind": "player", "player_id": "hal"}]
        kept += [{"kind": "open"}, {"kind": "bot"}]
        refused(
            await http.post("/api/friends", json={"seats": kept}, headers=h["gil"]),
            409,
            "not_available",
        )
        # ...nor can such a player sit at his table by its code; the answer names nobody
        opened = await http.post(
            "/api/friends", json={"options": {"free_text_chat": True}}, headers=h["gil"]
        )
        assert opened.status_code == 201, opened.text
        code = opened.json()["code"]
        answer = await http.post(f"/api/friends/{code}/join", json={}, headers=h["hal"])
        refused(answer, 409, "not_available")
        assert "gil" not in answer.json()["message"]
        assert "block" not in answer.json()["message"]
        table = (await http.get(f"/api/friends/{code}", headers=h["gil"])).json()
        assert all(s.get("player_id") != "hal" for s in table["seats"])  # nothing changed
        # someone else joins; the host's free-text choice reaches the game's opening
        joined = await http.post(f"/api/friends/{code}/join", json={}, headers=h["ivy"])
        assert joined.status_code == 200, joined.text
        started = await http.post(
            f"/api/friends/{code}/start", json={"fill_with_bots": True}, headers=h["gil"]
        )
        assert started.status_code == 200, started.text
        opening = (await logged(event_store, started.json()["game_id"]))[0]
        assert isinstance(opening, wire.TableOpened)
        assert opening.free_text_chat
        for options in ({"free_text": True}, {"free_text_chat": 0}):
            refused(
                await http.post("/api/friends", json={"options": options}, headers=h["gil"]),
                400,
                "malformed",
            )
