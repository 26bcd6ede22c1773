"""Events: the event-sourcing platform every service stands on, and the services' contracts.

The modules at this level know no game: they would serve any event-sourced system.

- `envelope`    `NewEvent`, `StoredEvent`, `Metadata`; `REGISTRY.register(name, Union, ...)`
                per context, `REGISTRY.new_event(struct, metadata)`, `REGISTRY.decode(stored)`;
                the versioning rule (defaults first, upcasters keyed by (type, version)).
- `store`       the `EventStore` protocol, `ConcurrencyConflict`, `EventIdReused`,
                `Checkpoint`/`START`, and `InMemoryEventStore`.
- `pgstore`     `PostgresEventStore` (group commit, gap-safe `read_all`), `append_with`
                (append inside your own transaction), `create_pool`, checkpoints.
- `migrations`  the one runner of every owner's migrations (`events/schema/`, each
                service's `migrations/`), by global number; `spades migrate`.
- `retry`       `Backoff`: the schedule of every retry of a transient fault.
- `settings`    `from_environ`: typed settings from SPADES_* variables (`SettingsError`).
- `subjects`    `Subjects(prefix)`: every NATS subject and JetStream stream name.
- `bus`         `connect`, `ensure_streams`, `close_nats`.
- `relay`       `run_relay(...)`: the log is the outbox (`python -m events.relay`);
                `relaypipe` its pipelined chain of publishes (order kept by the server's
                expected-last-message check), `relayrows` its page of the log read as
                messages, `relayloops` its pipelined and awaited loops.
- `consumer`    `consume(...)`: durable pull consumer, effect + position in one transaction,
                `Unprocessable` and undecodable messages parked.
- `bookkeeping` the bus's own events (`MessageParked`), the versioning example.
- `logs`        structlog JSON set-up; ids and types only, never event data.
- `contracts`   one module per context (`game`, `matchmaking`, `rating`, ...): the only
                thing one service may import of another (see `events/contracts/__init__.py`).
"""
