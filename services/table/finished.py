"""Finished games a table replica read again, kept for the next reader within a byte limit."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.table.tables import Table


class FinishedTables:
    """Finished games a replica read again (a view or a catch-up of an old game), kept for
    the next reader, least recently used first, within ``limit`` bytes of their events
    (`Table.stored_bytes`; SPADES_TABLE_FINISHED_CACHE_BYTES). Beyond it the least recently
    read are dropped, and read from the log again when asked for; a game larger than the
    whole limit is not kept at all. Live games are not here: they are bounded by the seats
    and tables people may hold, and their timers need them in memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.tables: OrderedDict[str, Table] = OrderedDict()
        self.bytes = 0
        self.evicted = 0
        """Games dropped to stay within the limit, since the replica started."""

    def __len__(self) -> int:
        return len(self.tables)

    def get(self, game_id: str) -> Table | None:
        """Return a kept game (now the most recently used), or None."""
        table = self.tables.get(game_id)
        if table is not None:
            self.tables.move_to_end(game_id)
        return table

    def put(self, table: Table) -> None:
        """Keep a finished game, dropping the least recently used beyond the limit."""
        self.pop(table.game_id)
        if table.stored_bytes > self.limit:
            self.evicted += 1
            return
        self.tables[table.game_id] = table
        self.bytes += table.stored_bytes
        while self.bytes > self.limit:
            _, oldest = self.tables.popitem(last=False)
            self.bytes -= oldest.stored_bytes
            self.evicted += 1

    def pop(self, game_id: str) -> None:
        """Forget a game if it is kept."""
        table = self.tables.pop(game_id, None)
        if table is not None:
            self.bytes -= table.stored_bytes
