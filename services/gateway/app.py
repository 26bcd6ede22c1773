"""`spades serve gateway`: the public HTTP and WebSocket API, served by uvicorn.

The gateway runs inside `services.runtime.run_service` like every service, so it shares the
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
from typing import Any

import uvicorn
from litestar import Litestar, Request
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.datastructures import State
from litestar.middleware.rate_limit import RateLimitConfig, get_remote_address
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, YamlRenderPlugin
from litestar.openapi.spec import Components, Schema, SecurityScheme

from services.config import Settings, SettingsError
from services.gateway.config import HARD_FRAME_BYTES, MAX_BODY_BYTES, ConfigError, GatewayConfig
from services.gateway.errors import EXCEPTION_HANDLERS
from services.gateway.exports import Exports
from services.gateway.feed import Feeds
from services.gateway.guards import GatewayRequest, refuse_control_paths
from services.gateway.handlers import (
    Accounts,
    Games,
    Ladders,
    Practice,
    Queue,
    Transcripts,
    bearer_token,
)
from services.gateway.requestids import request_ids
from services.gateway.state import Gateway
from services.gateway.web import web_routes
from services.gateway.ws import play
from services.runtime import Runtime, run_service


class StrictStructs(StructSchemaPlugin):
    """Declare `additionalProperties: false` for request Structs that refuse unknown fields
    (litestar's own plugin leaves it out, so the document would promise what we refuse)."""

    def to_openapi_schema(self, field_definition: Any, schema_creator: Any) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        config = getattr(field_definition.annotation, "__struct_config__", None)
        if config is not None and config.forbid_unknown_fields:
            schema.additional_properties = False
        return schema


AUTH_PATHS = frozenset({"/api/accounts", "/api/tokens", "/api/tokens/refresh"})
# the client's page and files are not the API: loading them spends none of the request budget
UNLIMITED = ["/schema", "^/$", "^/static/"]


def _rate_limits(gateway: Gateway) -> list[RateLimitConfig]:
    """Per address, per account (a valid token's player), and tight on register, login and
    session renewal (a refresh token is a credential too)."""
    config = gateway.config

    def account_of(request: Request[Any, Any, Any]) -> str | None:
        try:
            return gateway.tokens.verify(bearer_token(request)).player_id
        except Exception:
            return None

    def has_account(request: Request[Any, Any, Any]) -> bool:
        return account_of(request) is not None

    def is_auth(request: Request[Any, Any, Any]) -> bool:
        return request.method == "POST" and request.url.path in AUTH_PATHS

    return [
        RateLimitConfig(
            rate_limit=("minute", config.rate_per_minute),
            identifier_for_request=lambda r: f"address:{get_remote_address(r)}",
            exclude=UNLIMITED,
        ),
        RateLimitConfig(
            rate_limit=("minute", config.rate_per_minute),
            identifier_for_request=lambda r: f"account:{account_of(r)}",
            check_throttle_handler=has_account,
            exclude=UNLIMITED,
        ),
        RateLimitConfig(
            rate_limit=("minute", config.auth_rate_per_minute),
            identifier_for_request=lambda r: f"login:{get_remote_address(r)}",
            check_throttle_handler=is_auth,
        ),
    ]


def create_app(gateway: Gateway) -> Litestar:
    """Return the litestar application of one gateway replica."""
    return Litestar(
        route_handlers=[
            Accounts,
            Queue,
            Practice,
            Ladders,
            Games,
            Transcripts,
            Exports,
            play,
            *web_routes(),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        request_class=GatewayRequest,
        middleware=[limit.middleware for limit in _rate_limits(gateway)],
        request_max_body_size=MAX_BODY_BYTES,
        plugins=[StrictStructs()],
        openapi_config=OpenAPIConfig(
            title="Spades ladder gateway",
            version="1.0.0",
            description=(
                "Accounts, queues, practice tables, ladders, game summaries and replays. "
                "Play happens over the WebSocket at /ws (see PROTOCOL.md). Every error is "
                '{"code": ..., "message": ...}.'
            ),
            path="/schema",
            render_plugins=[JsonRenderPlugin(), YamlRenderPlugin()],
            components=Components(
                security_schemes={
                    "BearerToken": SecurityScheme(
                        type="http",
                        scheme="bearer",
                        bearer_format="JWT",
                        description="the access_token of POST /api/tokens",
                    )
                }
            ),
        ),
        state=State(
            {
                "gateway": gateway,
                "feeds": Feeds(gateway.js, gateway.subjects, gateway.log),
            }
        ),
        debug=False,
        logging_config=None,  # services.logs owns logging: JSON lines with request ids
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
            request_ids(refuse_control_paths(create_app(gateway))),
            host=config.http_host,
            port=rt.settings.http_port,
            log_config=None,
            access_log=False,
            lifespan="on",
            ws="websockets",
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
    asyncio.run(run_service("gateway", serve))
    return 0


__all__ = ["create_app", "main", "serve"]
