-- migration 1: event store

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
        