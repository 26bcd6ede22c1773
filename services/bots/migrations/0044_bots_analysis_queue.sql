-- migration 44: bots_analysis_queue

        -- Bot tier: the reviews queued and not yet finished, one row per game, written in
        -- the transaction that appends its AnalysisQueued and deleted in the one that
        -- appends its AnalysisFinished. The tier's scan reads this table, whose size is the
        -- queue's, instead of every analysis stream ever written.
        -- queued: the version of the round's AnalysisQueued (a failed review asked for
        -- again opens a round), so taking a finished round off never takes a newer one.
        CREATE TABLE bots_analysis_queue (
            game_id   text PRIMARY KEY,
            queued    integer NOT NULL,
            queued_at timestamptz NOT NULL DEFAULT now()
        );
        INSERT INTO bots_analysis_queue (game_id, queued, queued_at)
        SELECT substr(s.stream_id, length('analysis-') + 1), 1,
               coalesce((SELECT o.recorded_at FROM spades_events o
                         WHERE o.stream_id = s.stream_id AND o.version = 1), now())
        FROM spades_streams s
        WHERE s.stream_id LIKE 'analysis-%'
          AND NOT EXISTS (SELECT 1 FROM spades_events e
                          WHERE e.stream_id = s.stream_id AND e.type = 'AnalysisFinished');
