-- migration 11: matchmaking queue membership

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
        