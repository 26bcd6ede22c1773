"""The double-dummy solver's C kernel (engine/ddcore.c), loaded with ctypes.

`engine.dd` is the reference: the same search in Python, readable and slow (a full four-seat
deal takes tens of seconds). The kernel searches the same way and must give exactly its values
(tests/engine/test_ddcore.py checks it on random positions of every variant, and the
brute-force tests of tests/engine/test_dd.py run against both). `Solver` here has the
reference's interface: `value`, `at_least`, `nodes`.

The kernel is a shared library that ``make install`` compiles (``cc -O2 -shared -fPIC``) beside
this file. There is no fallback to the slow reference: when the library is missing,
`load` raises `KernelMissing`, which names the command that builds it, and the bot tier says
so at its start.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable
from pathlib import Path

from engine.cards import TWO_OF_CLUBS
from engine.dd import Position, _layout
from engine.rules import Ruleset, tables

LIBRARY = Path(os.environ.get("SPADES_DDCORE", Path(__file__).with_name("_ddcore.so")))
"""Where the kernel is (SPADES_DDCORE overrides; `make install` builds engine/_ddcore.so)."""

BUILD = "make install (or: cc -O2 -std=c99 -shared -fPIC -o engine/_ddcore.so engine/ddcore.c)"

TT_LOG2 = 20
"""Transposition-table entries per solver, as a power of two: in blocks of 12 (512 bytes, 43
MiB), with as many class slots of 32 bytes (32 MiB): 75 MiB, touched as used (in huge pages
where Linux gives them: the search reads it at random). A class keeps
at most 1,024 entries, its oldest block making room; a pool with no block left is emptied."""

_FIRST = {"no_spade": 0, "two_of_clubs": 1, "any": 2, "lowest_club": 3}
_ERRORS = {
    -1: "no solver",
    -2: "a seat out of range or the wrong number of hands",
    -3: "hands that share a card or whose sizes do not fit the trick in progress",
    -4: "a trick in progress that is full, repeats a card or holds a card still in a hand",
    -5: "more cards than a hand can hold",
}

U64 = ctypes.c_uint64

STATS = ("lookups", "walked", "hits", "sure", "stores", "new", "evicted", "resets")
"""The kernel's counters (`Solver.stats`), in its order: trick starts looked up in the table,
entries compared in those lookups, lookups the table settled, trick starts the sure-trick
bounds settled, results stored, of which in a new entry, entries dropped to make room in a
full class, and times the whole table was emptied."""


class KernelMissing(RuntimeError):
    """The kernel's shared library is not built (or does not load)."""


class OverBudget(RuntimeError):
    """A search needed more nodes than the solver's budget allows (nothing wrong was stored:
    the solver stays usable)."""


_lib: ctypes.CDLL | None = None


def load() -> ctypes.CDLL:
    """Return the kernel library, loading it once; raise `KernelMissing` naming the build."""
    global _lib
    if _lib is None:
        _lib = load_from(LIBRARY)
    return _lib


def load_from(path: Path) -> ctypes.CDLL:
    """Return the kernel library at ``path`` (another build of engine/ddcore.c: the benchmark
    runs an older kernel beside this one); raise `KernelMissing` naming the build."""
    if not path.exists():
        raise KernelMissing(
            f"the double-dummy kernel {path} is not built: run `{BUILD}` in the repository"
        )
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        raise KernelMissing(
            f"the double-dummy kernel {path} does not load ({exc}): {BUILD}"
        ) from exc
    lib.dd_new.restype = ctypes.c_void_p
    lib.dd_new.argtypes = [ctypes.c_int] * 6
    lib.dd_free.restype = None
    lib.dd_free.argtypes = [ctypes.c_void_p]
    lib.dd_nodes.restype = U64
    lib.dd_nodes.argtypes = [ctypes.c_void_p]
    lib.dd_set_budget.restype = None
    lib.dd_set_budget.argtypes = [ctypes.c_void_p, U64]
    lib.dd_stats.restype = ctypes.c_int
    lib.dd_stats.argtypes = [ctypes.c_void_p, ctypes.POINTER(U64), ctypes.c_int]
    c_int, c_ints = ctypes.c_int, ctypes.POINTER(ctypes.c_int)
    # solver, hands, players, leader, trick, trick length, broken, tricks done
    position = (ctypes.c_void_p, ctypes.POINTER(U64), c_int, c_int, c_ints, c_int, c_int, c_int)
    lib.dd_value.restype = ctypes.c_int
    lib.dd_value.argtypes = list(position)
    lib.dd_at_least.restype = ctypes.c_int
    lib.dd_at_least.argtypes = [*position, c_int]
    lib.dd_sure.restype = ctypes.c_int
    lib.dd_sure.argtypes = [*position[:4], c_int, c_ints]
    return lib


