"""Issue 13, item 3: accounts of one address or device never share a ranked table, and the
ladder keeps a fair-play record an operator can query (`spades fairplay`)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid

import asyncpg
import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nats.aio.client import Client as NATS

import engine
from events.contracts import game as wire
from events.contracts import matchmaking as mm
from events.contracts.game import game_id_of_match, stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.gateway import fairplay
from services.matchmaking.pairing import Waiting, pair
from services.rating.model import Rating
from tests.gateway.conftest import start_gateway
from tests.infra import REPO, Processes, eventually
from tests.services.tablekit import TableClient, move, my_turn, play_together

PASSWORD = "a good password"


def waiting(pid: str, avoid: set[str] = frozenset()) -> Waiting:  # type: ignore[assignment]
    return Waiting(pid, Rating(mu=25.0, sigma=3.0), 0.0, frozenset(avoid))


@settings(max_examples=150, deadline=None)
@given(
    count=st.integers(min_value=4, max_value=12),
    links=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=20),
    seats=st.sampled_from([2, 4]),
)
def test_linked_accounts_never_share_a_table(
    count: int, links: list[tuple[int, int]], seats: int
) -> None:
    linked = {frozenset((f"p{a}", f"p{b}")) for a, b in links if a != b and max(a, b) < count}
    # links are recorded on one side only (whoever joined later saw the other)
    avoid: dict[str, set[str]] = {f"p{i}": set() for i in range(count)}
    for pair_ in linked:
        a, b = sorted(pair_)
        avoid[b].add(a)
    tables = pair([waiting(p, avoid[p]) for p in avoid], seats, now=10_000.0)
    seated = [p for t in tables for team in t.teams for p in team]
    assert len(seated) == len(set(seated))
    for table in tables:
        players = [p for team in table.teams for p in team]
        for a in players:
            for b in players:
                assert frozenset((a, b)) not in linked, (a, b, table)
    if not linked:
        assert len(tables) == count // seats  # with nobody linked, everybody who can sits


def test_four_accounts_of_one_household_wait_for_other_people() -> None:
    farm = ["f1", "f2", "f3", "f4"]
    queue = [waiting(p, set(farm) - {p}) for p in farm]
    assert pair(queue, 4, now=10_000.0) == []
    others = [waiting(p) for p in ("o1", "o2", "o3")]
    tables = pair(queue + others, 4, now=10_000.0)
    assert len(tables) == 1
    players = {p for team in tables[0].teams for p in team}
    assert len(players & set(farm)) == 1  # one of the household, with three others


async def _sign_in_and_queue(http: httpx.AsyncClient, name: str, address: str) -> str:
    """Register, log in and queue ``name`` from ``address``; return his access token."""
    headers = {"x-forwarded-for": address}
    made = await http.post("/api/accounts", json={"name": name, "password": PASSWORD})
    assert made.status_code == 201, made.text
    got = await http.post("/api/tokens", json={"name": name, "password": PASSWORD}, headers=headers)
    assert got.status_code == 200, got.text
    token = got.json()["access_token"]
    while True:  # matchmaking may still be starting
        queued = await http.post(
            "/api/queue",
            json={"ladder": "standard"},
            headers={**headers, "authorization": f"Bearer {token}"},
        )
        if queued.status_code != 503:
            break
        await asyncio.sleep(0.2)
    assert queued.status_code == 200, queued.text
    return str(token)


async def _status(http: httpx.AsyncClient, token: str) -> str:
    answer = await http.get("/api/queue", headers={"authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["code"])


async def test_accounts_queued_from_one_address_are_never_seated_together(
    processes: Processes, pg_pool: asyncpg.Pool, service_env: dict[str, str]
) -> None:
    processes.start(
        "-m", "services.tools.cli", "serve", "matchmaking", env={"SPADES_OPS_PORT": "0"}
    )
    gateway = await start_gateway(processes, SPADES_TRUSTED_PROXIES="127.0.0.1")
    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:
        farm = ["farm1", "farm2", "farm3", "farm4"]
        tokens = {name: await _sign_in_and_queue(http, name, "198.51.100.7") for name in farm}
        # four people from four addresses queue after them: a table forms around the first
        # of the household (the longest waiting), with three of the people, and no other
        people = ["alba", "bert", "cleo", "dirk"]
        for i, name in enumerate(people):
            tokens[name] = await _sign_in_and_queue(http, name, f"203.0.113.{i + 1}")

        async def four_seated() -> bool:
            live = await pg_pool.fetchval("SELECT count(*) FROM matchmaking_live_players")
            return bool(live == 4)

        await eventually(four_seated, within=60, what="one table to form")
        codes = {name: await _status(http, token) for name, token in tokens.items()}
    assert [name for name in farm if codes[name] == "in_game"] == ["farm1"]
    assert sorted(name for name in people if codes[name] == "in_game") == people[:3]
    assert codes["dirk"] == "queued"  # one person waits rather than sit with farm2..4
    rows = await pg_pool.fetch("SELECT player_id, match_id FROM matchmaking_live_players")
    assert len({r["match_id"] for r in rows}) == 1
    assert sorted(r["player_id"] for r in rows) == ["alba", "bert", "cleo", "farm1"]

    cli = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.tools.cli",
        "fairplay",
        "--json",
        cwd=REPO,
        env={**os.environ, **service_env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(cli.communicate(), 60)
    assert cli.returncode == 0, err.decode()
    report = json.loads(out)
    assert report["shared"] == [
        {
            "kind": "address",
            "value": "198.51.100.7",
            "accounts": farm,
            "first_seen": report["shared"][0]["first_seen"],
            "last_seen": report["shared"][0]["last_seen"],
        }
    ]


async def _finished(
    store: PostgresEventStore,
    players: tuple[str, ...],
    winner: int,
    abandoned: tuple[int, ...] = (),
) -> None:
    event = wire.GameFinished(
        winner=winner,
        reason="target",
        scores=(500, 120) if winner == 0 else (120, 500),
        ladder="standard",
        rated=True,
        players=players,
        abandoned=abandoned,
    )
    await store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(event)])


async def test_the_record_names_opponents_who_keep_meeting_with_one_sided_results(
    event_store: PostgresEventStore, pg_pool: asyncpg.Pool
) -> None:
    # feeder (seat 1) loses to farmer (seat 0) four times in five; an honest pair splits
    for winner in (0, 0, 0, 0, 1):
        await _finished(event_store, ("farmer", "feeder", "pal1", "pal2"), winner)
    for winner in (0, 1, 0, 1):
        await _finished(event_store, ("even1", "even2", "even3", "even4"), winner)
    report = await fairplay.build_report(pg_pool, days=7)
    flagged = {tuple(m.players): (m.games, m.wins) for m in report.one_sided}
    # farmer's side (seats 0, 2) beat seats 1 and 3: 4 of 5 against each opponent
    assert flagged[("farmer", "feeder")] == (5, [4, 1])
    assert flagged[("farmer", "pal2")] == (5, [4, 1])
    assert not [m for m in report.one_sided if set(m.players) & {"even1", "even2"}]
    # partners never count as meeting
    assert ("farmer", "pal1") not in flagged
    text = fairplay.render(report)
    assert "farmer v feeder: 5 rated games, won 4 - 1" in text


async def test_the_record_names_partners_of_whom_one_keeps_abandoning(
    event_store: PostgresEventStore, pg_pool: asyncpg.Pool
) -> None:
    """Issue 26, item 9: the partner of an abandoner does not move, so a pair could shield
    one rating by the other timing out whenever they lose; such a pair is in the record."""
    # shield (seat 2) leaves his partner saved (seat 0) to a bot in three games of four
    for abandoned in ((2,), (2,), (), (2,)):
        await _finished(event_store, ("saved", "opp1", "shield", "opp2"), 1, abandoned)
    # one abandonment is bad luck; both partners leaving shields nobody
    await _finished(event_store, ("calm1", "opp3", "calm2", "opp4"), 1, (0,))
    for _ in range(3):
        await _finished(event_store, ("both1", "opp5", "both2", "opp6"), 1, (0, 2))
    report = fairplay.build_report(pg_pool, days=7)
    got = await report
    assert got.abandoning == [
        fairplay.Abandoning(quitter="shield", partner="saved", games=4, abandoned=3)
    ]
    text = fairplay.render(got)
    assert "shield left saved to a bot in 3 of 4 rated games together" in text


_QUEUE = asyncio.Lock()


def _power(card: str) -> tuple[bool, int]:
    """Return how strong a card name ('AS', 'TH' ...) is with spades trumps."""
    return card[-1] == "S", "23456789TJQKA".index(card[0])


async def _play_rated(
    store: PostgresEventStore,
    nc: NATS,
    subjects: Subjects,
    seats: tuple[str, str, str, str],
    overbid: int,
) -> str:
    """Play a rated game (a MatchFound the table opens) in which seat ``overbid`` overbids
    on the first hand (nine tricks, then plays its weakest cards while the other side plays its
    strongest: its side is set, behind on score; every other seat bids one, never nil); once
    that hand is scored the quitter at seat 0 leaves his partner (seat 2) to a bot, the
    opponents leave too (partners both leaving shield nobody), and seat 2 plays the game out
    with three bots. Return the game's id."""
    match_id = str(uuid.uuid4())
    found = mm.MatchFound(
        match_id=match_id,
        ladder="standard",
        # to 250, not 500: the bots finish the game in a few hands, not ten (a 500 made this
        # the suite's longest test); the first hand still cannot end it
        rules={**engine.ranked_default().to_dict(), "target": 250},
        seats=seats,
        win_probability=0.5,
    )
    async with _QUEUE:  # one queue stream, appended at its version
        version = len(await store.read("queue-standard"))
        await store.append("queue-standard", version, [REGISTRY.new_event(found)])
    game_id = game_id_of_match(match_id)
    clients = [TableClient(nc, subjects, p) for p in seats]
    await clients[0].wait_for_game(game_id, within=120)

    async def first_hand(seat: int) -> None:
        client = clients[seat]
        while True:
            view = await client.view(game_id)
            if view.hand_number > 1 or view.phase == "over":
                return
            if not my_turn(view):
                await asyncio.sleep(0.01)
                continue
            bids = [c for c in view.legal if isinstance(c, wire.PlaceBid) and not c.blind]
            if seat == overbid and bids:
                # nine: with the play below, set for sure, short of the mercy floor ending the game
                await client.send(game_id, min(bids, key=lambda c: abs(c.tricks - 9)))
            elif bids:
                # the others bid one each, never nil: a nil lost (-100) could leave the other
                # side behind the set side, and which side is behind is what the test is about
                # (the set side's ten stays above the mercy floor)
                await client.send(game_id, min(bids, key=lambda c: (c.tricks < 1, c.tricks)))
            elif not view.legal or not isinstance(view.legal[0], wire.PlayCard):
                await client.send(game_id, move(view))
            else:
                # the set is made sure in play too: first legal cards let a nine and a partner's
                # bid make sometimes (it failed CI once: the "set" side was ahead); the
                # overbidding side plays its weakest card, the other side its strongest
                cards = [c for c in view.legal if isinstance(c, wire.PlayCard)]
                pick = min if (seat - overbid) % 2 == 0 else max
                await client.send(game_id, pick(cards, key=lambda c: _power(c.card)))

    await asyncio.gather(*(first_hand(s) for s in range(4)))
    for seat in (0, 1, 3):
        leave = wire.LeaveTable(game_id=game_id, player_id=seats[seat], command_id=uuid.uuid4())
        reply = await clients[seat].request(
            subjects.table_command(game_id), msgspec.json.encode(leave)
        )
        assert reply.ok, reply
    await asyncio.wait_for(play_together([clients[2]], game_id), 600)
    return game_id


