"""The browser client: static files under `services/gateway/web/`, served by the gateway.

The client uses only the public HTTP API and the WebSocket at /ws, like any other client.
`/` is its single page; `/static/...` its scripts, styles and images.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import get
from litestar.datastructures import CacheControlHeader
from litestar.enums import ScopeType
from litestar.response import File
from litestar.static_files import create_static_files_router
from litestar.types import ASGIApp, Message, Receive, Scope, Send

WEB = Path(__file__).parents[1] / "web"
REVALIDATE = CacheControlHeader(no_cache=True)
"""Browsers keep the files but ask again each time (ETag/Last-Modified): an upgraded gateway's
client is never mixed with an old module from the cache."""


SECURITY_HEADERS = {
    # only the gateway's own scripts, styles and API (WebSocket included) — no inline script,
    # so text a player typed can never run as code even if it reached the page as markup
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
"""Headers of the client's page (the token lives in the page: keep it off other sites)."""
_SECURITY_RAW = [
    (name.lower().encode(), value.encode()) for name, value in SECURITY_HEADERS.items()
]


def is_html(content_type: bytes) -> bool:
    """Return whether a Content-Type names a document a browser renders as a page (and so
    may frame): text/html, or XHTML."""
    media = content_type.partition(b";")[0].strip().lower()
    return media in (b"text/html", b"application/xhtml+xml")


def secure_html(app: ASGIApp) -> ASGIApp:
    """Return ``app`` wrapped so every HTML answer carries `SECURITY_HEADERS`, whatever its
    path: `/static/index.html` is the whole client too, and must not be framed by another
    site any more than `/` (issue 26, item 6). A header the answer already has is kept."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {name.lower() for name, _ in headers}
                if any(n.lower() == b"content-type" and is_html(v) for n, v in headers):
                    headers += [(n, v) for n, v in _SECURITY_RAW if n not in names]
                    message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_secured)

    return wrapped


@get("/", include_in_schema=False, sync_to_thread=False, cache_control=REVALIDATE)
def index() -> File:
    """The client's page; its routes live in the URL's fragment (`/#/replay/GAME?at=12`)."""
    return File(
        WEB / "index.html",
        content_disposition_type="inline",
        media_type="text/html",
        headers=SECURITY_HEADERS,
    )


def web_routes() -> list[Any]:
    """The route handlers of the browser client."""
    return [
        index,
        create_static_files_router(
            path="/static",
            directories=[WEB],
            include_in_schema=False,
            name="web",
            cache_control=REVALIDATE,
        ),
    ]


__all__ = ["SECURITY_HEADERS", "WEB", "is_html", "secure_html", "web_routes"]
