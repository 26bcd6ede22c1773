"""Catch-ups beyond the frames a table keeps: folded from the log once, then kept.

A client that resumes from far back (`subscribe {last_seq: 0}`, a spectator arriving late)
needs every message of the game after some seq, for its audience. The last `RECENT_FRAMES`
frames answer most resumes from memory; older ones mean reading the game's whole log and
re-encoding it (68 ms for a 365-event game). Each such answer is kept here, keyed by game,
audience and the seqs it covers, in one cache bounded by bytes and evicted least recently
used: a thousand anonymous sockets asking the same game from zero cost one fold, not a
thousand. A new event changes the key (its upper seq), so an answer is never stale.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["CATCHUP_CACHE_BYTES", "Catchups"]

CATCHUP_CACHE_BYTES = 32 * 1024 * 1024
"""What a table replica keeps of folded catch-ups, at most (a whole game's messages for one
audience are 100 to 600 KiB)."""

Key = tuple[str, int, int, int]
"""(game id, seat (-1: spectators), after, upto)."""


class Catchups:
    """An LRU of catch-up answers, bounded by their bytes."""

    def __init__(self, limit: int = CATCHUP_CACHE_BYTES) -> None:
        self.limit = limit
        self.size = 0
        self.hits = 0
        self.misses = 0
        self._kept: OrderedDict[Key, tuple[bytes, ...]] = OrderedDict()

    def get(self, key: Key) -> tuple[bytes, ...] | None:
        """Return the kept answer for ``key`` (now the most recently used), or None."""
        found = self._kept.get(key)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        self._kept.move_to_end(key)
        return found

    def put(self, key: Key, messages: tuple[bytes, ...]) -> None:
        """Keep an answer, evicting the least recently used past the limit (an answer larger
        than the whole limit is not kept)."""
        size = sum(map(len, messages))
        if size > self.limit:
            return
        old = self._kept.pop(key, None)
        if old is not None:
            self.size -= sum(map(len, old))
        self._kept[key] = messages
        self.size += size
        while self.size > self.limit:
            _, evicted = self._kept.popitem(last=False)
            self.size -= sum(map(len, evicted))

    def __len__(self) -> int:
        return len(self._kept)
