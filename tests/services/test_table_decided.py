"""Issue 23: the table folds the engine events `decide` returned, never a rebuilt copy.

Every way a table decides (a seat's command, a bot's move, a timeout and an abandonment, a
player leaving, table talk, the opening, a restarted clock) returns a `Decided`: its wire
events and the engine state after each, computed by applying the engine's own events once.
These tests hold the two paths to one result: the states the append path folds equal the
states the load path gets from the stored wire events, event by event, and a table rebuilt
from the store equals the table that folded in memory, in every variant.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

import engine
import engine.bot
from events.contracts import game as wire
from events.contracts.game import stream_of
from events.contracts.talk import Say
from events.envelope import REGISTRY
from events.store import InMemoryEventStore
from services.table.decided import Decided
from services.table.openings import opening_events
from services.table.tables import Rejected, Table
from services.tools.simulate import VARIANTS, variant_rules
from tests.services.tablekit import append_as_the_table

PEOPLE = ("ann", "bob", "cy", "di", "eve")


def _loaded(state: engine.GameState, events: list[wire.GameEvent]) -> list[engine.GameState]:
    """Return the states after each event the way a game read from the store gets them."""
    return [after for _, _, after in wire.steps(events, state)]


async def _append(store: InMemoryEventStore, table: Table, decided: Decided) -> None:
    """Check ``decided`` against the load path, then append and fold it as the service does."""
    assert isinstance(decided, Decided)
    assert len(decided.after) == len(decided) > 0
    assert decided.after == _loaded(table.state, decided)
    before = table.version
    await append_as_the_table(store, table, decided)
    stored = await store.read(stream_of(table.game_id), before + 1)
    # what the store holds is the wire form decided
    assert [REGISTRY.decode(s) for s in stored] == list(decided)


async def _reloaded(store: InMemoryEventStore, game_id: str) -> Table:
    table = Table(game_id)
    for stored in await store.read(stream_of(game_id)):
        table.fold(stored, REGISTRY.decode(stored))
    return table


def _same(memory: Table, loaded: Table) -> None:
    assert loaded.version == memory.version
    assert loaded.state == memory.state
    assert loaded.released_state == memory.released_state
    assert (loaded.streaks, loaded.abandoned) == (memory.streaks, memory.abandoned)


@given(
    variant=st.sampled_from(sorted(VARIANTS)),
    seed=st.integers(0, 2**31),
    practice=st.booleans(),
    committed=st.booleans(),
)
def test_the_states_folded_are_the_states_a_load_computes(
    variant: str, seed: int, practice: bool, committed: bool
) -> None:
    asyncio.run(_play(variant_rules(variant, []), seed, practice=practice, committed=committed))


async def _play(rules: engine.Ruleset, seed: int, *, practice: bool, committed: bool) -> None:
    """Play up to 300 actions of every kind a table decides, checking each against a load."""
    count = rules.players
    players = (PEOPLE[0], *(f"bot:{s}" for s in range(1, count))) if practice else PEOPLE[:count]
    bots = tuple(range(1, count)) if practice else ()
    game_id = str(uuid.UUID(int=seed, version=4))
    store = InMemoryEventStore()
    table = Table(game_id)
    rng = random.Random(seed)
    await _append(
        store,
        table,
        opening_events(
            game_id,
            ladder="practice" if practice else "casual",
            rated=False,
            players=players,
            bots=bots,
            rules=rules,
            seed=seed,
            turn_seconds=25.0,
            server_seed=f"{seed:064x}" if committed else "",
            contributors=tuple(s for s in range(count) if s not in bots) if committed else (),
        ),
    )
    if table.seeding:
        await _append(store, table, table.close_seeding_events())
    for _ in range(300):
        seat = table.seat_to_act()
        if seat is None:
            break
        roll = rng.random()
        if seat in table.bot_seats():
            decided = table.bot_events(seat)
        elif roll < 0.1:
            decided = table.timeout_events(seat, abandon_streak=2)
        elif roll < 0.15:
            try:  # courtesy is not said during the bidding: talk_wrong_phase, nothing changes
                decided = table.decide(players[seat], Say(preset="nice"))
            except Rejected:
                continue
        else:
            move = engine.bot.choose(engine.view(table.state, seat), rng)
            decided = table.decide(players[seat], wire.command_to_wire(move))
        await _append(store, table, decided)
        restart = table.clock_restart(time.time() + 1000)
        if restart is not None and rng.random() < 0.05:
            await _append(store, table, Decided.facts(table.state, restart))
    if not table.over:
        for person in [p for s, p in enumerate(players) if s not in table.bot_seats()]:
            await _append(store, table, table.leave_events(person))
    _same(table, await _reloaded(store, game_id))


@pytest.mark.parametrize("rated", [False, True])
async def test_an_ended_table_decides_its_end_through_the_engine(rated: bool) -> None:
    """The table's own ends (everybody left, an idle untimed table) are engine events too:
    `GameFinished` applied once, recorded with the table's fields."""
    store = InMemoryEventStore()
    game_id = str(uuid.uuid4())
    table = Table(game_id)
    opening = opening_events(
        game_id,
        ladder="casual",
        rated=rated,
        players=PEOPLE[:4],
        bots=(),
        rules=engine.Ruleset(),
        seed=3,
        turn_seconds=25.0,
    )
    await _append(store, table, opening)
    for person in PEOPLE[:3]:
        await _append(store, table, table.leave_events(person))
    last = table.leave_events(PEOPLE[3])
    finished = [e for e in last if isinstance(e, wire.GameFinished)]
    assert finished == ([] if rated else [finished[0]])
    if not rated:
        assert (finished[0].reason, finished[0].winner, finished[0].abandoned) == (
            "abandoned",
            -1,
            (0, 1, 2, 3),
        )
        assert last.after[-1].phase == "over"
    await _append(store, table, last)
    assert table.over is not rated
    _same(table, await _reloaded(store, game_id))
