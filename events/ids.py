"""Name-based UUIDs (version 5) at a third of the standard library's cost.

`uuid5` is `uuid.uuid5` (RFC 4122: the SHA-1 of the namespace's bytes and the name, the
version and variant bits set), with msgspec building the `uuid.UUID` from its text instead of
the class's own checks: the gateway scopes every command's id this way and the table derives
every event's id, so it runs a few times per card played.
"""

from __future__ import annotations

import hashlib
import uuid

import msgspec

_from_text = msgspec.json.Decoder(uuid.UUID)


def uuid5(namespace: uuid.UUID, name: str) -> uuid.UUID:
    """Return ``uuid.uuid5(namespace, name)``."""
    digest = bytearray(
        hashlib.sha1(namespace.bytes + name.encode(), usedforsecurity=False).digest()[:16]
    )
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # the RFC 4122 variant
    return _from_text.decode(b'"' + digest.hex().encode() + b'"')
