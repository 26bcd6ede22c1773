"""Personal statistics (`services/rating/stats.py`): a hand-made game's numbers checked by
hand, and a whole bot game through real relay, rating and gateway processes to
`GET /api/players/{id}/stats`, checked against the game's own events."""

from __future__ import annotations

import random
import uuid
from typing import Any

import httpx
import msgspec
import pytest

import engine
from events.contracts import game as wire
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from services.rating.stats import fold_game
from services.records.fairness import bot_game
from tests.gateway.conftest import start_gateway
from tests.infra import Processes, eventually

PLAYERS = ("ann", "bob", "cy", "di")


def opened(ladder: str = "standard", players: tuple[str, ...] = PLAYERS) -> wire.TableOpened:
    return wire.TableOpened(game_id="g", ladder=ladder, rated=True, players=players)


def test_one_game_folded_by_hand() -> None:
    rules = engine.Ruleset(bag_limit=3).to_dict()
    events: list[Any] = [
        opened(),
        wire.GameStarted(rules=rules, seed=1, dealer=3),
        wire.HandDealt(hand=1, dealer=3, hands=()),
        wire.BidPlaced(seat=0, tricks=3),
        wire.BidPlaced(seat=1, tricks=0),  # bob: nil
        wire.BidPlaced(seat=2, tricks=4),
        wire.BidPlaced(seat=3, tricks=2),
        # ann+cy bid 7 took 9: made, 2 over, 2 bags; bob's nil failed (1 trick: a bag),
        # di bid 2 took 3: made, 1 over; their side 2 bags
        wire.HandScored(
            hand=1, tricks=(4, 1, 5, 3), points=(72, -78), scores=(72, -78), bags=(2, 2)
        ),
        wire.HandDealt(hand=2, dealer=0, hands=()),
        wire.BlindNilDeclared(seat=1),  # bob: blind nil, made
        wire.BidPlaced(seat=2, tricks=6),
        wire.BidPlaced(seat=3, tricks=5),
        wire.BidPlaced(seat=0, tricks=0),  # ann: nil, made
        # cy bid 6 took 8: 2 over, 2 + 2 = 4 bags reach the limit of 3: one penalty, 1 carried;
        # di bid 5 took 5: made exactly
        wire.HandScored(
            hand=2, tricks=(0, 0, 8, 5), points=(62, 250), scores=(134, 172), bags=(1, 2)
        ),
        wire.GameFinished(winner=1, reason="target", scores=(134, 172)),
    ]
    lines = fold_game(events)
    ann, bob, cy, di = (lines[s] for s in range(4))
    assert (ann.hands, ann.bids, ann.made, ann.set, dict(ann.over_by)) == (2, 1, 1, 0, {2: 1})
    assert (ann.nil, ann.nil_made, ann.points, ann.won) == (1, 1, 134, False)
    assert (ann.bags, ann.bag_penalties) == (4, 1)
    assert (cy.bids, cy.made, dict(cy.over_by), cy.bag_penalties) == (2, 2, {2: 2}, 1)
    assert (bob.nil, bob.nil_made, bob.blind_nil, bob.blind_nil_made) == (1, 0, 1, 1)
    assert (bob.bids, bob.won, bob.points, bob.bags, bob.bag_penalties) == (0, True, 172, 2, 0)
    assert (di.bids, di.made, di.set, dict(di.over_by)) == (2, 2, 0, {1: 1, 0: 1})
    assert (ann.partners, ann.opponents) == (("cy",), ("bob", "di"))


def test_a_field_game_has_no_partners() -> None:
    rules = engine.Ruleset(players=3, blind_nil=False, blind_nil_exchange=0).to_dict()
    events: list[Any] = [
        opened("cut-throat", ("x", "y", "z")),
        wire.GameStarted(rules=rules, seed=1, dealer=2),
        wire.HandDealt(hand=1, dealer=2, hands=()),
        wire.BidPlaced(seat=0, tricks=5),
        wire.BidPlaced(seat=1, tricks=6),
        wire.BidPlaced(seat=2, tricks=5),
        wire.HandScored(
            hand=1, tricks=(4, 7, 6), points=(-50, 61, 51), scores=(-50, 61, 51), bags=(0, 1, 1)
        ),
    ]
    x, y, z = (fold_game(events)[s] for s in range(3))
    assert (x.partners, x.opponents) == ((), ("y", "z"))
    assert (x.made, x.set, y.made, dict(y.over_by), z.bags) == (0, 1, 1, {1: 1}, 1)


def played_game(
    players: tuple[str, ...], seed: int, ladder: str = "standard"
) -> list[wire.GameEvent]:
    """A whole game the baseline bots play, as the table would record it on ``ladder``."""
    rng = random.Random(seed)
    played = bot_game(engine.Ruleset(), f"{seed:064x}", {}, rng)
    events: list[wire.GameEvent] = [
        wire.TableOpened(game_id="g", ladder=ladder, rated=True, players=players)
    ]
    for event in played:
        out = wire.to_wire(event)
        if isinstance(out, wire.GameFinished):
            out = msgspec.structs.replace(out, ladder=ladder, rated=True, players=players)
        events.append(out)
    return events


@pytest.mark.infra
async def test_a_finished_game_shows_in_the_players_statistics(
    processes: Processes, event_store: PostgresEventStore
) -> None:
    ops = {"SPADES_OPS_PORT": "0"}
    for service in ("relay", "rating"):
        processes.start("-m", "services.tools.cli", "serve", service, env=ops)
    gateway = await start_gateway(processes)
    tag = uuid.uuid4().hex[:6]
    players = tuple(f"{name}{tag}" for name in PLAYERS)
    events = played_game(players, seed=7)
    await event_store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(e) for e in events])
    finished = events[-1]
    assert isinstance(finished, wire.GameFinished)
    scored = [e for e in events if isinstance(e, wire.HandScored)]

    async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as http:

        async def stats() -> Any:
            answer = await http.get(f"/api/players/{players[1]}/stats")
            rated = answer.status_code == 200 and answer.json()["ladders"][0]["rating_history"]
            return answer.json() if rated else None

        body = await eventually(stats, within=90, what="the game in bob's statistics")
        nobody = await http.get("/api/players/nobody-here/stats")
        unknown = await http.get(f"/api/players/{players[1]}/stats?ladder=no-such")
    (mine,) = body["ladders"]
    assert mine["ladder"] == "standard"
    assert (mine["games"], mine["wins"]) == (1, int(finished.winner == 1))
    assert mine["hands"] == len(scored)
    assert mine["points"] == finished.scores[1]  # a side's points over the hands: its score
    assert mine["made"] + mine["set"] == mine["bids"]
    assert sum(mine["over_by"].values()) == mine["made"]
    bids = [e for e in events if isinstance(e, wire.BidPlaced) and e.seat == 1]
    nils = sum(1 for e in bids if e.tricks == 0)
    blind = sum(1 for e in events if isinstance(e, wire.BlindNilDeclared) and e.seat == 1)
    assert (mine["nil"], mine["blind_nil"], mine["bids"]) == (nils, blind, len(bids) - nils)
    assert mine["points_per_hand"] == round(finished.scores[1] / len(scored), 2)
    assert mine["partners"] == [{"player_id": players[3], "games": 1}]
    assert {m["player_id"] for m in mine["opponents"]} == {players[0], players[2]}
    assert len(mine["rating_history"]) == 1
    assert (nobody.status_code, nobody.json()["code"]) == (404, "not_found")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_ladder")
