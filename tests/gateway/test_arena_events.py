"""An arena against the real gateway, table and bot worker, on a test clock
(SPADES_CLOCK_FILE): four pairs of a player and a bot (a private event), one-hand games;
the players' seats are played by test clients (`tests.moves`), the bots' by the bot tier.
Free pairs are paired as soon as two are free; a paused pair gets no game until it comes
back; once the clock passes the end no game opens, the games in play finish and count, and
the event ends with the last one. The standings are checked against the points worked out
here from the games' own logs (`GameFinished`), the audit log against the games; bad
requests each have their own code and change nothing."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.test_friends import platform, refused, tokens_of
from tests.gateway.test_leave import logged
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually
from tests.services.tablekit import TableClient, play_together

PLAYERS = ["ar1", "ar2", "ar3", "ar4"]


def hand_worked_points(results: list[tuple[int, int, int, int]]) -> dict[int, list[int]]:
    """Each pair's points game by game from (game number, NS pair, EW pair, winning side:
    0 NS, 1 EW, -1 a draw): a win 2, a draw 1, a loss 0, doubled after two wins in a row."""
    out: dict[int, list[int]] = {}
    wins_in_a_row: dict[int, int] = {}
    for _, ns, ew, side in sorted(results):
        for pair, mine in ((ns, 0), (ew, 1)):
            base = 1 if side == -1 else 2 if side == mine else 0
            on_fire = wins_in_a_row.get(pair, 0) >= 2
            out.setdefault(pair, []).append(base * (2 if on_fire else 1))
            wins_in_a_row[pair] = wins_in_a_row.get(pair, 0) + 1 if base == 2 else 0
    return out


async def test_four_pairs_play_an_arena_paired_while_free_until_the_clock_runs_out(
    processes: Processes,
    event_store: PostgresEventStore,
    nc: NATS,
    subjects: Subjects,
    service_env: dict[str, str],
    tmp_path: Path,
) -> None:
    clock = tmp_path / "clock"
    clock.write_text(str(time.time()))  # the arena's time stands still until moved
    gateway = await platform(processes, SPADES_CLOCK_FILE=str(clock))
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, *PLAYERS, "late")
        host = h["ar1"]
        bad: list[tuple[dict[str, Any], str]] = [
            ({"name": "x", "format": "arena"}, "bad_duration"),
            ({"name": "x", "format": "arena", "minutes": 0}, "bad_duration"),
            ({"name": "x", "format": "arena", "minutes": 601}, "bad_duration"),
            ({"name": "x", "format": "duplicate", "minutes": 5}, "bad_duration"),
            ({"name": "x", "format": "arena", "minutes": 5, "rules": {"players": 3}}, ""),
        ]
        for body, code in bad:
            answer = await http.post("/api/events", json=body, headers=host)
            refused(answer, 400, code or "invalid_ruleset")
        assert (await http.get("/api/events", headers=host)).json() == []
        cli = await asyncio.to_thread(
            subprocess.run,
            [
                sys.executable,
                "-m",
                "services.tools.cli",
                *("events", "create", "--name", "x", "--start", "+1", "--format", "arena"),
            ],
            env=service_env | {"PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert cli.returncode == 2, cli.stdout + cli.stderr
        assert "bad_duration" in cli.stdout

        def spades(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "services.tools.cli", "events", "create", *args],
                env=service_env | {"PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )

        zero = await asyncio.to_thread(
            spades, "--name", "x", "--start", "+1", "--format", "arena", "--minutes", "0"
        )
        assert zero.returncode == 2, zero.stdout + zero.stderr
        public = await asyncio.to_thread(
            spades,
            *("--name", "Open arena", "--start", "+60", "--format", "arena"),
            *("--minutes", "10", "--rules", "target=200"),
        )
        assert public.returncode == 0, public.stdout + public.stderr
        shown_public = (await http.get(f"/api/events/{public.stdout.split()[1]}")).json()
        assert (shown_public["event"]["format"], shown_public["event"]["minutes"]) == ("arena", 10)
        assert shown_public["event"]["private"] is False
        assert shown_public["rules"].get("hand_cap") != 1  # whole games, not one hand
        assert shown_public["rules"]["target"] == 200
        refused(
            await http.post(
                f"/api/events/{shown_public['event']['event_id']}/join",
                json={"partner": "bot"},
                headers=h["late"],
            ),
            400,
            "bots_not_allowed",
        )

        made = await http.post(
            "/api/events",
            json={
                "name": "Lunch arena",
                "format": "arena",
                "minutes": 30,
                "rules": {"hand_cap": 1},
                "max_pairs": 6,
            },
            headers=host,
        )
        assert made.status_code == 201, made.text
        event = made.json()
        assert event["event"]["format"] == "arena"
        assert (event["event"]["minutes"], event["event"]["ends_at"]) == (30, None)
        assert event["boards"] == []
        assert event["arena"]["games"] == []
        assert event["rules"]["hand_cap"] == 1
        event_id = event["event"]["event_id"]
        url = f"/api/events/{event_id}"
        refused(await http.post(f"{url}/resume", headers=host), 409, "not_entered")
        for player in PLAYERS:
            joined = await http.post(f"{url}/join", json={"partner": "bot"}, headers=h[player])
            assert joined.status_code == 200, joined.text
        refused(await http.post(f"{url}/resume", headers=h["ar2"]), 409, "not_paused")

        ws = WsClient(gateway.ws_url, h["ar2"]["Authorization"].split()[-1])
        await ws.connect()
        started = await http.post(f"{url}/start", json={}, headers=host)
        assert started.status_code == 200, started.text
        shown = started.json()
        assert shown["event"]["status"] == "running"
        assert abs(shown["event"]["ends_at"] - (float(clock.read_text()) + 30 * 60)) < 0.01
        # nobody has points: the order is by number, 1 meets 2 and 3 meets 4
        assert [(g["ns_pair"], g["ew_pair"]) for g in shown["arena"]["games"]] == [(1, 2), (3, 4)]
        pushed = await ws.expect("event_standings", within=60)
        assert pushed["event_id"] == event_id
        assert pushed["arena"] is not None
        pairs = {p["pair"]: p["player"] for p in shown["pairs"]}

        # pair 4 pauses at once: its game goes on, it gets no new one
        paused = await http.post(f"{url}/leave", headers=h["ar4"])
        assert paused.status_code == 200, paused.text
        assert paused.json()["arena"]["paused"] == [4]
        assert (await http.post(f"{url}/leave", headers=h["ar4"])).status_code == 200  # a retry

        clients = {n: TableClient(nc, subjects, n) for n in PLAYERS}
        playing: dict[str, asyncio.Task[None]] = {}
        done = asyncio.Event()

        async def player_loop() -> None:
            while not done.is_set():
                page = (await http.get(url)).json()
                for g in page["arena"]["games"]:
                    if g["game_id"] not in playing:
                        seats = [clients[pairs[g["ns_pair"]]], clients[pairs[g["ew_pair"]]]]
                        playing[g["game_id"]] = asyncio.create_task(
                            play_together(seats, g["game_id"])
                        )
                await asyncio.sleep(0.2)

        loop = asyncio.create_task(player_loop())
        try:

            async def page_when(test: Any, what: str) -> dict[str, Any]:
                async def check() -> dict[str, Any] | None:
                    page: dict[str, Any] = (await http.get(url)).json()
                    return page if test(page) else None

                return await eventually(check, within=300, what=what)

            def results(page: dict[str, Any]) -> int:
                return sum(g["winner"] is not None for g in page["arena"]["games"])

            await page_when(lambda p: results(p) >= 3, "three arena games over")
            log = (await http.get(f"{url}/log")).json()
            after_pause = log[next(i for i, e in enumerate(log) if e["type"] == "PairPaused") :]
            assert not [
                e
                for e in after_pause
                if e["type"] == "ArenaGameOpened" and 4 in (e["body"]["ns"], e["body"]["ew"])
            ]
            back = await http.post(f"{url}/resume", headers=h["ar4"])
            assert back.status_code == 200, back.text
            assert back.json()["arena"]["paused"] == []
            refused(await http.post(f"{url}/resume", headers=h["ar4"]), 409, "not_paused")
            back_at = len((await http.get(f"{url}/log")).json())
            page = await page_when(
                lambda p: any(4 in (g["ns_pair"], g["ew_pair"]) for g in p["arena"]["games"][2:]),
                "pair 4 paired again after coming back",
            )
            await page_when(lambda p: results(p) >= 6, "six arena games over")
            # the clock passes the end: nobody enters, pauses or comes back, no game opens
            ends_at = page["event"]["ends_at"]
            clock.write_text(str(ends_at + 1))
            refused(
                await http.post(f"{url}/join", json={"partner": "bot"}, headers=h["late"]),
                409,
                "event_over",
            )
            refused(await http.post(f"{url}/leave", headers=h["ar1"]), 409, "event_over")
            refused(await http.post(f"{url}/resume", headers=h["ar1"]), 409, "event_over")
            final = await page_when(
                lambda p: p["event"]["status"] == "finished", "the arena to finish"
            )
        finally:
            done.set()
            loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loop
            for task in playing.values():
                task.cancel()
            await asyncio.gather(*playing.values(), return_exceptions=True)
            await ws.close()

        games = final["arena"]["games"]
        assert all(g["winner"] is not None for g in games)  # the games in play finished
        log = (await http.get(f"{url}/log")).json()
        opened = [e["body"] for e in log if e["type"] == "ArenaGameOpened"]
        assert [o["game"] for o in opened] == [g["number"] for g in games]
        assert all(o["clock"] < ends_at for o in opened)  # none after the end
        assert any(
            e["type"] == "ArenaGameOpened" and 4 in (e["body"]["ns"], e["body"]["ew"])
            for e in log[back_at:]
        )
        # the standings from the games' own logs, worked out by hand
        results_by_hand = []
        for g in games:
            events = await logged(event_store, g["game_id"])
            opened_table = next(e for e in events if isinstance(e, wire.TableOpened))
            ns, ew = pairs[g["ns_pair"]], pairs[g["ew_pair"]]
            assert opened_table.players == (ns, ew, "bot:2", "bot:3")
            assert not opened_table.rated
            finished = [e for e in events if isinstance(e, wire.GameFinished)]
            assert len(finished) == 1
            side = finished[0].winner
            results_by_hand.append((g["number"], g["ns_pair"], g["ew_pair"], side))
            want_winner = {0: g["ns_pair"], 1: g["ew_pair"]}.get(side, 0)
            assert g["winner"] == want_winner
            assert (g["ns_score"], g["ew_score"]) == tuple(finished[0].scores)
            # every game's deal committed as every game's is: its seed revealed at the end
            assert any(isinstance(e, wire.SeedRevealed) for e in events)
        points = hand_worked_points(results_by_hand)
        standings = {s["pair"]: s for s in final["arena"]["standings"]}
        assert set(standings) == {1, 2, 3, 4}
        for pair in (1, 2, 3, 4):
            mine = points.get(pair, [])
            assert standings[pair]["points"] == sum(mine), (pair, mine)
            assert standings[pair]["games"] == len(mine)
        order = [s["points"] for s in final["arena"]["standings"]]
        assert order == sorted(order, reverse=True)
        by_game = {r["body"]["game"]: r["body"] for r in log if r["type"] == "ArenaGameResult"}
        assert sorted(by_game) == [g["number"] for g in games]
        for g in games:
            assert (by_game[g["number"]]["ns_points"], by_game[g["number"]]["ew_points"]) == (
                g["ns_points"],
                g["ew_points"],
            )
        kinds = [e["type"] for e in log]
        assert kinds[0] == "EventCreated"
        assert "BoardsCommitted" not in kinds
        assert kinds[-1] == "EventFinished"
        assert (kinds.count("PairPaused"), kinds.count("PairResumed")) == (1, 1)
        assert log[-1]["body"]["standings"] == final["arena"]["standings"]
        # not a duplicate board: a finished arena game is public at once
        assert (await http.get(f"/api/games/{games[0]['game_id']}/events")).status_code == 200
