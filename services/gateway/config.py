"""The gateway's own settings, beside the shared `services.runtime.config.Settings`.

| variable | default | meaning |
|---|---|---|
| SPADES_JWT_SECRET | (required) | HS256 token key, >= 32 characters, shared by replicas |
| SPADES_GATEWAY_DEV | (unset) | `1`: no SPADES_JWT_SECRET needed, a random per-process key |
| SPADES_TEST_CHEAP_HASHING | (unset) | tests only: `1` hashes passwords at argon2id's least cost |
| SPADES_HTTP_HOST | 0.0.0.0 | address the HTTP/WebSocket server binds |
| SPADES_TOKEN_SECONDS | 900 | lifetime of an access token |
| SPADES_SESSION_DAYS | 30 | a login's session (refresh token) ends after this many days unused |
| SPADES_SESSION_REUSE_SECONDS | 30 | a replaced refresh token still renews this long (a retry) |
| SPADES_RATE_PER_MINUTE | 300 | HTTP requests per minute per client address, and per account |
| SPADES_AUTH_RATE_PER_MINUTE | 20 | register/login/refresh attempts per minute per address |
| SPADES_TRUSTED_PROXIES | (empty) | proxies (IPs, CIDR ranges) whose X-Forwarded-* is believed |
| SPADES_LIVE_TABLES_PER_ACCOUNT | 3 | unfinished practice/casual tables an account may have |
| SPADES_QUEUE_CHANGES_PER_MINUTE | 10 | ranked-queue joins and leaves per account per minute |
| SPADES_EVENT_CHANGES_PER_MINUTE | 10 | events made, entered, left, resumed per account a minute |
| SPADES_FRIENDS_TABLES_PER_HOUR | 20 | friends' tables (invitations) an account may open an hour |
| SPADES_WS_PER_ADDRESS | 32 | open WebSocket connections per client address (per replica) |
| SPADES_WS_PER_ACCOUNT | 8 | authenticated WebSocket connections per account (per replica) |
| SPADES_WS_ANONYMOUS_PER_ADDRESS | 4 | connections per address watching without an account |
| SPADES_WS_MESSAGES_PER_SECOND | 50 | messages per second one connection may send (burst: 200) |
| SPADES_FAILOVER_SECONDS | 12 | an unanswered request is resent this long (a take-over) |
| SPADES_WS_SUBSCRIBES_PER_MINUTE | 60 | subscribes a minute per connection (burst: 20) |
| SPADES_GATEWAY_WS | websockets-sansio | uvicorn WebSocket code; also websockets, wsproto |
| SPADES_GATEWAY_HTTP | auto | uvicorn's HTTP parser: auto (httptools if there), httptools, h11 |

Client addresses: with SPADES_TRUSTED_PROXIES empty (the default) the client's address is the
TCP peer's, whatever headers say, so nobody can pick his own address for the rate limits or
the fair-play record by sending `X-Forwarded-For`. Behind an ingress, list its address range:
only a request arriving from it has its forwarded address believed.

Rate limits are counted per replica (an in-memory store): with N replicas a client can reach
N times the figure, which is the intent of a cheap first line of defence, not a quota.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from msgspec import Meta

from events.settings import SettingsError, from_environ
from services.runtime.config import AtLeastOne, Settings

MIN_SECRET_CHARS = 32
MAX_BODY_BYTES = 16 * 1024
"""Largest HTTP request body accepted (413 beyond): every request body here is a few fields."""
MAX_FRAME_BYTES = 4 * 1024
"""Largest WebSocket message the protocol accepts; larger ones get a `frame_too_large` error."""
HARD_FRAME_BYTES = 64 * 1024
"""Frames beyond this are refused by the server itself (close code 1009), unread."""


WsImplementation = Literal["websockets", "websockets-sansio", "wsproto"]
"""uvicorn's WebSocket implementations (`benchmarks/gateway.py` compares them)."""
HttpImplementation = Literal["auto", "httptools", "h11"]
DEFAULT_WS: WsImplementation = "websockets-sansio"


class ConfigError(ValueError):
    """The gateway cannot start with these settings; the message says what to set."""