class Solver:
    """`engine.dd.Solver` in C: the tricks ``counted`` seats take when ``maximizers`` play to
    take as many and every other seat plays to take as few. The transposition table lives as
    long as the solver (solving several positions of one hand with one solver reuses it).

    ``budget`` (nodes, None for none) bounds each `value` / `at_least` call: past it the call
    raises `OverBudget`. Nodes are counted the same on every run, so a budget keeps results
    reproducible (unlike a time limit). ``table_log2`` sizes the table (`TT_LOG2`; 4 to 26,
    small ones for tests that make it evict and empty itself). ``library`` is another build of
    the kernel (`load_from`), for the benchmark's side-by-side runs; by default `load`'s.
    """

    def __init__(
        self,
        rules: Ruleset,
        counted: Iterable[int],
        maximizers: Iterable[int],
        budget: int | None = None,
        table_log2: int = TT_LOG2,
        library: ctypes.CDLL | None = None,
    ) -> None:
        lib = library or load()
        t = tables(rules)
        self.lay = _layout(t)
        self.n = t.players
        club2 = self.lay.bit_of[TWO_OF_CLUBS]
        handle = lib.dd_new(
            self.n,
            sum(1 << s for s in set(counted)),
            sum(1 << s for s in set(maximizers)),
            _FIRST[rules.first_lead],
            club2 if rules.first_lead == "two_of_clubs" else -1,
            table_log2,
        )
        if not handle:
            raise MemoryError("the double-dummy kernel could not allocate its table")
        self._lib = lib
        self._handle: int | None = handle
        if budget:
            lib.dd_set_budget(handle, budget)

    def __del__(self) -> None:
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.dd_free(handle)

    @property
    def nodes(self) -> int:
        """Return the nodes searched so far (cards tried)."""
        return int(self._lib.dd_nodes(self._handle))

    def stats(self) -> dict[str, int]:
        """Return the kernel's counters so far (`STATS`), for tuning the search."""
        out = (U64 * len(STATS))()
        self._lib.dd_stats(self._handle, out, len(STATS))
        return dict(zip(STATS, map(int, out), strict=True))

    def _args(self, pos: Position) -> list[object]:
        if len(pos.hands) != self.n:
            raise ValueError(f"{len(pos.hands)} hands for {self.n} players")
        bit_of = self.lay.bit_of
        hands = (U64 * self.n)(*(self.lay.mask(h) for h in pos.hands))
        trick = [bit_of[c] for c in pos.trick]
        if any(b < 0 for b in trick):
            raise ValueError("a card on the trick is not in this deck")
        return [
            self._handle,
            hands,
            self.n,
            pos.leader,
            (ctypes.c_int * max(1, len(trick)))(*trick),
            len(trick),
            int(pos.broken),
            pos.done,
        ]

    @staticmethod
    def _checked(result: int) -> int:
        if result == -6:
            raise OverBudget("the double-dummy search went over its node budget")
        if result < 0:
            raise ValueError(f"not a position: {_ERRORS.get(result, result)}")
        return result

    def value(self, pos: Position) -> int:
        """Return the tricks (of those left, the trick in progress included) the counted
        seats take from ``pos`` with best play on both sides."""
        return self._checked(self._lib.dd_value(*self._args(pos)))

    def sure_tricks(self, pos: Position) -> tuple[int, int]:
        """Return the tricks the search counts as sure at a trick's start ``pos`` without
        searching: the counted seats' and the other seats' (its quick tricks and master
        trumps; the counted seats must be the maximizers). For tests: each is a bound the
        true values never fall below."""
        if pos.trick:
            raise ValueError("sure tricks are counted at a trick's start")
        args = self._args(pos)
        out = (ctypes.c_int * 2)()
        self._checked(self._lib.dd_sure(*args[:4], int(pos.broken), out))
        return out[0], out[1]

    def at_least(self, pos: Position, k: int) -> bool:
        """Return whether the counted seats can take ``k`` or more of the tricks left."""
        return bool(self._checked(self._lib.dd_at_least(*self._args(pos), k)))


def solve(rules: Ruleset, pos: Position, sides: Iterable[int]) -> int:
    """Return the tricks left the seats ``sides`` take from ``pos`` with best play (the kernel's
    `engine.dd.solve`)."""
    seats = tuple(sides)
    return Solver(rules, seats, seats).value(pos)
