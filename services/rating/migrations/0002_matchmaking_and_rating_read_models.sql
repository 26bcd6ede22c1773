-- migration 2: matchmaking and rating read models

        -- Rating service: current rating per (ladder, player). last_played is unix seconds
        -- (the model's clock); inactivity decay is applied when read, never stored.
        CREATE TABLE ratings (
            ladder      text NOT NULL,
            player_id   text NOT NULL,
            mu          double precision NOT NULL,
            sigma       double precision NOT NULL,
            games       integer NOT NULL,
            last_played double precision,
            PRIMARY KEY (ladder, player_id)
        );

        -- One row per player per rated game: the before/after of RatingsUpdated, queryable.
        CREATE TABLE rating_history (
            game_id        text NOT NULL,
            ladder         text NOT NULL,
            player_id      text NOT NULL,
            mu_before      double precision NOT NULL,
            sigma_before   double precision NOT NULL,
            mu_after       double precision NOT NULL,
            sigma_after    double precision NOT NULL,
            ordinal_before double precision NOT NULL,
            ordinal_after  double precision NOT NULL,
            games          integer NOT NULL,
            rated_at       double precision NOT NULL,
            PRIMARY KEY (game_id, player_id)
        );
        CREATE INDEX rating_history_player ON rating_history (player_id, rated_at);

        -- Matchmaking's own projection of RatingsUpdated (it never reads the rating tables).
        CREATE TABLE matchmaking_ratings (
            ladder      text NOT NULL,
            player_id   text NOT NULL,
            mu          double precision NOT NULL,
            sigma       double precision NOT NULL,
            games       integer NOT NULL,
            last_played double precision,
            PRIMARY KEY (ladder, player_id)
        );

        -- Players seated by a MatchFound whose GameFinished has not arrived yet.
        CREATE TABLE matchmaking_live_players (
            player_id text PRIMARY KEY,
            match_id  text NOT NULL,
            ladder    text NOT NULL,
            since     timestamptz NOT NULL DEFAULT now()
        );
        