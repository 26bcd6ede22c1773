"""A Swiss event against the real gateway, table and bot worker: four pairs, three rounds of
one board, every seat played by a test player (`tests.moves`). Round 1 pairs by number;
rounds 2 and 3 are paired only once the round before is complete, from the totals, and are
checked against the pairing worked out here by hand from the games' own logs (the leader
meets the best pair it has not met, so four pairs meet each other once over three rounds);
the standings are the total matchpoints; the boards' deals were committed at creation and
revealed at the end; a bad format or round count is its own code and changes nothing."""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any

import httpx
from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from tests.gateway.test_events import expected_matchpoints
from tests.gateway.test_friends import platform, refused, tokens_of
from tests.gateway.test_leave import logged
from tests.infra import Processes
from tests.services.tablekit import TableClient, play_together

PAIRS = [("s1a", "s1b"), ("s2a", "s2b"), ("s3a", "s3b"), ("s4a", "s4b")]


def imps(difference: int) -> int:
    """The IMP scale of the duplicate event, written out again: 10, 30, 50, 80, 110, 150,
    200, 250, 300, 400, 500, 600 points are 1 to 12 IMPs."""
    steps = (10, 30, 50, 80, 110, 150, 200, 250, 300, 400, 500, 600)
    size = sum(1 for s in steps if abs(difference) >= s)
    return size if difference >= 0 else -size


def totals_after(
    nets: dict[tuple[int, int], int], seats: dict[tuple[int, int], str], boards: int
) -> dict[int, tuple[int, int]]:
    """Each pair's (matchpoints, cross-IMPs) over boards 1..``boards``."""
    out: dict[int, tuple[int, int]] = {}
    for (board, pair), net in nets.items():
        if board > boards:
            continue
        same = [
            other
            for (b, p), other in nets.items()
            if b == board and p != pair and seats[b, p] == seats[board, pair]
        ]
        mp = sum(2 if net > o else 1 if net == o else 0 for o in same)
        imp = sum(imps(net - o) for o in same)
        got, had = out.get(pair, (0, 0))
        out[pair] = (got + mp, had + imp)
    return out


