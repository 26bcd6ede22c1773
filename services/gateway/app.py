"""`spades serve gateway`: the public HTTP and WebSocket API, served by uvicorn.

The gateway runs inside `services.runtime.service.run_service` like every service, so it shares
settings, logs, PostgreSQL pool, NATS connection, the ops server on SPADES_OPS_PORT (/livez,
/readyz, /metrics: what the Kubernetes probes hit) and the shutdown on SIGTERM: uvicorn stops
accepting, open connections are closed, then NATS is drained and the pool closed.

The API itself listens on SPADES_HTTP_PORT (0: any free port, logged as `http_port`).
See `services.gateway.config` for the gateway's own variables; it refuses to start without a
signing key unless SPADES_GATEWAY_DEV=1.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator

import uvicorn
from litestar import Litestar
from litestar.datastructures import State

from services.gateway import auth
from services.gateway.config import HARD_FRAME_BYTES, MAX_BODY_BYTES, ConfigError, GatewayConfig
from services.gateway.errors import EXCEPTION_HANDLERS
from services.gateway.eventrun import driving
from services.gateway.guards import GatewayRequest, refuse_control_paths
from services.gateway.http import http_routes
from services.gateway.http.analysis import told_when_ready
from services.gateway.http.limits import UNLIMITED, rate_limits
from services.gateway.http.openapi import StrictStructs, openapi_config
from services.gateway.http.security import bearer_auth
from services.gateway.http.web import secure_html
from services.gateway.presence import presence
from services.gateway.rawsend import keep_raw_send
from services.gateway.requestids import request_ids
from services.gateway.rooms import Rooms
from services.gateway.state import Gateway
from services.gateway.ws import play
from services.runtime import loop
from services.runtime.config import Settings, SettingsError
from services.runtime.service import Runtime, run_service


def create_app(gateway: Gateway) -> Litestar:
    """Return the litestar application of one gateway replica."""
    rooms = Rooms(gateway.nc, gateway.js, gateway.subjects, gateway.log)
    return Litestar(
        route_handlers=[*http_routes(), play],
        lifespan=[
            lambda app: presence(gateway, rooms),
            lambda app: driving(gateway),
            lambda app: told_when_ready(gateway),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        request_class=GatewayRequest,
        # in this order: who is calling (request.user), then the budgets that count by it
        middleware=[
            secure_html,  # outermost: every HTML answer, whatever its route, gets the headers
            bearer_auth(gateway.tokens, exclude=UNLIMITED),
            *(limit.middleware for limit in rate_limits(gateway.config)),
        ],
        request_max_body_size=MAX_BODY_BYTES,
        plugins=[StrictStructs()],
        openapi_config=openapi_config(),
        state=State(
            {
                "gateway": gateway,
                "rooms": rooms,
            }
        ),
        debug=False,
        logging_config=None,  # services.runtime.logs owns logging: JSON lines with request ids
    )


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: run_service owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve(rt: Runtime) -> None:
    """Serve the API until ``rt.stop`` is set, then stop accepting and close connections."""
    config = GatewayConfig.from_env(rt.settings)
    if config.dev_secret:
        rt.log.warning("SPADES_GATEWAY_DEV: signing tokens with a throwaway key")
    if auth.CHEAP_HASHING:
        rt.log.error(f"{auth.CHEAP_HASHING_ENV}: passwords hashed at a test's cost, never deploy")
    gateway = Gateway(
        settings=rt.settings,
        config=config,
        subjects=rt.subjects,
        pool=rt.pool,
        store=rt.store,
        nc=rt.nc,
        js=rt.js,
        log=rt.log,
    )
    server = _Server(
        uvicorn.Config(
            # outermost: 404s and 429s get an id too
            request_ids(refuse_control_paths(keep_raw_send(create_app(gateway)))),
            host=config.http_host,
            port=rt.settings.http_port,
            log_config=None,
            access_log=False,
            lifespan="on",
            # websockets-sansio by default: the legacy `websockets` one is deprecated by uvicorn
            # and cost more CPU per relayed frame (benchmarks/wsrelay.py, benchmarks/gateway.py)
            ws=config.ws,
            http=config.http,
            ws_max_size=HARD_FRAME_BYTES,
            # Our frames are small JSON (most under 300 bytes): per-message deflate saves little
            # of them, yet it was the gateway's largest single cost under load (14% of its CPU
            # in benchmarks/gateway.py's profile) and keeps a zlib context per connection.
            ws_per_message_deflate=False,
            # X-Forwarded-For is believed only from the configured proxies: uvicorn's default
            # trusts 127.0.0.1, where anyone on the host could pick his own address.
            proxy_headers=bool(config.trusted_proxies),
            forwarded_allow_ips=list(config.trusted_proxies) or [],
            timeout_graceful_shutdown=5,
        )
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            await task
            raise SystemExit("the gateway's HTTP server did not start")
        await asyncio.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    loop.settle_collector(rt.settings.gc_young)  # again: the app is built now
    rt.log.info("gateway listening", http_port=port)
    stop = asyncio.create_task(rt.stop.wait())
    await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    stop.cancel()
    await task


def main() -> int:
    """Run the gateway until SIGINT/SIGTERM; exit 2 when it is not configured to start."""
    try:
        GatewayConfig.from_env(Settings.from_env())
    except (ConfigError, SettingsError) as exc:
        print(f"spades gateway: {exc}", file=sys.stderr)
        return 2
    loop.run(run_service("gateway", serve))
    return 0


__all__ = ["create_app", "main", "serve"]
