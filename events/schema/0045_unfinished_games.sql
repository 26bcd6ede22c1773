-- migration 45: unfinished games

        -- The games not finished, kept by the database itself as each game's opening and end
        -- are appended: a table replica resuming the slots it gained, and the lobby's list of
        -- live games, read these rows instead of every game ever played (both anti-joined
        -- every TableOpened against the GameFinished events, a read that grew with history).
        -- A trigger, not the services, keeps it: it commits or rolls back with the append,
        -- and a replica of any version (a rolling upgrade) keeps it true.
        CREATE TABLE spades_unfinished_games (
            stream_id text PRIMARY KEY,
            opened_at timestamptz NOT NULL
        );
        CREATE INDEX spades_unfinished_games_opened ON spades_unfinished_games (opened_at);
        -- every game inserts a row and deletes it: vacuumed after each 1,000 dead rows, not
        -- after a fifth of the table (the default), so the live rows stay a page or two
        ALTER TABLE spades_unfinished_games SET (
            autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
            autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000
        );
        CREATE FUNCTION spades_track_unfinished_games() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.type = 'TableOpened' THEN
                INSERT INTO spades_unfinished_games (stream_id, opened_at)
                    VALUES (NEW.stream_id, NEW.recorded_at) ON CONFLICT DO NOTHING;
            ELSE
                DELETE FROM spades_unfinished_games WHERE stream_id = NEW.stream_id;
            END IF;
            RETURN NULL;
        END
        $$;
        -- the WHEN clause is evaluated without calling the function: a card costs nothing more
        CREATE TRIGGER spades_unfinished_games AFTER INSERT ON spades_events
            FOR EACH ROW
            WHEN (NEW.type IN ('TableOpened', 'GameFinished') AND NEW.stream_id LIKE 'game-%')
            EXECUTE FUNCTION spades_track_unfinished_games();
        -- the games already unfinished (the trigger's lock on spades_events holds appends
        -- back until this migration commits, so none is missed)
        INSERT INTO spades_unfinished_games (stream_id, opened_at)
            SELECT o.stream_id, o.recorded_at FROM spades_events o
            WHERE o.type = 'TableOpened' AND o.stream_id LIKE 'game-%'
              AND NOT EXISTS (SELECT 1 FROM spades_events f
                              WHERE f.stream_id = o.stream_id AND f.type = 'GameFinished');
