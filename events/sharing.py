"""Who holds which lease of a group: the balanced rendezvous every replica computes alike.

`events.leases` runs the group (rows, renewals, fences); this is the pure part it asks when the
live members change, and the one-line form of a set of lease names for its logs. At the
table's 1,024 slot leases the assignment must stay cheap among hundreds of members: each
member's scores are hashed once (`_scores`, cached), and each lease's first choice is found
in C over a column of them.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Iterable, Sequence

__all__ = ["assign", "compact"]


def compact(names: Iterable[str]) -> str:
    """Return lease names for a log line, numbered runs as ranges: ``table/0-511,matchmaking``
    (a replica holding 1,024 slot leases would otherwise log 1,024 names a claim)."""
    runs: dict[str, list[list[int]]] = {}
    plain: list[str] = []
    for name in names:
        prefix, _, number = name.rpartition("/")
        if prefix and number.isdigit():
            runs.setdefault(prefix, []).append([int(number), int(number)])
        else:
            plain.append(name)
    parts = sorted(plain)
    for prefix, singles in sorted(runs.items()):
        merged: list[list[int]] = []
        for first, _ in sorted(singles):
            if merged and first == merged[-1][1] + 1:
                merged[-1][1] = first
            else:
                merged.append([first, first])
        parts.append(prefix + "/" + ",".join(str(a) if a == b else f"{a}-{b}" for a, b in merged))
    return ",".join(parts)


def _score(name: str, member: str) -> int:
    digest = hashlib.blake2b(f"{name}\0{member}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@functools.lru_cache(maxsize=512)  # ~40 kB a member: at most ~20 MB of rows
def _scores(names: tuple[str, ...], member: str) -> tuple[int, ...]:
    """Return ``member``'s score for each of ``names``: hashed once per member that joins, not
    once a tick (a group of 1,024 slot leases and 100 members would hash 102,400 pairs)."""
    return tuple(_score(name, member) for name in names)


def assign(names: Sequence[str], members: Iterable[str]) -> dict[str, str]:
    """Return the owner of every lease among ``members``: balanced rendezvous hashing.

    Each member gets at most ceil(len(names) / len(members)) leases; each lease goes to the
    highest-scoring member that still has room (of equal scores, the first member by name).
    Every replica computes the same answer for the same members, and a member joining or
    leaving moves few leases.
    """
    live = sorted(set(members))
    if not live:
        return {}
    ordered = tuple(sorted(names))
    room = math.ceil(len(ordered) / len(live))
    count = [0] * len(live)
    owners: dict[str, str] = {}
    # One column of scores per lease, every member's in `live` order: the first choice is
    # found by max() and index() in C, so 1,024 leases among 200 members take milliseconds.
    columns = zip(*(_scores(ordered, member) for member in live), strict=True)
    for name, column in zip(ordered, columns, strict=True):
        best = column.index(max(column))
        if count[best] >= room:  # the first choice is full: the best of those with room
            ranked = sorted(range(len(live)), key=column.__getitem__, reverse=True)
            best = next(m for m in ranked if count[m] < room)
        owners[name] = live[best]
        count[best] += 1
    return owners
