"""The matchmaking service as a real process against real PostgreSQL and NATS.

Players are scripted NATS requests, as the gateway sends them. What the service decided is read
back from its own log (the `queue-<ladder>` streams in PostgreSQL), and the announcement of a
match from JetStream, where a relay process publishes it for the table service.
"""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.error
import urllib.request
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from events.bus import ensure_streams
from events.contracts.game import GameFinished
from events.contracts.ladders import ruleset_of
from events.contracts.matchmaking import MatchFound, PlayerQueued
from events.contracts.rating import RatingChange, RatingsUpdated
from events.contracts.skill import Rating, win_probability
from events.envelope import REGISTRY, StoredEvent
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.matchmaking.app import GAMES_CONSUMER
from tests.infra import Processes, eventually
from tests.services.test_failover import ops_port

pytestmark = pytest.mark.infra

SERVICE = ("-m", "services.tools.cli", "serve")
OPS = {"SPADES_OPS_PORT": "0"}


def new_players(n: int) -> list[str]:
    return [f"player{i}-{uuid.uuid4().hex[:6]}" for i in range(n)]


async def ask(nc: NATS, subject: str, body: dict[str, Any] | bytes) -> dict[str, Any]:
    data = body if isinstance(body, bytes) else msgspec.json.encode(body)
    reply = await nc.request(subject, data, timeout=10)
    answer: dict[str, Any] = msgspec.json.decode(reply.data)
    return answer


async def join(
    nc: NATS, subjects: Subjects, player: str, ladder: str = "standard"
) -> dict[str, Any]:
    return await ask(nc, subjects.matchmaking_join(), {"player_id": player, "ladder": ladder})


async def answering(nc: NATS, subjects: Subjects) -> bool:
    """Return whether an active matchmaking instance answers requests."""
    try:
        await ask(nc, subjects.matchmaking_status(), {"player_id": "probe"})
    except Exception:
        return False
    return True


TWO_LADDERS = str(Path(__file__).with_name("two_ladders.toml"))
"""The ladders file of the tests that share ladders out between replicas (one each)."""


def start_matchmaking(processes: Processes, replica: str = "") -> subprocess.Popen[bytes]:
    env = {**OPS, "SPADES_REPLICA_ID": replica} if replica else OPS
    return processes.start(*SERVICE, "matchmaking", env={**env, "SPADES_LADDERS": TWO_LADDERS})


async def ladder_owners(pool: Any) -> dict[str, str]:
    """Return the replica holding each ladder's lease now, by ladder."""
    rows = await pool.fetch(
        "SELECT name, owner FROM spades_leases"
        " WHERE name LIKE 'matchmaking/%' AND owner IS NOT NULL AND expires_at > now()"
    )
    return {r["name"].removeprefix("matchmaking/"): r["owner"] for r in rows}


async def started(processes: Processes, nc: NATS, subjects: Subjects) -> subprocess.Popen[bytes]:
    proc = start_matchmaking(processes)
    await eventually(lambda: answering(nc, subjects), within=60, what="matchmaking answers")
    return proc


async def queue_log(store: PostgresEventStore, ladder: str = "standard") -> list[Any]:
    return [REGISTRY.decode(e) for e in await store.read(f"queue-{ladder}")]


async def matches(store: PostgresEventStore, ladder: str = "standard") -> list[MatchFound]:
    return [e for e in await queue_log(store, ladder) if isinstance(e, MatchFound)]


def won_by_side_0(match: MatchFound, ladder: str, scores: tuple[int, int]) -> GameFinished:
    """The GameFinished of a rated game of ``match`` that side 0 won by the target."""
    return GameFinished(
        winner=0, reason="target", scores=scores, ladder=ladder, rated=True, players=match.seats
    )


async def publish_event(
    js: JetStreamContext, subjects: Subjects, stream_id: str, event: Any, version: int = 1
) -> None:
    """Publish a stored-event envelope the way the relay does."""
    new = REGISTRY.new_event(event)
    stored = StoredEvent(
        event_id=new.event_id,
        stream_id=stream_id,
        version=version,
        type=new.type,
        data=new.data,
        recorded_at=datetime.now(UTC),
        position=1,
        transaction_id=1,
    )
    await ensure_streams(js, subjects)
    await js.publish(subjects.event(stream_id, new.type), msgspec.json.encode(stored))


