"""What the gateway refuses before a handler runs: crafted paths and bodies.

- A path with a control character (``%00`` and the rest of C0, DEL) names nothing the API
  serves: 400 `malformed`, answered here before any route or database sees it (PostgreSQL's
  text type cannot hold NUL and would fail deep inside a query).
- A JSON body is read only when it says it is JSON (`Content-Type: application/json` or a
  ``+json`` type): 415 `unsupported_media_type` otherwise. A form or ``text/plain`` post is
  what a foreign page can make a browser send without a preflight, so accepting one would
  let any site log a visitor in to an account of its choosing (login CSRF).
- A JSON body nested deeper than the decoder's recursion allows is 400 `malformed`, not an
  internal error.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar import Request
from litestar.enums import ScopeType
from litestar.types import (
    ASGIApp,
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    Receive,
    Scope,
    Send,
)

from services.gateway.errors import ApiError, ErrorBody

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_JSON_TYPE = re.compile(r"^application/([a-z0-9.+-]+\+)?json$")


def has_control(text: str) -> bool:
    """Return whether ``text`` holds a control character."""
    return _CONTROL.search(text) is not None


def is_json_type(content_type: str) -> bool:
    """Return whether a Content-Type header names JSON (parameters such as charset aside)."""
    return _JSON_TYPE.match(content_type.partition(";")[0].strip().lower()) is not None


class GatewayRequest(Request[Any, Any, Any]):
    """litestar's Request, reading JSON bodies only when declared JSON and never deeper than
    the decoder can go."""

    async def json(self) -> Any:
        """Return the decoded JSON body; raise 415 or 400 `malformed` saying why not."""
        if not is_json_type(self.headers.get("content-type", "")):
            raise ApiError(
                415, "unsupported_media_type", "send the body as Content-Type: application/json"
            )
        try:
            return await super().json()
        except RecursionError:
            raise ApiError(400, "malformed", "the JSON body is nested too deeply") from None


_PATH_ERROR = msgspec.json.encode(
    ErrorBody(code="malformed", message="the path holds a control character")
)


def refuse_control_paths(app: ASGIApp) -> ASGIApp:
    """Return ``app`` wrapped so a request (HTTP or WebSocket) whose path holds a control
    character is answered 400 `malformed` (a WebSocket is refused before the handshake)."""

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in (ScopeType.HTTP, ScopeType.WEBSOCKET) and has_control(
            scope.get("path", "")
        ):
            if scope["type"] == ScopeType.WEBSOCKET:
                await send({"type": "websocket.close", "code": 1008, "reason": "malformed path"})
                return
            start: HTTPResponseStartEvent = {
                "type": "http.response.start",
                "status": 400,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(_PATH_ERROR)).encode()),
                ],
            }
            await send(start)
            body: HTTPResponseBodyEvent = {
                "type": "http.response.body",
                "body": _PATH_ERROR,
                "more_body": False,
            }
            await send(body)
            return
        await app(scope, receive, send)

    return guard


__all__ = ["GatewayRequest", "has_control", "is_json_type", "refuse_control_paths"]
