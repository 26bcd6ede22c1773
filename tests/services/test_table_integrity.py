"""Issue 26, "Integrity, second round", the table service's share (the items' numbers are the
issue's): a bounded cache of finished games; untimed practice tables that end when idle."""

from __future__ import annotations

import uuid

from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.table.tables import FinishedTables, Table
from tests.infra import Processes, eventually
from tests.services.opskit import gauge, ops_port
from tests.services.tablekit import TableClient
from tests.services.test_table_service import game_events, play_to_the_end, start_table

# -- 8. finished games: kept least recently used first, within a byte limit ------------------


def test_finished_tables_keep_the_most_recently_read_within_the_byte_limit() -> None:
    cache = FinishedTables(limit=100)
    sizes = {"a": 40, "b": 30, "c": 30, "d": 50, "big": 101}
    tables = {name: Table(name, stored_bytes=size) for name, size in sizes.items()}
    for name in ("a", "b", "c"):
        cache.put(tables[name])
    assert (cache.bytes, len(cache), cache.evicted) == (100, 3, 0)
    assert cache.get("a") is tables["a"]  # read again: now the most recent
    cache.put(tables["d"])  # 150 bytes: b then c go, the least recently read
    assert list(cache.tables) == ["a", "d"]
    assert (cache.bytes, cache.evicted) == (90, 2)
    cache.put(tables["big"])  # larger than the whole limit: not kept, nothing else dropped
    assert list(cache.tables) == ["a", "d"]
    assert cache.get("big") is None
    cache.pop("a")
    assert (cache.bytes, len(cache)) == (50, 1)


async def test_reading_old_games_keeps_the_table_within_its_cache_bytes(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    """Every finished game the table loaded for a view or a catch-up stayed in its memory for
    good: reading old games grew it without bound."""
    # one real game to its end, then copies of its log under new ids: old games to read
    client = TableClient(nc, subjects, "ann")
    probe = start_table(processes, SPADES_TABLE_FINISHED_CACHE_BYTES="1")
    opened = await client.open_practice(target=200)
    assert opened.ok, opened
    await play_to_the_end(client, opened.game_id)
    size = sum(len(s.data) for s in await event_store.read(stream_of(opened.game_id)))
    events = await game_events(event_store, opened.game_id)
    copies = [str(uuid.uuid4()) for _ in range(8)]
    for game_id in copies:
        await event_store.append(stream_of(game_id), 0, [REGISTRY.new_event(e) for e in events])
    probe.terminate()  # type: ignore[attr-defined]
    probe.wait()  # type: ignore[attr-defined]

    table = start_table(processes, SPADES_TABLE_FINISHED_CACHE_BYTES=str(3 * size + size // 2))
    port = await ops_port(processes, table)  # type: ignore[arg-type]
    for game_id in copies:
        assert (await client.view(game_id)).phase == "over"
    assert gauge(port, "spades_table_finished_cache_games") == 3
    assert gauge(port, "spades_table_finished_cache_bytes") == 3 * size
    assert gauge(port, "spades_table_finished_cache_evictions_total") == len(copies) - 3
    # a game dropped is read from the log again, the same
    assert (await client.view(copies[0])).phase == "over"
    assert gauge(port, "spades_table_finished_cache_games") == 3


# -- 1. untimed practice tables end when nobody acts at them ----------------------------------


async def test_an_idle_untimed_practice_table_closes_through_its_log(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    """An untimed practice table had no timer at all, so an account could park tables for
    good (in the table's memory, reloaded at every take-over). Nobody acting at it for
    SPADES_UNTIMED_IDLE_SECONDS closes it with `GameFinished` reason "idle"."""
    start_table(processes, SPADES_UNTIMED_IDLE_SECONDS="3")
    client = TableClient(nc, subjects, "parker")
    opened = await client.open_practice(untimed=True)
    assert opened.ok, opened
    assert (await client.view(opened.game_id)).phase != "over"

    async def finished() -> wire.GameFinished | None:
        last = (await game_events(event_store, opened.game_id))[-1]
        return last if isinstance(last, wire.GameFinished) else None

    closed = await eventually(finished, within=120, what="the idle table to close")
    assert (closed.reason, closed.winner, closed.rated) == ("idle", -1, False)
    stored = await event_store.read(stream_of(opened.game_id))
    assert stored[-1].metadata.actor == "table"
    assert not [
        e
        for e in await game_events(event_store, opened.game_id)
        if isinstance(e, wire.TurnTimedOut)
    ]  # no clock ran: the table closed, nobody was timed out
    # off the live list, and refused with a code like any finished game
    assert stream_of(opened.game_id) not in await event_store.unfinished_games()
    view = await client.view(opened.game_id)
    assert (view.phase, view.reason) == ("over", "idle")
