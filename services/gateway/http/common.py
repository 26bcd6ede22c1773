"""What the HTTP areas share: the gateway's resources, services' refusals as HTTP errors, the
headers of answers that carry a token, and the OpenAPI security requirement."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.datastructures import ResponseHeader, State

from services.gateway import fairplay
from services.gateway.errors import ApiError, status_of
from services.gateway.state import Gateway, Unavailable, ask, ask_again

BEARER: list[dict[str, list[str]]] = [{"BearerToken": []}]
"""The OpenAPI security requirement of a route guarded by `security.account_required`."""

NO_STORE = [
    ResponseHeader(name="Cache-Control", value="no-store"),
    ResponseHeader(name="Pragma", value="no-cache"),
]
"""Headers of every answer that carries a token (RFC 6749 5.1): no cache may keep a copy."""


def gateway_of(state: State) -> Gateway:
    """Return the gateway's resources (set on the app at start)."""
    gateway: Gateway = state.gateway
    return gateway


async def sighted(gateway: Gateway, request: Request[Any, Any, Any], player_id: str) -> None:
    """Record where ``player_id`` is (his address, his client's device token): accounts seen
    at one never share a ranked table (`services.gateway.fairplay`)."""
    address = request.client.host if request.client else None
    device = request.headers.get(fairplay.DEVICE_HEADER)
    await fairplay.record_sighting(gateway.pool, player_id, address, device)


async def strict_bools(request: Request[Any, Any, Any], *names: str) -> None:
    """Refuse a body whose flag ``names`` is not a JSON boolean: litestar converts bodies
    laxly (0 would pass as false), and a flag sent as a number is a client's mistake."""
    raw = await request.json()
    for name in names:  # "options.free_text_chat": a flag inside an object of the body
        *outer, flag = name.split(".")
        where = raw
        for part in outer:
            where = where.get(part) if isinstance(where, dict) else None
        if isinstance(where, dict) and not isinstance(where.get(flag, False), bool):
            raise ApiError(400, "malformed", f"{name} must be true or false")


def refused(code: str, message: str, ends_at: float | None = None) -> ApiError:
    """Return the HTTP error for a service's refusal code (a playban's with its end)."""
    return ApiError(status_of(code), code, message, ends_at=ends_at)


async def asked(gateway: Gateway, subject: str, body: msgspec.Struct) -> bytes:
    """Return a service's answer; 503 `unavailable` when it does not answer."""
    try:
        return await ask(gateway, subject, body)
    except Unavailable:
        raise ApiError(503, "unavailable", "the service did not answer: try again") from None


async def asked_again(gateway: Gateway, subject: str, body: msgspec.Struct) -> tuple[bytes, bool]:
    """Return the answer to a request its receiver applies once however often it is sent,
    resent while unanswered through a take-over (`state.ask_again`), and whether a send went
    unanswered; 503 `unavailable` when none is answered within the failover wait."""
    try:
        return await ask_again(gateway, subject, body)
    except Unavailable:
        raise ApiError(503, "unavailable", "the service did not answer: try again") from None


__all__ = [
    "BEARER",
    "NO_STORE",
    "asked",
    "asked_again",
    "gateway_of",
    "refused",
    "sighted",
    "strict_bools",
]
