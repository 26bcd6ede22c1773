"""Structured logs: one JSON object a line, with request, game, table, seat and player ids bound.

Log ids and types, never payloads: a card hand in a log line would leak hidden information
to whoever reads the logs.

Every unit of work binds its ids with `work` (or `events.logs.bound_ids` inside one): a
table command (its command id and game id), a timer or bot move, a consumed event (bound by
`events.consumer`), a relay batch, a request over NATS or HTTP (the gateway's
`services.gateway.requestids`). Every line logged inside carries `request_id`, and `game_id`
where the work is about one game.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping

from events.logs import configure_logging, fresh_ids


def configure(level: str = "info", fmt: str = "json") -> None:
    """Route structlog and stdlib logging to stderr as JSON (or console) at ``level``."""
    configure_logging(level, fmt)


REQUEST_ID_HEADER = "X-Request-Id"
# What a caller may choose as its request id: short, printable, no spaces or quotes, so it
# can neither forge log fields nor bloat every line it is copied into.
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


def new_request_id() -> str:
    """Return a fresh request id (32 hex characters)."""
    return uuid.uuid4().hex


def sane_request_id(value: str | None) -> str | None:
    """Return ``value`` when it is acceptable as a request id from outside, else None."""
    if value is None or not _SANE_REQUEST_ID.fullmatch(value):
        return None
    return value


def request_id_of(headers: Mapping[str, str] | None) -> str:
    """Return the sane X-Request-Id among ``headers`` (e.g. a NATS message's), or a new id."""
    return sane_request_id((headers or {}).get(REQUEST_ID_HEADER)) or new_request_id()


class work:
    """Bind a unit of work's ids for every line logged inside; entered, give its request id.

    Ids bound by an enclosing unit (say, the message a timer was armed in) are cleared first,
    so a task spawned from a request does not log under that request's id. A class, not a
    ``contextlib.contextmanager``: the table enters one per command.
    """

    __slots__ = ("_bound", "_rid")

    def __init__(self, request_id: str | None = None, **ids: object) -> None:
        self._rid = request_id or new_request_id()
        self._bound = fresh_ids(
            request_id=self._rid, **{k: v for k, v in ids.items() if v is not None}
        )

    def __enter__(self) -> str:
        self._bound.__enter__()
        return self._rid

    def __exit__(self, *_: object) -> None:
        self._bound.__exit__()
