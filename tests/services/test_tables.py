"""The table aggregate without servers: seating, rejections, timeouts and abandonment."""

from __future__ import annotations

import json
import uuid

import pytest

import engine
import engine.search
from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY, Metadata
from events.store import InMemoryEventStore
from services.table import audiences
from services.table.openings import opening_events
from services.table.tables import Rejected, Table, event_ids
from tests.moves import choose

PLAYERS = ("ann", "bob", "cy", "di")


async def _table(store: InMemoryEventStore, **how: object) -> Table:
    game_id = str(uuid.uuid4())
    events = opening_events(
        game_id,
        ladder="standard",
        rated=True,
        players=PLAYERS,
        bots=(),
        rules=engine.ranked_default(),
        seed=42,
        turn_seconds=25,
        **how,  # type: ignore[arg-type]
    )
    table = Table(game_id)
    await _commit(store, table, events, actor="table")
    return table


async def _commit(
    store: InMemoryEventStore, table: Table, events: list[wire.GameEvent], *, actor: str
) -> None:
    command_id = uuid.uuid4()
    new = [
        REGISTRY.new_event(e, Metadata(actor=actor, command_id=command_id), event_id=i)
        for e, i in zip(events, event_ids(str(command_id), len(events)), strict=True)
    ]
    for stored in await store.append(stream_of(table.game_id), table.version, new):
        table.fold(stored, REGISTRY.decode(stored))


def _suggested(table: Table, player: str) -> wire.AnySeatCommand:
    view = table.view(player)
    assert view.suggestion is None  # a rated game: no help
    picked: wire.AnySeatCommand = choose(view.legal, view.hand)
    return picked


async def test_a_player_without_a_seat_is_refused() -> None:
    table = await _table(InMemoryEventStore())
    with pytest.raises(Rejected) as caught:
        table.decide("mallory", wire.PlaceBid(tricks=3))
    assert caught.value.code == "not_your_seat"


async def test_acting_out_of_turn_names_the_rule() -> None:
    table = await _table(InMemoryEventStore())
    waiting = PLAYERS[(table.seat_to_act() or 0) + 1 & 3]
    with pytest.raises(Rejected) as caught:
        table.decide(waiting, wire.PlaceBid(tricks=3))
    assert caught.value.code == "out_of_turn"


async def test_a_card_that_does_not_exist_is_malformed() -> None:
    table = await _table(InMemoryEventStore())
    with pytest.raises(Rejected) as caught:
        table.decide(PLAYERS[table.seat_to_act() or 0], wire.PlayCard(card="1X"))
    assert caught.value.code == "malformed"


async def test_a_game_that_was_never_opened_is_unknown() -> None:
    with pytest.raises(Rejected) as caught:
        Table("nope").decide("ann", wire.PlaceBid(tricks=1))
    assert caught.value.code == "unknown_game"


async def test_timeouts_build_a_streak_and_the_third_abandons_the_seat() -> None:
    store = InMemoryEventStore()
    table = await _table(store)
    first = table.seat_to_act()
    assert first is not None
    streaks = []
    while first not in table.abandoned:
        seat = table.seat_to_act()
        assert seat is not None
        if seat == first:
            events = table.timeout_events(seat, abandon_streak=3)
            streaks.append(events[0])
            await _commit(store, table, events, actor="timeout")
        else:
            await _commit(store, table, table.bot_events(seat), actor=PLAYERS[seat])
    assert [(e.seat, e.streak) for e in streaks] == [(first, 1), (first, 2), (first, 3)]
    assert first in table.bot_seats()
    with pytest.raises(Rejected) as caught:
        table.decide(PLAYERS[first], wire.PlaceBid(tricks=1))
    assert caught.value.code == "seat_abandoned"


async def test_acting_in_time_resets_the_streak() -> None:
    store = InMemoryEventStore()
    table = await _table(store)
    seat = table.seat_to_act()
    assert seat is not None
    await _commit(store, table, table.timeout_events(seat, abandon_streak=3), actor="timeout")
    assert table.streaks[seat] == 1
    while table.seat_to_act() != seat:
        other = table.seat_to_act()
        assert other is not None
        await _commit(store, table, table.bot_events(other), actor=PLAYERS[other])
    own = table.decide(PLAYERS[seat], _suggested(table, PLAYERS[seat]))
    await _commit(store, table, own, actor=PLAYERS[seat])
    assert table.streaks[seat] == 0


async def test_game_finished_says_who_played_and_who_abandoned() -> None:
    store = InMemoryEventStore()
    table = await _table(store)
    quitter = table.seat_to_act()
    assert quitter is not None
    while not table.over:
        seat = table.seat_to_act()
        assert seat is not None
        if seat == quitter and seat not in table.abandoned:
            await _commit(store, table, table.timeout_events(seat, 3), actor="timeout")
        else:
            await _commit(store, table, table.bot_events(seat), actor="bot")
    stored = await store.read(stream_of(table.game_id))
    finished = REGISTRY.decode(stored[-1])
    assert isinstance(finished, wire.GameFinished)
    assert finished.players == PLAYERS
    assert finished.abandoned == (quitter,)
    assert finished.rated
    assert finished.ladder == "standard"


