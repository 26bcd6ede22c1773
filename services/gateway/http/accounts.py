"""Accounts, access tokens and sessions: register, log in, renew, log out, who am I."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, delete, get, post
from litestar.datastructures import State
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody

from services.gateway import auth
from services.gateway.errors import ERROR_RESPONSES, ApiError, ErrorBody
from services.gateway.http.common import BEARER, NO_STORE, gateway_of, sighted
from services.gateway.http.security import Caller, account_required
from services.gateway.state import Gateway


class Register(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A new account: its name, password, and whether a program (a bot) plays it."""

    name: auth.Name
    password: auth.Password
    bot: bool = False


class Login(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An account's name (any case) and password."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    password: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


RefreshToken = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=256,
        description="the refresh_token of the last login or renewal: `<session_id>.<secret>`",
        examples=[
            "0b6c7a52-5d0e-4b8e-9d1f-2f4c3a1b9e70.Xq3v8VbJr2yH1kP0nA7sLd9fG4hT6uW5eZcMxQ_b-Io"
        ],
    ),
]


class Refresh(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A session's refresh token: to renew the session (`POST /api/tokens/refresh`) or to end
    it (`DELETE /api/tokens`)."""

    refresh_token: RefreshToken


class Token(msgspec.Struct, frozen=True, kw_only=True):
    """A short-lived access token: send it as `Authorization: Bearer <token>`, or in the
    WebSocket `auth` message. With it the session's refresh token: trade it at
    `POST /api/tokens/refresh` for the next access token and refresh token (each refresh
    token works once) before `refresh_expires_in` seconds pass."""

    access_token: str
    token_type: str
    expires_in: int
    player_id: str
    bot: bool
    refresh_token: str
    refresh_expires_in: int


REFRESH_RESPONSES = {
    **ERROR_RESPONSES,
    401: ResponseSpec(
        data_container=ErrorBody,
        description="refresh_invalid (unknown, garbled, ended or already used: the session"
        " is over, log in again) or refresh_expired",
    ),
}


def session_seconds(gateway: Gateway) -> int:
    """Return how long a session lasts unused (SPADES_SESSION_DAYS), in seconds."""
    return gateway.config.session_days * 86_400


def token_of(gateway: Gateway, session: auth.Session) -> Token:
    """Return the answer of a login or renewal: a new access token and the refresh token."""
    access, _ = gateway.tokens.issue(session.player_id, session.bot)
    return Token(
        access_token=access,
        token_type="bearer",
        expires_in=gateway.tokens.seconds,
        player_id=session.player_id,
        bot=session.bot,
        refresh_token=session.refresh_token,
        refresh_expires_in=session.seconds,
    )


class Accounts(Controller):
    """Accounts, access tokens and sessions."""

    path = "/api"
    tags = ["accounts"]  # noqa: RUF012 - litestar reads a class attribute

    @post("/accounts", responses=ERROR_RESPONSES, status_code=201, summary="Register an account")
    async def register(self, data: JSONBody[Register], state: State) -> auth.Account:
        """Create an account (409 `name_taken` when the name is in use, ignoring case)."""
        if not auth.valid_name(data.name):  # the schema's `$` lets a final newline through
            raise ApiError(400, "malformed", f"{data.name!r} is not a name: {auth.NAME_RULE}")
        password_hash = await auth.hash_password(data.password)
        try:
            return await auth.create_account(
                gateway_of(state).pool, data.name, password_hash, data.bot
            )
        except auth.NameTaken:
            raise ApiError(409, "name_taken", f"the name {data.name!r} is taken") from None

    @post(
        "/tokens",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Log in: get an access token",
        response_headers=NO_STORE,
    )
    async def login(
        self, data: JSONBody[Login], request: Request[Any, Any, Any], state: State
    ) -> Token:
        """Return an access token for a name and password (401 `invalid_credentials`), and
        the refresh token of a new session."""
        gateway = gateway_of(state)
        # a name no account can have is not looked up (PostgreSQL text refuses NUL, for one)
        found = (
            await auth.find_login(gateway.pool, data.name) if auth.valid_name(data.name) else None
        )
        ok = await auth.verify_password(found[1] if found else None, data.password)
        if found is None or not ok:
            raise ApiError(401, "invalid_credentials", "unknown name or wrong password")
        session = await auth.open_session(gateway.pool, found[0], session_seconds(gateway))
        await sighted(gateway, request, found[0].player_id)
        return token_of(gateway, session)

    @post(
        "/tokens/refresh",
        responses=REFRESH_RESPONSES,
        status_code=200,
        summary="Renew a session: a new access token and refresh token",
        response_headers=NO_STORE,
    )
    async def refresh(self, data: JSONBody[Refresh], state: State) -> Token:
        """Trade a refresh token for a new access token and the session's next refresh token.
        Each refresh token works once (the one a renewal replaced is still taken for
        `SPADES_SESSION_REUSE_SECONDS`, 30, for two tabs or a retry): 401 `refresh_invalid` for
        one that is unknown, garbled, of a session that ended, or already used (which also ends
        its session: log in again), 401 `refresh_expired` once the session went unused for
        `SPADES_SESSION_DAYS`."""
        gateway = gateway_of(state)
        try:
            session = await auth.rotate_session(
                gateway.pool,
                data.refresh_token,
                session_seconds(gateway),
                gateway.config.session_reuse_seconds,
            )
        except auth.SessionError as exc:
            raise ApiError(401, exc.code, str(exc)) from None
        return token_of(gateway, session)

    @delete(
        "/tokens",
        responses={
            **ERROR_RESPONSES,
            401: ResponseSpec(
                data_container=ErrorBody,
                description="refresh_invalid: the token's session is open, but the secret is"
                " not one it had (nothing was ended)",
            ),
        },
        status_code=204,
        summary="Log out",
    )
    async def logout(self, data: JSONBody[Refresh], state: State) -> None:
        """End the session of a refresh token: none of its refresh tokens works any more.
        The same rule as a renewal: only the session's own secret (the current one, or one a
        renewal replaced) ends it; a secret the open session never had is 401
        `refresh_invalid` and ends nothing (a session id alone is no credential). Idempotent:
        a session already ended, or a token that is no session's, is answered 204 too.
        Access tokens already issued stay valid until they expire."""
        try:
            await auth.revoke_session(gateway_of(state).pool, data.refresh_token)
        except auth.SessionError as exc:
            raise ApiError(401, exc.code, str(exc)) from None

    @get(
        "/me",
        responses=ERROR_RESPONSES,
        summary="The account of the access token",
        security=BEARER,
        guards=[account_required],
    )
    async def me(self, request: Caller, state: State) -> auth.Account:
        """Return the caller's account."""
        account = await auth.find_account(gateway_of(state).pool, request.user.player_id)
        if account is None:
            raise ApiError(401, "token_invalid", "the token's account does not exist")
        return account


__all__ = ["Accounts", "Login", "Refresh", "Register", "Token"]
