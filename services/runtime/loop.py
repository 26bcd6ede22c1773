"""The event loop every long-running service runs on: uvloop where it is installed.

`spades serve NAME` runs its service through `run`, which picks the loop SPADES_EVENT_LOOP names
(`services.runtime.config`): ``auto`` (the default) takes uvloop when it imports and asyncio's own
loop otherwise (a platform without uvloop wheels still runs, only slower); ``uvloop`` insists on it;
``asyncio`` is the standard library's loop (for comparing, or ruling uvloop out).

Why uvloop: the gateway and the table spend most of their time in the loop's socket and
callback machinery; `python -m benchmarks gateway` measures each service's CPU per card play on
both loops in the same run (see README.md, "Benchmarks").
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from services.runtime import ops
from services.runtime.config import Settings, SettingsError

T = TypeVar("T")


def settle_collector(young: int) -> None:
    """Collect once, then move everything alive now (modules, pools, the app) out of the
    collector's sight for good (`gc.freeze`), and collect the young generation after
    ``young`` container objects (SPADES_GC_YOUNG, default 50,000; 0 leaves Python's
    collector as it is). Python's 700 makes the collector run every few messages, and each
    collection walks every young object still alive (sessions, watches, pending messages),
    while a message's objects die by their reference counts, not by the collector: at 700 it
    took about 10% of the gateway's CPU under play and 9% of the table's (perf, `python -m
    benchmarks gateway`). The older generations are collected after as many young
    collections as before, so a cycle is still reclaimed, only later. Called by every
    service once started (`run_service`), and by the gateway again once its app is built."""
    if young <= 0:
        return
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, old)


class LoopUnavailable(RuntimeError):
    """SPADES_EVENT_LOOP=uvloop, and uvloop does not import on this machine."""

    code = "event_loop_unavailable"


def loop_factory(choice: str) -> tuple[str, Callable[[], asyncio.AbstractEventLoop] | None]:
    """Return (name of the loop, factory for asyncio.Runner; None for asyncio's own loop)."""
    if choice == "asyncio":
        return "asyncio", None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise LoopUnavailable(
                "SPADES_EVENT_LOOP=uvloop, but uvloop is not installed on this machine "
                "(set SPADES_EVENT_LOOP=asyncio or auto)"
            ) from None
        return "asyncio", None
    return "uvloop", uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T], settings: Settings | None = None) -> T:
    """Return what ``main`` returns, run to completion on the configured event loop."""
    try:
        choice = (settings or Settings.from_env()).event_loop
    except SettingsError:
        choice = "auto"  # `main` (run_service) reports the unusable variable by its name
    try:
        _, factory = loop_factory(choice)
    except LoopUnavailable:
        main.close()  # never awaited: close it so Python does not warn about it
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def current_loop_name() -> str:
    """Return ``uvloop`` or ``asyncio``: the kind of loop running now (for the start log)."""
    module = type(asyncio.get_running_loop()).__module__
    return "uvloop" if module.startswith("uvloop") else "asyncio"


LOOP_LAG_LIMIT_SECONDS = 1.0
"""Event-loop lag past which a process says it is not ready (`LoopLag.check`)."""


class LoopLag:
    """Samples how late the event loop runs a timer that is due (every ``every`` seconds):
    the `spades_event_loop_lag_seconds` gauge, and a readiness check that fails while the
    last sample is over a limit (a loop starved by work that should not run on it)."""

    def __init__(self, every: float = 0.25) -> None:
        self.every = every
        self.last = 0.0

    async def run(self) -> None:
        """Sample until cancelled."""
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            await asyncio.sleep(self.every)
            self.last = max(0.0, loop.time() - started - self.every)
            ops.EVENT_LOOP_LAG.set(self.last)

    def check(self, limit: float = LOOP_LAG_LIMIT_SECONDS) -> ops.Check:
        """Return a readiness check: the loop's last lag is within ``limit`` seconds."""

        async def loop_keeps_time() -> bool:
            return self.last <= limit

        return loop_keeps_time
