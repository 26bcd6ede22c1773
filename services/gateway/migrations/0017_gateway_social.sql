-- migration 17: gateway social

        -- Who follows whom, who blocked whom, who muted whom at which game, what was reported,
        -- and who was last seen online (services.gateway.social). Owned by the gateway, which
        -- owns the accounts; matchmaking learns of blocks only through JoinQueue.avoid and the
        -- table through Say.apart / Say.deaf.
        CREATE TABLE social_follows (
            follower   text NOT NULL,
            followed   text NOT NULL,
            since      timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (follower, followed)
        );
        CREATE INDEX social_follows_followed ON social_follows (followed);

        CREATE TABLE social_blocks (
            blocker    text NOT NULL,
            blocked    text NOT NULL,
            since      timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (blocker, blocked)
        );
        CREATE INDEX social_blocks_blocked ON social_blocks (blocked);

        CREATE TABLE social_mutes (
            game_id    text NOT NULL,
            muter      text NOT NULL,
            muted      text NOT NULL,
            since      timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (game_id, muted, muter)
        );

        CREATE TABLE social_reports (
            report_id  bigserial PRIMARY KEY,
            reporter   text NOT NULL,
            reported   text NOT NULL,
            game_id    text,
            seq        integer,
            reason     text NOT NULL,
            note       text NOT NULL DEFAULT '',
            created_at timestamptz NOT NULL DEFAULT now(),
            closed_at  timestamptz
        );
        CREATE INDEX social_reports_open ON social_reports (created_at) WHERE closed_at IS NULL;
        CREATE INDEX social_reports_reporter ON social_reports (reporter, created_at);

        CREATE TABLE social_presence (
            player_id  text PRIMARY KEY,
            seen_at    timestamptz NOT NULL DEFAULT now(),
            game_id    text
        );
