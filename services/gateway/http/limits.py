"""The request budgets: per client address, per account, and tight on the credential routes.

Counted per replica (an in-memory store): with N replicas a client can reach N times the
figure, which is the intent of a cheap first line of defence, not a quota. They run after
`security.BearerAuth`, so the account of a request is its ``request.user``, verified once.
"""

from __future__ import annotations

import re
from typing import Any

from litestar import Request
from litestar.middleware.rate_limit import RateLimitConfig, get_remote_address

from services.gateway import auth
from services.gateway.config import GatewayConfig

AUTH_PATHS = frozenset({"/api/accounts", "/api/tokens", "/api/tokens/refresh"})
SCHEMA_PATHS = ("/schema", "/schema/openapi.json", "/schema/openapi.yaml", "/schema/openapi.yml")
"""The API's document, every address it is served at (`services.gateway.http.openapi`)."""
UNLIMITED = [
    "^(?:" + "|".join(re.escape(path) for path in SCHEMA_PATHS) + ")$",
    "^/$",
    "^/static/",
]
"""The client's page and files and the API's document: loading them spends none of the
request budget, and needs no account (the authentication middleware skips them too).

Litestar *searches* a path for these patterns (`re.findall`), so each is anchored: the
document's own paths exactly, not any path that contains "/schema" (`/api/players/schemazz`
is a player's page, limited like every other)."""


def account_of(request: Request[Any, Any, Any]) -> str | None:
    """Return the player id of a request's valid access token, or None."""
    user = request.scope.get("user")
    return user.player_id if isinstance(user, auth.Claims) else None


def has_account(request: Request[Any, Any, Any]) -> bool:
    """Return whether a request carries a valid access token."""
    return account_of(request) is not None


def is_auth(request: Request[Any, Any, Any]) -> bool:
    """Return whether a request registers, logs in or renews a session (a refresh token is a
    credential too)."""
    return request.method == "POST" and request.url.path in AUTH_PATHS


def rate_limits(config: GatewayConfig) -> list[RateLimitConfig]:
    """Per address, per account (a valid token's player), and tight on register, login and
    session renewal."""
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


__all__ = ["AUTH_PATHS", "SCHEMA_PATHS", "UNLIMITED", "account_of", "rate_limits"]