@dataclass(frozen=True, slots=True)
class _GatewayEnv:
    """The gateway's own variables (SPADES_<FIELD>), decoded by the one settings loader."""

    gateway_dev: bool = False
    http_host: str = "0.0.0.0"  # a container listens on every interface
    token_seconds: AtLeastOne = 900
    session_days: AtLeastOne = 30
    session_reuse_seconds: Annotated[int, Meta(ge=0)] = 30
    rate_per_minute: AtLeastOne = 300
    auth_rate_per_minute: AtLeastOne = 20
    trusted_proxies: str = ""  # comma-separated addresses or CIDR ranges (parse_proxies)
    live_tables_per_account: AtLeastOne = 3
    queue_changes_per_minute: AtLeastOne = 10
    event_changes_per_minute: AtLeastOne = 10
    friends_tables_per_hour: AtLeastOne = 20
    ws_per_address: AtLeastOne = 32
    ws_per_account: AtLeastOne = 8
    ws_anonymous_per_address: Annotated[int, Meta(ge=0)] = 4
    ws_messages_per_second: AtLeastOne = 50
    failover_seconds: AtLeastOne = 12
    ws_subscribes_per_minute: AtLeastOne = 60
    gateway_ws: WsImplementation = DEFAULT_WS
    gateway_http: HttpImplementation = "auto"


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """What the gateway reads from the environment on top of `Settings`."""

    jwt_secret: str
    dev_secret: bool = False
    http_host: str = "0.0.0.0"
    token_seconds: int = 900
    session_days: int = 30
    session_reuse_seconds: int = 30
    rate_per_minute: int = 300
    auth_rate_per_minute: int = 20
    trusted_proxies: tuple[str, ...] = ()
    live_tables_per_account: int = 3
    queue_changes_per_minute: int = 10
    event_changes_per_minute: int = 10
    friends_tables_per_hour: int = 20
    ws_per_address: int = 32
    ws_per_account: int = 8
    ws_anonymous_per_address: int = 4
    ws_messages_per_second: int = 50
    failover_seconds: int = 12
    ws_subscribes_per_minute: int = 60
    """Subscribes a connection may send a minute after a burst of `SUBSCRIBE_BURST`: each one
    asks a table for a view or a catch-up (``last_seq`` 0 re-reads a game's log)."""
    ws: WsImplementation = DEFAULT_WS
    http: HttpImplementation = "auto"

    @classmethod
    def from_env(
        cls, settings: Settings, environ: Mapping[str, str] | None = None
    ) -> GatewayConfig:
        """Return the config, or raise ConfigError naming the variable that is unusable."""
        try:
            env = from_environ(_GatewayEnv, environ)
        except SettingsError as exc:
            raise ConfigError(str(exc)) from None
        secret = settings.jwt_secret
        if not secret:
            if not env.gateway_dev:
                raise ConfigError(
                    "SPADES_JWT_SECRET is not set: the gateway signs access tokens with it "
                    "(set SPADES_GATEWAY_DEV=1 to use a throwaway key on a development machine)"
                )
            secret = secrets.token_urlsafe(48)
        elif len(secret) < MIN_SECRET_CHARS:
            raise ConfigError(f"SPADES_JWT_SECRET must be at least {MIN_SECRET_CHARS} characters")
        return cls(
            jwt_secret=secret,
            dev_secret=not settings.jwt_secret,
            http_host=env.http_host,
            token_seconds=env.token_seconds,
            session_days=env.session_days,
            session_reuse_seconds=env.session_reuse_seconds,
            rate_per_minute=env.rate_per_minute,
            auth_rate_per_minute=env.auth_rate_per_minute,
            trusted_proxies=parse_proxies(env.trusted_proxies),
            live_tables_per_account=env.live_tables_per_account,
            queue_changes_per_minute=env.queue_changes_per_minute,
            event_changes_per_minute=env.event_changes_per_minute,
            friends_tables_per_hour=env.friends_tables_per_hour,
            ws_per_address=env.ws_per_address,
            ws_per_account=env.ws_per_account,
            ws_anonymous_per_address=env.ws_anonymous_per_address,
            ws_messages_per_second=env.ws_messages_per_second,
            failover_seconds=env.failover_seconds,
            ws_subscribes_per_minute=env.ws_subscribes_per_minute,
            ws=env.gateway_ws,
            http=env.gateway_http,
        )


def parse_proxies(text: str) -> tuple[str, ...]:
    """Return the proxies of SPADES_TRUSTED_PROXIES as networks; raise ConfigError naming a bad
    entry (a typo must stop the gateway, not silently trust nobody or everybody)."""
    proxies = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        try:
            proxies.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise ConfigError(
                f"SPADES_TRUSTED_PROXIES: {entry!r} is not an IP address or CIDR range"
            ) from None
    return tuple(proxies)
