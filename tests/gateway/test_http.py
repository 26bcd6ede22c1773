"""The HTTP API against the real gateway, table, relay, matchmaking and rating processes."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from tests.gateway.conftest import GatewayProcess, register_and_login, start_gateway
from tests.gateway.hidden import CARD, secret_cards, states
from tests.gateway.wsclient import WsClient
from tests.infra import Processes
from tests.shared import SLOW_TURNS, unique_name

WORD_CARD = re.compile(r"\b((?:[2-9TJQKA][CDHS])|LJ|BJ)\b")


async def platform(processes: Processes, **env: str) -> GatewayProcess:
    """Start relay, table, matchmaking, rating and a bot worker with ``env``, then the gateway;
    return the gateway (a `shared_platform` test's: its world's, of the same settings)."""
    if processes.shared is not None:
        processes.shared.check_settings(env)
        shared: GatewayProcess = await processes.shared.gateway()
        return shared
    for name in ("relay", "table", "matchmaking", "rating", "bots"):
        processes.start(
            "-m", "services.tools.cli", "serve", name, env={"SPADES_OPS_PORT": "0", **env}
        )
    return await start_gateway(processes)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_a_practice_game_is_public_while_played_and_face_up_once_finished(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    # "early" never plays: with the default timer his seat would be abandoned (and the bots
    # would finish his game) after three timeouts, before this test looks at it at the end
    gateway = await platform(processes, **SLOW_TURNS)
    solo, early_name = unique_name("solo"), unique_name("early")
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        token = await register_and_login(http, solo)
        assert (await http.post("/api/practice", json={})).status_code == 401
        bad = await http.post(
            "/api/practice", json={"rules": {"players": 7}}, headers=bearer(token)
        )
        assert bad.status_code == 400
        assert bad.json()["code"] == "invalid_ruleset"
        # a game's rules are public from its first event, not only from its first trick
        house = {"target": 300, "nil_value": 50, "bags": False}
        early_token = await register_and_login(http, early_name)
        opened_early = await http.post(
            "/api/practice", json={"rules": house}, headers=bearer(early_token)
        )
        assert opened_early.status_code == 201, opened_early.text
        early_game = opened_early.json()["game_id"]
        early = (await http.get(f"/api/games/{early_game}")).json()
        assert early["seq"] == 0  # nothing public yet: the human seat has not bid
        assert {k: early["rules"][k] for k in house} == house

        opened = await http.post("/api/practice", json={"rules": {}}, headers=bearer(token))
        assert opened.status_code == 201, opened.text
        game_id = opened.json()["game_id"]

        # play a while over the WebSocket, then look at the game from outside mid-play
        client = WsClient(gateway.ws_url, token)
        await client.connect()
        await asyncio.wait_for(client.play(game_id, until_seq=60), 120)
        await client.close()
        # the bots play on until it is solo's turn; after that nothing moves until he does
        while True:
            own = (await http.get(f"/api/games/{game_id}/view", headers=bearer(token))).json()
            if own["turn"] == own["seat"] == 0:
                break
            await asyncio.sleep(0.1)
        stored = await event_store.read(stream_of(game_id))
        assert len(stored) == own["version"]
        truth = states(stored)
        assert not isinstance(REGISTRY.decode(stored[-1]), wire.GameFinished)

        live = {g["game_id"]: g for g in (await http.get("/api/games")).json()}
        assert {game_id, early_game} <= live.keys()
        assert live[game_id]["finished"] is False
        assert live[game_id]["players"][0] == solo
        summary = (await http.get(f"/api/games/{game_id}")).json()
        assert summary["finished"] is False
        assert summary["players"][0] == solo
        assert summary["seq"] <= len(stored)
        events = (await http.get(f"/api/games/{game_id}/events")).json()
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert events
        assert events[-1]["type"] in ("TrickWon", "GameFinished")  # a trick behind
        for e in events:
            text = json.dumps(e)
            assert "seed" not in text
            assert not set(CARD.findall(text)) & secret_cards(truth[len(stored)], -1), text
        state = (await http.get(f"/api/games/{game_id}/state", params={"at": 40})).json()
        assert state["face_up"] is False
        assert state["hands"] == []
        text = (await http.get(f"/api/games/{game_id}/transcript")).text
        assert "hidden" in text
        assert not re.search(r"seed -?\d", text)
        assert not set(WORD_CARD.findall(text)) & secret_cards(truth[len(stored)], -1)
        own = (await http.get(f"/api/games/{game_id}/view", headers=bearer(token))).json()
        assert own["seat"] == 0
        assert not set(own["hand"]) & secret_cards(truth[own["version"]], 0)
        other = await register_and_login(http, unique_name("nosy"))
        refused = await http.get(f"/api/games/{game_id}/view", headers=bearer(other))
        assert refused.status_code == 403
        assert refused.json()["code"] == "not_your_seat"

        # resume where the client stopped and play to the end
        last = client.last_seq(game_id)
        client = WsClient(gateway.ws_url, token)
        await client.connect()
        await asyncio.wait_for(client.play(game_id, last_seq=last), 300)
        seqs = [e["seq"] for e in client.events(game_id)]
        assert seqs == list(range(last + 1, last + 1 + len(seqs)))

        stored = await event_store.read(stream_of(game_id))
        finished = REGISTRY.decode(stored[-1])
        assert isinstance(finished, wire.GameFinished)
        events = (await http.get(f"/api/games/{game_id}/events")).json()
        assert len(events) == len(stored)
        dealt = next(e for e in events if e["type"] == "HandDealt")
        assert len(dealt["event"]["hands"]) == 4  # face up
        # the deck seed never; the committed server seed only in its reveal, once the game is over
        assert all('"seed"' not in json.dumps(e) for e in events)
        revealed = [e for e in events if "server_seed" in json.dumps(e)]
        assert [e["type"] for e in revealed] == ["SeedRevealed"]
        assert revealed[0]["seq"] == len(events) - 1
        lines = (await http.get(f"/api/games/{game_id}/events.ndjson")).text.splitlines()
        assert [json.loads(line)["seq"] for line in lines] == [e["seq"] for e in events]
        state = (await http.get(f"/api/games/{game_id}/state", params={"at": 3})).json()
        assert state["face_up"] is True
        assert [len(h) for h in state["hands"]] == [13, 13, 13, 13]
        summary = (await http.get(f"/api/games/{game_id}")).json()
        assert summary["finished"] is True
        assert summary["scores"] == list(finished.scores)
        text = (await http.get(f"/api/games/{game_id}/transcript")).text
        assert not re.search(r"seed -?\d", text)
        assert "game over" in text
        assert "N " in text
        listed = (await http.get(f"/api/players/{solo}/games")).json()
        assert [(g["game_id"], g["finished"]) for g in listed] == [(game_id, True)]
        # a finished game is listed with its result and score; practice moves no rating
        assert listed[0]["winner"] == finished.winner
        assert listed[0]["scores"] == list(finished.scores)
        assert listed[0]["reason"] == finished.reason
        assert listed[0]["rating"] is None
        live_now = [g["game_id"] for g in (await http.get("/api/games")).json()]
        assert game_id not in live_now  # finished: no longer listed to watch
        assert early_game in live_now
        missing = await http.get("/api/games/00000000-0000-0000-0000-000000000000")
        assert missing.status_code == 404
        assert missing.json()["code"] == "unknown_game"


async def test_queue_ladder_and_profile_go_through_the_services(processes: Processes) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        token = await register_and_login(http, "queuer")
        bot = await register_and_login(http, "robot", bot=True)

        async def join(who: str, ladder: str = "standard") -> httpx.Response:
            while True:  # matchmaking may still be starting
                answer = await http.post("/api/queue", json={"ladder": ladder}, headers=bearer(who))
                if answer.status_code != 503:
                    return answer
                await asyncio.sleep(0.2)

        joined = await join(token)
        assert joined.status_code == 200, joined.text
        assert joined.json()["code"] == "queued"
        again = await join(token)
        assert (again.status_code, again.json()["code"]) == (409, "already_queued")
        status = (await http.get("/api/queue", headers=bearer(token))).json()
        assert status["code"] == "queued"
        assert status["ladder"] == "standard"
        # the ladders and their queues are public: no token needed
        ladders = {x["ladder"]: x for x in (await http.get("/api/ladders")).json()}
        assert ladders["standard"]["queue_size"] == 1
        assert ladders["heads-up"]["queue_size"] == 0
        assert (ladders["standard"]["players"], ladders["heads-up"]["players"]) == (4, 2)
        assert ladders["standard"]["rules"]["target"] == 500
        left = await http.delete("/api/queue", headers=bearer(token))
        assert (left.status_code, left.json()["code"]) == (200, "left")
        robot = await join(bot)
        assert (robot.status_code, robot.json()["code"]) == (403, "bot_not_allowed")
        unknown = await join(token, "no-such-ladder")
        assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_ladder")
        assert (await http.get("/api/queue")).status_code == 401

        async def read(path: str, **params: object) -> httpx.Response:
            while True:
                answer = await http.get(path, params=params)  # type: ignore[arg-type]
                if answer.status_code != 503:
                    return answer
                await asyncio.sleep(0.2)

        ladder = await read("/api/ladders/standard", limit=10)
        assert ladder.status_code == 200, ladder.text
        assert ladder.json()["players"] == []
        assert (await read("/api/ladders/nope")).json()["code"] == "unknown_ladder"
        assert (await read("/api/ladders/standard", limit=0)).status_code == 400
        profile = await read("/api/players/queuer")
        assert profile.status_code == 200, profile.text
        assert profile.json()["bot"] is False
        assert profile.json()["ratings"] == {}
        robot_profile = (await read("/api/players/bot:robot")).json()
        assert robot_profile["bot"] is True
        assert (await read("/api/players/nobody")).status_code == 404
