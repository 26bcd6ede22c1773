"""What every gateway handler is given: the process's connections and settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import asyncpg
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from events.pgstore import PostgresEventStore
from events.subjects import Subjects
from services.config import Settings
from services.gateway.auth import Tokens
from services.gateway.config import GatewayConfig


@dataclass
class Gateway:
    """One gateway replica's resources; it keeps no game state of its own."""

    settings: Settings
    config: GatewayConfig
    subjects: Subjects
    pool: asyncpg.Pool
    store: PostgresEventStore
    nc: NATS
    js: JetStreamContext
    log: Any
    tokens: Tokens = field(init=False)

    def __post_init__(self) -> None:
        self.tokens = Tokens(self.config.jwt_secret, self.config.token_seconds)
