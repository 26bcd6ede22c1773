"""Request ids at the edge: every HTTP request gets one, logs under it and hands it back.

An incoming ``X-Request-Id`` is kept when it is sane (``services.runtime.logs.sane_request_id``: a
short run of letters, digits and ``._:-``), so a request can be followed from a load balancer
or a client through the gateway's log lines; anything else is replaced by a fresh id. The id
is bound to the log context (`events.logs.bound_ids`) for the whole request (every line
logged while it is handled carries ``request_id``), echoed in the response's
``X-Request-Id`` header, and one ``request handled`` line records method, path (never the
query string, which may carry a token), status and duration.

WebSockets are not handled here: `services.gateway.ws` binds its own ids per connection and
message.
"""

from __future__ import annotations

import time

import structlog
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from events.logs import bound_ids
from services.runtime.logs import REQUEST_ID_HEADER, new_request_id, sane_request_id

__all__ = ["request_ids"]

log = structlog.get_logger("spades.gateway.http")
_HEADER = REQUEST_ID_HEADER.lower().encode("latin-1")


def _incoming(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == _HEADER:
            return sane_request_id(value.decode("latin-1"))
    return None


def request_ids(app: ASGIApp) -> ASGIApp:
    """Return ``app`` wrapped so each HTTP request has a request id.

    Wrap the whole application (what uvicorn serves), not as litestar middleware: litestar
    runs middleware only for requests that match a route, so a 404 would go without an id.
    """

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        request_id = _incoming(scope) or new_request_id()
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [(k, v) for k, v in message.get("headers", ()) if k.lower() != _HEADER]
                headers.append((_HEADER, request_id.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        with bound_ids(request_id=request_id):
            try:
                await app(scope, receive, send_with_id)
            finally:
                log.info(
                    "request handled",
                    method=scope.get("method", ""),
                    path=scope.get("path", ""),
                    status=status,
                    ms=round((time.perf_counter() - started) * 1000, 1),
                )

    return middleware
