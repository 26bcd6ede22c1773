"""structlog set up for JSON lines, the one log format of every service.

Log ids and types, never payloads: an event's data can hold a seat's hand, so no module of
`events/` ever passes event data (or a raw message body) to a logger.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog

__all__ = ["configure_logging", "get_logger"]


def configure_logging(level: str | None = None) -> None:
    """Send structlog and stdlib logs to stderr as JSON lines at `level` ($SPADES_LOG_LEVEL)."""
    name = (level or os.environ.get("SPADES_LOG_LEVEL", "INFO")).upper()
    numeric = logging.getLevelNamesMapping().get(name, logging.INFO)
    logging.basicConfig(stream=sys.stderr, level=numeric, format="%(message)s")
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """Return a structlog logger bound to a component name."""
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(component=name)
    return logger
