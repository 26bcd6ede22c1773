"""`spades serve NAME`: run one service in the foreground until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

from services.runtime import loop
from services.runtime.service import Runtime, ServiceMain, run_service

# service name -> module whose `main(rt)` runs it under services.runtime.service
_MAINS = {
    "table": "services.table.app",
    "matchmaking": "services.matchmaking.app",
    "rating": "services.rating.app",
    "bots": "services.bots.app",
}


def run(args: argparse.Namespace) -> int:
    """Run the service named by ``args.service`` until it has stopped in good order, then end
    the process at once (`_exit`)."""
    name: str = args.service
    if name == "gateway":
        from services.gateway.app import main as gateway_main

        _exit(gateway_main())
    service_main: ServiceMain = (
        _relay if name == "relay" else importlib.import_module(_MAINS[name]).main
    )
    loop.run(run_service(name, service_main))
    _exit(0)


def _exit(code: int) -> NoReturn:
    """End a service that has stopped: its connections are closed, its tasks done and its
    last log line written, so nothing is left for the interpreter's own shutdown but tearing
    down the heap, which a service that ran a while (caches, the engine's tables, games)
    pays for with seconds of CPU in the final garbage collection. A restart, a deploy and
    every service test waits for that; an exit that skips it ends in tenths of a second."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


async def _relay(rt: Runtime) -> None:
    """Run the outbox relay under the common runtime (ops server, logs, signals)."""
    from events.relay import RelayLag, run_relay
    from services.runtime import ops

    def show_lag(lag: RelayLag) -> None:
        ops.RELAY_LAG_EVENTS.set(lag.events)
        ops.RELAY_LAG_SECONDS.set(lag.seconds)

    await run_relay(
        database_url=rt.settings.database_url,
        nats_url=rt.settings.nats_url,
        subjects=rt.subjects,
        stop=rt.stop,
        on_lag=show_lag,
    )
