"""The table's refusals (a module of its own so every part of the table may raise them)."""

from __future__ import annotations

from events.errors import Refusal


class Rejected(Refusal):
    """A request the table refuses: ``code`` for programs, the message for people."""
