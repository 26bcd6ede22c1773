"""Who is calling: litestar's authentication middleware and guards over the access tokens.

- `BearerAuth` (an `AbstractAuthenticationMiddleware`) reads `Authorization: Bearer <token>`
  once per request and sets ``request.user`` to the token's `auth.Claims`, or to None for a
  request without a usable token; ``request.auth`` then holds the `Refusal` that says why
  (`unauthenticated`, `token_expired`, `token_invalid`). It never refuses by itself: the
  public routes (watching, replays, ladders, exports, login and signup) answer anyone, even
  with an expired token in the header.
- `account_required`, the guard of every route that acts for an account, answers 401 with
  that refusal's code and message before the route reads its body or touches a service.
- The rate limits (`services.gateway.http.limits`) run after it and count a request against
  its account from ``request.user``: a token is verified once per request.

The WebSocket is not covered: its token comes in the `auth` message (PROTOCOL.md), verified
by `services.gateway.ws` with the same `auth.Tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.enums import HttpMethod, ScopeType
from litestar.handlers.base import BaseRouteHandler
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult
from litestar.middleware.base import DefineMiddleware
from litestar.types import ASGIApp

from services.gateway import auth
from services.gateway.errors import ApiError


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request has no account: what a route that needs one answers, with 401."""

    code: str
    message: str


NO_TOKEN = Refusal("unauthenticated", "send Authorization: Bearer <access token>")


def bearer_token(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """Return the bearer token of a request's `Authorization` header, or None without one."""
    scheme, _, token = connection.headers.get("authorization", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


class BearerAuth(AbstractAuthenticationMiddleware):
    """Set ``request.user`` to the claims of the request's access token (None without a
    valid one, ``request.auth`` saying why); refuse nothing."""

    def __init__(
        self, app: ASGIApp, tokens: auth.Tokens, exclude: str | list[str] | None = None
    ) -> None:
        super().__init__(app, exclude=exclude, scopes={ScopeType.HTTP})
        self.tokens = tokens

    async def authenticate_request(
        self, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> AuthenticationResult:
        """Return the caller's claims and token, or no user and the `Refusal` of his token."""
        token = bearer_token(connection)
        if token is None:
            return AuthenticationResult(user=None, auth=NO_TOKEN)
        try:
            return AuthenticationResult(user=self.tokens.verify(token), auth=token)
        except auth.TokenError as exc:
            return AuthenticationResult(user=None, auth=Refusal(exc.code, str(exc)))


def bearer_auth(tokens: auth.Tokens, exclude: list[str]) -> DefineMiddleware:
    """Return the authentication middleware of the app, skipping the paths of ``exclude``."""
    return DefineMiddleware(BearerAuth, tokens=tokens, exclude=exclude)


def account_required(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Guard: let only a request with a valid access token through (401 with the reason)."""
    if connection.scope.get("method") == HttpMethod.OPTIONS:
        # litestar's automatic OPTIONS answer (the Allow header) inherits a controller's
        # guards; it tells nothing of anyone, and a CORS preflight never carries credentials
        # (the middleware skips OPTIONS for that reason too)
        return
    if not isinstance(connection.user, auth.Claims):
        refusal = connection.auth if isinstance(connection.auth, Refusal) else NO_TOKEN
        raise ApiError(401, refusal.code, refusal.message)


Caller = Request[auth.Claims, str, State]
"""The request of a route guarded by `account_required`: ``request.user`` is the caller's
claims, ``request.auth`` his access token."""


__all__ = [
    "NO_TOKEN",
    "BearerAuth",
    "Caller",
    "Refusal",
    "account_required",
    "bearer_auth",
    "bearer_token",
]
