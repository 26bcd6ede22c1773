"""The harness every service runs in, and nothing of any one service.

- `service`  `run_service(main)`: settings, logs, PostgreSQL, NATS, the ops server, shutdown.
- `config`   `Settings`: every SPADES_* variable a service reads.
- `ops`      `/livez`, `/readyz`, `/metrics`: the health checks and every metric.
- `logs`     `work(...)`: binds a unit of work's ids to every log line inside it.
- `loop`     the event loop (uvloop where installed).
"""
