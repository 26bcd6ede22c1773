"""The browser client: static files under `services/gateway/web/`, served by the gateway.

The client uses only the public HTTP API and the WebSocket at /ws, like any other client.
`/` is its single page; `/static/...` its scripts, styles and images.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import get
from litestar.response import File
from litestar.static_files import create_static_files_router

WEB = Path(__file__).parent / "web"


@get("/", include_in_schema=False, sync_to_thread=False)
def index() -> File:
    """The client's page; its routes live in the URL's fragment (`/#/replay/GAME?at=12`)."""
    return File(WEB / "index.html", content_disposition_type="inline", media_type="text/html")


def web_routes() -> list[Any]:
    """The route handlers of the browser client."""
    return [
        index,
        create_static_files_router(
            path="/static", directories=[WEB], include_in_schema=False, name="web"
        ),
    ]


__all__ = ["WEB", "web_routes"]
