-- migration 16: friends tables and rematches

        -- A friends' table before its game starts (services.gateway.friends): who opened it,
        -- its rules, and per seat (a JSON array, one object a seat) whether it is open to
        -- whoever has the code, reserved for a named player, or a bot; who sits there. Every
        -- change takes the row's lock (SELECT ... FOR UPDATE), so two joins for one seat are
        -- decided one after the other and exactly one wins. Once started, ``game_id`` names
        -- the game, which lives in the event log like any other.
        CREATE TABLE friends_tables (
            table_id   uuid PRIMARY KEY,
            code       text NOT NULL UNIQUE,
            host       text NOT NULL,
            rules      jsonb NOT NULL,
            options    jsonb NOT NULL DEFAULT '{}',
            bot_level  text NOT NULL,
            unlisted   boolean NOT NULL,
            seats      jsonb NOT NULL,
            status     text NOT NULL CHECK (status IN ('waiting', 'started', 'closed')),
            game_id    uuid,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX friends_tables_host ON friends_tables (host, created_at);
        CREATE INDEX friends_tables_waiting ON friends_tables (created_at)
            WHERE status = 'waiting' AND NOT unlisted;

        -- The rematch of a finished unrated game (services.gateway.rematch): its seated
        -- people, who accepted, who declined; once all accepted, the new game.
        CREATE TABLE friends_rematches (
            game_id     uuid PRIMARY KEY,
            players     text[] NOT NULL,
            accepted    text[] NOT NULL DEFAULT '{}',
            declined    text,
            new_game_id uuid,
            updated_at  timestamptz NOT NULL DEFAULT now()
        );
