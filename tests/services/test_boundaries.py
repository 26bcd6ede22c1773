"""The tree says who owns what, and these tests keep it so (docs/ARCHITECTURE.md).

- `services/` holds the four services, two libraries they share (`runtime`, `records`) and
  the tools (`tools`), and no loose module.
- No service imports another's package: one service knows another only through its contract
  in `events/contracts/`. No service or library imports a tool.
- `events/` imports no `services`; its platform modules (everything but `contracts/`) know no
  game: neither the engine nor a contract.
- SQL names only tables its owner's migrations create: a service its own, `events/` the
  store's; the libraries none (they read the log through the store).
- No module grows past about 500 lines unless it is one of the few listed here, each no
  larger than it is now.

The ruff configs of each service package (ruff.toml) say the import rule to an editor; these
tests are the rule, and keep those lists complete."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
EVENTS = ROOT / "events"
PACKAGES = ["bots", "gateway", "matchmaking", "rating", "table"]
"""The services: each owns its logic, its SQL, its migrations and a runner."""
LIBRARIES = ["records", "runtime"]
"""Shared by the services, owned by none: they import no service and own no table."""
TOOLS = ["tools"]
"""The `spades` command: may import anything (it starts everything); nothing imports it."""


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Return (line, dotted module) of every absolute import in a file, ``from a import b``
    as ``a.b`` too (``from services import table`` imports the package)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def package_of(module: str) -> str | None:
    """Return the service package a dotted module belongs to (``services.table.app``: table)."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "services" and parts[1] in PACKAGES:
        return parts[1]
    return None


def test_the_services_are_the_packages_the_architecture_names() -> None:
    found = sorted(p.name for p in SERVICES.iterdir() if (p / "__init__.py").exists())
    assert found == sorted(PACKAGES + LIBRARIES + TOOLS)
    loose = sorted(p.name for p in SERVICES.glob("*.py") if p.name != "__init__.py")
    assert loose == [], "a module belongs to a service, a library or the tools"


@pytest.mark.parametrize("package", PACKAGES)
def test_no_service_imports_another_service(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((SERVICES / package).rglob("*.py"))
        for line, module in imports_of(path)
        if package_of(module) not in (None, package)
    ]
    assert bad == [], "shared names belong in a contract (events/contracts/)"


def imported_under(root: Path, prefixes: tuple[str, ...]) -> list[str]:
    """Return every import under ``root`` of a module starting with one of ``prefixes``."""
    return [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted(root.rglob("*.py"))
        for line, module in imports_of(path)
        if any(module == p or module.startswith(p + ".") for p in prefixes)
    ]


def test_events_imports_no_service() -> None:
    assert imported_under(EVENTS, ("services",)) == [], "events/ is below every service"


def test_the_platform_knows_no_game() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted(EVENTS.glob("*.py"))
        for line, module in imports_of(path)
        if module.split(".")[0] == "engine" or module.startswith("events.contracts")
    ]
    assert bad == [], "the event-sourcing platform serves any context: no engine, no contract"


@pytest.mark.parametrize("package", [*PACKAGES, *LIBRARIES])
def test_nothing_but_the_tools_imports_a_tool(package: str) -> None:
    assert imported_under(SERVICES / package, ("services.tools",)) == []


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_library_imports_no_service(library: str) -> None:
    bad = imported_under(SERVICES / library, tuple(f"services.{p}" for p in PACKAGES))
    assert bad == [], "a library serves every service: it knows none"


# -- SQL names only the tables its owner's migrations create ------------------------------

_CREATED = re.compile(r"create\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?(\w+)", re.I)
_NAMED = re.compile(
    r"\b(?:from|join|into|update|table|exists)\s+(?:only\s+)?([a-z_][a-z0-9_]*)", re.I
)
HISTORICAL = {"matchmaking_ratings": "matchmaking", "matchmaking_live_players": "matchmaking"}
"""Tables one owner's migration created for another before the owners were cut apart:
migration 2 (`services/rating/migrations/`) also made matchmaking's first two tables, and a
committed migration is never edited (tests/events/test_migrations.py). Owned by name."""


def owners() -> dict[str, str]:
    """Return each table's owner: the store (`events`) or the service whose migration made it."""
    found: dict[str, str] = {}
    folders = [("events", EVENTS / "schema")] + [(p, SERVICES / p / "migrations") for p in PACKAGES]
    for owner, folder in folders:
        for sql in sorted(folder.glob("*.sql")):
            for table in _CREATED.findall(sql.read_text()):
                assert table not in found, f"{table} is created twice"
                found[table] = HISTORICAL.get(table, owner)
    return found


def tables_named(path: Path, tables: dict[str, str]) -> list[tuple[int, str]]:
    """Return (line, table) of every known table a string constant of ``path`` names in SQL."""
    named = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            named += [(node.lineno, t) for t in _NAMED.findall(node.value) if t in tables]
    return named


def test_every_table_has_one_owner_and_the_owners_are_the_ones_named() -> None:
    tables = owners()
    assert set(tables.values()) <= {"events", *PACKAGES}
    assert {t for t, o in tables.items() if o == "events"} >= {"spades_events", "spades_streams"}
    assert {t for t, o in tables.items() if o == "matchmaking"} >= set(HISTORICAL)


