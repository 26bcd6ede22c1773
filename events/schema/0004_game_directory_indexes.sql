-- migration 4: game directory indexes

        -- The games' directory (a player's games, the live games to watch) reads a table's
        -- opening and its end straight from the log: partial indexes keep those reads off a
        -- scan of every card ever played.
        CREATE INDEX spades_events_opened
            ON spades_events (recorded_at DESC) WHERE type = 'TableOpened';
        CREATE INDEX spades_events_opened_players
            ON spades_events USING gin (((data::jsonb) -> 'players'))
            WHERE type = 'TableOpened';
        CREATE INDEX spades_events_finished
            ON spades_events (stream_id) WHERE type = 'GameFinished';
        