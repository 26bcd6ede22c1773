"""Versioned schema migrations for the event store, the bus checkpoints and the parking lot.

`spades migrate` applies the ones a database lacks, in order, each in its own transaction,
under an advisory lock so two starting services never race. A migration is never edited once
committed: a change is a new migration.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

import asyncpg

__all__ = ["MIGRATIONS", "Migration", "database_url", "migrate", "run"]

# pg_advisory_lock key for "someone is migrating" (any constant unique to this project).
_MIGRATION_LOCK = 0x5BADE5_0001


@dataclass(frozen=True)
class Migration:
    """One schema step: its number, a name, and the SQL that applies it."""

    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "event store",
        """
        -- One row per stream: the compare-and-set target of every append. Locking this row
        -- (UPDATE ... WHERE version = expected) serialises writers of one stream, so a writer
        -- can only append after the version it saw, and the log never forks or gaps.
        CREATE TABLE spades_streams (
            stream_id text PRIMARY KEY,
            version   bigint NOT NULL CHECK (version > 0)
        );

        CREATE TABLE spades_events (
            -- position: insertion order inside a transaction; NOT commit order across them.
            position       bigint GENERATED ALWAYS AS IDENTITY,
            -- transaction_id: the writer's 64-bit xid. read_all orders by
            -- (transaction_id, position) and stops below the oldest running transaction.
            transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
            event_id       uuid NOT NULL UNIQUE,
            stream_id      text NOT NULL,
            version        bigint NOT NULL CHECK (version > 0),
            type           text NOT NULL,
            schema_version integer NOT NULL DEFAULT 1,
            -- json, not jsonb: the payload keeps its exact bytes, so what the relay publishes
            -- is byte for byte what was appended (and a retry compares equal).
            data           json NOT NULL,
            metadata       jsonb NOT NULL DEFAULT '{}',
            recorded_at    timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (stream_id, version)
        );
        CREATE UNIQUE INDEX spades_events_global_order
            ON spades_events (transaction_id, position);

        -- Named positions of readers of the global log (the relay, projections).
        CREATE TABLE spades_checkpoints (
            name           text PRIMARY KEY,
            transaction_id xid8 NOT NULL,
            position       bigint NOT NULL,
            updated_at     timestamptz NOT NULL DEFAULT now()
        );

        -- A bus consumer's last applied version per stream: written in the same transaction as
        -- the consumer's effect, so a redelivered message is recognised and has no second effect.
        CREATE TABLE spades_consumer_positions (
            consumer  text NOT NULL,
            stream_id text NOT NULL,
            version   bigint NOT NULL,
            PRIMARY KEY (consumer, stream_id)
        );

        -- Messages a consumer could not handle, kept for a person to look at.
        CREATE TABLE spades_parked (
            id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            consumer        text NOT NULL,
            subject         text NOT NULL,
            stream_sequence bigint,
            reason          text NOT NULL,
            payload         bytea NOT NULL,
            headers         jsonb NOT NULL DEFAULT '{}',
            parked_at       timestamptz NOT NULL DEFAULT now(),
            UNIQUE (consumer, stream_sequence)
        );
        """,
    ),
    Migration(
        2,
        "matchmaking and rating read models",
        """
        -- Rating service: current rating per (ladder, player). last_played is unix seconds
        -- (the model's clock); inactivity decay is applied when read, never stored.
        CREATE TABLE ratings (
            ladder      text NOT NULL,
            player_id   text NOT NULL,
            mu          double precision NOT NULL,
            sigma       double precision NOT NULL,
            games       integer NOT NULL,
            last_played double precision,
            PRIMARY KEY (ladder, player_id)
        );

        -- One row per player per rated game: the before/after of RatingsUpdated, queryable.
        CREATE TABLE rating_history (
            game_id        text NOT NULL,
            ladder         text NOT NULL,
            player_id      text NOT NULL,
            mu_before      double precision NOT NULL,
            sigma_before   double precision NOT NULL,
            mu_after       double precision NOT NULL,
            sigma_after    double precision NOT NULL,
            ordinal_before double precision NOT NULL,
            ordinal_after  double precision NOT NULL,
            games          integer NOT NULL,
            rated_at       double precision NOT NULL,
            PRIMARY KEY (game_id, player_id)
        );
        CREATE INDEX rating_history_player ON rating_history (player_id, rated_at);

        -- Matchmaking's own projection of RatingsUpdated (it never reads the rating tables).
        CREATE TABLE matchmaking_ratings (
            ladder      text NOT NULL,
            player_id   text NOT NULL,
            mu          double precision NOT NULL,
            sigma       double precision NOT NULL,
            games       integer NOT NULL,
            last_played double precision,
            PRIMARY KEY (ladder, player_id)
        );

        -- Players seated by a MatchFound whose GameFinished has not arrived yet.
        CREATE TABLE matchmaking_live_players (
            player_id text PRIMARY KEY,
            match_id  text NOT NULL,
            ladder    text NOT NULL,
            since     timestamptz NOT NULL DEFAULT now()
        );
        """,
    ),
    Migration(
        3,
        "gateway accounts",
        """
        -- The gateway's accounts. player_id is what games, queues and ratings know: the name in
        -- lower case, or "bot:<name>" for a bot account (ranked queues refuse that prefix).
        CREATE TABLE gateway_accounts (
            player_id     text PRIMARY KEY,
            name          text NOT NULL,
            password_hash text NOT NULL,
            bot           boolean NOT NULL DEFAULT false,
            created_at    timestamptz NOT NULL DEFAULT now()
        );
        -- Names are unique ignoring case, across people and bots ("Ann", "ann" and bot "ann").
        CREATE UNIQUE INDEX gateway_accounts_name ON gateway_accounts (lower(name));
        """,
    ),
    Migration(
        4,
        "game directory indexes",
        """
        -- The games' directory (a player's games, the live games to watch) reads a table's
        -- opening and its end straight from the log: partial indexes keep those reads off a
        -- scan of every card ever played.
        CREATE INDEX spades_events_opened
            ON spades_events (recorded_at DESC) WHERE type = 'TableOpened';
        CREATE INDEX spades_events_opened_players
            ON spades_events USING gin (((data::jsonb) -> 'players'))
            WHERE type = 'TableOpened';
        CREATE INDEX spades_events_finished
            ON spades_events (stream_id) WHERE type = 'GameFinished';
        """,
    ),
    Migration(
        5,
        "relay wake-up",
        """
        -- Every transaction that appends events notifies channel spades_events at its commit
        -- (PostgreSQL folds a transaction's identical notifications into one), so the relay
        -- reads the log when there is something to read instead of polling it.
        CREATE FUNCTION spades_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('spades_events', '');
            RETURN NULL;
        END
        $$;
        CREATE TRIGGER spades_events_notify AFTER INSERT ON spades_events
            FOR EACH STATEMENT EXECUTE FUNCTION spades_events_notify();
        """,
    ),
    Migration(
        6,
        "gateway sessions",
        """
        -- A login's session: the browser renews its access token with the refresh token
        -- "<session_id>.<secret>". Only the sha256 of the current secret is kept; each renewal
        -- replaces it, and presenting a replaced secret revokes the session (a stolen copy).
        CREATE TABLE gateway_sessions (
            session_id   uuid PRIMARY KEY,
            player_id    text NOT NULL REFERENCES gateway_accounts (player_id),
            secret_hash  bytea NOT NULL,
            created_at   timestamptz NOT NULL DEFAULT now(),
            last_used_at timestamptz NOT NULL DEFAULT now(),
            expires_at   timestamptz NOT NULL,
            revoked_at   timestamptz
        );
        CREATE INDEX gateway_sessions_player ON gateway_sessions (player_id);
        """,
    ),
    Migration(
        7,
        "gateway sessions: the replaced secret's grace",
        """
        -- The secret a renewal replaced, and when: presented again within a few seconds it is
        -- the same client's race (two tabs, a retried request whose answer was lost), not a
        -- stolen copy, and renews the session instead of revoking it.
        ALTER TABLE gateway_sessions
            ADD COLUMN previous_hash bytea,
            ADD COLUMN rotated_at    timestamptz;
        """,
    ),
    Migration(
        8,
        "leases with fencing epochs",
        """
        -- Who owns what among replicas (events.leases): a lease is held by `owner` until
        -- `expires_at` (the database's clock), and `epoch` goes up by one at every claim. An
        -- append fenced by (name, epoch) share-locks this row and commits only at that epoch.
        CREATE TABLE spades_leases (
            name       text PRIMARY KEY,
            owner      text,
            epoch      bigint NOT NULL DEFAULT 0,
            expires_at timestamptz NOT NULL DEFAULT '-infinity',
            claimed_at timestamptz
        );
        -- The replicas of each group that are alive (seen within a lease's time to live):
        -- leases are shared out among them.
        CREATE TABLE spades_lease_members (
            grp     text NOT NULL,
            member  text NOT NULL,
            seen_at timestamptz NOT NULL,
            PRIMARY KEY (grp, member)
        );
        """,
    ),
    Migration(
        9,
        "gateway sessions: spent secrets",
        """
        -- The hashes of the session's older replaced secrets (the last 64): presenting one is
        -- a stolen copy and revokes the session, while a secret the session never had (a guess
        -- beside a session id, which is no secret) is refused without ending anything.
        ALTER TABLE gateway_sessions
            ADD COLUMN spent_hashes bytea[] NOT NULL DEFAULT '{}';
        """,
    ),
    Migration(
        10,
        "fair play sightings",
        """
        -- Where an account was seen by the gateway (at login and at joining a ranked queue):
        -- its client address, or the sha256 of the device token its client keeps. Accounts
        -- seen at one address or device within the fair-play window never share a ranked
        -- table (services.fairplay), and `spades fairplay` lists them for an operator.
        CREATE TABLE fairplay_sightings (
            player_id  text NOT NULL,
            kind       text NOT NULL CHECK (kind IN ('address', 'device')),
            value      text NOT NULL,
            first_seen timestamptz NOT NULL DEFAULT now(),
            last_seen  timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (kind, value, player_id)
        );
        CREATE INDEX fairplay_sightings_player ON fairplay_sightings (player_id);
        """,
    ),
    Migration(
        11,
        "matchmaking queue membership",
        """
        -- Who waits in which ladder's queue, written in the same transaction as the queue
        -- stream's append. Ladders are served by different replicas; the primary key is what
        -- keeps a player in one queue at a time across them, and any replica answers a
        -- status from it.
        CREATE TABLE matchmaking_queued_players (
            player_id text PRIMARY KEY,
            ladder    text NOT NULL,
            joined_at double precision NOT NULL
        );
        CREATE INDEX matchmaking_queued_players_ladder ON matchmaking_queued_players (ladder);
        """,
    ),
)


async def migrate(conn: asyncpg.Connection) -> list[int]:
    """Apply the migrations `conn`'s database lacks and return the versions applied."""
    await conn.execute(
        """
        CREATE TABLE IF NOT EXISTS spades_schema_migrations (
            version    integer PRIMARY KEY,
            name       text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    applied: list[int] = []
    await conn.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
    try:
        done = {
            r["version"] for r in await conn.fetch("SELECT version FROM spades_schema_migrations")
        }
        for migration in MIGRATIONS:
            if migration.version in done:
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO spades_schema_migrations (version, name) VALUES ($1, $2)",
                    migration.version,
                    migration.name,
                )
            applied.append(migration.version)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)
    return applied


def database_url() -> str:
    """Return the database URL: $SPADES_DATABASE_URL, else the running embedded stack's."""
    url = os.environ.get("SPADES_DATABASE_URL")
    if url:
        return url
    env_file = Path(os.environ.get("SPADES_HOME", ".spades")) / "infra.env"
    if env_file.exists():
        for line in env_file.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "SPADES_DATABASE_URL":
                return value.strip()
    raise SystemExit("no database: set SPADES_DATABASE_URL or run `spades infra up`")


async def _migrate_url(url: str) -> list[int]:
    conn = await asyncpg.connect(url)
    try:
        return await migrate(conn)
    finally:
        await conn.close()


def run(args: argparse.Namespace) -> int:
    """`spades migrate`: apply pending migrations to the configured database; exit code."""
    applied = asyncio.run(_migrate_url(database_url()))
    print(f"applied migrations: {applied}" if applied else "schema is up to date")
    return 0
