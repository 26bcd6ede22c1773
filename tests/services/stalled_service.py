"""A service whose shutdown never ends: it ignores its stop, as a task stuck on a dead socket
would. `tests/services/test_failover.py` runs it to show that a service which gave its NATS
connection up exits all the same (`services.runtime.service.EXIT_STALL_SECONDS`)."""

from __future__ import annotations

import asyncio

from services.runtime.service import Runtime, run_service


async def _main(rt: Runtime) -> None:
    rt.log.info("stalled service up")
    await rt.stop.wait()
    rt.log.info("stop asked; not stopping")
    await asyncio.Event().wait()  # never set: its shutdown never ends


if __name__ == "__main__":
    asyncio.run(run_service("stalled", _main))
