"""Every HTTP error is a JSON body `{"code": ..., "message": ...}`.

``code`` is stable for programs (`malformed`, `unauthenticated`, `token_expired`, `name_taken`,
`rate_limited`, the services' own codes ...); ``message`` is for people. Handlers raise
`ApiError` (or let a `events.errors.Refusal` through: it is answered at its code's status,
`status_of`); litestar's own exceptions (validation, 404, 405, 413, 429) are mapped to a code by
their status, and anything unexpected becomes `internal` without its details.
"""

from __future__ import annotations

from typing import Any

import msgspec
import structlog
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec

from events.errors import Refusal

log = structlog.get_logger("gateway")

_CODES = {
    400: "malformed",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    503: "unavailable",
}


_STATUS = {
    # HTTP status of each refusal code the services answer with (400 for any other)
    "malformed": 400,
    "invalid_ruleset": 400,
    "wrong_player_count": 400,
    "bot_not_allowed": 403,
    "playban": 403,
    "not_your_seat": 403,
    "unknown_ladder": 404,
    "unknown_game": 404,
    "unknown_season": 404,
    "season_closing": 503,
    "already_queued": 409,
    "game_over": 409,
    "game_not_finished": 409,
    "retry_later": 409,
    "retries_spent": 409,
    "seat_abandoned": 409,
    "in_game": 409,
    "not_queued": 409,
    "stale": 409,
    "unavailable": 503,
}


def status_of(code: str) -> int:
    """Return the HTTP status of a refusal's code: the one table the HTTP edge maps by."""
    return _STATUS.get(code, 400)


class ErrorBody(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The body of every error answer."""

    code: str
    message: str
    ends_at: float | None = None
    """A ``playban`` (403): when the queue ban ends (unix seconds)."""


class ApiError(HTTPException):
    """An error answer with a machine code: raise it from a handler."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        headers: dict[str, str] | None = None,
        ends_at: float | None = None,
    ) -> None:
        super().__init__(detail=message, status_code=status, headers=headers)
        self.code = code
        self.ends_at = ends_at


def _message_of(exc: HTTPException) -> str:
    if isinstance(exc, ValidationException) and isinstance(exc.extra, list) and exc.extra:
        parts = []
        for item in exc.extra[:5]:
            if isinstance(item, dict):
                where = item.get("key") or item.get("source") or ""
                parts.append(f"{where}: {item.get('message', '')}".strip(": "))
        if parts:
            return f"{exc.detail}: " + "; ".join(parts)
    return str(exc.detail)


def http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[ErrorBody]:
    """Answer an HTTPException as an ErrorBody with its status (and its headers)."""
    status = exc.status_code
    code = getattr(exc, "code", None) or _CODES.get(status, "error")
    return Response(
        ErrorBody(code=code, message=_message_of(exc), ends_at=getattr(exc, "ends_at", None)),
        status_code=status,
        media_type=MediaType.JSON,
        headers=exc.headers,
    )


def refusal_error(request: Request[Any, Any, Any], exc: Refusal) -> Response[ErrorBody]:
    """Answer a `Refusal` a handler let through with its code, at the code's status."""
    return Response(
        ErrorBody(code=exc.code, message=exc.message),
        status_code=status_of(exc.code),
        media_type=MediaType.JSON,
    )


def internal_error(request: Request[Any, Any, Any], exc: Exception) -> Response[ErrorBody]:
    """Answer an unexpected exception as `internal` (the details go to the log only)."""
    log.exception("unhandled error", path=request.url.path, error=type(exc).__name__)
    return Response(
        ErrorBody(code="internal", message="internal error"),
        status_code=500,
        media_type=MediaType.JSON,
    )


EXCEPTION_HANDLERS: dict[type[Exception] | int, Any] = {
    HTTPException: http_error,
    Refusal: refusal_error,
    Exception: internal_error,
}


# Documented on every operation: the answers any of them may give besides its success.
ERROR_RESPONSES: dict[int, ResponseSpec] = {
    status: ResponseSpec(data_container=ErrorBody, description=description)
    for status, description in {
        400: "malformed request, or a rule or ruleset it breaks (see code)",
        401: "unauthenticated, token_invalid, token_expired or invalid_credentials",
        403: "not allowed (bot_not_allowed, not_your_seat; playban: a queue ban until ends_at)",
        404: "not found (not_found, unknown_game, unknown_ladder, unknown_season)",
        409: "conflicts with the current state (name_taken, already_queued, in_game ...)",
        413: "request body too large",
        415: "unsupported_media_type: a JSON body must be sent as application/json",
        429: "rate limited: see the RateLimit-* headers",
        500: "internal error",
        503: "a service did not answer: try again",
    }.items()
}
