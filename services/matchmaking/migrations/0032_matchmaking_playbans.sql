-- migration 32: matchmaking_playbans

        -- Matchmaking: every offence at a rated game (events/contracts/playbans.py), one row
        -- per player and game, written with its PlaybanIssued event in one transaction (the
        -- row count of a player is his playban stream's version). ends_at = issued_at for a
        -- warning; a join is refused while ends_at is ahead of the clock.
        CREATE TABLE matchmaking_playbans (
            player_id  text NOT NULL,
            game_id    text NOT NULL,
            ladder     text NOT NULL,
            reason     text NOT NULL,
            offence    integer NOT NULL,
            issued_at  double precision NOT NULL,
            ends_at    double precision NOT NULL,
            PRIMARY KEY (player_id, game_id)
        );
        CREATE INDEX matchmaking_playbans_recent ON matchmaking_playbans (issued_at);
