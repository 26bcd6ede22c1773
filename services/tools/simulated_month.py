"""Fill an event store with simulated finished rated games (bots, committed deals): the
input of the export's test and of the figures in its closing note."""

from __future__ import annotations

import random
import uuid

import asyncpg

import engine
from events.contracts import game as wire
from events.contracts.rating import RatingChange, RatingsUpdated, rating_stream
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from services.records.fairness import bot_game


async def add_games(
    pool: asyncpg.Pool, count: int, *, seed: int = 0, rules: engine.Ruleset | None = None
) -> list[str]:
    """Append ``count`` finished rated games and their rating updates; return their ids."""
    store = PostgresEventStore(pool)
    rng = random.Random(seed)
    rules = rules or engine.Ruleset()
    ids = []
    for n in range(count):
        game_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        players = tuple(f"sim{rng.randrange(40)}-{s}" for s in range(4))
        contributions = {s: rng.randbytes(32).hex() for s in range(4) if rng.random() < 0.9}
        played = bot_game(rules, rng.randbytes(32).hex(), contributions, rng)
        opened = wire.TableOpened(
            game_id=game_id, ladder="ranked", rated=True, players=players, match_id=f"m{n}"
        )
        events = [opened] + [
            wire.to_wire(e, ladder="ranked", rated=True, players=players)
            if isinstance(e, engine.GameFinished)
            else wire.to_wire(e)
            for e in played
        ]
        await store.append(f"game-{game_id}", 0, [REGISTRY.new_event(e) for e in events])
        changes = tuple(
            RatingChange(
                player_id=player,
                mu_before=25,
                sigma_before=8.3,
                mu_after=26,
                sigma_after=8.1,
                ordinal_before=0.1,
                ordinal_after=1.7,
                games=1,
            )
            for player in players
        )
        update = RatingsUpdated(game_id=game_id, ladder="ranked", changes=changes)
        await store.append(rating_stream(game_id), 0, [REGISTRY.new_event(update)])
        ids.append(game_id)
    return ids
