"""The one base of every error a person or a program is told about.

A `Refusal` carries ``code``, stable and snake_case, for programs to match, and a message
for people; whatever raised it changed nothing. Malformed input, a rule or a permission it
breaks, and a service that cannot do its job now (`unavailable`) all derive from it. The
edges map it in one place each: the gateway's HTTP errors (`services.gateway.errors`: a code's
status from one table) and its WebSocket sessions (an ``error`` or ``ack`` message with the
same code and message). The engine's `engine.errors.RuleViolation` stays standard-library
only; the table turns it into a refusal where a command enters the platform.
"""

from __future__ import annotations

__all__ = ["Refusal"]


class Refusal(Exception):
    """A request refused with a reason: ``code`` for programs, ``message`` for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
