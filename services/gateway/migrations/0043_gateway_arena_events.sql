-- migration 43: gateway arena events

        -- Arena events (services.gateway.arena): for a fixed time any free pair is paired with
        -- another free pair. The event's length (minutes) and, once it runs, its end time; a
        -- pair may pause (no new game for it) and come back; the arena's games, numbered in
        -- the order they opened, each with the pair that won (0 a draw) once it is over.
        ALTER TABLE tourneys DROP CONSTRAINT tourneys_format_check;
        ALTER TABLE tourneys ADD CONSTRAINT tourneys_format_check
            CHECK (format IN ('duplicate', 'swiss', 'arena'));
        ALTER TABLE tourneys ADD COLUMN minutes integer CHECK (minutes BETWEEN 1 AND 600);
        ALTER TABLE tourneys ADD COLUMN ends_at timestamptz;
        ALTER TABLE tourney_pairs ADD COLUMN paused boolean NOT NULL DEFAULT false;
        ALTER TABLE tourney_pairs ADD COLUMN free_since timestamptz NOT NULL DEFAULT now();

        CREATE TABLE tourney_arena_games (
            tourney_id  uuid NOT NULL REFERENCES tourneys,
            game_no     integer NOT NULL,
            ns_pair     integer NOT NULL,
            ew_pair     integer NOT NULL,
            game_id     uuid NOT NULL UNIQUE,
            winner_pair integer,
            ns_score    integer,
            ew_score    integer,
            opened_at   timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (tourney_id, game_no)
        );
