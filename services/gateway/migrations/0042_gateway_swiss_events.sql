-- migration 42: gateway swiss events

        -- Swiss events (services.gateway.swiss): the same rows as a duplicate event, but each
        -- round's tables are paired from the standings once the round before is complete, so
        -- the format column takes 'swiss' too.
        ALTER TABLE tourneys DROP CONSTRAINT tourneys_format_check;
        ALTER TABLE tourneys ADD CONSTRAINT tourneys_format_check
            CHECK (format IN ('duplicate', 'swiss'));