async def test_four_pairs_three_swiss_rounds_paired_from_the_standings(
    processes: Processes,
    event_store: PostgresEventStore,
    nc: NATS,
    subjects: Subjects,
) -> None:
    gateway = await platform(processes)
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, *[n for pair in PAIRS for n in pair])
        host = h["s1a"]
        refused(
            await http.post("/api/events", json={"name": "x", "format": "arena?"}, headers=host),
            400,
            "unknown_format",
        )
        refused(
            await http.post(
                "/api/events",
                json={"name": "x", "format": "swiss", "rounds": 4, "max_pairs": 4},
                headers=host,
            ),
            400,
            "bad_rounds",
        )
        assert (await http.get("/api/events", headers=host)).json() == []
        made = await http.post(
            "/api/events",
            json={
                "name": "Swiss night",
                "format": "swiss",
                "boards_per_round": 1,
                "rounds": 3,
                "max_pairs": 4,
            },
            headers=host,
        )
        assert made.status_code == 201, made.text
        event = made.json()
        assert event["event"]["format"] == "swiss"
        event_id = event["event"]["event_id"]
        url = f"/api/events/{event_id}"
        commitments = {b["board"]: b["commitment"] for b in event["boards"]}
        assert sorted(commitments) == [1, 2, 3]  # every round's board committed now
        assert all(b["seed"] is None for b in event["boards"])
        for player, partner in PAIRS:
            joined = await http.post(f"{url}/join", json={"partner": partner}, headers=h[player])
            assert joined.status_code == 200, joined.text
        started = await http.post(f"{url}/start", json={}, headers=host)
        assert started.status_code == 200, started.text
        shown = started.json()
        assert (shown["event"]["status"], shown["event"]["round"]) == ("running", 1)
        # only round 1 is paired: by number, the first-named pair North-South
        assert [(g["round"], g["ns_pair"], g["ew_pair"]) for g in shown["games"]] == [
            (1, 1, 2),
            (1, 3, 4),
        ]
        pairs = {p["pair"]: (p["player"], p["partner"]) for p in shown["pairs"]}
        clients = {n: TableClient(nc, subjects, n) for pair in PAIRS for n in pair}
        played: set[str] = set()
        rounds_seen: dict[int, list[tuple[int, int]]] = {}
        deadline = time.monotonic() + 900
        while True:
            shown = (await http.get(url, headers=host)).json()
            for g in shown["games"]:
                rounds_seen.setdefault(g["round"], [])
            if shown["event"]["status"] == "finished":
                break
            assert time.monotonic() < deadline, shown
            # a round's tables exist only once the round before it is complete
            latest = max(g["round"] for g in shown["games"])
            assert all(g["ns_points"] is not None for g in shown["games"] if g["round"] < latest)
            todo = [g for g in shown["games"] if g["game_id"] and g["game_id"] not in played]
            if not todo:
                await asyncio.sleep(0.2)
                continue

            async def play(g: dict[str, Any]) -> None:
                ns, ew = pairs[g["ns_pair"]], pairs[g["ew_pair"]]
                seats = [clients[ns[0]], clients[ew[0]], clients[ns[1]], clients[ew[1]]]
                await play_together(seats, g["game_id"])

            await asyncio.gather(*(play(g) for g in todo))
            played.update(g["game_id"] for g in todo)

        games = shown["games"]
        assert len(games) == 6
        assert all(g["ns_points"] is not None for g in games)
        nets: dict[tuple[int, int], int] = {}
        seats: dict[tuple[int, int], str] = {}
        dealt: dict[int, list[Any]] = {}
        for g in games:
            assert g["board"] == g["round"]  # one board a round: round r plays board r
            events = await logged(event_store, g["game_id"])
            scored = [e for e in events if isinstance(e, wire.HandScored)]
            assert len(scored) == 1
            ns_points, ew_points = scored[0].points
            assert (g["ns_points"], g["ew_points"]) == (ns_points, ew_points)
            nets[g["board"], g["ns_pair"]] = ns_points - ew_points
            nets[g["board"], g["ew_pair"]] = ew_points - ns_points
            seats[g["board"], g["ns_pair"]] = "NS"
            seats[g["board"], g["ew_pair"]] = "EW"
            dealt.setdefault(g["board"], []).extend(
                e.hands for e in events if isinstance(e, wire.HandDealt)
            )
        for board, hands in dealt.items():  # both tables of a round held the same cards
            assert len(hands) == 2, board
            assert hands[0] == hands[1], board

        # the pairing by hand: order by matchpoints, then IMPs, then number; the leader meets
        # the best-placed pair it has not met, the other two meet each other; the pair that
        # sat North-South less often does so (equal: the higher-placed one)
        met = {frozenset((1, 2)), frozenset((3, 4))}
        ns_times = {1: 1, 3: 1}
        for round_ in (2, 3):
            after = totals_after(nets, seats, round_ - 1)
            order = sorted(pairs, key=lambda p: (-after[p][0], -after[p][1], p))
            leader = order[0]
            foe = next(p for p in order[1:] if frozenset((leader, p)) not in met)
            rest = [p for p in order if p not in (leader, foe)]
            want = []
            for a, b in ((leader, foe), (rest[0], rest[1])):
                ns, ew = (b, a) if ns_times.get(a, 0) > ns_times.get(b, 0) else (a, b)
                want.append((ns, ew))
            got = [(g["ns_pair"], g["ew_pair"]) for g in games if g["round"] == round_]
            assert got == want, (round_, after, got, want)
            for ns, ew in got:
                met.add(frozenset((ns, ew)))
                ns_times[ns] = ns_times.get(ns, 0) + 1
        assert len(met) == 6  # a round robin: every pair met every other once

        # the Swiss standing is the total: matchpoints and top over the three boards
        want_mp = expected_matchpoints(nets, seats)
        standings = {s["pair"]: s for s in shown["standings"]}
        for pair, (mp, top) in want_mp.items():
            assert (standings[pair]["matchpoints"], standings[pair]["top"]) == (mp, top), pair
            assert standings[pair]["boards"] == 3
        assert sum(s["matchpoints"] for s in shown["standings"]) == 3 * 2 * 2
        totals = [s["matchpoints"] for s in shown["standings"]]
        assert totals == sorted(totals, reverse=True)

        # the seeds revealed match the commitments published at creation
        for board in shown["boards"]:
            digest = hashlib.sha256(bytes.fromhex(board["seed"])).hexdigest()
            assert digest == commitments[board["board"]]
        log = (await http.get(f"{url}/log", headers=host)).json()
        kinds = [e["type"] for e in log]
        assert kinds.count("RoundPaired") == 3
        assert kinds.count("RoundStarted") == 3
        paired = [e["body"] for e in log if e["type"] == "RoundPaired"]
        assert [p["round"] for p in paired] == [1, 2, 3]
        assert [p["tables"] for p in paired[1:]] == [
            [[g["ns_pair"], g["ew_pair"]] for g in games if g["round"] == r] for r in (2, 3)
        ]
        assert kinds[-2:] == ["SeedsRevealed", "EventFinished"]


