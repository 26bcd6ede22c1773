"""The browser client: static files under `services/gateway/web/`, served by the gateway.

The client uses only the public HTTP API and the WebSocket at /ws, like any other client.
`/` is its single page; `/static/...` its scripts, styles and images.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import get
from litestar.datastructures import CacheControlHeader
from litestar.response import File
from litestar.static_files import create_static_files_router

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


__all__ = ["WEB", "web_routes"]
