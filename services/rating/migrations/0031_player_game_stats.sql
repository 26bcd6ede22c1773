-- migration 31: player_game_stats

        -- Rating service: personal statistics, one row per player per finished ladder game
        -- (services/rating/stats.py folds the game's stream into it exactly once: the
        -- consumer's position, and the primary key). Read by summing a player's rows.
        CREATE TABLE player_game_stats (
            game_id        text NOT NULL,
            ladder         text NOT NULL,
            player_id      text NOT NULL,
            finished_at    double precision NOT NULL,
            won            boolean NOT NULL,
            hands          integer NOT NULL,
            bids           integer NOT NULL,
            made           integer NOT NULL,
            set            integer NOT NULL,
            over_by        integer[] NOT NULL,
            nil            integer NOT NULL,
            nil_made       integer NOT NULL,
            blind_nil      integer NOT NULL,
            blind_nil_made integer NOT NULL,
            bags           integer NOT NULL,
            bag_penalties  integer NOT NULL,
            points         integer NOT NULL,
            partners       text[] NOT NULL,
            opponents      text[] NOT NULL,
            PRIMARY KEY (game_id, player_id)
        );
        CREATE INDEX player_game_stats_player ON player_game_stats (player_id, ladder);
