-- migration 33: rating_seasons

        -- Rating service: each closed season of a ladder (events/contracts/seasons.py) and
        -- its frozen leaderboard, written with SeasonEnded in one transaction.
        CREATE TABLE rating_seasons (
            ladder     text NOT NULL,
            season     integer NOT NULL,
            starts_at  double precision NOT NULL,
            ends_at    double precision NOT NULL,
            closed_at  double precision NOT NULL,
            players    integer NOT NULL,
            reset      text NOT NULL,
            PRIMARY KEY (ladder, season)
        );
        CREATE TABLE rating_season_standings (
            ladder     text NOT NULL,
            season     integer NOT NULL,
            rank       integer NOT NULL,
            player_id  text NOT NULL,
            mu         double precision NOT NULL,
            sigma      double precision NOT NULL,
            games      integer NOT NULL,
            PRIMARY KEY (ladder, season, player_id)
        );
        CREATE INDEX rating_season_standings_rank ON rating_season_standings (ladder, season, rank);
