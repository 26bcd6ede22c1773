-- migration 3: gateway accounts

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
        