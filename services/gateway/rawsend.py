"""uvicorn's own ``send`` for the WebSocket sessions, beside litestar's, and a direct write.

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

from collections.abc import Callable

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send
from websockets.exceptions import InvalidState
from websockets.protocol import OPEN

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


def text_writer(send: Send) -> Callable[[bytes], bool] | None:
    """Return a function that writes a text frame at once, or None when ``send`` is not
    uvicorn's websockets-sansio protocol (the gateway's default, `GatewayConfig.ws`).

    Awaiting uvicorn's ``send`` costs a dict, two coroutines and, for a text frame, the
    payload decoded to text by the caller and encoded back to bytes by uvicorn; a seat's
    messages are UTF-8 JSON bytes already (the table encoded them). The function writes the
    bytes as they are, as ``send`` does, and answers True; it answers False (nothing written)
    whenever ``send`` would wait (the transport is paused) or refuse (the connection is not
    open): the caller then awaits ``send``, which waits or raises as it always did.

    While the connection is open with nothing of the protocol's own waiting to be written (a
    pong, a close) and no extension negotiated (the gateway's uvicorn offers none), the frame
    is the two-to-ten-byte header of an unmasked, final text frame before the bytes, as
    websockets' ``send_text`` would serialize it (`text_frame_bytes`), written without it."""
    protocol = getattr(send, "__self__", None)
    if protocol is None or type(protocol).__name__ != "WebSocketsSansIOProtocol":
        return None
    if not all(hasattr(protocol, name) for name in _PROTOCOL_STATE):
        return None  # another uvicorn than the one this was written against: the plain send

    def write(data: bytes) -> bool:
        if (
            protocol.disconnected
            or protocol.close_sent
            or not protocol.handshake_complete
            or protocol.initial_response is not None
            or not protocol.writable.is_set()
        ):
            return False
        conn = protocol.conn
        if conn.state is OPEN and not conn.writes and not conn.extensions:
            # what send_text would queue, framed here: no Frame object, checks or BytesIO
            protocol.transport.write(_text_header(len(data)) + data)
            return True
        try:
            conn.send_text(data)
        except InvalidState:
            return False  # closing: uvicorn's send says so (ClientDisconnected)
        protocol.transport.write(b"".join(conn.data_to_send()))
        return True

    return write


_PROTOCOL_STATE = (
    "conn",
    "transport",
    "writable",
    "disconnected",
    "close_sent",
    "handshake_complete",
    "initial_response",
)
"""What `text_writer` reads of uvicorn's protocol (all that its ``send`` checks)."""


_SMALL_HEADERS = tuple(bytes((0x81, n)) for n in range(126))


def _text_header(length: int) -> bytes:
    """Return the header of a server's (unmasked) final text frame of ``length`` bytes."""
    if length < 126:
        return _SMALL_HEADERS[length]
    if length < 65536:
        return b"\x81\x7e" + length.to_bytes(2, "big")
    return b"\x81\x7f" + length.to_bytes(8, "big")


def text_frame_bytes(data: bytes) -> bytes:
    """Return the bytes `text_writer` writes for ``data`` on an open connection."""
    return _text_header(len(data)) + data
