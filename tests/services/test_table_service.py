"""The table service as a real process on real PostgreSQL and NATS."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import uuid

import asyncpg
import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

import engine
from events.bus import ensure_streams
from events.contracts import game as wire
from events.contracts import matchmaking as mm
from events.contracts.game import game_id_of_match, stream_of
from events.envelope import REGISTRY, Metadata
from events.pgstore import PostgresEventStore
from events.subjects import SLOTS, Subjects
from tests.events.helpers import consumer_idle
from tests.infra import Processes, eventually
from tests.services.tablekit import TableClient, move, my_turn, play_together

TABLE = ("-m", "services.tools.cli", "serve", "table")


def start_table(processes: Processes, **env: str) -> object:
    return processes.start(*TABLE, env={"SPADES_OPS_PORT": "0", **env})


async def game_events(store: PostgresEventStore, game_id: str) -> list[wire.GameEvent]:
    return [REGISTRY.decode(s) for s in await store.read(stream_of(game_id))]


async def play_to_the_end(client: TableClient, game_id: str, within: float = 240) -> None:
    async def loop() -> None:
        while (await client.view(game_id)).phase != "over":
            await client.play_turn(game_id)

    await asyncio.wait_for(loop(), within)


async def test_a_practice_game_is_played_to_its_end_and_replays_to_the_same_score(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    start_table(processes)
    client = TableClient(nc, subjects, "ann")
    opened = await client.open_practice(target=200)
    assert opened.ok, opened
    await play_to_the_end(client, opened.game_id)

    events = await game_events(event_store, opened.game_id)
    table = events[0]
    assert isinstance(table, wire.TableOpened)
    assert table.players[0] == "ann"
    assert table.bots == (1, 2, 3)
    assert not table.rated
    finished = events[-1]
    assert isinstance(finished, wire.GameFinished)
    replayed = engine.replay([e for e in map(wire.to_engine, events) if e is not None])
    assert replayed.phase == "over"
    assert replayed.scores == finished.scores
    assert max(finished.scores) >= 200 or finished.reason != "target"


async def test_bad_commands_are_refused_with_their_reason_and_change_nothing(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    start_table(processes)
    client = TableClient(nc, subjects, "ann")
    game_id = (await client.open_practice()).game_id
    view = await client.view(game_id)
    while view.turn != view.seat:  # bots act first when they are on turn
        await asyncio.sleep(0.05)
        view = await client.view(game_id)
    version = view.version
    stranger = TableClient(nc, subjects, "mallory")
    subject = subjects.table_command(game_id)

    refusals = {
        "not_your_seat": await stranger.send(game_id, wire.PlaceBid(tricks=3)),
        "bid_out_of_range": await client.send(game_id, wire.PlaceBid(tricks=14)),
        "malformed": await client.send(game_id, wire.PlayCard(card="ZZ")),
        "unknown_game": await client.send(str(uuid.uuid4()), wire.PlaceBid(tricks=3)),
        "wrong_phase": await client.send(game_id, wire.PlayCard(card="2C")),
    }
    for code, reply in refusals.items():
        assert not reply.ok
        assert reply.code == code, reply
        assert reply.message
    garbage = await client.request(subject, b"{not json")
    assert (garbage.ok, garbage.code) == (False, "malformed")
    wrong_shape = await client.request(subject, b'{"type": "SubmitCommand", "game_id": 5}')
    assert (wrong_shape.ok, wrong_shape.code) == (False, "malformed")
    assert await event_store.stream_version(stream_of(game_id)) == version


async def test_a_retried_command_id_is_answered_the_same_and_appends_nothing(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    start_table(processes)
    client = TableClient(nc, subjects, "ann")
    game_id = (await client.open_practice()).game_id
    view = await client.view(game_id)
    while not my_turn(view):  # the bots before ann move first
        await asyncio.sleep(0.05)
        view = await client.view(game_id)
    command_id = uuid.uuid4()
    first = await client.send(game_id, move(view), command_id)
    assert first.ok
    assert not first.retry

    async def waits_for_ann() -> bool:
        now = await client.view(game_id)
        return now.phase == "over" or (my_turn(now) and now.version > first.version)

    # the bots answer, so the stream moves past our command; then nothing moves until ann does
    await eventually(waits_for_ann, within=60, what="the bots to answer")
    version_after = await event_store.stream_version(stream_of(game_id))
    again = await client.send(game_id, move(view), command_id)
    assert again.ok
    assert again.retry
    assert again.version == first.version
    assert await event_store.stream_version(stream_of(game_id)) == version_after


async def test_a_silent_seat_times_out_is_played_by_the_bot_then_taken_over(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    start_table(processes, SPADES_TURN_SECONDS="0.2", SPADES_ABANDON_STREAK="3")
    # an untimed practice table, opened first, runs no timer for its player meanwhile
    thinker = TableClient(nc, subjects, "bea")
    untimed_id = (await thinker.open_practice(untimed=True, target=100)).game_id
    client = TableClient(nc, subjects, "ann")
    game_id = (await client.open_practice(target=100)).game_id

    async def finished() -> list[wire.GameEvent]:
        while True:
            events = await game_events(event_store, game_id)
            if isinstance(events[-1], wire.GameFinished):
                return events
            await asyncio.sleep(0.2)

    events = await asyncio.wait_for(finished(), 240)
    timeouts = [e for e in events if isinstance(e, wire.TurnTimedOut)]
    assert [(e.seat, e.streak) for e in timeouts] == [(0, 1), (0, 2), (0, 3)]
    abandoned = [e for e in events if isinstance(e, wire.SeatAbandoned)]
    assert [(e.seat, e.player_id) for e in abandoned] == [(0, "ann")]
    final = events[-1]
    assert isinstance(final, wire.GameFinished)
    assert final.abandoned == (0,)
    refused = await client.send(game_id, wire.PlaceBid(tricks=1))
    assert refused.code in ("seat_abandoned", "game_over")
    # the deadline is a fact in the log: the table wrote it with each append that left ann
    # on turn, and timed her out no earlier than that number (its timer runs to it)
    stored = await event_store.read(stream_of(game_id))
    for before, s in itertools.pairwise(stored):
        if isinstance(REGISTRY.decode(s), wire.TurnTimedOut):
            assert before.metadata.deadline > 0
            assert s.recorded_at.timestamp() >= before.metadata.deadline - 0.01
            # a full turn (0.2 s) from the append that started it
            assert before.metadata.deadline - before.recorded_at.timestamp() <= 0.2

    # the timed game ran out three turns and was played to its end; bea still has all the time
    untimed = await game_events(event_store, untimed_id)
    opened = untimed[0]
    assert isinstance(opened, wire.TableOpened)
    assert opened.turn_seconds == 0
    assert not any(isinstance(e, wire.TurnTimedOut | wire.SeatAbandoned) for e in untimed)
    view = await thinker.view(untimed_id)
    assert view.turn == 0  # waiting for her, not played for her
    assert view.phase in ("bid", "play")


async def test_two_replicas_share_partitions_and_a_killed_owner_is_replaced(
    processes: Processes,
    nc: NATS,
    subjects: Subjects,
    event_store: PostgresEventStore,
    database_url: str,
) -> None:
    first = start_table(processes)
    client = TableClient(nc, subjects, "ann")
    game_id = (await client.open_practice()).game_id
    await client.play_turn(game_id)
    second = start_table(processes)

    conn = await asyncpg.connect(database_url)
    try:

        async def shares() -> list[int]:
            rows = await conn.fetch(
                "SELECT owner, count(*) AS n FROM spades_leases"
                " WHERE name LIKE 'table/%' AND expires_at > now() GROUP BY owner"
            )
            return sorted(r["n"] for r in rows if r["owner"] is not None)

        # each slot held once, shared out between the two replicas
        async def halves() -> bool:
            return await shares() == [SLOTS // 2, SLOTS // 2]

        await eventually(
            halves,
            within=60,
            what="the two replicas to hold half of the slots each",
        )
    finally:
        await conn.close()

    os.kill(first.pid, signal.SIGKILL)  # type: ignore[attr-defined]
    first.wait()  # type: ignore[attr-defined]
    await play_to_the_end(client, game_id)
    assert second.poll() is None  # type: ignore[attr-defined]

    stored = await event_store.read(stream_of(game_id))
    assert [s.version for s in stored] == list(range(1, len(stored) + 1))
    ids = [s.event_id for s in stored]
    assert len(ids) == len(set(ids))
    replayed = engine.replay(
        [e for e in (wire.to_engine(REGISTRY.decode(s)) for s in stored) if e is not None]
    )
    assert replayed.phase == "over"


@pytest.mark.parametrize("rules", [{"players": 2}, {"players": 3}, {"jokers": True}])
async def test_practice_tables_take_any_valid_ruleset(
    processes: Processes, nc: NATS, subjects: Subjects, rules: dict[str, int | bool]
) -> None:
    start_table(processes)
    reply = await TableClient(nc, subjects, "ann").open_practice(**rules)
    assert reply.ok, reply


async def test_a_practice_table_takes_a_bot_level_and_refuses_an_unknown_one(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    start_table(processes)
    processes.start("-m", "services.tools.cli", "serve", "bots", env={"SPADES_OPS_PORT": "0"})
    client = TableClient(nc, subjects, "ann")
    wrong = await client.open_practice(bots="grandmaster")
    assert not wrong.ok
    assert wrong.code == "unknown_bot_level"
    assert "baseline, strong" in wrong.message
    reply = await client.open_practice(bots="strong", players=2)
    assert reply.ok, reply
    opened = REGISTRY.decode((await event_store.read(stream_of(reply.game_id)))[0])
    assert isinstance(opened, wire.TableOpened)
    assert opened.bot_level == "strong"
    # The strong bot answers at its turn: ann plays her hints until a trick is won by
    # both seats' cards, so the bot has played (it never leaves the game waiting).
    stream = stream_of(reply.game_id)

    async def bot_played_a_card() -> bool:
        await client.play_turn(reply.game_id)
        stored = await event_store.read(stream)
        return any(
            s.metadata.actor == "bot" and isinstance(REGISTRY.decode(s), wire.CardPlayed)
            for s in stored
        )

    await eventually(bot_played_a_card, within=120, what="the strong bot plays a card")


async def test_an_inconsistent_ruleset_is_refused_with_the_reason(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    start_table(processes)
    reply = await TableClient(nc, subjects, "ann").open_practice(players=3, suicide=True)
    assert not reply.ok
    assert reply.code == "invalid_ruleset"
    assert "suicide" in reply.message


async def test_four_people_play_a_casual_game_and_a_killed_table_resumes_from_the_log(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    table = start_table(processes)
    players = ("ann", "bob", "cy", "di")
    clients = [TableClient(nc, subjects, p) for p in players]
    opened = await clients[0].open_casual(players, target=150)
    assert opened.ok, opened
    game_id = opened.game_id
    # play a few tricks, then kill the only replica mid-hand and start a new one
    while await event_store.stream_version(stream_of(game_id)) < 12:
        for client in clients:
            await client.play_turn(game_id)
    before = await event_store.read(stream_of(game_id))
    os.kill(table.pid, signal.SIGKILL)  # type: ignore[attr-defined]
    table.wait()  # type: ignore[attr-defined]
    start_table(processes)
    await asyncio.wait_for(play_together(clients, game_id), 240)

    after = await event_store.read(stream_of(game_id))
    assert after[: len(before)] == before
    assert [s.version for s in after] == list(range(1, len(after) + 1))
    events = [REGISTRY.decode(s) for s in after]
    finished = events[-1]
    assert isinstance(finished, wire.GameFinished)
    assert finished.players == players
    assert not finished.rated
    assert not any(isinstance(e, wire.TurnTimedOut) for e in events)


async def test_a_casual_table_needs_the_ruleset_s_number_of_distinct_players(
    processes: Processes, nc: NATS, subjects: Subjects
) -> None:
    start_table(processes)
    client = TableClient(nc, subjects, "ann")
    three = await client.open_casual(("ann", "bob", "cy"))
    assert (three.ok, three.code) == (False, "wrong_player_count")
    twice = await client.open_casual(("ann", "ann"), players=2)
    assert (twice.ok, twice.code) == (False, "malformed")


async def test_every_refusal_of_a_seat_command_names_its_rule_and_moves_nothing(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    start_table(processes)
    players = ("ann", "bob", "cy", "di")
    clients = {p: TableClient(nc, subjects, p) for p in players}
    game_id = (await clients["ann"].open_casual(players, target=100)).game_id
    stream = stream_of(game_id)

    async def refused(player: str, command: wire.AnySeatCommand, code: str) -> None:
        version = await event_store.stream_version(stream)
        reply = await clients[player].send(game_id, command)
        assert (reply.ok, reply.code) == (False, code), reply
        assert reply.message
        assert await event_store.stream_version(stream) == version

    view = await clients["ann"].view(game_id)
    on_turn = players[view.turn]
    waiting = players[(view.turn + 1) % 4]
    await refused(waiting, wire.PlaceBid(tricks=3), "out_of_turn")
    await refused(on_turn, wire.DeclareBlindNil(), "blind_nil_not_allowed")  # nobody trails
    # bid round, then a lead: find a card the next seat holds that does not follow suit.
    # One action at a time, so the play phase starts on an empty trick (a sweep over all four
    # clients could have played cards after the last bid, and the lead below would then
    # close a trick whose winner, not the next seat, is on turn).
    while (bidding := await clients["ann"].view(game_id)).phase != "play":
        await clients[players[bidding.turn]].play_turn(game_id)
    leader_view = await clients[players[(await clients["ann"].view(game_id)).turn]].view(game_id)
    leader = players[leader_view.seat]
    assert leader_view.trick == ()  # the first lead of the hand
    mine = set(leader_view.hand)
    elsewhere = next(
        c for c in (await clients[players[(leader_view.seat + 1) % 4]].view(game_id)).hand
    )
    assert elsewhere not in mine
    await refused(leader, wire.PlayCard(card=elsewhere), "card_not_in_hand")
    lead = leader_view.legal[0]
    assert (await clients[leader].send(game_id, lead)).ok
    follower_view = await clients[players[(leader_view.seat + 1) % 4]].view(game_id)
    legal = {c.card for c in follower_view.legal if isinstance(c, wire.PlayCard)}
    off_suit = [c for c in follower_view.hand if c not in legal]
    if off_suit:  # he holds the led suit, so anything else breaks the follow-suit rule
        await refused(
            players[follower_view.seat], wire.PlayCard(card=off_suit[0]), "must_follow_suit"
        )
    await asyncio.wait_for(play_together(list(clients.values()), game_id), 240)
    await refused("ann", wire.PlaceBid(tricks=3), "game_over")


async def test_a_match_found_delivered_again_late_opens_one_game(
    processes: Processes, js: JetStreamContext, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    start_table(processes)
    matches = []
    for n in range(2):
        found = mm.MatchFound(
            match_id=str(uuid.uuid4()),
            ladder="standard",
            rules=engine.ranked_default().to_dict(),
            seats=(f"a{n}", f"b{n}", f"c{n}", f"d{n}"),
            win_probability=0.5,
        )
        stored = await event_store.append(
            "queue-standard", n, [REGISTRY.new_event(found, Metadata(actor="test"))]
        )
        matches.append((found, stored[0]))
    # deliver in order, then each again late (after the other): a replayed publish
    await ensure_streams(js, subjects)
    for _found, stored in (matches[0], matches[1], matches[0], matches[1]):
        await js.publish(
            subjects.event(stored.stream_id, stored.type),
            msgspec.json.encode(stored),
            headers={"Nats-Msg-Id": f"{stored.event_id}-{uuid.uuid4()}"},  # defeat dedupe
        )

    async def opened(match: mm.MatchFound) -> list[wire.GameEvent]:
        return await game_events(event_store, game_id_of_match(match.match_id))

    for found, _ in matches:
        await eventually(lambda found=found: opened(found), what="the match's game")
    # every delivery, the late copies included, has been handled: a duplicate would be here
    await eventually(lambda: consumer_idle(js, subjects, "table-matches"), what="all handled")
    for found, _ in matches:
        events = await game_events(event_store, game_id_of_match(found.match_id))
        assert sum(isinstance(e, wire.TableOpened) for e in events) == 1
        assert sum(isinstance(e, wire.GameStarted) for e in events) == 1
        first = events[0]
        assert isinstance(first, wire.TableOpened)
        assert first.players == found.seats
        assert first.rated