@pytest.mark.infra
async def test_a_pair_that_keeps_abandoning_while_losing_is_named(
    processes: Processes,
    event_store: PostgresEventStore,
    pg_pool: asyncpg.Pool,
    nc: NATS,
    subjects: Subjects,
    service_env: dict[str, str],
) -> None:
    """Issue 31, quitters, second half: real rated games played through the table; the
    quitter leaves behind on score twice (his side overbid and was set) and ahead once (the
    opponents were); the record counts his abandonments while losing from the games' logs."""
    for name in ("relay", "table", "bots"):
        processes.start("-m", "services.tools.cli", "serve", name, env={"SPADES_OPS_PORT": "0"})
    games = await asyncio.gather(
        _play_rated(event_store, nc, subjects, ("quits", "oa1", "stays", "ob1"), overbid=0),
        _play_rated(event_store, nc, subjects, ("quits", "oa2", "stays", "ob2"), overbid=2),
        _play_rated(event_store, nc, subjects, ("quits", "oa3", "stays", "ob3"), overbid=1),
    )
    behind = []
    for game_id in games:
        events = [REGISTRY.decode(s) for s in await event_store.read(stream_of(game_id))]
        first = next(e for e in events if isinstance(e, wire.HandScored))
        assert any(isinstance(e, wire.SeatAbandoned) and e.seat == 0 for e in events)
        finished = next(e for e in events if isinstance(e, wire.GameFinished))
        assert finished.rated
        assert 0 in finished.abandoned
        assert 2 not in finished.abandoned
        behind.append(first.scores[0] < first.scores[1])
    assert behind == [True, True, False], behind  # the overbidding side was set

    report = await fairplay.build_report(pg_pool, days=7, min_losing=2)
    assert report.abandoning == [
        fairplay.Abandoning(quitter="quits", partner="stays", games=3, abandoned=3, while_losing=2)
    ]
    assert report.abandoning_losing == report.abandoning
    # the opponents left together: shielding nobody, named nowhere
    assert not [a for a in report.abandoning if a.quitter.startswith("o")]
    stricter = await fairplay.build_report(pg_pool, days=7)  # three while losing by default
    assert stricter.abandoning_losing == []
    assert stricter.abandoning[0].while_losing == 2

    cli = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.tools.cli",
        "fairplay",
        "--min-losing",
        "2",
        cwd=REPO,
        env={**os.environ, **service_env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(cli.communicate(), 60)
    assert cli.returncode == 0, err.decode()
    text = out.decode()
    assert "quits left stays to a bot in 3 of 3 rated games together (2 while behind" in text
    assert "partners of whom one keeps abandoning while losing: 1" in text
    assert "quits left stays to a bot 2 times while behind on score" in text
