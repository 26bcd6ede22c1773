"""The words of a transcript line (`services.records.transcript`): names, numbers, cards, and
the refusal of a line, shared by the reader and the lines of table talk (`talklines`)."""

from __future__ import annotations

import json

from events.errors import Refusal


class LineRefused(Refusal):
    """A line the reader refuses; `transcript.TranscriptError` adds where."""


def untoken(text: str) -> str:
    """Return a name as written: a plain word, or a JSON string."""
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            raise LineRefused("malformed_line", f"bad quoted name {text[:40]}") from None
        if not isinstance(value, str):
            raise LineRefused("malformed_line", f"bad quoted name {text[:40]}")
        return value
    return text


def ints(text: str) -> tuple[int, ...]:
    """Return the numbers of a written list ("[1, 2]" or "(1, 2)")."""
    return tuple(int(part) for part in text.strip("[]()").split(",") if part.strip())


def card_list(text: str) -> tuple[str, ...]:
    """Return the cards of a space-separated list."""
    return tuple(text.split())
