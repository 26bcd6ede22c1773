"""`POST /api/transcripts` on games played through the real gateway, table and relay: a
finished game's exported transcript replays to the game's own events and final state; a game
in progress exports no hidden card and its transcript replays nothing; what is replayed is the
text alone, never the log."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import msgspec
import pytest

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from services.gateway.http.games import MAX_TRANSCRIPT_BYTES
from services.records import transcript as tx
from tests.gateway.conftest import register_and_login
from tests.gateway.hidden import secret_cards, states
from tests.gateway.test_ws_play import start_platform
from tests.gateway.wsclient import WsClient
from tests.infra import Processes
from tests.shared import SLOW_TURNS, unique_name

WORD_CARD = re.compile(r"\b((?:[2-9TJQKA][CDHS])|LJ|BJ)\b")
TEXT = {"Content-Type": "text/plain; charset=utf-8"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def practice(http: httpx.AsyncClient, token: str, rules: dict[str, Any]) -> str:
    opened = await http.post("/api/practice", json={"rules": rules}, headers=bearer(token))
    assert opened.status_code == 201, opened.text
    game_id: str = opened.json()["game_id"]
    return game_id


@pytest.mark.shared_platform(**SLOW_TURNS)  # names of its own (tests/shared.py)
async def test_a_finished_game_round_trips_and_a_live_one_replays_nothing(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    # the live game waits for its player: no timer plays for him while the test looks at it
    gateway = await start_platform(processes, **SLOW_TURNS)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        token = await register_and_login(http, unique_name("scribe"))
        rules = {"target": 200, "nil_value": 50, "blind_nil_deficit": 0}
        done_id = await practice(http, token, rules)
        live_id = await practice(http, token, {})
        done, live = WsClient(gateway.ws_url, token), WsClient(gateway.ws_url, token)
        await done.connect()
        await live.connect()
        await asyncio.wait_for(
            asyncio.gather(done.play(done_id), live.play(live_id, until_seq=40)), 600
        )

        # the finished game: export -> import gives its events and final state, face up
        stored = await event_store.read(stream_of(done_id))
        assert isinstance(REGISTRY.decode(stored[-1]), wire.GameFinished)
        text = (await http.get(f"/api/games/{done_id}/transcript")).text
        assert not re.search(r"seed -?\d", text)
        answer = await http.post("/api/transcripts", content=text.encode(), headers=TEXT)
        assert answer.status_code == 200, answer.text
        replay = answer.json()
        events = (await http.get(f"/api/games/{done_id}/events")).json()
        assert len(events) == len(stored)
        assert replay["events"] == [
            {k: v for k, v in e.items() if k != "recorded_at"} for e in events
        ]
        final = (await http.get(f"/api/games/{done_id}/state")).json()
        assert replay["state"] == final
        assert final["face_up"] is True
        assert replay["game_id"] == done_id
        assert {k: replay["rules"][k] for k in rules} == rules
        assert '"seed"' not in answer.text  # the deck seed; the revealed server seed is public
        # and the log's own events, the seed aside, are what the text reads back to
        read = tx.parse(text)
        logged = [REGISTRY.decode(s) for s in stored]
        assert [msgspec.to_builtins(e) for e in read.events] == [
            {
                **msgspec.to_builtins(e),
                # the secrets of the start stay out of a transcript (the reveal has the seed)
                **({"seed": 0, "server_seed": ""} if isinstance(e, wire.GameStarted) else {}),
            }
            for e in logged
        ]

        # the game in progress: its transcript shows nothing hidden, and replays nothing
        live_stored = await event_store.read(stream_of(live_id))
        truth = states(live_stored)[len(live_stored)]
        live_text = (await http.get(f"/api/games/{live_id}/transcript")).text
        assert not set(WORD_CARD.findall(live_text)) & secret_cards(truth, -1)
        refused = await http.post("/api/transcripts", content=live_text.encode(), headers=TEXT)
        assert refused.status_code == 400
        assert refused.json()["code"] == "face_down"
        assert not set(WORD_CARD.findall(refused.text)) & secret_cards(truth, -1)

        # the live game's id on the finished game's text: the text is replayed, not the log
        forged = text.replace(done_id, live_id)
        assert forged != text
        answer = await http.post("/api/transcripts", content=forged.encode(), headers=TEXT)
        assert answer.status_code == 200, answer.text
        assert answer.json()["game_id"] == live_id
        assert answer.json()["events"][1:] == replay["events"][1:]
        assert answer.json()["state"] == {**replay["state"], "game_id": live_id}
        live_deal = next(
            e for e in map(REGISTRY.decode, live_stored) if isinstance(e, wire.HandDealt)
        )
        shown_deal = answer.json()["events"][2]["event"]
        assert shown_deal["hands"] != [list(h) for h in live_deal.hands]

        # bad texts: a code and the line, nothing else
        lines = text.splitlines()
        cut = "\n".join(lines[: len(lines) // 2]) + "\n"
        truncated = await http.post("/api/transcripts", content=cut.encode(), headers=TEXT)
        assert (truncated.status_code, truncated.json()["code"]) == (400, "truncated")
        assert truncated.json()["message"].startswith(f"line {len(lines) // 2 + 1}: ")
        bad = lines[:]
        bad[1] = re.sub(r"rules: .*", "rules: jokers=maybe", bad[1])
        wrong = await http.post("/api/transcripts", content="\n".join(bad).encode(), headers=TEXT)
        assert (wrong.status_code, wrong.json()["code"]) == (400, "invalid_ruleset")
        assert wrong.json()["message"].startswith("line 2: ")
        binary = await http.post("/api/transcripts", content=b"\xff\xfe\x00", headers=TEXT)
        assert (binary.status_code, binary.json()["code"]) == (400, "malformed")
        huge = b"#" * (MAX_TRANSCRIPT_BYTES + 1)
        too_big = await http.post("/api/transcripts", content=huge, headers=TEXT)
        assert (too_big.status_code, too_big.json()["code"]) == (413, "too_large")
        schema = (await http.get("/schema/openapi.json")).json()
        body = schema["paths"]["/api/transcripts"]["post"]["requestBody"]
        assert list(body["content"]) == ["text/plain"]
        assert json.dumps(body).count(str(MAX_TRANSCRIPT_BYTES)) == 1
        await done.close()
        await live.close()
