"""The developers' and operators' tools: the `spades` command and what it runs.

- `cli`             `spades ...`: one entry point for every tool below.
- `serve`           `spades serve NAME`: which service's `main(rt)` runs (what an image runs).
- `infra`           `spades infra up|down`: embedded PostgreSQL and NATS on this machine.
- `devstack`        `spades dev`: the whole platform on one machine, restarted when it crashes.
- `simulate`        `spades simulate`: bot games of any variant, with a summary per variant.
- `simulated_month` a month of rated games for the export's tests and benchmark.
- `replay`          `spades replay GAME` (a stored game, card by card), `spades verify GAME`.

A tool may import any part of the platform (it starts them all); no service imports a tool.
"""
