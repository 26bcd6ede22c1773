-- migration 7: gateway sessions: the replaced secret's grace

        -- The secret a renewal replaced, and when: presented again within a few seconds it is
        -- the same client's race (two tabs, a retried request whose answer was lost), not a
        -- stolen copy, and renews the session instead of revoking it.
        ALTER TABLE gateway_sessions
            ADD COLUMN previous_hash bytea,
            ADD COLUMN rotated_at    timestamptz;
        