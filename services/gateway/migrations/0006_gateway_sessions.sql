-- migration 6: gateway sessions

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
        