"""A duplicate event against the real gateway, table and bot worker: four pairs, two boards,
every seat played by a test player (`tests.moves`); matchpoints checked against figures worked
out here from the games' own logs, every board's deal verified by `spades verify` from the
commitment the event published before the first card; every bad request its own code, with
nothing changed."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.contracts.playbans import PlaybanIssued, playban_stream
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.test_friends import platform, refused, tokens_of
from tests.gateway.test_leave import logged
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually
from tests.services.tablekit import TableClient, play_together

PAIRS = [("p1a", "p1b"), ("p2a", "p2b"), ("p3a", "p3b"), ("p4a", "p4b")]


async def ban(store: PostgresEventStore, player: str, seconds: float) -> None:
    """Record a running queue ban for ``player`` as matchmaking would."""
    now = time.time()
    issued = PlaybanIssued(
        player_id=player,
        game_id=str(uuid.uuid4()),
        ladder="standard",
        reason="abandoned",
        offence=2,
        at=now,
        ends_at=now + seconds,
    )
    await store.append(playban_stream(player), 0, [REGISTRY.new_event(issued)])


def expected_matchpoints(
    nets: dict[tuple[int, int], int], seats: dict[tuple[int, int], str]
) -> dict[int, tuple[int, int]]:
    """Return each pair's (matchpoints, top) from its net score per (board, pair): 2 for each
    pair beaten that held the same cards (the board, the direction), 1 for each tie."""
    out: dict[int, tuple[int, int]] = {}
    for (board, pair), net in nets.items():
        same = [
            other
            for (b, p), other in nets.items()
            if b == board and p != pair and seats[b, p] == seats[board, pair]
        ]
        mp = sum(2 if net > other else 1 if net == other else 0 for other in same)
        got, top = out.get(pair, (0, 0))
        out[pair] = (got + mp, top + 2 * len(same))
    return out


async def test_four_pairs_play_two_boards_scored_by_matchpoints_and_verified(
    processes: Processes,
    event_store: PostgresEventStore,
    nc: NATS,
    subjects: Subjects,
    service_env: dict[str, str],
) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        everyone = [n for pair in PAIRS for n in pair] + ["late", "extra", "banned", "free"]
        h = await tokens_of(http, *everyone)
        host = h["p1a"]
        # bad events: each its own code, nothing made
        refused(
            await http.post(
                "/api/events", json={"name": "x", "rules": {"players": 2}}, headers=host
            ),
            400,
            "invalid_ruleset",
        )
        refused(
            await http.post("/api/events", json={"name": "x", "format": "knockout"}, headers=host),
            400,
            "unknown_format",
        )
        refused(
            await http.post("/api/events", json={"name": "x", "ladder": "nope"}, headers=host),
            404,
            "unknown_ladder",
        )
        assert (await http.get("/api/events", headers=host)).json() == []
        made = await http.post(
            "/api/events",
            # two rounds of one board: pairs meet new opponents and change direction
            json={"name": "Tuesday pairs", "boards_per_round": 1, "rounds": 2, "max_pairs": 4},
            headers=host,
        )
        assert made.status_code == 201, made.text
        event = made.json()
        event_id = event["event"]["event_id"]
        url = f"/api/events/{event_id}"
        # the deals are committed before anyone enters: one SHA-256 a board, no seed shown
        commitments = {b["board"]: b["commitment"] for b in event["boards"]}
        assert sorted(commitments) == [1, 2]
        assert all(
            len(c) == 64 and b["seed"] is None
            for c, b in zip(commitments.values(), event["boards"], strict=True)
        )
        assert event["rules"]["hand_cap"] == 1

        ws = WsClient(gateway.ws_url, h["p2a"]["Authorization"].split()[-1])
        await ws.connect()

        for player, partner in PAIRS:
            joined = await http.post(f"{url}/join", json={"partner": partner}, headers=h[player])
            assert joined.status_code == 200, joined.text
        assert (
            await http.post(f"{url}/join", json={"partner": "p1b"}, headers=host)
        ).status_code == 200
        pushed = await ws.expect("event_standings", within=60)
        assert pushed["event_id"] == event_id

        async def unchanged() -> tuple[int, int]:
            shown = (await http.get(url, headers=host)).json()
            log = (await http.get(f"{url}/log", headers=host)).json()
            return len(shown["pairs"]), len(log)

        before = await unchanged()
        assert before[0] == 4
        await ban(event_store, "banned", 3600)
        bad_joins: list[tuple[str, dict[str, Any], int, str]] = [
            ("free", {"partner": "free"}, 400, "malformed"),
            ("free", {"partner": "nobody"}, 404, "unknown_player"),
            ("banned", {"partner": "free"}, 403, "playban"),
            ("free", {"partner": "banned"}, 403, "playban"),
            ("late", {"partner": "p2b"}, 409, "already_entered"),
            ("p3a", {"partner": "late"}, 409, "already_entered"),
            ("late", {"partner": "extra"}, 409, "event_full"),
        ]
        for who, body, status, code in bad_joins:
            refused(await http.post(f"{url}/join", json=body, headers=h[who]), status, code)
        banned = await http.post(f"{url}/join", json={"partner": "free"}, headers=h["banned"])
        assert banned.json()["ends_at"] > time.time() + 3000
        refused(
            await http.post(
                f"/api/events/{uuid.uuid4()}/join", json={"partner": "free"}, headers=h["late"]
            ),
            404,
            "unknown_event",
        )
        refused(await http.post(f"{url}/leave", headers=h["late"]), 409, "not_entered")
        refused(await http.post(f"{url}/start", json={}, headers=h["p2a"]), 403, "not_host")
        assert await unchanged() == before

        started = await http.post(f"{url}/start", json={}, headers=host)
        assert started.status_code == 200, started.text
        refused(
            await http.post(f"{url}/join", json={"partner": "extra"}, headers=h["late"]),
            409,
            "event_started",
        )
        refused(await http.post(f"{url}/leave", headers=h["p4b"]), 409, "event_started")
        refused(await http.post(f"{url}/start", json={}, headers=host), 409, "event_started")

        pairs = {p["pair"]: (p["player"], p["partner"]) for p in started.json()["pairs"]}
        clients = {n: TableClient(nc, subjects, n) for pair in PAIRS for n in pair}
        played: set[str] = set()
        sealed_checked = over_checked = False
        deadline = time.monotonic() + 900
        while True:
            shown = (await http.get(url, headers=host)).json()
            if shown["event"]["status"] == "finished":
                break
            assert time.monotonic() < deadline, shown
            todo = [g for g in shown["games"] if g["game_id"] and g["game_id"] not in played]
            if not todo:
                await asyncio.sleep(0.2)
                continue
            if not sealed_checked:  # a board in play is no public read: others hold its cards
                refused(
                    await http.get(f"/api/games/{todo[0]['game_id']}/events"), 403, "board_in_play"
                )
                spy = WsClient(gateway.ws_url, h["free"]["Authorization"].split()[-1])
                await spy.connect()
                await spy.send({"type": "subscribe", "game_id": todo[0]["game_id"]})
                assert (await spy.expect("error"))["code"] == "board_in_play"
                await spy.close()
                sealed_checked = True

            async def play(g: dict[str, Any]) -> None:
                ns, ew = pairs[g["ns_pair"]], pairs[g["ew_pair"]]
                seats = [clients[ns[0]], clients[ew[0]], clients[ns[1]], clients[ew[1]]]
                await play_together(seats, g["game_id"])

            first, *rest = todo
            await play(first)
            if rest and not over_checked:  # over at its table, not at the other: still sealed
                who = pairs[first["ns_pair"]][0]
                listed = (await http.get(f"/api/players/{who}/games")).json()
                assert first["game_id"] not in [x["game_id"] for x in listed]
                refused(
                    await http.get(f"/api/games/{first['game_id']}/events"), 403, "board_in_play"
                )
                over_checked = True
            await asyncio.gather(*(play(g) for g in rest))
            played.update(g["game_id"] for g in todo)

        # every table's board played in full, one hand a board, two boards at two tables
        games = shown["games"]
        assert len(games) == 4
        assert all(g["ns_points"] is not None for g in games)
        nets: dict[tuple[int, int], int] = {}
        seats: dict[tuple[int, int], str] = {}
        dealt: dict[int, list[tuple[tuple[str, ...], ...]]] = {}
        for g in games:
            events = await logged(event_store, g["game_id"])
            scored = [e for e in events if isinstance(e, wire.HandScored)]
            assert len(scored) == 1
            ns_points, ew_points = scored[0].points
            assert (g["ns_points"], g["ew_points"]) == (ns_points, ew_points)
            nets[g["board"], g["ns_pair"]] = ns_points - ew_points
            nets[g["board"], g["ew_pair"]] = ew_points - ns_points
            seats[g["board"], g["ns_pair"]] = "NS"
            seats[g["board"], g["ew_pair"]] = "EW"
            hands = [e.hands for e in events if isinstance(e, wire.HandDealt)]
            dealt.setdefault(g["board"], []).extend(hands)
            opened = next(e for e in events if isinstance(e, wire.TableOpened))
            ns, ew = pairs[g["ns_pair"]], pairs[g["ew_pair"]]
            assert opened.players == (ns[0], ew[0], ns[1], ew[1])
        for board, hands in dealt.items():  # the same cards at the same seats at both tables
            assert len(hands) == 2, board
            assert hands[0] == hands[1], board
        assert dealt[1][0] != dealt[2][0]

        want = expected_matchpoints(nets, seats)
        standings = {s["pair"]: s for s in shown["standings"]}
        for pair, (mp, top) in want.items():
            assert (standings[pair]["matchpoints"], standings[pair]["top"]) == (mp, top), pair
            assert standings[pair]["percent"] == round(100 * mp / top, 2)
            assert standings[pair]["boards"] == 2
        assert sum(s["matchpoints"] for s in shown["standings"]) == 4 * 2  # 2 a board and side
        ranks = [s["rank"] for s in shown["standings"]]
        assert ranks == sorted(ranks)
        for score in shown["scores"]:
            assert score["net"] == nets[score["board"], score["pair"]]

        # the seeds are revealed: each is its commitment's, and deals every board's games
        for board in shown["boards"]:
            seed = board["seed"]
            assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitments[board["board"]]
        for g in games:
            done = await asyncio.to_thread(
                subprocess.run,
                [
                    sys.executable,
                    "-m",
                    "services.tools.cli",
                    "verify",
                    g["game_id"],
                    "--commitment",
                    commitments[g["board"]],
                ],
                env=service_env | {"PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            assert "deals verified: 1 hands" in done.stdout
            wrong = commitments[2 if g["board"] == 1 else 1]
            other = await asyncio.to_thread(
                subprocess.run,
                [
                    sys.executable,
                    "-m",
                    "services.tools.cli",
                    "verify",
                    g["game_id"],
                    "--commitment",
                    wrong,
                ],
                env=service_env | {"PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert other.returncode == 1
            assert "commitment_mismatch" in other.stdout
        # over: the boards are public again; the log tells the whole story in order
        assert (await http.get(f"/api/games/{games[0]['game_id']}/events")).status_code == 200
        listed = (await http.get("/api/players/p1a/games")).json()
        assert {g["game_id"] for g in games if 1 in (g["ns_pair"], g["ew_pair"])} <= {
            x["game_id"] for x in listed
        }
        kinds = [e["type"] for e in (await http.get(f"{url}/log", headers=host)).json()]
        assert kinds[:2] == ["EventCreated", "BoardsCommitted"]
        assert kinds.count("PairJoined") == 4
        assert kinds.count("BoardResult") == 4
        assert kinds.count("RoundStarted") == 2
        # the movement: round 1 pair 1 N-S against 4, 3 against 2; round 2 pair 2 against 1
        # (pair 1 now East-West), 3 against 4
        assert [(g["board"], g["round"], g["ns_pair"], g["ew_pair"]) for g in games] == [
            (1, 1, 1, 4),
            (1, 1, 3, 2),
            (2, 2, 2, 1),
            (2, 2, 3, 4),
        ]
        assert kinds[-2:] == ["SeedsRevealed", "EventFinished"]
        mine = (await http.get("/api/events", headers=h["p3b"])).json()
        assert [e["event_id"] for e in mine] == [event_id]
        await ws.close()


def spades(service_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run the `spades` command against the test's database."""
    return subprocess.run(
        [sys.executable, "-m", "services.tools.cli", *args],
        env=service_env | {"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_an_operators_public_event_takes_no_bots_and_starts_at_its_time(
    processes: Processes, service_env: dict[str, str], tmp_path: Path
) -> None:
    # the stack's clock reads the real time until the test writes this file (the start)
    clock = tmp_path / "clock"
    gateway = await platform(processes, SPADES_CLOCK_FILE=str(clock))
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, "ann", "bob", "cyd", "dan", "eve", "fay")
        bad = await asyncio.to_thread(
            spades,
            service_env,
            "events",
            "create",
            "--name",
            "x",
            "--start",
            "+1",
            "--rules",
            "players=2",
        )
        assert bad.returncode == 2
        assert "4 players" in bad.stdout
        made = await asyncio.to_thread(
            spades,
            service_env,
            "events",
            "create",
            "--name",
            "Open pairs",
            "--start",
            "+1",
            "--boards",
            "1",
            "--rounds",
            "1",
            "--max-pairs",
            "4",
        )
        assert made.returncode == 0, made.stdout + made.stderr
        event_id = made.stdout.split()[1]
        later = await asyncio.to_thread(
            spades,
            service_env,
            "events",
            "create",
            "--name",
            "Later",
            "--start",
            "+120",
            "--signup-minutes",
            "30",
        )
        later_id = later.stdout.split()[1]
        url = f"/api/events/{event_id}"
        public = (await http.get(url)).json()  # anyone reads the page and its commitments
        assert (public["event"]["private"], public["event"]["host"]) == (False, None)
        assert len(public["boards"]) == 1
        refused(
            await http.post(f"{url}/join", json={"partner": "bot"}, headers=h["ann"]),
            400,
            "bots_not_allowed",
        )
        refused(
            await http.post(
                f"/api/events/{later_id}/join", json={"partner": "bob"}, headers=h["ann"]
            ),
            409,
            "signup_not_open",
        )
        for player, partner in (("ann", "bob"), ("cyd", "dan"), ("eve", "fay")):
            joined = await http.post(f"{url}/join", json={"partner": partner}, headers=h[player])
            assert joined.status_code == 200, joined.text
        listed = (await http.get("/api/events", headers=h["ann"])).json()
        assert {e["event_id"] for e in listed} >= {event_id, later_id}

        assert (await http.get(url)).json()["event"]["status"] == "open"
        clock.write_text(str(public["event"]["starts_at"] + 1))  # its time has come

        async def running() -> dict[str, Any] | None:
            shown = (await http.get(url)).json()
            return shown if shown["event"]["status"] == "running" else None

        shown = await eventually(running, within=120, what="the event to start at its time")
        # three pairs: the last one entered sits out, the first two play board 1 at table 1
        assert [p["player"] for p in shown["pairs"]] == ["ann", "cyd"]
        assert [(g["board"], g["table"], g["ns_pair"], g["ew_pair"]) for g in shown["games"]] == [
            (1, 1, 1, 2)
        ]
        log = [e["type"] for e in (await http.get(f"{url}/log")).json()]
        assert log[-4:] == ["PairLeft", "EventStarted", "RoundStarted", "BoardOpened"]
        cancelled = await asyncio.to_thread(spades, service_env, "events", "cancel", later_id)
        assert cancelled.returncode == 0, cancelled.stdout
        assert (await http.get(f"/api/events/{later_id}")).json()["event"]["status"] == "cancelled"
        again = await asyncio.to_thread(spades, service_env, "events", "cancel", event_id)
        assert again.returncode == 1
        listing = await asyncio.to_thread(spades, service_env, "events", "list")
        assert "Open pairs" in listing.stdout
