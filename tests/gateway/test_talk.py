"""Table talk, blocks, mutes, reports and follows through the real gateway and table
(issue 29): partner talk reaches the partner and nobody else, a spectator and a blocked pair
are refused with their own codes, a mute silences one speaker for one listener, a reported
message reaches `spades reports` with its context, followed players show online at their
table; and blocked accounts are never seated together in the ranked queue."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from typing import Any

import asyncpg
import httpx
import msgspec
from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.conftest import register_and_login, start_gateway
from tests.gateway.wsclient import WsClient
from tests.infra import REPO, Processes, eventually

PLAYERS = ("ann", "bob", "cyd", "dan")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _open_casual(nc: NATS, subjects: Subjects, *, free_text_chat: bool) -> str:
    body = msgspec.json.encode(
        wire.OpenCasual(players=PLAYERS, command_id=uuid.uuid4(), free_text_chat=free_text_chat)
    )
    for _ in range(600):  # the table service may still be starting
        try:
            msg = await nc.request(subjects.table_open(), body, timeout=5)
        except Exception:
            await asyncio.sleep(0.1)
            continue
        reply = msgspec.json.decode(msg.data, type=wire.TableReply)
        if reply.code != "unavailable":
            assert reply.ok, reply
            return reply.game_id
        await asyncio.sleep(0.1)
    raise AssertionError("the table never opened the game")


async def _answer(client: WsClient, command_id: str) -> dict[str, Any]:
    """Return the ack or error answering ``command_id``."""
    while True:
        body = await client.recv(60)
        if body["type"] in ("ack", "error") and body.get("command_id") == command_id:
            return body


async def _event_at(client: WsClient, game_id: str, seq: int) -> dict[str, Any]:
    """Return the event message number ``seq`` this client received (waiting for it)."""
    while True:
        for got in client.events(game_id):
            if got["seq"] == seq:
                return dict(got["event"])
        await client.recv(60)


async def test_talk_reaches_whom_it_is_for_and_blocks_mutes_and_reports_work(
    processes: Processes,
    nc: NATS,
    subjects: Subjects,
    event_store: PostgresEventStore,
    service_env: dict[str, str],
) -> None:
    processes.start(
        "-m",
        "services.tools.cli",
        "serve",
        "table",
        env={
            "SPADES_OPS_PORT": "0",
            "SPADES_CONTRIBUTION_SECONDS": "0",
            "SPADES_TURN_SECONDS": "600",
        },
    )
    gateway = await start_gateway(processes, SPADES_PRESENCE_SECONDS="0.2")
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = {name: await register_and_login(http, name) for name in (*PLAYERS, "eve")}
        game_id = await _open_casual(nc, subjects, free_text_chat=True)
        clients = {name: WsClient(gateway.ws_url, token) for name, token in tokens.items()}
        for name, client in clients.items():
            await client.connect()
            await client.send({"type": "subscribe", "game_id": game_id})
            subscribed = await client.expect("subscribed")
            assert subscribed["role"] == ("spectator" if name == "eve" else "seat")
        ann, bob, cy, di, eve = (clients[n] for n in (*PLAYERS, "eve"))

        # partner talk: ann (N) to cy (S); bob, di and the spectator are told nothing
        said = await ann.command(game_id, {"type": "Say", "preset": "sure", "n": 4})
        ack = await _answer(ann, said)
        assert ack["type"] == "ack", ack
        seq = ack["seq"]
        talked = {
            "type": "Talked",
            "seat": 0,
            "to": "partner",
            "preset": "sure",
            "n": 4,
            "text": "",
            "spectators": False,
        }
        assert await _event_at(cy, game_id, seq) == {**talked, "hearers": [2]}
        assert await _event_at(ann, game_id, seq) == {**talked, "hearers": [2]}
        for other in (bob, di):
            assert await _event_at(other, game_id, seq) == {"type": "TalkWithheld"}

        # refusals, each with its own code, and nothing appended
        before = len(await event_store.read(stream_of(game_id)))
        refused = {
            "talk_not_seated": (eve, {"type": "Say", "preset": "sure", "n": 2}),
            "talk_wrong_phase": (bob, {"type": "Say", "preset": "nice"}),
            "talk_unknown_preset": (bob, {"type": "Say", "preset": "i_hold_the_ace"}),
            "talk_too_long": (bob, {"type": "Say", "text": "x" * 201}),
            "malformed": (bob, {"type": "Say", "preset": "nil", "apart": ["ann"]}),
        }
        for code, (who, command) in refused.items():
            answer = await _answer(who, await who.command(game_id, command))
            assert answer["type"] == "error", (code, answer)
            assert answer["code"] == code, (code, answer)
        assert len(await event_store.read(stream_of(game_id))) == before

        # cy blocks ann: partner talk either way is "not available"; table talk skips them
        blocked = await http.put("/api/social/blocks/ann", headers=bearer(tokens["cyd"]))
        assert blocked.status_code == 204, blocked.text
        for who in (ann, cy):
            answer = await _answer(
                who, await who.command(game_id, {"type": "Say", "preset": "nil"})
            )
            assert answer["code"] == "talk_unavailable", answer
            assert "block" not in answer["message"]
        # the blocked one cannot see the block, nor follow the blocker
        assert (await http.get("/api/social/blocks", headers=bearer(tokens["ann"]))).json() == {
            "players": []
        }
        follow = await http.put("/api/social/following/cyd", headers=bearer(tokens["ann"]))
        assert follow.status_code == 409
        assert follow.json()["code"] == "not_available"

        # di mutes bob: bob's table talk reaches ann and cy, not di; bob is not told
        muted = await http.put(f"/api/social/mutes/{game_id}/bob", headers=bearer(tokens["dan"]))
        assert muted.status_code == 204, muted.text
        ack = await _answer(
            bob, await bob.command(game_id, {"type": "Say", "text": "hi <b>all</b>"})
        )
        assert ack["type"] == "ack", ack
        hello = ack["seq"]
        heard = await _event_at(ann, game_id, hello)
        assert heard["text"] == "hi <b>all</b>"  # kept as text: the client never renders HTML
        assert heard["hearers"] == [0, 2]
        assert await _event_at(di, game_id, hello) == {"type": "TalkWithheld"}

        # a report of that message goes to the operator's queue with its context
        report = await http.post(
            "/api/social/reports",
            json={"player_id": "bob", "reason": "spam", "game_id": game_id, "seq": hello},
            headers=bearer(tokens["dan"]),
        )
        assert report.status_code == 201, report.text
        not_said = await http.post(
            "/api/social/reports",
            json={"player_id": "bob", "reason": "spam", "game_id": game_id, "seq": 1},
            headers=bearer(tokens["dan"]),
        )
        assert not_said.json()["code"] == "not_a_message"
        unknown = await http.post(
            "/api/social/reports",
            json={"player_id": "bob", "reason": "ugly"},
            headers=bearer(tokens["dan"]),
        )
        assert unknown.status_code == 400  # not one of the four reasons
        cli = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "services.tools.cli",
            "reports",
            "--json",
            cwd=REPO,
            env={**os.environ, **service_env},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(cli.communicate(), 60)
        assert cli.returncode == 0, err.decode()
        [queued] = json.loads(out)
        assert queued["report"]["reporter"] == "dan"
        assert queued["report"]["reported"] == "bob"
        reported = [line for line in queued["talk"] if line["reported"]]
        assert reported == [
            {
                "seq": hello,
                "player_id": "bob",
                "to": "table",
                "said": "hi <b>all</b>",
                "reported": True,
            }
        ]
        assert any(line["said"] == "I can take 4" for line in queued["talk"])  # context

        # follows and presence: eve follows bob, sees him online at his table
        assert (
            await http.put("/api/social/following/bob", headers=bearer(tokens["eve"]))
        ).status_code == 204

        async def bob_at_table() -> dict[str, Any] | None:
            found = await http.get("/api/social/following", headers=bearer(tokens["eve"]))
            players = found.json()["players"]
            return players[0] if players and players[0]["game_id"] == game_id else None

        seen = await eventually(bob_at_table, within=30, what="bob online at his table")
        assert seen == {"player_id": "bob", "name": "bob", "online": True, "game_id": game_id}

        # everything said is in the game's log, in order
        logged = [REGISTRY.decode(s) for s in await event_store.read(stream_of(game_id))]
        talk = [e for e in logged if isinstance(e, wire.Talked)]
        assert [(e.seat, e.preset or e.text) for e in talk] == [(0, "sure"), (1, "hi <b>all</b>")]
        for client in clients.values():
            await client.close()


async def test_blocked_accounts_are_never_seated_together_in_the_ranked_queue(
    processes: Processes, pg_pool: asyncpg.Pool
) -> None:
    processes.start(
        "-m", "services.tools.cli", "serve", "matchmaking", env={"SPADES_OPS_PORT": "0"}
    )
    # eight accounts from one machine: fair play off, so only the blocks keep anyone apart
    gateway = await start_gateway(processes, SPADES_FAIRPLAY_DAYS="0")
    names = [f"pl{i}" for i in range(8)]
    pairs = [("pl0", "pl1"), ("pl3", "pl2"), ("pl4", "pl5"), ("pl7", "pl6")]  # blocker, blocked
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        tokens = {name: await register_and_login(http, name) for name in names}
        for blocker, blocked in pairs:
            answer = await http.put(
                f"/api/social/blocks/{blocked}", headers=bearer(tokens[blocker])
            )
            assert answer.status_code == 204, answer.text
        for name in names:  # in this order the first four could sit together, but for the blocks
            while True:
                queued = await http.post(
                    "/api/queue", json={"ladder": "standard"}, headers=bearer(tokens[name])
                )
                if queued.status_code != 503:
                    break
                await asyncio.sleep(0.2)
            assert queued.status_code == 200, queued.text

        async def all_seated() -> list[asyncpg.Record] | None:
            rows = await pg_pool.fetch("SELECT player_id, match_id FROM matchmaking_live_players")
            return rows if len(rows) == 8 else None

        rows = await eventually(all_seated, within=90, what="two tables to form")
    tables: dict[str, set[str]] = {}
    for row in rows:
        tables.setdefault(row["match_id"], set()).add(row["player_id"])
    assert len(tables) == 2
    for seated in tables.values():
        for blocker, blocked in pairs:
            assert not {blocker, blocked} <= seated, (blocker, blocked, seated)