async def _play_through(
    http: httpx.AsyncClient,
    url: str,
    host: dict[str, str],
    pairs: dict[int, tuple[str, str]],
    clients: dict[str, TableClient],
) -> dict[str, Any]:
    """Play every board of the event as it opens; return the finished page."""
    played: set[str] = set()
    deadline = time.monotonic() + 900
    while True:
        shown: dict[str, Any] = (await http.get(url, headers=host)).json()
        if shown["event"]["status"] == "finished":
            return shown
        assert time.monotonic() < deadline, shown
        todo = [g for g in shown["games"] if g["game_id"] and g["game_id"] not in played]
        if not todo:
            await asyncio.sleep(0.2)
            continue

        async def play(g: dict[str, Any]) -> None:
            ns, ew = pairs[g["ns_pair"]], pairs[g["ew_pair"]]
            seats = [clients[ns[0]], clients[ew[0]], clients[ns[1]], clients[ew[1]]]
            await play_together(seats, g["game_id"])

        await asyncio.gather(*(play(g) for g in todo))
        played.update(g["game_id"] for g in todo)


def _clean_pairing(order: list[int], met: set[frozenset[int]]) -> list[tuple[int, int]] | None:
    """Top-down pairing without a rematch, the next candidate tried when the rest fail."""
    if not order:
        return []
    for i, other in enumerate(order[1:], 1):
        if frozenset((order[0], other)) in met:
            continue
        rest = _clean_pairing(order[1:i] + order[i + 1 :], met)
        if rest is not None:
            return [(order[0], other), *rest]
    return None


async def test_an_odd_swiss_field_gives_a_rotating_bye_worth_an_average(
    processes: Processes, event_store: PostgresEventStore, nc: NATS, subjects: Subjects
) -> None:
    gateway = await platform(processes)
    five = [(f"o{i}a", f"o{i}b") for i in range(1, 6)]
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        h = await tokens_of(http, *[n for pair in five for n in pair])
        host = h["o1a"]
        made = await http.post(
            "/api/events",
            json={"name": "Odd Swiss", "format": "swiss", "boards_per_round": 1, "rounds": 2},
            headers=host,
        )
        assert made.status_code == 201, made.text
        url = f"/api/events/{made.json()['event']['event_id']}"
        for player, partner in five:
            joined = await http.post(f"{url}/join", json={"partner": partner}, headers=h[player])
            assert joined.status_code == 200, joined.text
        started = await http.post(f"{url}/start", json={}, headers=host)  # five: no bots
        assert started.status_code == 200, started.text
        # round 1: by number, pair 5 (the last, no bye yet) sits out
        assert [(g["ns_pair"], g["ew_pair"]) for g in started.json()["games"]] == [(1, 2), (3, 4)]
        pairs = {p["pair"]: (p["player"], p["partner"]) for p in started.json()["pairs"]}
        assert len(pairs) == 5
        clients = {n: TableClient(nc, subjects, n) for pair in five for n in pair}
        shown = await _play_through(http, url, host, pairs, clients)

        games = shown["games"]
        nets: dict[tuple[int, int], int] = {}
        seats: dict[tuple[int, int], str] = {}
        for g in games:
            nets[g["board"], g["ns_pair"]] = g["ns_points"] - g["ew_points"]
            nets[g["board"], g["ew_pair"]] = g["ew_points"] - g["ns_points"]
            seats[g["board"], g["ns_pair"]] = "NS"
            seats[g["board"], g["ew_pair"]] = "EW"
        # after round 1: pair 5's bye is worth half the board's top (2 for one other table): 1
        after = totals_after(nets, seats, 1)
        after[5] = (1, 0)
        order = sorted(pairs, key=lambda p: (-after[p][0], -after[p][1], p))
        # round 2's bye: the lowest-placed pair that has had none (pair 5 had one)
        bye = next(p for p in reversed(order) if p != 5)
        met = {frozenset((1, 2)), frozenset((3, 4))}
        tables = _clean_pairing([p for p in order if p != bye], met)
        assert tables is not None
        ns_times = {1: 1, 3: 1}
        want = [(b, a) if ns_times.get(a, 0) > ns_times.get(b, 0) else (a, b) for a, b in tables]
        assert [(g["ns_pair"], g["ew_pair"]) for g in games if g["round"] == 2] == want
        byes = [s for s in shown["scores"] if s["direction"] == "BYE"]
        assert [(s["board"], s["pair"], s["matchpoints"], s["top"]) for s in byes] == [
            (1, 5, 1, 2),
            (2, bye, 1, 2),
        ]
        # the standing is the total, the bye's average included
        want_mp = expected_matchpoints(nets, seats)
        for s in shown["standings"]:
            mp, top = want_mp.get(s["pair"], (0, 0))
            got_bye = sum(b["matchpoints"] for b in byes if b["pair"] == s["pair"])
            assert (s["matchpoints"], s["top"]) == (mp + got_bye, top + 2 * (got_bye > 0))
            assert s["boards"] == 2
        log = (await http.get(f"{url}/log", headers=host)).json()
        assert [e["body"]["bye"] for e in log if e["type"] == "RoundPaired"] == [5, bye]
        assert not any(e["type"] == "PairLeft" for e in log)  # nobody was left out