async def test_four_players_are_matched_into_balanced_teams_and_announced(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: Any,
    nc: NATS,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    processes.start(*SERVICE, "relay", env=OPS)
    await started(processes, nc, subjects)
    announced: list[bytes] = []

    async def collect(msg: Any) -> None:
        announced.append(msg.data)

    sub = await nc.subscribe(subjects.match_found(), cb=collect)
    players = new_players(4)
    mus = dict(zip(players, (26.0, 25.4, 25.0, 24.2), strict=True))
    for player, mu in mus.items():  # ratings reach matchmaking as rating events do
        change = RatingChange(
            player_id=player,
            mu_before=25.0,
            sigma_before=8.3,
            mu_after=mu,
            sigma_after=3.0,
            ordinal_before=0.0,
            ordinal_after=mu - 9.0,
            games=12,
        )
        update = RatingsUpdated(game_id=str(uuid.uuid4()), ladder="standard", changes=(change,))
        await publish_event(js, subjects, f"rating-{update.game_id}", update)
    await eventually(
        lambda: pg_pool.fetchval("SELECT count(*) = 4 FROM matchmaking_ratings"),
        within=60,
        what="ratings projected",
    )

    answers = [await join(nc, subjects, p) for p in players]

    assert [(a["ok"], a["code"]) for a in answers] == [(True, "queued")] * 4
    found = await eventually(lambda: matches(event_store), within=60, what="a match")
    assert len(found) == 1
    (match,) = found
    assert sorted(match.seats) == sorted(players)
    assert match.ladder == "standard"
    assert match.rules == ruleset_of("standard").to_dict()
    queued = {e.player_id: e for e in await queue_log(event_store) if isinstance(e, PlayerQueued)}
    assert {p: q.mu for p, q in queued.items()} == mus
    rating = {p: Rating(mus[p], 3.0) for p in players}
    team_a, team_b = [rating[s] for s in match.seats[0::2]], [rating[s] for s in match.seats[1::2]]
    assert match.win_probability == pytest.approx(win_probability(team_a, team_b))
    gaps = [
        abs(
            win_probability(
                [rating[players[0]], rating[m]], [rating[o] for o in players[1:] if o != m]
            )
            - 0.5
        )
        for m in players[1:]
    ]
    assert abs(match.win_probability - 0.5) == pytest.approx(min(gaps))  # most even of 3 splits
    await eventually(lambda: announced, within=60, what="MatchFound on JetStream")
    wire = msgspec.json.decode(announced[0], type=StoredEvent)
    assert REGISTRY.decode(wire) == match
    status = await ask(nc, subjects.matchmaking_status(), {"player_id": players[0]})
    assert (status["code"], status["match_id"]) == ("in_game", match.match_id)
    await sub.unsubscribe()


async def test_bad_requests_are_refused_with_their_code_and_append_nothing(
    processes: Processes, event_store: PostgresEventStore, nc: NATS, subjects: Subjects
) -> None:
    service = await started(processes, nc, subjects)
    (player,) = new_players(1)
    assert (await join(nc, subjects, player))["code"] == "queued"
    before = await event_store.stream_version("queue-standard")

    refusals = {
        "twice": await join(nc, subjects, player),
        "other queue": await join(nc, subjects, player, "heads-up"),
        "unknown ladder": await join(nc, subjects, "someone", "no-such-ladder"),
        "not json": await ask(nc, subjects.matchmaking_join(), b"{player_id: x"),
        "missing field": await ask(nc, subjects.matchmaking_join(), {"player_id": "x"}),
        "wrong type": await ask(
            nc, subjects.matchmaking_join(), {"player_id": 7, "ladder": "standard"}
        ),
        "empty id": await join(nc, subjects, " "),
        "leave unqueued": await ask(nc, subjects.matchmaking_leave(), {"player_id": "nobody"}),
        "leave garbage": await ask(nc, subjects.matchmaking_leave(), b"[]"),
    }

    codes = {name: (a["ok"], a["code"]) for name, a in refusals.items()}
    assert codes == {
        "twice": (False, "already_queued"),
        "other queue": (False, "already_queued"),
        "unknown ladder": (False, "unknown_ladder"),
        "not json": (False, "malformed"),
        "missing field": (False, "malformed"),
        "wrong type": (False, "malformed"),
        "empty id": (False, "malformed"),
        "leave unqueued": (False, "not_queued"),
        "leave garbage": (False, "malformed"),
    }
    assert all(a["message"] for a in refusals.values())
    assert await event_store.stream_version("queue-standard") == before
    assert await event_store.stream_version("queue-heads-up") == 0

    left = await ask(nc, subjects.matchmaking_leave(), {"player_id": player})
    assert (left["ok"], left["code"]) == (True, "left")
    status = await ask(nc, subjects.matchmaking_status(), {"player_id": player})
    assert (status["code"], status["queue_sizes"]["standard"]) == ("idle", 0)
    assert (await join(nc, subjects, player))["code"] == "queued"  # may queue again

    service.send_signal(signal.SIGTERM)  # graceful: stops, drains, exits cleanly
    assert service.wait(timeout=60) == 0, processes.log(service)
    assert '"service stopped"' in processes.log(service)


async def test_a_seated_player_cannot_queue_until_his_game_finishes(
    processes: Processes,
    event_store: PostgresEventStore,
    nc: NATS,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    await started(processes, nc, subjects)
    players = new_players(4)
    for player in players:
        await join(nc, subjects, player)
    (match,) = await eventually(lambda: matches(event_store), within=60, what="a match")

    refused = await join(nc, subjects, players[1])
    assert (refused["ok"], refused["code"], refused["match_id"]) == (
        False,
        "in_game",
        match.match_id,
    )
    version = await event_store.stream_version("queue-standard")
    finished = won_by_side_0(match, "standard", (500, 100))
    await publish_event(js, subjects, f"game-{uuid.uuid4()}", finished, version=120)

    async def joined() -> bool:
        return (await join(nc, subjects, players[1]))["ok"]

    await eventually(joined, within=60, interval=0.2, what="free to queue after GameFinished")
    assert await event_store.stream_version("queue-standard") == version + 1


async def test_heads_up_ladder_pairs_two(
    processes: Processes, event_store: PostgresEventStore, nc: NATS, subjects: Subjects
) -> None:
    await started(processes, nc, subjects)
    players = new_players(2)
    for player in players:
        assert (await join(nc, subjects, player, "heads-up"))["ok"]

    (match,) = await eventually(lambda: matches(event_store, "heads-up"), within=60, what="match")

    assert sorted(match.seats) == sorted(players)
    assert match.rules["players"] == 2
    assert await matches(event_store, "standard") == []


async def test_queue_survives_kill_9_and_the_fourth_player_completes_the_table(
    processes: Processes, event_store: PostgresEventStore, nc: NATS, subjects: Subjects
) -> None:
    first = await started(processes, nc, subjects)
    players = new_players(4)
    for player in players[:3]:
        assert (await join(nc, subjects, player))["ok"]

    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    await started(processes, nc, subjects)
    status = await ask(nc, subjects.matchmaking_status(), {"player_id": players[0]})
    assert (status["code"], status["queue_sizes"]["standard"]) == ("queued", 3)
    again = await join(nc, subjects, players[1])
    assert again["code"] == "already_queued"  # the rebuilt queue still holds him
    assert (await join(nc, subjects, players[3]))["ok"]

    found = await eventually(lambda: matches(event_store), within=60, what="a match")
    assert [sorted(m.seats) for m in found] == [sorted(players)]


async def test_two_replicas_share_the_ladders_and_each_queue_is_served_by_its_owner(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: Any,
    nc: NATS,
    subjects: Subjects,
) -> None:
    """One ladder each; requests reach the ladder's owner whichever replica takes them, a
    player stays in one queue across the two, and each queue is written by its owner only."""
    replicas = {"mm-a": start_matchmaking(processes, "mm-a")}
    replicas["mm-b"] = start_matchmaking(processes, "mm-b")

    async def one_each() -> dict[str, str] | None:
        owners = await ladder_owners(pg_pool)
        return owners if sorted(owners.values()) == ["mm-a", "mm-b"] else None

    owners = await eventually(one_each, within=60, what="the ladders shared out")
    assert set(owners) == {"standard", "heads-up"}

    (loner,) = new_players(1)
    assert (await join(nc, subjects, loner))["code"] == "queued"
    elsewhere = await join(nc, subjects, loner, "heads-up")  # the other replica's ladder
    assert (elsewhere["ok"], elsewhere["code"], elsewhere["ladder"]) == (
        False,
        "already_queued",
        "standard",
    )
    for _ in range(4):  # the public subjects are a queue group: either replica may answer
        status = await ask(nc, subjects.matchmaking_status(), {"player_id": loner})
        assert (status["code"], status["ladder"], status["queue_sizes"]) == (
            "queued",
            "standard",
            {"standard": 1, "heads-up": 0},
        )
    left = await ask(nc, subjects.matchmaking_leave(), {"player_id": loner})
    assert (left["ok"], left["code"], left["ladder"]) == (True, "left", "standard")

    four, two = new_players(4), new_players(2)
    for player in four:
        assert (await join(nc, subjects, player))["ok"]
    for player in two:
        assert (await join(nc, subjects, player, "heads-up"))["ok"]
    (standard,) = await eventually(lambda: matches(event_store), within=60, what="4-seat match")
    (heads_up,) = await eventually(
        lambda: matches(event_store, "heads-up"), within=60, what="2-seat match"
    )
    assert (sorted(standard.seats), sorted(heads_up.seats)) == (sorted(four), sorted(two))

    for ladder, owner in owners.items():
        stored = await event_store.read(f"queue-{ladder}")
        epoch = await pg_pool.fetchval(
            "SELECT epoch FROM spades_leases WHERE name = $1", f"matchmaking/{ladder}"
        )
        assert {e.metadata.epoch for e in stored} == {epoch}, ladder  # fenced by its lease
        served = [
            json.loads(line)
            for line in processes.log(replicas[owner]).splitlines()
            if '"serving ladder"' in line
        ]
        assert ladder in {record["ladder"] for record in served}, owner


async def test_a_dead_replicas_ladder_is_taken_over_by_the_survivor(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: Any,
    nc: NATS,
    subjects: Subjects,
) -> None:
    replicas = {name: start_matchmaking(processes, name) for name in ("mm-a", "mm-b")}

    async def one_each() -> dict[str, str] | None:
        owners = await ladder_owners(pg_pool)
        return owners if sorted(owners.values()) == ["mm-a", "mm-b"] else None

    owners = await eventually(one_each, within=60, what="the ladders shared out")
    players = new_players(2)
    assert (await join(nc, subjects, players[0], "heads-up"))["ok"]

    dead = owners["heads-up"]
    replicas[dead].send_signal(signal.SIGKILL)
    replicas[dead].wait(timeout=30)

    async def joined() -> dict[str, Any] | None:
        try:
            return await join(nc, subjects, players[1], "heads-up")
        except Exception:
            return None

    answer = await eventually(joined, within=60, interval=0.2, what="survivor answers")
    assert answer["ok"], answer
    (match,) = await eventually(lambda: matches(event_store, "heads-up"), within=60, what="match")
    assert sorted(match.seats) == sorted(players)  # the queue survived its owner
    survivor = next(name for name in replicas if name != dead)
    assert await ladder_owners(pg_pool) == {"standard": survivor, "heads-up": survivor}


def rating_update(player: str, mu: float, games: int) -> RatingsUpdated:
    change = RatingChange(
        player_id=player,
        mu_before=25.0,
        sigma_before=8.3,
        mu_after=mu,
        sigma_after=4.0,
        ordinal_before=0.0,
        ordinal_after=mu - 12.0,
        games=games,
    )
    return RatingsUpdated(game_id=str(uuid.uuid4()), ladder="standard", changes=(change,))


async def test_duplicate_and_late_rating_updates_never_roll_a_rating_back(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: Any,
    nc: NATS,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    await started(processes, nc, subjects)
    player, marker = new_players(2)
    newer = rating_update(player, 27.0, games=12)
    older = rating_update(player, 22.0, games=11)

    await publish_event(js, subjects, f"rating-{newer.game_id}", newer)
    await publish_event(js, subjects, f"rating-{older.game_id}", older)  # arrives late
    await publish_event(js, subjects, f"rating-{newer.game_id}", newer)  # and again
    last = rating_update(marker, 25.0, games=1)
    await publish_event(js, subjects, f"rating-{last.game_id}", last)
    await eventually(
        lambda: pg_pool.fetchval(
            "SELECT count(*) FROM matchmaking_ratings WHERE player_id = $1", marker
        ),
        within=60,
        what="the updates before the marker handled",
    )

    assert (await join(nc, subjects, player))["ok"]
    (queued,) = [e for e in await queue_log(event_store) if isinstance(e, PlayerQueued)]
    assert (queued.mu, queued.sigma) == (27.0, 4.0)


async def test_a_redelivered_game_finished_does_not_free_players_of_their_next_game(
    processes: Processes,
    event_store: PostgresEventStore,
    nc: NATS,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    await started(processes, nc, subjects)
    players = new_players(2)
    for player in players:
        await join(nc, subjects, player, "heads-up")
    (first,) = await eventually(lambda: matches(event_store, "heads-up"), within=60, what="match")
    game = f"game-{uuid.uuid4()}"
    finished = won_by_side_0(first, "heads-up", (250, 90))
    await publish_event(js, subjects, game, finished, version=40)

    async def all_queued() -> bool:
        answers = [await join(nc, subjects, p, "heads-up") for p in players]
        return all(a["code"] in ("queued", "already_queued") for a in answers)

    await eventually(all_queued, within=60, interval=0.2, what="queued again after the game")
    found = await eventually(
        lambda: _at_least(matches(event_store, "heads-up"), 2), within=60, what="second match"
    )
    second = found[1]
    await publish_event(js, subjects, game, finished, version=40)  # the same event, redelivered
    others = new_players(2)  # a marker: another table, finished after the redelivery
    for player in others:
        await join(nc, subjects, player, "heads-up")
    (marker,) = await eventually(
        lambda: _with_player(matches(event_store, "heads-up"), others[0]), within=60, what="match"
    )
    await publish_event(
        js,
        subjects,
        f"game-{uuid.uuid4()}",
        GameFinished(
            winner=1,
            reason="target",
            scores=(90, 250),
            ladder="heads-up",
            rated=True,
            players=marker.seats,
        ),
        version=40,
    )

    async def marker_free() -> bool:
        return bool((await join(nc, subjects, others[0], "heads-up"))["ok"])

    await eventually(marker_free, within=60, interval=0.2, what="marker table finished")
    for player in players:
        status = await ask(nc, subjects.matchmaking_status(), {"player_id": player})
        assert (status["code"], status["match_id"]) == ("in_game", second.match_id)


async def _at_least(found: Any, count: int) -> list[MatchFound] | None:
    matched: list[MatchFound] = await found
    return matched if len(matched) >= count else None


async def _with_player(found: Any, player: str) -> list[MatchFound]:
    return [m for m in await found if player in m.seats]


def readiness(port: int) -> tuple[int, list[str]]:
    """Return /readyz's status and the names of the checks it says are down."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            return int(answer.status), list(json.loads(answer.read())["down"])
    except urllib.error.HTTPError as exc:
        return exc.code, list(json.loads(exc.read())["down"])


async def test_a_consumer_deleted_under_the_service_is_subscribed_again_and_ready_says_so(
    processes: Processes,
    event_store: PostgresEventStore,
    nc: NATS,
    js: JetStreamContext,
    subjects: Subjects,
) -> None:
    """The durable consumer of finished games is deleted while matchmaking runs (an operator's
    mistake, a stream recreated): JetStream answers its fetches "unavailable" for ever. Once
    that has lasted a few seconds /readyz says `consumers` is down, the service subscribes
    again (creating the consumer anew), says it is ready, and a game finished afterwards frees
    its players. Before, a consumer that failed ended its task without a word: the players of
    every later game stayed seated for ever while the service reported ready."""
    proc = await started(processes, nc, subjects)
    port = ops_port(processes, proc)
    await eventually(lambda: readiness(port) == (200, []), within=60, what="ready")
    durable = subjects.durable(GAMES_CONSUMER)
    await js.delete_consumer(subjects.events_stream, durable)
    await eventually(
        lambda: readiness(port) == (503, ["consumers"]),
        within=60,
        interval=0.1,
        what="/readyz to say the consumer is down",
    )
    await eventually(lambda: readiness(port) == (200, []), within=60, what="ready again")
    assert "consumer stopped: subscribing again" in processes.log(proc)
    assert (await js.consumer_info(subjects.events_stream, durable)).name == durable

    players = new_players(2)
    for player in players:
        await join(nc, subjects, player, "heads-up")
    (match,) = await eventually(lambda: matches(event_store, "heads-up"), within=60, what="match")
    finished = won_by_side_0(match, "heads-up", (250, 90))
    await publish_event(js, subjects, f"game-{uuid.uuid4()}", finished, version=40)

    async def all_queued() -> bool:
        answers = [await join(nc, subjects, p, "heads-up") for p in players]
        return all(a["code"] in ("queued", "already_queued") for a in answers)

    await eventually(all_queued, within=60, interval=0.2, what="queued again after the game")
