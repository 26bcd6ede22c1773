-- migration 12: matchmaking queue snapshots

        -- The waiting list of each ladder's queue as of one version of its `queue-<ladder>`
        -- stream, written by the ladder's owner in the transaction of that version's append,
        -- every SNAPSHOT_EVERY events (services.matchmaking.app). A start, a take-over or a
        -- rebuild after a conflict reads the snapshot and only the events after it, not the
        -- whole stream, which grows with every join and leave.
        CREATE TABLE matchmaking_queue_snapshots (
            ladder   text PRIMARY KEY,
            version  bigint NOT NULL,
            waiting  bytea NOT NULL,
            taken_at timestamptz NOT NULL DEFAULT now()
        );
