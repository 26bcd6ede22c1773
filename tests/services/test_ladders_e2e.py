"""Ladders of the shipped file through real relay, matchmaking and table processes: a
cut-throat queue seats three players each for himself, five players five, the slow ladder
opens unrated games on its own clock, the fast one on its own; and the rating service rates
a cut-throat field."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import pytest
import structlog
from nats.aio.client import Client as NATS

from events.consumer import Received
from events.contracts.game import GameFinished, TableOpened, game_id_of_match
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.rating.app import rate_finished_game
from services.rating.model import MU0
from tests.infra import Processes, eventually
from tests.services.test_matchmaking_service import (
    OPS,
    SERVICE,
    answering,
    join,
    matches,
    new_players,
)

pytestmark = pytest.mark.infra


async def opened(store: PostgresEventStore, match_id: str) -> TableOpened | None:
    events = await store.read(f"game-{game_id_of_match(match_id)}")
    first = REGISTRY.decode(events[0]) if events else None
    return first if isinstance(first, TableOpened) else None


async def test_each_ladder_seats_its_own_table_with_its_rules_rating_and_clock(
    processes: Processes, event_store: PostgresEventStore, nc: NATS, subjects: Subjects
) -> None:
    for service in ("relay", "table", "matchmaking"):
        processes.start(*SERVICE, service, env=OPS)
    await eventually(lambda: answering(nc, subjects), within=60, what="matchmaking answers")
    seated = {
        "cut-throat": new_players(3),
        "five": new_players(5),
        "classic": new_players(4),
        "blitz": new_players(4),
    }
    for ladder, players in seated.items():
        for player in players:
            answer = await eventually(
                lambda p=player, lad=ladder: _queued(nc, subjects, p, lad),
                within=60,
                what=f"{player} queued on {ladder}",
            )
            assert answer["code"] == "queued"
    found: dict[str, Any] = {}
    for ladder, players in seated.items():
        (match,) = await eventually(
            lambda lad=ladder: matches(event_store, lad), within=60, what=f"a {ladder} match"
        )
        assert sorted(match.seats) == sorted(players)
        assert match.rules["players"] == len(players)
        found[ladder] = await eventually(
            lambda m=match: opened(event_store, m.match_id), within=60, what=f"{ladder} opened"
        )
    cut, slow, fast = found["cut-throat"], found["classic"], found["blitz"]
    assert (len(cut.players), cut.rated, cut.ladder) == (3, True, "cut-throat")
    assert (len(found["five"].players), found["five"].rated) == (5, True)
    assert (slow.rated, slow.turn_seconds) == (False, 60.0)
    assert (fast.rated, fast.turn_seconds) == (True, 10.0)


async def _queued(nc: NATS, subjects: Subjects, player: str, ladder: str) -> Any:
    answer = await join(nc, subjects, player, ladder)
    return answer if answer["code"] != "unavailable" else None  # its lease is being taken


async def test_a_cut_throat_game_is_rated_as_a_field_by_final_score(
    pg_pool: asyncpg.Pool, event_store: PostgresEventStore
) -> None:
    finished = GameFinished(
        winner=1,
        reason="target",
        scores=(120, 510, 300),
        ladder="cut-throat",
        rated=True,
        players=("third", "first", "second"),
    )
    (stored,) = await event_store.append(f"game-{uuid.uuid4()}", 0, [REGISTRY.new_event(finished)])
    received = Received(stored, REGISTRY.decode(stored), "ev.game.x.GameFinished", 1)
    async with pg_pool.acquire() as conn, conn.transaction():
        outcome = await rate_finished_game(conn, received, structlog.get_logger("test"))
    assert outcome == "applied"
    rows = await pg_pool.fetch("SELECT player_id, mu FROM ratings WHERE ladder = 'cut-throat'")
    mu = {r["player_id"]: r["mu"] for r in rows}
    assert mu["first"] > mu["second"] > mu["third"]
    assert mu["first"] > MU0 > mu["third"]
