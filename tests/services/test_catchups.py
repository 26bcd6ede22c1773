"""`services.table.catchups`: folded catch-ups are kept, bounded by bytes, least recently
used evicted first, so a crowd resuming one game from zero costs one fold of its log."""

from __future__ import annotations

from services.table.catchups import Catchups


def test_an_answer_is_kept_and_found_again() -> None:
    cache = Catchups(limit=100)
    key = ("g", -1, 0, 40)
    assert cache.get(key) is None
    cache.put(key, (b"a" * 10, b"b" * 10))
    for _ in range(1000):  # a crowd of spectators asking the same game from zero
        assert cache.get(key) == (b"a" * 10, b"b" * 10)
    assert (cache.hits, cache.misses) == (1000, 1)
    assert cache.get(("g", -1, 0, 41)) is None  # a new event: another answer


def test_the_cache_holds_no_more_bytes_than_its_limit_and_evicts_the_least_recently_used() -> None:
    cache = Catchups(limit=100)
    for n in range(5):
        cache.put(("g", n, 0, 9), (b"x" * 30,))
        assert cache.size <= 100
    assert len(cache) == 3
    assert cache.get(("g", 0, 0, 9)) is None
    assert cache.get(("g", 1, 0, 9)) is None
    assert cache.get(("g", 2, 0, 9)) is not None  # now the most recently used
    cache.put(("h", 0, 0, 9), (b"y" * 30,))
    assert cache.get(("g", 3, 0, 9)) is None  # evicted before the one just read
    assert cache.get(("g", 2, 0, 9)) is not None
    cache.put(("huge", 0, 0, 9), (b"z" * 101,))  # larger than the whole cache: not kept
    assert cache.get(("huge", 0, 0, 9)) is None
    assert cache.size <= 100
    cache.put(("h", 0, 0, 9), (b"y" * 10,))  # the same key again: its bytes counted once
    assert cache.size == sum(len(b) for k in list(cache._kept) for b in cache._kept[k])