async def test_a_spectator_view_has_no_hand_and_no_suggestion() -> None:
    table = await _table(InMemoryEventStore())
    view = table.view("someone-watching")
    assert view.seat == engine.SPECTATOR
    assert view.hand == ()
    assert view.suggestion is None
    assert view.legal == ()


async def _practice(store: InMemoryEventStore, level: str) -> Table:
    game_id = str(uuid.uuid4())
    events = opening_events(
        game_id,
        ladder="practice",
        rated=False,
        players=("ann", "bot:1", "bot:2", "bot:3"),
        bots=(1, 2, 3),
        rules=engine.ranked_default(),
        seed=7,
        turn_seconds=25,
        bot_level=level,
    )
    table = Table(game_id)
    await _commit(store, table, events, actor="table")
    return table


def _no_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any search on this process fail the test: the table never runs one."""

    def refused(level: str, **budget: object) -> object:
        raise AssertionError(f"the table ran the {level} bot: that belongs to the bot tier")

    monkeypatch.setattr(engine.search, "player", refused)


async def test_a_practice_tables_bots_play_at_its_level(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_search(monkeypatch)
    store = InMemoryEventStore()
    table = await _practice(store, "strong")
    assert table.opened is not None
    assert table.opened.bot_level == "strong"
    assert {table.bot_level(seat) for seat in (1, 2, 3)} == {"strong"}  # asked of the tier
    while table.state.turn != 0 and not table.over:
        seat = table.state.turn
        # the move the tier decided is what the table plays (here: the baseline's)
        await _commit(store, table, table.bot_events(seat, table.baseline_move(seat)), actor="bot")
    # A view never searches: the seat's hint is the one the bot tier gave for this turn.
    assert table.view("ann").suggestion is None
    legal = engine.view(table.state, 0).legal
    table.hint = (table.version, 0, legal[-1])
    assert table.view("ann").suggestion == wire.command_to_wire(legal[-1])
    table.hint = (table.version - 1, 0, legal[-1])  # a hint of an earlier turn is stale
    assert table.view("ann").suggestion is None


async def test_a_rated_tables_timeout_bot_is_the_strong_one_and_it_gives_no_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_search(monkeypatch)
    store = InMemoryEventStore()
    table = await _table(store)
    seat = table.state.turn
    assert table.bot_level(seat) == "strong"  # a seat a person left gets the strong bot
    await _commit(store, table, table.timeout_events(seat, abandon_streak=3), actor="timeout")
    _suggested(table, PLAYERS[table.state.turn])  # asserts the view carries no suggestion


async def test_a_game_served_again_records_a_full_turn_its_timer_and_clock_share() -> None:
    """After an outage (a take-over, the database or NATS away) the turn clock restarts from
    the moment the game is served again, RECORDED as `TurnClockRestarted` with its deadline:
    the timer, the clock every watcher is told and a replica reading the log later all agree;
    a game that moved a moment ago, a bot's turn or an untimed table has nothing to restart."""
    store = InMemoryEventStore()
    table = Table(str(uuid.uuid4()))
    events = opening_events(
        table.game_id,
        ladder="standard",
        rated=True,
        players=PLAYERS,
        bots=(),
        rules=engine.ranked_default(),
        seed=42,
        turn_seconds=25,
    )
    recorded = 1000.0  # the deadline written before the outage, long past "now" below
    new = [
        REGISTRY.new_event(e, Metadata(actor="table", deadline=recorded), event_id=i)
        for e, i in zip(events, event_ids(table.game_id, len(events)), strict=True)
    ]
    for stored in await store.append(stream_of(table.game_id), 0, new):
        table.fold(stored, REGISTRY.decode(stored))
    seat = table.seat_to_act()
    assert seat is not None
    assert (table.deadline, table.turn_deadline) == (recorded, recorded)

    restart = table.clock_restart(5000.0)
    assert restart == wire.TurnClockRestarted(seat=seat, seconds=4025.0)
    deadline = table.deadline_after([restart], table.state, 5000.0)
    assert deadline == 5025.0
    metadata = Metadata(actor="table", deadline=deadline)
    version = table.version
    [stored] = await store.append(
        stream_of(table.game_id), version, [REGISTRY.new_event(restart, metadata)]
    )
    table.fold(stored, REGISTRY.decode(stored))
    assert (table.deadline, table.turn_deadline) == (5025.0, 5025.0)
    assert table.seat_to_act() == seat  # the engine never saw it: still his turn
    shown = json.loads(audiences.clock_message(table, 5000.0))
    assert shown["deadline"] == table.deadline  # the clock shown is the timer's
    turn = json.loads(audiences.turn_message(table, seat))
    assert turn["deadline"] == table.deadline
    again = Table(table.game_id)  # another replica, later: the log has the restart
    for stored in await store.read(stream_of(table.game_id)):
        again.fold(stored, REGISTRY.decode(stored))
    assert (again.deadline, again.turn_deadline, again.version) == (5025.0, 5025.0, version + 1)
    assert wire.redact(restart, -1) is restart  # every audience is told it as it is

    assert table.clock_restart(5000.5) is None  # it just moved: nothing to give back
    assert table.clock_restart(10.0) is None  # never earlier than already granted
    table.abandoned.add(seat)  # a bot's turn: no clock to restart
    assert table.clock_restart(9000.0) is None
