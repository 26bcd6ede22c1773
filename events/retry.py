"""The one way the platform waits before trying a transient fault again.

A `Backoff` is the schedule: the first delay, a growth factor, a ceiling and a jitter
fraction. Two shapes of retry use it:

- a loop that owns its attempts (connect to NATS, forward a request to a partition's owner,
  re-judge a command after a write conflict) walks ``backoff.attempts(...)``, which yields
  1, 2, 3... and sleeps the schedule's delay between them, ending after ``limit`` attempts,
  past ``within`` seconds, or as soon as ``stop`` is set;
- a loop whose attempts are counted elsewhere (JetStream's delivery count, a relay's failed
  pages in a row, a timer's failures) asks ``backoff.delay(attempt)`` and sleeps that.

Not tenacity or stamina: both wrap a whole call, and most retries here live inside a loop
that must keep its own state between attempts (the relay's page, the consumer's message and
batch), stop on the service's stop event, and pick up its attempt count from elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass

__all__ = ["Backoff"]


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delays that grow by ``factor`` from ``first`` up to ``most`` seconds, +/- ``jitter``."""

    first: float = 0.1
    factor: float = 2.0
    most: float = 2.0
    jitter: float = 0.0
    """A fraction: 0.2 spreads each delay over +/-20%, so replicas that failed together do
    not all come back in the same instant."""

    def __post_init__(self) -> None:
        if self.first < 0 or self.most < self.first or self.factor < 1:
            raise ValueError(f"{self} is not a schedule: need 0 <= first <= most, factor >= 1")
        if not 0 <= self.jitter < 1:
            raise ValueError(f"jitter {self.jitter} must be in [0, 1)")

    def delay(self, attempt: int) -> float:
        """Return the pause after failed attempt number ``attempt`` (1 for the first)."""
        base = min(self.first * self.factor ** max(0, attempt - 1), self.most)
        if self.jitter:
            base *= 1 + random.uniform(-self.jitter, self.jitter)
        return base

    async def attempts(
        self,
        *,
        limit: int | None = None,
        within: float | None = None,
        stop: asyncio.Event | None = None,
    ) -> AsyncIterator[int]:
        """Yield attempt numbers from 1, pausing the schedule's delay between two of them.

        Ends after ``limit`` attempts, when the next pause would end past ``within`` seconds
        from the first attempt, or when ``stop`` is set (a pause ends early then). The loop
        body leaves with ``return``/``break`` on success; falling out of the loop means every
        attempt failed, and the caller says what that means.
        """
        loop = asyncio.get_running_loop()
        deadline = None if within is None else loop.time() + within
        attempt = 1
        while True:
            yield attempt
            if limit is not None and attempt >= limit:
                return
            pause = self.delay(attempt)
            if deadline is not None and loop.time() + pause > deadline:
                return
            if stop is None:
                await asyncio.sleep(pause)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), pause)
                if stop.is_set():
                    return
            attempt += 1
