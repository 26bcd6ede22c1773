"""Table bench: the table's own CPU per play, without servers.

Whole four-seat games are played through a `services.table.tables.Table` the way the table
service handles a seat's command (`services.table.app`): decode the request's JSON, decide
through the engine, compute the states after the events, make the store's records (JSON,
metadata), append (an in-memory store: no database), fold into the table, build every
audience's messages (`services.table.audiences.frame`) and encode the frame for NATS. The
moves are chosen by the baseline bot outside the measured span, so the figure is the table's
work alone: what one card costs a table replica's CPU before PostgreSQL and NATS.

    uv run --frozen python -m benchmarks table

Figures (also in ``artifacts/bench.json``): ``table.cpu_us_per_play`` (process CPU µs per
accepted command: the mean of a round, the median of SPADES_BENCH_TABLE_ROUNDS rounds, 3),
``table.cpu_us_per_play_median`` (one play's median over every round: the steadier figure on a
loaded machine), ``table.decide_us_per_play_median`` (its first part: decoding the request,
deciding through the engine, the engine states after the events) and ``table.plays`` (the
commands of one round: SPADES_BENCH_TABLE_GAMES games, 20). The load average when the run
started is in ``meta.table``.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
import uuid

import msgspec

import engine
import engine.bot
from benchmarks import artifact
from events.contracts import game as wire
from events.contracts.audience import FRAMES
from events.contracts.game import stream_of
from events.store import InMemoryEventStore
from services.table import commit
from services.table.openings import opening_events
from services.table.tables import Table

GAMES = int(os.environ.get("SPADES_BENCH_TABLE_GAMES", "20"))
ROUNDS = int(os.environ.get("SPADES_BENCH_TABLE_ROUNDS", "3"))
PLAYERS = ("ann", "bob", "cy", "di")
_requests = msgspec.json.Decoder(wire.AnyTableRequest)


async def _commit(
    store: InMemoryEventStore,
    table: Table,
    events: list[wire.GameEvent],
    states: list[engine.GameState],
) -> int:
    """Append ``events`` (leading to ``states``) as the service does; return the frame's size."""
    now = time.time()
    new = commit.records(table, events, states, now, id_seed=str(uuid.uuid4()), actor="x")
    stored = await store.append(stream_of(table.game_id), table.version, new)
    return len(FRAMES.encode(commit.fold(table, stored, events, states, now)))


async def _round(seed: int) -> tuple[list[float], list[float]]:
    """Play ``GAMES`` games; return the CPU seconds of the table's work on each play, and of
    its first part: decoding, deciding and the states after the events."""
    rng = random.Random(seed)
    cpu: list[float] = []
    deciding: list[float] = []
    for g in range(GAMES):
        store = InMemoryEventStore()
        game_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        table = Table(game_id)
        rules = engine.Ruleset(target=500)
        opening = opening_events(
            game_id,
            ladder="casual",
            rated=False,
            players=PLAYERS,
            bots=(),
            rules=rules,
            seed=seed * 1000 + g,
            turn_seconds=25.0,
        )
        await _commit(store, table, opening, table.states_after(opening))
        while not table.over:
            seat = table.state.turn
            move = engine.bot.choose(engine.view(table.state, seat), rng)
            body = msgspec.json.encode(
                wire.SubmitCommand(
                    game_id=game_id,
                    player_id=PLAYERS[seat],
                    command_id=uuid.uuid4(),
                    command=wire.command_to_wire(move),
                )
            )
            started = time.process_time_ns()
            request = _requests.decode(body)
            assert isinstance(request, wire.SubmitCommand)
            events = table.decide(request.player_id, request.command)
            states = table.states_after(events)
            decided = time.process_time_ns()
            await _commit(store, table, events, states)
            cpu.append((time.process_time_ns() - started) / 1e9)
            deciding.append((decided - started) / 1e9)
    return cpu, deciding


def main() -> None:
    """Run the rounds, print and record the figures."""
    meta = artifact.run_metadata()
    results = [asyncio.run(_round(r + 1)) for r in range(ROUNDS)]
    rounds = [cpu for cpu, _ in results]
    mean = statistics.median(sum(cpu) / len(cpu) * 1e6 for cpu in rounds)
    plays = sorted(t * 1e6 for cpu in rounds for t in cpu)
    median = plays[len(plays) // 2]
    decides = sorted(t * 1e6 for _, part in results for t in part)
    deciding = decides[len(decides) // 2]
    print(
        f"table: {mean:.1f} µs CPU per play (the median round's mean; {ROUNDS} rounds of "
        f"{len(rounds[0])} plays), a play's median {median:.1f} µs, of which deciding "
        f"(decode, decide, the states after) {deciding:.1f} µs"
    )
    print(f"       load average at start: {meta['load_average_start']}")
    figures = {
        "table.cpu_us_per_play": mean,
        "table.cpu_us_per_play_median": median,
        "table.decide_us_per_play_median": deciding,
        "table.plays": len(rounds[0]),
    }
    artifact.record("table", figures, meta)
