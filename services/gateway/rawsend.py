"""uvicorn's own ``send`` for the WebSocket sessions, beside litestar's.

litestar hands a handler a ``send`` wrapped three times (the connection's disconnect check and
two exception middlewares' response-started flags, none of which a WebSocket text frame
needs): four coroutines for every frame a seat is sent, about ten a card play. `keep_raw_send`
records the server's ``send`` in the connection's scope, under `RAW_SEND`, before litestar
wraps it; `services.gateway.session.Session` writes its frames with it (and with litestar's
when the application runs without this wrapper, as in a test client). A frame written after
the client left raises uvicorn's ``ClientDisconnected`` instead of litestar's
``WebSocketDisconnect``: either ends the session's writer, which is all either did.
"""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

RAW_SEND = "spades.raw_send"
"""The scope key of the server's ``send`` for a WebSocket connection."""


def keep_raw_send(app: ASGIApp) -> ASGIApp:
    """Return ``app`` wrapped so each WebSocket connection's scope holds the server's
    ``send`` under `RAW_SEND` (wrap litestar itself: nothing between may wrap ``send``)."""

    async def keep(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.WEBSOCKET:
            scope[RAW_SEND] = send  # type: ignore[literal-required]
        await app(scope, receive, send)

    return keep
