-- migration 8: leases with fencing epochs

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
        