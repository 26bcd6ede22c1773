"""The HTTP API: thin handlers that decode, ask a service over NATS or read the log, answer.

Every path is under `/api`; the OpenAPI document is at `/schema` (`/schema/openapi.json`).
Handlers hold no game state: games live in the table service, queues in matchmaking, ratings
in the rating service, and the gateway reads finished games from the event log.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, get, post
from litestar.datastructures import State

from services.gateway import auth
from services.gateway.errors import ApiError, ErrorBody
from services.gateway.state import Gateway

BEARER = [{"BearerToken": []}]


# -- bodies ---------------------------------------------------------------------------------------


class Register(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A new account: its name, password, and whether a program (a bot) plays it."""

    name: auth.Name
    password: auth.Password
    bot: bool = False


class Login(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An account's name (any case) and password."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    password: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


class Token(msgspec.Struct, frozen=True, kw_only=True):
    """A short-lived access token: send it as `Authorization: Bearer <token>`, or in the
    WebSocket `auth` message."""

    access_token: str
    token_type: str
    expires_in: int
    player_id: str
    bot: bool


# -- dependencies ---------------------------------------------------------------------------------


def gateway_of(state: State) -> Gateway:
    """Return the gateway's resources (set on the app at start)."""
    gateway: Gateway = state.gateway
    return gateway


def bearer_token(request: Request[Any, Any, Any]) -> str:
    """Return the bearer token of the request; raise `unauthenticated` when there is none."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthenticated", "send Authorization: Bearer <access token>")
    return token.strip()


def current_player(request: Request[Any, Any, Any], state: State) -> auth.Claims:
    """Return the verified claims of the request's access token (401 with the reason if not)."""
    try:
        return gateway_of(state).tokens.verify(bearer_token(request))
    except auth.TokenError as exc:
        raise ApiError(401, exc.code, str(exc)) from None


class Accounts(Controller):
    """Accounts and access tokens."""

    path = "/api"
    tags = ["accounts"]  # noqa: RUF012 - litestar reads a class attribute

    @post("/accounts", status_code=201, summary="Register an account")
    async def register(self, data: Register, state: State) -> auth.Account:
        """Create an account (409 `name_taken` when the name is in use, ignoring case)."""
        password_hash = await auth.hash_password(data.password)
        try:
            return await auth.create_account(
                gateway_of(state).pool, data.name, password_hash, data.bot
            )
        except auth.NameTaken:
            raise ApiError(409, "name_taken", f"the name {data.name!r} is taken") from None

    @post("/tokens", status_code=200, summary="Log in: get an access token")
    async def login(self, data: Login, state: State) -> Token:
        """Return an access token for a name and password (401 `invalid_credentials`)."""
        gateway = gateway_of(state)
        found = await auth.find_login(gateway.pool, data.name)
        ok = await auth.verify_password(found[1] if found else None, data.password)
        if found is None or not ok:
            raise ApiError(401, "invalid_credentials", "unknown name or wrong password")
        account = found[0]
        token, _ = gateway.tokens.issue(account.player_id, account.bot)
        return Token(
            access_token=token,
            token_type="bearer",
            expires_in=gateway.tokens.seconds,
            player_id=account.player_id,
            bot=account.bot,
        )

    @get("/me", summary="The account of the access token", security=BEARER)
    async def me(self, request: Request[Any, Any, Any], state: State) -> auth.Account:
        """Return the caller's account."""
        claims = current_player(request, state)
        account = await auth.find_account(gateway_of(state).pool, claims.player_id)
        if account is None:
            raise ApiError(401, "token_invalid", "the token's account does not exist")
        return account


__all__ = ["Accounts", "ErrorBody", "current_player", "gateway_of"]
