-- migration 9: gateway sessions: spent secrets

        -- The hashes of the session's older replaced secrets (the last 64): presenting one is
        -- a stolen copy and revokes the session, while a secret the session never had (a guess
        -- beside a session id, which is no secret) is refused without ending anything.
        ALTER TABLE gateway_sessions
            ADD COLUMN spent_hashes bytea[] NOT NULL DEFAULT '{}';
        