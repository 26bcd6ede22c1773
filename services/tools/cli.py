"""The `spades` command: one entry point for every tool and service of the platform.

Each subcommand imports its module only when it runs, so `spades simulate` does not pay
for asyncpg or NATS, and a service image runs `spades serve NAME` with nothing else loaded.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

# subcommand -> "module:function"; the function takes the parsed namespace and returns an exit code.
_COMMANDS: dict[str, str] = {
    "simulate": "services.tools.simulate:run",
    "dev": "services.tools.devstack:run",
    "infra": "services.tools.infra:run",
    "migrate": "events.migrations:run",
    "serve": "services.tools.serve:run",
    "replay": "services.tools.replay:run",
    "verify": "services.tools.replay:verify",
    "export": "services.records.export:run",
    "fairplay": "services.gateway.fairplay:run",
    "playbans": "services.matchmaking.playbans:run",
    "reports": "services.gateway.reports:run",
    "events": "services.gateway.eventadmin:run",
}

SERVICES = ("gateway", "table", "matchmaking", "rating", "relay", "bots")


def build_parser() -> argparse.ArgumentParser:
    """Return the parser for every subcommand of `spades`."""
    parser = argparse.ArgumentParser(prog="spades", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="bots play whole games and print a summary")
    sim.add_argument("--games", type=int, default=100)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument(
        "--rules",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="ruleset option, repeatable (e.g. --rules players=2 --rules nil_value=50)",
    )
    sim.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="a named variant of the rule book, repeatable, or 'all'"
        " (see services/tools/simulate.py); --rules options apply on top of it",
    )
    sim.add_argument("--no-progress", action="store_true", help="no progress bar")
    sim.add_argument(
        "--seats",
        default="baseline",
        metavar="LEVEL,...",
        help="each seat's bot level, baseline or strong (one name = every seat);"
        " seats rotate by one every games/players games",
    )
    sim.add_argument("--playouts", type=int, default=None, help="strong bot: playouts per decision")
    sim.add_argument(
        "--seconds", type=float, default=None, help="strong bot: time cap per decision"
    )
    sim.add_argument(
        "--jobs", type=int, default=1, help="processes playing games at once (default 1)"
    )
    sim.add_argument(
        "--log", default=None, metavar="FILE", help="append one JSON line per finished game"
    )

    dev = sub.add_parser("dev", help="run the whole platform locally on embedded servers")
    dev.add_argument("--no-demo", action="store_true", help="do not play the demo game")

    infra = sub.add_parser("infra", help="start or stop the embedded PostgreSQL and NATS")
    infra.add_argument("action", choices=("up", "down", "status"))

    sub.add_parser("migrate", help="apply the event store's schema migrations")

    replay = sub.add_parser("replay", help="print a game card by card from its event log")
    replay.add_argument("game_id")
    replay.add_argument("--at", type=int, default=None, metavar="N", help="stop at step N")

    verify = sub.add_parser(
        "verify", help="recompute a finished game's deals from its revealed seed (FAIRNESS.md)"
    )
    verify.add_argument("game_id")
    verify.add_argument(
        "--commitment",
        default="",
        metavar="SHA256",
        help="a duplicate event's board: the game must be dealt from the seed published as this",
    )

    export = sub.add_parser(
        "export", help="write a month's finished rated games as NDJSON and transcripts"
    )
    export.add_argument("--month", required=True, metavar="YYYY-MM")
    export.add_argument("--out", default="exports", metavar="DIR")
    export.add_argument(
        "--format",
        choices=("ndjson", "openspiel"),
        default="ndjson",
        help="openspiel: also each hand as OpenSpiel spades action sequences",
    )

    fair = sub.add_parser(
        "fairplay",
        help="the ladder's fair-play record: linked accounts, one-sided meetings",
    )
    fair.add_argument(
        "--days", type=float, default=None, help="window (default SPADES_FAIRPLAY_DAYS, 7)"
    )
    fair.add_argument("--min-games", type=int, default=3, help="meetings to report a pair")
    fair.add_argument(
        "--min-losing",
        type=int,
        default=3,
        help="abandonments while behind on score that name a pair of partners",
    )
    fair.add_argument(
        "--one-sided", type=float, default=0.8, help="share of wins that is one-sided"
    )
    fair.add_argument("--json", action="store_true", help="print JSON")
    fair.add_argument("--prune", action="store_true", help="delete sightings older than the window")

    bans = sub.add_parser(
        "playbans", help="offences at rated games (abandoned, left, clock) and queue bans"
    )
    bans.add_argument("--days", type=float, default=30.0, help="window (default 30)")
    bans.add_argument("--player", default="", help="one player's offences only")
    bans.add_argument("--json", action="store_true", help="print JSON")
    reports = sub.add_parser(
        "reports", help="reported players and messages, with the game's talk around them"
    )
    reports.add_argument("--all", action="store_true", help="closed reports too")
    reports.add_argument("--close", type=int, default=None, help="mark this report dealt with")
    reports.add_argument("--json", action="store_true", help="print JSON")

    events = sub.add_parser(
        "events", help="duplicate, Swiss and arena events: create a public one, list, cancel"
    )
    actions = events.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a public duplicate, Swiss or arena event")
    create.add_argument("--name", required=True)
    create.add_argument("--start", required=True, metavar="ISO|+MINUTES")
    create.add_argument("--boards", type=int, default=2, help="boards per round (1-12)")
    create.add_argument("--rounds", type=int, default=3, help="rounds (1-15)")
    create.add_argument("--max-pairs", type=int, default=16, help="places (2-32)")
    create.add_argument(
        "--format",
        choices=("duplicate", "swiss", "arena"),
        default="duplicate",
        help="a fixed movement, each round paired by the standings (rounds < places), or an"
        " arena pairing whoever is free for --minutes",
    )
    create.add_argument("--minutes", type=int, default=None, help="an arena's length (1-600)")
    create.add_argument(
        "--signup-minutes", type=int, default=0, help="sign-up opens this long before (0: now)"
    )
    create.add_argument("--ladder", default=None, help="play a ladder's rules")
    create.add_argument("--rules", action="append", default=[], metavar="KEY=JSON")
    listing = actions.add_parser("list", help="the latest events")
    listing.add_argument("--json", action="store_true")
    cancel = actions.add_parser("cancel", help="cancel an event before its start")
    cancel.add_argument("event_id")

    serve = sub.add_parser("serve", help="run one service in the foreground")
    serve.add_argument("service", choices=SERVICES)
    return parser


def _resolve(target: str) -> Callable[[argparse.Namespace], int]:
    module_name, _, func_name = target.partition(":")
    module = importlib.import_module(module_name)
    func: Callable[[argparse.Namespace], int] = getattr(module, func_name)
    return func


def main(argv: Sequence[str] | None = None) -> int:
    """Run `spades` with argv and return its exit code."""
    args = build_parser().parse_args(argv)
    return _resolve(_COMMANDS[args.command])(args)


if __name__ == "__main__":
    sys.exit(main())
