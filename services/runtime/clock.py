"""The wall clock of seasons and queue bans, which tests may move.

`Clock.now()` is `time.time()`, unless the setting SPADES_CLOCK_FILE names a file: then it is
the number written in that file (unix seconds), read at each call, so a test moves the
clock of running service processes by writing the file (a season rolls over, a ban runs
out) without waiting days. A missing or unreadable file reads as the real time. Production
leaves the setting empty. Turn timers, leases and rating decay keep the real clock.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

__all__ = ["Clock", "clock_of"]


class Clock:
    """Unix seconds now: the real time, or the test clock file's number."""

    def __init__(self, path: str = "") -> None:
        self.path = Path(path) if path else None

    def now(self) -> float:
        """Return the time now (see the module docstring)."""
        if self.path is not None:
            try:
                return float(self.path.read_text().strip())
            except (OSError, ValueError):
                pass
        return time.time()


def clock_of(holder: Any) -> Clock:
    """Return the clock of anything holding ``settings`` (a Runtime, the gateway)."""
    return Clock(getattr(holder.settings, "clock_file", ""))
