"""Service boundaries: no service imports another's package, and only events/ names the
store's tables in SQL. The ruff configs of each service package (ruff.toml) say the same to
an editor; these tests are the rule, and keep those lists complete."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
PACKAGES = sorted(p.name for p in SERVICES.iterdir() if (p / "__init__.py").exists())
STORE_TABLES = ("spades_events", "spades_streams")


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
    assert PACKAGES == ["gateway", "matchmaking", "rating", "table"]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_service_imports_another_service(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((SERVICES / package).rglob("*.py"))
        for line, module in imports_of(path)
        if package_of(module) not in (None, package)
    ]
    assert bad == [], "shared names belong in events/ (or a shared services/ module)"


def test_only_events_names_the_stores_tables() -> None:
    bad = []
    for path in sorted(SERVICES.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named = [t for t in STORE_TABLES if t in node.value]
                if named:
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} names {named}")
    assert bad == [], "read the log through events.pgstore (a store method), not in SQL"


def modules_of(package: str) -> set[str]:
    base = SERVICES / package
    found = {f"services.{package}"}
    for path in base.rglob("*.py"):
        module = path.parent if path.name == "__init__.py" else path.with_suffix("")
        found.add("services." + ".".join(module.relative_to(SERVICES).parts))
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_each_packages_ruff_config_bans_every_other_service_module(package: str) -> None:
    config = tomllib.loads((SERVICES / package / "ruff.toml").read_text())
    assert config["extend"] == "../../pyproject.toml"
    assert config["lint"]["per-file-ignores"] == {}, "the root ignores TID251 outside engine/"
    banned = set(config["lint"]["flake8-tidy-imports"]["banned-api"]) - FORBIDDEN_TO.get(
        package, set()
    )
    others = set().union(*(modules_of(p) for p in PACKAGES if p != package))
    assert others - banned == set(), f"add them to services/{package}/ruff.toml"
    assert banned - others == set(), f"services/{package}/ruff.toml bans modules that are gone"


FORBIDDEN_TO = {"gateway": {"engine", "engine.bot", "engine.search", "engine.audience"}}
"""Beyond other services: the gateway forwards what the table built for each audience
(`events.audience`), so it never folds a game, redacts or computes a turn: no engine."""


def test_the_gateway_imports_no_engine() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((SERVICES / "gateway").rglob("*.py"))
        for line, module in imports_of(path)
        if module == "engine" or module.startswith("engine.")
    ]
    assert bad == [], "the gateway forwards bytes the table built (events.audience)"


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
        ("services/table/probe.py", "import engine.search\n", False),
        ("services/table/probe.py", "from events.game import stream_of\n", False),
        ("services/matchmaking/probe.py", "from services.skill import Rating\n", False),
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
