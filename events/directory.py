"""The log's directory: reads across streams by event type, on PostgreSQL.

The store (`events.pgstore`) appends and reads streams; these reads find streams by what they
recorded (a stream's opening event and its final one, events of a type over a period), the
way a directory lists what the log holds. They name event types and JSON fields only as
arguments, so the platform still knows no game. `PostgresEventStore` inherits `LogDirectory`,
so callers ask the store as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg
import msgspec

from events.envelope import StoredEvent
from events.pgrows import COLUMNS, QUALIFIED_COLUMNS, Conn, row_to_event

__all__ = ["LogDirectory", "Opening", "count_unfinished_openings"]


async def count_unfinished_openings(
    conn: Conn, opening_type: str, final_type: str, *, player: str, unless: str
) -> int:
    """Return, read on ``conn``, how many streams open with an ``opening_type`` event that lists
    ``player`` in its ``players`` and whose JSON field ``unless`` is not true, and have no
    ``final_type`` event yet (a player's unfinished unrated tables)."""
    count = await conn.fetchval(
        "SELECT count(*) FROM spades_events o WHERE o.type = $1 AND o.version = 1"
        " AND ((o.data::jsonb) -> 'players') ? $3"
        " AND NOT coalesce(((o.data::jsonb) ->> $4)::boolean, false)"
        " AND NOT EXISTS (SELECT 1 FROM spades_events f"
        " WHERE f.stream_id = o.stream_id AND f.type = $2)",
        opening_type,
        final_type,
        player,
        unless,
    )
    return int(count)


@dataclass(frozen=True, slots=True)
class Opening:
    """The first event of a stream, the data of its final event (None while it runs), and
    that of a related stream's event when asked for."""

    event: StoredEvent
    final: msgspec.Raw | None = None
    related: msgspec.Raw | None = None

    @property
    def finished(self) -> bool:
        """Return whether the stream has reached its final event."""
        return self.final is not None


def _raw(text: str | None) -> msgspec.Raw | None:
    return None if text is None else msgspec.Raw(text.encode())


class LogDirectory:
    """The directory reads, over the store's pool (`PostgresEventStore` inherits them)."""

    _pool: asyncpg.Pool

    async def unfinished_games(self) -> list[str]:
        """Return the ids of the game streams opened and not finished, oldest first (for a
        replica resuming the slots it gained). Read from the list migration 45's trigger keeps
        in each append's transaction: as many rows as live games, not every game played."""
        rows = await self._pool.fetch(
            "SELECT stream_id FROM spades_unfinished_games ORDER BY opened_at, stream_id"
        )
        return [row["stream_id"] for row in rows]

    async def openings(
        self,
        opening_type: str,
        final_type: str,
        *,
        limit: int,
        unfinished: bool = False,
        player: str | None = None,
        related: tuple[str, str] | None = None,
        hidden: str = "",
    ) -> list[Opening]:
        """Return the first events of the streams that open with ``opening_type``, newest
        first, with the data of its ``final_type`` event if any. ``unfinished`` keeps only the
        games (TableOpened to GameFinished, ``game-`` streams) without one; ``player`` those
        whose opening lists him in ``players`` (served by migration 4's partial indexes);
        ``hidden`` drops the unfinished ones whose opening has that JSON field true
        (unlisted). ``related=(category, type)`` also brings the data of the ``type`` event
        of the stream ``<category>-<same id>`` (a game's ratings)."""
        args: list[object] = [opening_type, final_type, limit, hidden]
        where = ["o.type = $1", "o.version = 1", "($4 = '' OR f.stream_id IS NOT NULL OR"]
        where[-1] += " NOT coalesce(((o.data::jsonb) ->> $4)::boolean, false))"
        order = "o.recorded_at"
        live_join = ""
        if unfinished:
            if (opening_type, final_type) != ("TableOpened", "GameFinished"):
                raise ValueError("only games (TableOpened to GameFinished) are kept unfinished")
            # walked from the live games' list (migration 45), newest first: a few rows, not
            # every game finished since the oldest live one
            live_join = " JOIN spades_unfinished_games u ON u.stream_id = o.stream_id"
            order = "u.opened_at"
            where.append("f.stream_id IS NULL")
        if player is not None:
            args.append(player)
            where.append(f"((o.data::jsonb) -> 'players') ? ${len(args)}")
        related_join, related_data = "", "NULL::text"
        if related is not None:
            args += related
            related_join = (
                " LEFT JOIN spades_events r ON r.stream_id ="
                f" ${len(args) - 1} || '-' || substr(o.stream_id, strpos(o.stream_id, '-') + 1)"
                f" AND r.type = ${len(args)}"
            )
            related_data = "r.data::text"
        rows = await self._pool.fetch(
            f"SELECT {QUALIFIED_COLUMNS}, f.data::text AS final_data,"
            f" {related_data} AS related_data"
            f" FROM spades_events o{live_join}"
            " LEFT JOIN spades_events f ON f.stream_id = o.stream_id AND f.type = $2"
            f"{related_join} WHERE {' AND '.join(where)}"
            f" ORDER BY {order} DESC, o.stream_id LIMIT $3",
            *args,
        )
        return [
            Opening(
                row_to_event(row),
                _raw(row["final_data"]),
                _raw(row["related_data"]),
            )
            for row in rows
        ]

    async def streams_recording(
        self,
        event_type: str,
        start: datetime,
        end: datetime,
        *,
        flag: str | None = None,
        player: str | None = None,
    ) -> list[str]:
        """Return the ids of the streams that recorded an ``event_type`` event in [start, end),
        oldest first; only those whose event has the JSON field ``flag`` true, and lists
        ``player`` in its ``players``, when given (a month of finished rated games)."""
        rows = await self._pool.fetch(
            "SELECT stream_id FROM spades_events WHERE type = $1"
            " AND recorded_at >= $2 AND recorded_at < $3"
            " AND ($4::text IS NULL OR ((data::jsonb) ->> $4)::boolean)"
            " AND ($5::text IS NULL OR ((data::jsonb) -> 'players') ? $5)"
            " ORDER BY recorded_at, stream_id",
            event_type,
            start,
            end,
            flag,
            player,
        )
        return [row["stream_id"] for row in rows]

    async def recorded(
        self, event_type: str, start: datetime, end: datetime | None = None
    ) -> list[StoredEvent]:
        """Return every ``event_type`` event recorded in [start, end), oldest first."""
        rows = await self._pool.fetch(
            f"SELECT {COLUMNS} FROM spades_events WHERE type = $1 AND recorded_at >= $2"
            " AND ($3::timestamptz IS NULL OR recorded_at < $3) ORDER BY recorded_at, position",
            event_type,
            start,
            end,
        )
        return [row_to_event(row) for row in rows]
