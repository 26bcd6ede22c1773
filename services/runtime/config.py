"""Settings of every service, read from environment variables with documented defaults.

| variable | default | meaning |
|---|---|---|
| SPADES_DATABASE_URL | from .spades/infra.env | PostgreSQL DSN of the event store |
| SPADES_NATS_URL | from .spades/infra.env | NATS server URL(s), comma separated |
| SPADES_NATS_PREFIX | (none) | prefix of every NATS subject and stream (test isolation) |
| SPADES_HTTP_PORT | 8000 | gateway HTTP/WebSocket port |
| SPADES_OPS_PORT | 9000 | /livez, /readyz, /metrics of a service (0 = any free port) |
| SPADES_LOG_LEVEL | info | debug, info, warning, error |
| SPADES_LOG_FORMAT | json | json, or console for people at a terminal |
| SPADES_TURN_SECONDS | 25 | seconds a seat has for one action before the bot plays it |
| SPADES_CONTRIBUTION_SECONDS | 5 | hand 1 waits this long for the clients' deal contributions |
| SPADES_ABANDON_STREAK | 3 | consecutive timeouts after which a bot takes the seat over |
| SPADES_BOT_SECONDS | 0.15 | the strong bot's time budget per decision, in the bot tier |
| SPADES_LEASE_SECONDS | 5 | lease time to live: a dead replica's games move within about this |
| SPADES_NATS_GRACE_SECONDS | 3 | a table or matchmaking replica unheard on NATS this long lets go |
| SPADES_NATS_DEAD_SECONDS | 120 | a service unheard on NATS this long exits (70) to be restarted |
| SPADES_REPLICA_ID | host:pid:random | this replica's name in lease groups (the pod's name) |
| SPADES_JWT_SECRET | (required by the gateway) | key that signs access tokens |
| SPADES_FAIRPLAY_DAYS | 7 | days an address or device links accounts (never at one ranked table) |
| SPADES_EVENT_LOOP | auto | auto (uvloop if installed), uvloop, or asyncio (`runtime.loop`) |
| SPADES_GC_YOUNG | 50000 | objects allocated between young collections (`runtime.loop`) |
| SPADES_UNTIMED_IDLE_SECONDS | 1800 | an untimed table nobody acted at for this long closes |
| SPADES_TABLE_FINISHED_CACHE_BYTES | 16777216 | table: finished games kept for readers (LRU) |
| SPADES_LADDERS | events/contracts/ladders.toml | the ladders file (events/contracts/ladders.py) |
| SPADES_CLOCK_FILE | (none) | tests only: a file holding the unix time seasons and bans read |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from msgspec import Meta

from events.settings import SettingsError, from_environ, read_infra_env

__all__ = ["Settings", "SettingsError"]

Port = Annotated[int, Meta(ge=0, le=65535)]
Positive = Annotated[float, Meta(gt=0)]
NonNegative = Annotated[float, Meta(ge=0)]
AtLeastOne = Annotated[int, Meta(ge=1)]
LogLevel = Annotated[str, Meta(pattern="(?i)^(debug|info|warning|error|critical)$")]


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting a service reads; see the module docstring for the variables."""

    database_url: str = ""
    nats_url: str = ""
    nats_prefix: str = ""
    http_port: Port = 8000
    ops_port: Port = 9000
    log_level: LogLevel = "info"
    log_format: Literal["json", "console"] = "json"
    turn_seconds: Positive = 25.0
    contribution_seconds: NonNegative = 5.0
    abandon_streak: AtLeastOne = 3
    bot_seconds: Positive = 0.15
    lease_seconds: Positive = 5.0
    nats_grace_seconds: Positive = 3.0
    nats_dead_seconds: Positive = 120.0
    replica_id: str = ""
    jwt_secret: str = ""
    fairplay_days: NonNegative = 7.0
    event_loop: Literal["auto", "uvloop", "asyncio"] = "auto"
    gc_young: Annotated[int, Meta(ge=0)] = 50_000
    untimed_idle_seconds: Positive = 1800.0
    table_finished_cache_bytes: Annotated[int, Meta(ge=0)] = 16 * 1024 * 1024
    ladders: str = ""
    clock_file: str = ""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Return settings from ``environ`` (default os.environ), then .spades/infra.env.

        Raises SettingsError naming the variable when a value does not fit its setting.
        """
        env = {**read_infra_env(), **(os.environ if environ is None else environ)}
        return from_environ(cls, env)
