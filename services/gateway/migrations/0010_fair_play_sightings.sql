-- migration 10: fair play sightings

        -- Where an account was seen by the gateway (at login and at joining a ranked queue):
        -- its client address, or the sha256 of the device token its client keeps. Accounts
        -- seen at one address or device within the fair-play window never share a ranked
        -- table (services.fairplay), and `spades fairplay` lists them for an operator.
        CREATE TABLE fairplay_sightings (
            player_id  text NOT NULL,
            kind       text NOT NULL CHECK (kind IN ('address', 'device')),
            value      text NOT NULL,
            first_seen timestamptz NOT NULL DEFAULT now(),
            last_seen  timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (kind, value, player_id)
        );
        CREATE INDEX fairplay_sightings_player ON fairplay_sightings (player_id);
        