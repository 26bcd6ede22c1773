"""structlog set up for JSON lines, the one log format of every service.

Log ids and types, never payloads: an event's data can hold a seat's hand, so no module of
`events/` ever passes event data (or a raw message body) to a logger.

Ids travel in context variables (`structlog.contextvars`): whoever starts a unit of work (a
command, a consumed message, a relay batch, an HTTP request) binds `request_id` and, when
there is one, `game_id`, and every line logged inside carries them, the lines of third-party
libraries logging through the standard `logging` module included (they are rendered by the
same processors, so every line of a service is one JSON object).
"""

from __future__ import annotations

import logging
import os
import sys

import structlog

__all__ = ["configure_logging", "get_logger"]


def configure_logging(level: str | None = None, fmt: str = "json") -> None:
    """Send structlog and stdlib logs to stderr as JSON lines (or `console`) at `level`.

    `level` defaults to $SPADES_LOG_LEVEL, then INFO; an unknown name raises ValueError.
    """
    name = (level or os.environ.get("SPADES_LOG_LEVEL", "INFO")).upper()
    numeric = logging.getLevelNamesMapping().get(name)
    if numeric is None:
        raise ValueError(f"unknown log level {level!r}")
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer() if fmt == "console" else structlog.processors.JSONRenderer()
    )
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(numeric)
    logging.captureWarnings(True)  # a library's warnings become JSON lines too


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """Return a structlog logger bound to a component name."""
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(component=name)
    return logger
