"""Every log line of work in progress names its request (and game); no line leaks a card.

Real processes with JSON logs: a table service running a practice game (commands applied and
refused, turn timers, bots taking an abandoned seat over), and a gateway answering HTTP
requests. Every line they write is parsed; lines outside any unit of work are only the
process's own lifecycle.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

import httpx
import msgspec
import pytest

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.pgstore import PostgresEventStore
from services.runtime.logs import REQUEST_ID_HEADER
from tests.infra import Processes, eventually
from tests.services.opskit import log_records, start_gateway
from tests.services.tablekit import TableClient, move, my_turn

pytestmark = pytest.mark.infra

SERVE = ("-m", "services.tools.cli", "serve")
JSON_DEBUG = {"SPADES_OPS_PORT": "0", "SPADES_LOG_LEVEL": "debug", "SPADES_LOG_FORMAT": "json"}
# What a process may log outside any unit of work: starting, claiming, stopping (and a
# library's warnings at import time, through the py.warnings logger).
LIFECYCLE = {
    "service started",
    "ops server listening",
    "partitions claimed",
    "service stopping",
    "service stopped",
    "gateway listening",
    # a test gateway's start says it hashes at a test's cost (tests/gateway/conftest.py)
    "SPADES_TEST_CHEAP_HASHING: passwords hashed at a test's cost, never deploy",
}
UVICORN_LIFECYCLE = re.compile(
    r"(Started|Finished) server process|Waiting for application (startup|shutdown)"
    r"|Application (startup|shutdown) complete|Uvicorn running on|Shutting down"
)
HIDDEN_KEYS = {"hand", "hands", "seed", "deck", "stock", "cards"}
CARD = re.compile(r"""["'][2-9TJQKA][CDHS]["']""")


def check_every_line(records: list[dict[str, Any]]) -> None:
    """Assert the request/game id rules on every record of one process."""
    for record in records:
        if "request_id" not in record:
            event, logger = record.get("event", ""), record.get("logger")
            lifecycle = (
                event in LIFECYCLE
                or logger == "py.warnings"
                or (logger == "uvicorn.error" and UVICORN_LIFECYCLE.match(event) is not None)
            )
            assert lifecycle, f"a line outside any unit of work: {record}"
            assert "game_id" not in record, f"a game line without its request: {record}"
        assert not HIDDEN_KEYS & set(record), f"hidden information logged: {record}"


def check_no_card_or_seed(text: str, seed: int | str, hands: list[tuple[str, ...]]) -> None:
    assert str(seed) not in text, "the deck seed is in the log"
    for line in text.splitlines():
        assert len(CARD.findall(line)) <= 1, f"cards in a log line: {line}"
    for hand in hands:
        for rendering in (json.dumps(list(hand)), json.dumps(list(hand), separators=(",", ":"))):
            assert rendering not in text, "a dealt hand is in the log"


async def test_table_lines_carry_the_command_or_timer_and_the_game(
    processes: Processes, nc: Any, subjects: Any, event_store: PostgresEventStore
) -> None:
    # Short turns: the person's seat times out, is abandoned, and bots finish the game.
    table = processes.start(*SERVE, "table", env={**JSON_DEBUG, "SPADES_TURN_SECONDS": "0.3"})
    client = TableClient(nc, subjects, "ann")
    opened = await client.open_practice(target=150)
    assert opened.ok, opened
    game_id = opened.game_id
    assert game_id is not None

    unknown = str(uuid.uuid4())
    refused_id = uuid.uuid4()
    refused = await client.request(
        subjects.table_command(unknown),
        msgspec.json.encode(
            wire.SubmitCommand(
                game_id=unknown,
                player_id="ann",
                command_id=refused_id,
                command=wire.PlaceBid(tricks=3),
            )
        ),
    )
    assert refused.code == "unknown_game"

    async def anns_turn() -> wire.SeatViewWire | None:
        view = await client.view(game_id)
        return view if my_turn(view) else None

    played_id = uuid.uuid4()
    view = await eventually(anns_turn, within=60, what="ann's turn")
    played = await client.send(game_id, move(view), command_id=played_id)

    async def over() -> bool:
        return (await client.view(game_id)).phase == "over"

    await eventually(over, within=240, interval=0.2, what="the bots finish the game")
    await asyncio.sleep(0)  # the log is flushed line by line (PYTHONUNBUFFERED)

    text = processes.log(table)
    records = log_records(text)
    check_every_line(records)
    by_event: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_event.setdefault(record["event"], []).append(record)
    for event in ("game opened", "command rejected", "turn timed out", "seat acted for"):
        assert by_event.get(event), f"no {event!r} line: the flow did not run as meant"
        for record in by_event[event]:
            assert record.get("game_id"), record
            assert record.get("request_id"), record
    opened_line = by_event["game opened"][0]
    assert opened_line["game_id"] == game_id
    (rejected,) = [r for r in by_event["command rejected"] if r["game_id"] == unknown]
    assert rejected["request_id"] == str(refused_id)
    timer_ids = {r["request_id"] for r in by_event["seat acted for"]}
    assert all(rid.startswith(f"timer:{game_id}:") for rid in timer_ids)
    assert len(timer_ids) > 10, "each timer or bot move has its own request id"
    # ann's command was applied, or refused because her timer had just fired: either way
    # its line names the command id and the game.
    (line,) = [r for r in records if r.get("request_id") == str(played_id)]
    assert line["event"] == ("command applied" if played.ok else "command rejected"), line
    assert line["game_id"] == game_id

    stored = [msgspec.json.decode(s.data) for s in await event_store.read(stream_of(game_id))]
    (started,) = [e for e in stored if "seed" in e]
    hands = [tuple(h) for e in stored if "hands" in e for h in e["hands"]]
    assert hands
    # a committed game (docs/FAIRNESS.md) deals from its 64-hex-digit server seed (the legacy
    # deck seed is then 0): that secret must stay out of the log, the commitment may be in it
    assert started["seed"] == 0
    assert len(started["server_seed"]) == 64
    check_no_card_or_seed(text, started["server_seed"], hands)


async def test_gateway_requests_get_an_id_echoed_and_on_every_line(processes: Processes) -> None:
    proc, port = await start_gateway(processes, **JSON_DEBUG)
    chosen = "lb-7f3a.2:trace"
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        account = {"name": f"u{uuid.uuid4().hex[:8]}", "password": "a good password"}
        answers = {
            "register": await http.post("/api/accounts", json=account),
            "login": await http.post("/api/tokens", json=account),
            "bad login": await http.post("/api/tokens", json={**account, "password": "no"}),
            "missing": await http.get("/api/nothing-here"),
            "chosen": await http.get("/schema/openapi.json", headers={REQUEST_ID_HEADER: chosen}),
            "spaces": await http.get("/api/nothing", headers={REQUEST_ID_HEADER: "a b\tc"}),
            "quotes": await http.get("/api/nothing", headers={REQUEST_ID_HEADER: '"x","y":1'}),
            "long": await http.get("/api/nothing", headers={REQUEST_ID_HEADER: "z" * 500}),
        }
    assert answers["register"].status_code == 201
    assert answers["login"].status_code == 200
    assert answers["bad login"].status_code == 401
    ids = {what: answer.headers[REQUEST_ID_HEADER] for what, answer in answers.items()}
    assert ids["chosen"] == chosen, "a sane incoming id is kept"
    for what in ("register", "login", "bad login", "missing", "spaces", "quotes", "long"):
        assert re.fullmatch(r"[0-9a-f]{32}", ids[what]), (what, ids[what])
    assert len(set(ids.values())) == len(ids), "every request has its own id"

    def handled() -> list[dict[str, Any]]:
        lines = [r for r in log_records(processes.log(proc)) if r["event"] == "request handled"]
        return lines if len(lines) >= len(answers) else []

    lines = await eventually(handled, within=30, what="a line per request")
    logged = {r["request_id"]: r for r in lines}
    for what, answer in answers.items():
        line = logged[ids[what]]
        assert line["status"] == answer.status_code, (what, line)
        assert line["path"] == answer.request.url.path
    records = log_records(processes.log(proc))
    check_every_line(records)
    assert "a good password" not in processes.log(proc)
