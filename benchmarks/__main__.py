"""Run every benchmark module that exists, in order: `python -m benchmarks [name ...]`."""

from __future__ import annotations

import importlib
import sys

SUITES = (
    "engine",
    "table",
    "store",
    "relay",
    "e2e",
    "gateway",
    "wsrelay",
    "export",
    "tier",
    "scale",
    "slots",
    "directory",
)
"""What `make bench` runs; `bots`, `botsurvey` and `suicide` measure play, not speed: run them by
name."""


def main(argv: list[str]) -> int:
    """Run the named suites (all by default) and return the exit code."""
    wanted = argv or list(SUITES)
    for name in wanted:
        try:
            module = importlib.import_module(f"benchmarks.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"benchmarks.{name}":
                raise
            print(f"[{name}] not built yet")
            continue
        print(f"== {name} ==", flush=True)
        module.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
