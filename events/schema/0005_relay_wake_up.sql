-- migration 5: relay wake-up

        -- Every transaction that appends events notifies channel spades_events at its commit
        -- (PostgreSQL folds a transaction's identical notifications into one), so the relay
        -- reads the log when there is something to read instead of polling it.
        CREATE FUNCTION spades_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('spades_events', '');
            RETURN NULL;
        END
        $$;
        CREATE TRIGGER spades_events_notify AFTER INSERT ON spades_events
            FOR EACH STATEMENT EXECUTE FUNCTION spades_events_notify();
        