-- migration 41: gateway tourneys

        -- Duplicate events (services.gateway.tourneys): an event's settings, who plays in it,
        -- its boards' committed seeds, each board game and its result, and its audit log.
        -- Every change takes the event's row lock (SELECT ... FOR UPDATE), so the last free
        -- place is decided once, and the driver advances an event on one replica at a time.
        CREATE TABLE tourneys (
            tourney_id       uuid PRIMARY KEY,
            name             text NOT NULL,
            format           text NOT NULL CHECK (format IN ('duplicate')),
            host             text,
            private          boolean NOT NULL,
            rules            jsonb NOT NULL,
            ladder           text,
            boards_per_round integer NOT NULL CHECK (boards_per_round BETWEEN 1 AND 12),
            rounds           integer NOT NULL CHECK (rounds BETWEEN 1 AND 15),
            max_pairs        integer NOT NULL CHECK (max_pairs BETWEEN 2 AND 32),
            starts_at        timestamptz NOT NULL,
            signup_opens_at  timestamptz NOT NULL,
            status           text NOT NULL
                             CHECK (status IN ('open', 'running', 'finished', 'cancelled')),
            round            integer NOT NULL DEFAULT 0,
            created_at       timestamptz NOT NULL DEFAULT now(),
            updated_at       timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX tourneys_live ON tourneys (starts_at) WHERE status IN ('open', 'running');

        -- A pair: its number in the event, its player and partner ('bot:' for a bot partner,
        -- private events only). A player is in at most one pair of an event.
        CREATE TABLE tourney_pairs (
            tourney_id uuid NOT NULL REFERENCES tourneys,
            pair       integer NOT NULL,
            player     text NOT NULL,
            partner    text NOT NULL,
            joined_at  timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (tourney_id, pair)
        );
        CREATE UNIQUE INDEX tourney_pairs_player ON tourney_pairs (tourney_id, player);

        -- A board: its secret seed (revealed with the event's end) and the seed's SHA-256,
        -- published from the event's creation.
        CREATE TABLE tourney_boards (
            tourney_id uuid NOT NULL REFERENCES tourneys,
            board      integer NOT NULL,
            seed       text NOT NULL,
            commitment text NOT NULL,
            revealed   boolean NOT NULL DEFAULT false,
            PRIMARY KEY (tourney_id, board)
        );

        -- A board at a table: who sits North-South and East-West, its game, its result. A
        -- pair has one result per board, whichever direction it sat (the two unique keys).
        CREATE TABLE tourney_games (
            tourney_id uuid NOT NULL REFERENCES tourneys,
            board      integer NOT NULL,
            round      integer NOT NULL,
            table_no   integer NOT NULL,
            ns_pair    integer NOT NULL,
            ew_pair    integer NOT NULL,
            game_id    uuid UNIQUE,
            ns_points  integer,
            ew_points  integer,
            PRIMARY KEY (tourney_id, board, table_no),
            UNIQUE (tourney_id, board, ns_pair),
            UNIQUE (tourney_id, board, ew_pair)
        );

        -- What happened, in order, for audit and replay: EventCreated, PairJoined, PairLeft,
        -- BoardsCommitted, RoundStarted, BoardResult, SeedsRevealed, EventFinished, ...
        CREATE TABLE tourney_log (
            tourney_id uuid NOT NULL REFERENCES tourneys,
            seq        integer NOT NULL,
            type       text NOT NULL,
            body       jsonb NOT NULL,
            at         timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (tourney_id, seq)
        );
