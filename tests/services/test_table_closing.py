"""Issue 13, item 1: a table nobody plays at any more ends, recorded in its log."""

from __future__ import annotations

import uuid

import pytest

import engine
from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.store import InMemoryEventStore
from services.table.openings import opening_events
from services.table.tables import ABANDONED, Rejected, Table
from tests.services.test_tables import _commit

HUMANS = ("ann", "bob", "cy", "di")


async def _open(
    store: InMemoryEventStore, *, ladder: str, rated: bool, players: tuple[str, ...]
) -> Table:
    game_id = str(uuid.uuid4())
    bots = tuple(i for i, p in enumerate(players) if p.startswith("bot:"))
    events = opening_events(
        game_id,
        ladder=ladder,
        rated=rated,
        players=players,
        bots=bots,
        rules=engine.ranked_default(),
        seed=7,
        turn_seconds=25,
    )
    table = Table(game_id)
    await _commit(store, table, events, actor="table")
    return table


async def _idle(store: InMemoryEventStore, table: Table, idle: set[int]) -> list[wire.GameEvent]:
    """Let the seats in ``idle`` time out at every turn (the others' bots play) until all of
    them are abandoned or the game is over; return every event appended."""
    appended: list[wire.GameEvent] = []
    while not table.over and not idle <= table.abandoned:
        seat = table.seat_to_act()
        assert seat is not None
        if seat in idle and seat not in table.abandoned:
            events = table.timeout_events(seat, abandon_streak=3)
        else:
            events = table.bot_events(seat)
        appended += events
        await _commit(store, table, events, actor="timeout")
    return appended


async def test_an_idle_practice_table_closes_when_its_person_is_abandoned() -> None:
    store = InMemoryEventStore()
    table = await _open(
        store, ladder="practice", rated=False, players=("ann", "bot:1", "bot:2", "bot:3")
    )
    appended = await _idle(store, table, {0})
    abandoned = [e for e in appended if isinstance(e, wire.SeatAbandoned)]
    assert [e.seat for e in abandoned] == [0]
    last = appended[-1]
    assert isinstance(last, wire.GameFinished)
    assert appended[-2] == abandoned[0]  # closed in the same batch, no bot move between
    assert last.reason == ABANDONED
    assert last.winner == -1
    assert not last.rated
    assert last.abandoned == (0,)
    assert last.scores == table.state.scores
    assert table.over
    assert table.seat_to_act() is None  # no timer, no bot: nothing runs on


async def test_a_casual_table_closes_only_when_its_last_person_is_gone() -> None:
    store = InMemoryEventStore()
    table = await _open(store, ladder="casual", rated=False, players=HUMANS)
    await _idle(store, table, {0, 1, 2})
    assert table.abandoned == {0, 1, 2}
    assert not table.over  # di is still there
    assert table.closing_events() == []
    appended = await _idle(store, table, {3})
    finished = appended[-1]
    assert isinstance(finished, wire.GameFinished)
    assert finished.reason == ABANDONED
    assert finished.abandoned == (0, 1, 2, 3)


async def test_a_rated_game_is_played_out_by_the_bots_for_its_result() -> None:
    store = InMemoryEventStore()
    table = await _open(store, ladder="standard", rated=True, players=HUMANS)
    await _idle(store, table, {0, 1, 2, 3})
    assert table.abandoned == {0, 1, 2, 3}
    assert table.closing_events() == []
    assert not table.over
    while not table.over:  # bots finish it: ratings need its result
        seat = table.seat_to_act()
        assert seat is not None
        await _commit(store, table, table.bot_events(seat), actor="bot")
    assert table.state.reason != ABANDONED


async def test_leaving_a_practice_table_closes_it_at_once_recorded_as_a_leave() -> None:
    store = InMemoryEventStore()
    table = await _open(
        store, ladder="practice", rated=False, players=("ann", "bot:1", "bot:2", "bot:3")
    )
    events = table.leave_events("ann")
    await _commit(store, table, events, actor="ann")
    assert events[0] == wire.SeatAbandoned(seat=0, player_id="ann", streak=0, left=True)
    finished = events[-1]
    assert isinstance(finished, wire.GameFinished)
    assert (finished.reason, finished.winner, finished.abandoned) == (ABANDONED, -1, (0,))
    assert table.over
    assert table.seat_to_act() is None


async def test_leaving_a_casual_table_seats_a_bot_and_the_last_leave_closes_it() -> None:
    store = InMemoryEventStore()
    table = await _open(store, ladder="casual", rated=False, players=HUMANS)
    before = table.version
    await _commit(store, table, table.leave_events("bob"), actor="bob")
    assert table.version == before + 1  # the leave alone: the others play on
    assert table.abandoned == {1}
    assert 1 in table.bot_seats()
    assert not table.over
    for player in ("ann", "cy"):
        await _commit(store, table, table.leave_events(player), actor=player)
    assert not table.over
    await _commit(store, table, table.leave_events("di"), actor="di")
    assert table.over
    assert table.state.reason == ABANDONED


async def test_resigning_a_rated_game_is_an_abandonment_the_bots_play_out() -> None:
    store = InMemoryEventStore()
    table = await _open(store, ladder="standard", rated=True, players=HUMANS)
    await _commit(store, table, table.leave_events("cy"), actor="cy")
    assert table.abandoned == {2}
    assert not table.over
    while not table.over:
        seat = table.seat_to_act()
        assert seat is not None
        await _commit(store, table, table.bot_events(seat), actor="bot")
    finished = REGISTRY.decode((await store.read(stream_of(table.game_id)))[-1])
    assert isinstance(finished, wire.GameFinished)
    assert finished.rated
    assert finished.abandoned == (2,)  # charged as an abandonment: a loss for cy


async def test_a_refused_leave_says_why_and_changes_nothing() -> None:
    store = InMemoryEventStore()
    table = await _open(store, ladder="casual", rated=False, players=HUMANS)
    await _commit(store, table, table.leave_events("ann"), actor="ann")
    version = table.version
    for player, code in (("zed", "not_your_seat"), ("ann", "seat_abandoned")):
        with pytest.raises(Rejected) as refused:
            table.leave_events(player)
        assert refused.value.code == code
        assert str(refused.value)
    assert table.abandoned == {0}
    assert table.version == version
    practice = await _open(
        store, ladder="practice", rated=False, players=("ann", "bot:1", "bot:2", "bot:3")
    )
    await _commit(store, practice, practice.leave_events("ann"), actor="ann")
    with pytest.raises(Rejected) as over:
        practice.leave_events("ann")
    assert over.value.code == "game_over"
