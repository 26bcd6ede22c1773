"""Provably fair deals: a portable commit-reveal derivation (docs/FAIRNESS.md is its spec).

The table draws a 32-byte server seed, publishes ``commitment(seed)`` (its SHA-256) before
the first deal, lets each seated client add a 32-byte contribution, and derives every deck
from the seed, the contributions and the hand number through HMAC-SHA256 and an unbiased
Fisher-Yates shuffle. Nothing here uses a language's built-in random generator, so any
language with HMAC-SHA256 reproduces the deals. The seed is revealed when the game ends.

>>> seed = bytes(range(32))
>>> commitment(seed)
'630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd'
>>> shuffled(tuple(range(8)), seed, ("", ""), 1)
(1, 0, 6, 2, 7, 5, 3, 4)
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterator, Sequence

SCHEME = "hmac-sha256-fy-v1"
"""The deal derivation of this module, as the game's first event names it."""
LEGACY = "cpython-mt-v0"
"""The derivation of games recorded before: CPython's ``random.Random(f"{seed}/{hand}")``."""
SEED_BYTES = 32
CONTRIBUTION_BYTES = 32
_HEX = re.compile(r"[0-9a-f]{64}")


class InvalidContribution(ValueError):
    """A client contribution is not 32 bytes written as 64 lowercase hex digits."""


def check_hex32(value: str, what: str = "contribution") -> bytes:
    """Return the 32 bytes a 64-hex-digit string names; raise `InvalidContribution` if not."""
    if not isinstance(value, str) or not _HEX.fullmatch(value):
        raise InvalidContribution(f"a {what} is 32 bytes as 64 lowercase hex digits")
    return bytes.fromhex(value)


def commitment(server_seed: bytes) -> str:
    """Return the commitment to a server seed: its SHA-256, lowercase hex."""
    return hashlib.sha256(server_seed).hexdigest()


def context(label: str, contributions: Sequence[str]) -> bytes:
    """Return the HMAC message prefix of one draw: ``spades-deal-v1/<label>/<c0>/<c1>/...``.

    ``contributions`` holds one entry per seat, in seat order: its 64 hex digits, or "" for
    a seat that contributed nothing."""
    return "/".join(("spades-deal-v1", label, *contributions)).encode("ascii")


def stream(server_seed: bytes, message: bytes) -> Iterator[int]:
    """Yield unsigned 32-bit words: HMAC-SHA256(seed, message + "/" + block) big-endian."""
    block = 0
    while True:
        digest = hmac.new(server_seed, message + b"/%d" % block, hashlib.sha256).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(digest[i : i + 4], "big")
        block += 1


def below(words: Iterator[int], n: int) -> int:
    """Return a uniform integer in [0, n) from the stream, rejecting the biased top words."""
    limit = (1 << 32) - (1 << 32) % n
    while True:
        word = next(words)
        if word < limit:
            return word % n


def shuffled(
    deck: Sequence[int], server_seed: bytes, contributions: Sequence[str], hand: int
) -> tuple[int, ...]:
    """Return ``deck`` permuted for hand number ``hand`` (Fisher-Yates, last position first)."""
    cards = list(deck)
    words = stream(server_seed, context(f"hand/{hand}", contributions))
    for i in range(len(cards) - 1, 0, -1):
        j = below(words, i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


def first_dealer(server_seed: bytes, players: int) -> int:
    """Return the first dealer: the seed alone draws him (he is public from the start)."""
    return below(stream(server_seed, context("dealer", ())), players)