@pytest.mark.parametrize("owner", ["events", *PACKAGES, *LIBRARIES])
def test_sql_names_only_the_tables_its_owner_created(owner: str) -> None:
    tables = owners()
    root = EVENTS if owner == "events" else SERVICES / owner
    paths = sorted(root.rglob("*.py"))
    bad = [
        f"{path.relative_to(ROOT)}:{line} names {table} (owned by {tables[table]})"
        for path in paths
        for line, table in tables_named(path, tables)
        if tables[table] != owner
    ]
    assert bad == [], "read another owner's data through its contract or the log, not its SQL"


def test_the_sql_check_sees_a_cross_read(tmp_path: Path) -> None:
    """Guard the guard: the reads the re-cut removed would have been caught."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        'Q = "SELECT mu FROM rating_history WHERE game_id = $1"\n'
        'R = ("SELECT 1 FROM spades_events e"\n     " JOIN fairplay_sightings s ON true")\n'
    )
    assert [t for _, t in tables_named(probe, owners())] == [
        "rating_history",
        "spades_events",
        "fairplay_sightings",
    ]


# -- module size ----------------------------------------------------------------------------

MAX_LINES = 500
OVERSIZE = {
    "engine/game.py": 709,
    "events/pgstore.py": 520,
    "services/runtime/ops.py": 517,
    "services/gateway/session.py": 530,
    "engine/search.py": 557,
    "engine/rules.py": 556,
}
"""Modules over the limit today, each capped at its present size: a ratchet, so none grows
and no new one joins them. Each does one job (the engine's deciding, search and rule
bounds; the store's appends and reads, its directory reads now in `events/directory.py`;
the ops endpoints; one WebSocket session); the runners of the table and matchmaking were
split along their jobs."""


def test_no_module_grows_past_its_limit() -> None:
    bad = []
    for root in (ROOT / "engine", EVENTS, SERVICES):
        for path in sorted(root.rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if "game_wire" in name:
                continue  # generated
            lines = len(path.read_text().splitlines())
            if lines > OVERSIZE.get(name, MAX_LINES):
                bad.append(f"{name}: {lines} lines")
    assert bad == [], "split it along its jobs"


@pytest.mark.parametrize("package", PACKAGES)
def test_each_packages_ruff_config_bans_every_other_service(package: str) -> None:
    # Banning a package bans each of its modules: ruff matches an import's name or a parent
    # of it (`from services.gateway.http import x` is caught by "services.gateway").
    config = tomllib.loads((SERVICES / package / "ruff.toml").read_text())
    assert config["extend"] == "../../pyproject.toml"
    assert config["lint"]["per-file-ignores"] == {}, "the root ignores TID251 outside engine/"
    banned = set(config["lint"]["flake8-tidy-imports"]["banned-api"]) - FORBIDDEN_TO.get(
        package, set()
    )
    others = {f"services.{p}" for p in PACKAGES if p != package}
    assert others - banned == set(), f"add them to services/{package}/ruff.toml"
    assert banned - others == set(), f"services/{package}/ruff.toml bans packages that are gone"


FORBIDDEN_TO = {
    "gateway": {"engine", "engine.bot", "engine.search", "engine.audience"},
    "table": {"engine.search"},
}
"""Beyond other services: the gateway forwards what the table built for each audience
(`events.contracts.audience`), so it never folds a game, redacts or computes a turn: no engine."""


def test_the_gateway_imports_no_engine() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((SERVICES / "gateway").rglob("*.py"))
        for line, module in imports_of(path)
        if module == "engine" or module.startswith("engine.")
    ]
    assert bad == [], "the gateway forwards bytes the table built (events.contracts.audience)"


def test_the_table_never_searches() -> None:
    """The strong bot's search runs in the bot tier: a table replica only validates,
    appends, publishes and arms timers (and plays the baseline when the tier is away)."""
    bad = imported_under(SERVICES / "table", ("engine.search",))
    assert bad == [], "ask the bot tier (events.contracts.bots)"


def test_the_import_walker_sees_every_import_form(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import services.table.app\nfrom services import rating\n"
        "if True:\n    from services.gateway.auth import x\n"
    )
    modules = {package_of(m) for _, m in imports_of(probe)}
    assert modules == {"table", "rating", "gateway", None}


@pytest.mark.parametrize(
    ("where", "source", "refused"),
    [
        ("services/rating/probe.py", "from services.table.app import main\n", True),
        ("services/gateway/probe.py", "import services.matchmaking.pairing\n", True),
        ("services/gateway/probe.py", "import engine.search\n", True),
        ("services/gateway/probe.py", "from engine import view\n", True),
        ("services/table/probe.py", "import engine.search\n", True),
        ("services/bots/probe.py", "import engine.search\n", False),
        ("services/table/probe.py", "from events.contracts.game import stream_of\n", False),
        ("services/matchmaking/probe.py", "from events.contracts.skill import Rating\n", False),
    ],
)
def test_ruff_refuses_a_cross_service_import_where_it_is_written(
    where: str, source: str, refused: bool
) -> None:
    """Guard the guard: the nested configs really apply (ruff reads the file as if at
    ``where``, with the config it would find there)."""
    ruff = str(Path(sys.executable).parent / "ruff")
    result = subprocess.run(
        [ruff, "check", "--no-cache", "--select", "TID251", "--stdin-filename", where, "-"],
        input=source,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert (result.returncode == 1) is refused, result.stdout + result.stderr
    assert ("TID251" in result.stdout) is refused
