"""A ranked game from queue to ratings, through the real services as separate processes."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import msgspec
from nats.aio.client import Client as NATS

import engine
from events.contracts import game as wire
from events.contracts import matchmaking as mm
from events.contracts import rating
from events.contracts.game import game_id_of_match, stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.runtime import ops
from tests.infra import Processes
from tests.services.tablekit import TableClient, play_together

SERVICES = ("relay", "table", "matchmaking", "rating")
PLAYERS = ("ann", "bob", "cy", "di")


async def ask(nc: NATS, subject: str, body: msgspec.Struct) -> mm.Reply:
    msg = await nc.request(subject, msgspec.json.encode(body), timeout=10)
    return msgspec.json.decode(msg.data, type=mm.Reply)


async def matched(nc: NATS, subjects: Subjects, player: str) -> str:
    """Poll the player's queue status until he is matched; return the match id."""
    while True:
        status = await ask(nc, subjects.matchmaking_status(), mm.QueueStatus(player_id=player))
        if status.match_id:
            return status.match_id
        await asyncio.sleep(0.1)


async def test_four_players_queue_play_a_ranked_game_and_their_ratings_move(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    procs = {
        name: processes.start(
            "-m", "services.tools.cli", "serve", name, env={"SPADES_OPS_PORT": "0"}
        )
        for name in SERVICES
    }
    for player in PLAYERS:
        joined = await asyncio.wait_for(_join_when_up(nc, subjects, player), timeout=60)
        assert joined.ok, joined

    match_ids = {await asyncio.wait_for(matched(nc, subjects, p), 60) for p in PLAYERS}
    assert len(match_ids) == 1
    game_id = game_id_of_match(match_ids.pop())
    clients = [TableClient(nc, subjects, p) for p in PLAYERS]
    await clients[0].wait_for_game(game_id)
    await asyncio.wait_for(play_together(clients, game_id), 600)

    events = [REGISTRY.decode(s) for s in await event_store.read(stream_of(game_id))]
    opened, finished = events[0], events[-1]
    assert isinstance(opened, wire.TableOpened)
    assert opened.rated
    assert sorted(opened.players) == sorted(PLAYERS)
    assert opened.bots == ()
    assert isinstance(finished, wire.GameFinished)
    replayed = engine.replay([e for e in map(wire.to_engine, events) if e is not None])
    assert replayed.scores == finished.scores
    assert replayed.winner == finished.winner

    async def rated() -> rating.RatingsUpdated:
        while True:
            stored = await event_store.read(f"rating-{game_id}")
            if stored:
                update = REGISTRY.decode(stored[0])
                assert isinstance(update, rating.RatingsUpdated)
                return update
            await asyncio.sleep(0.2)

    update = await asyncio.wait_for(rated(), 60)
    moves = {c.player_id: c.mu_after - c.mu_before for c in update.changes}
    assert set(moves) == set(PLAYERS)
    for seat, player in enumerate(opened.players):
        won = seat % 2 == finished.winner
        assert (moves[player] > 0) == won, (player, moves)

    # the players are free again once matchmaking has seen the game finish
    async def rejoin() -> mm.Reply:
        while True:
            reply = await ask(
                nc, subjects.matchmaking_join(), mm.JoinQueue(player_id="ann", ladder="standard")
            )
            if reply.code != "in_game":
                return reply
            await asyncio.sleep(0.2)

    again = await asyncio.wait_for(rejoin(), 60)
    assert again.ok, again

    # every service exposes the platform's metrics, and the ones it owns have moved
    scraped = {name: scrape(processes.log(proc)) for name, proc in procs.items()}
    for name, text in scraped.items():
        missing = [
            m for m in ops.metric_names() if f"# TYPE {m.removesuffix('_total')}" not in text
        ]
        assert not missing, (name, missing)
    assert sample(scraped["table"], "spades_commands_handled_total") > 0
    assert sample(scraped["table"], "spades_event_append_seconds_count") > 0
    assert sample(scraped["matchmaking"], "spades_matchmaking_wait_seconds_count") >= 4
    assert sample(scraped["rating"], 'spades_rating_updates_total{outcome="applied"}') >= 1


def scrape(log: str) -> str:
    """Return /metrics of the service whose log says where its ops server listens."""
    port = next(
        entry["port"]
        for entry in (json.loads(line) for line in log.splitlines() if line.startswith("{"))
        if entry.get("event") == "ops server listening"
    )
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{ops.METRICS}", timeout=5) as answer:
        return str(answer.read().decode())


def sample(text: str, name: str) -> float:
    """Return the sum of the samples of ``name`` (a metric, with or without labels)."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and line[len(name)] in (" {" if "{" not in name else " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def _join_when_up(nc: NATS, subjects: Subjects, player: str) -> mm.Reply:
    while True:
        try:
            return await ask(
                nc, subjects.matchmaking_join(), mm.JoinQueue(player_id=player, ladder="standard")
            )
        except Exception:  # matchmaking not listening yet
            await asyncio.sleep(0.2)
