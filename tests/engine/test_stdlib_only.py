"""The engine imports the standard library only (the same rule as ruff's banned-api list)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Return (line, top-level module) for every absolute import in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


@pytest.mark.parametrize("path", sorted(ENGINE.rglob("*.py")), ids=lambda p: p.name)
def test_engine_module_imports_only_the_standard_library(path: Path) -> None:
    allowed = set(sys.stdlib_module_names) | {"engine", "__future__"}
    bad = [f"line {line}: {name}" for line, name in imported_modules(path) if name not in allowed]
    assert not bad, f"{path.name} imports outside the standard library: {bad}"


def test_the_import_walker_sees_every_import_form(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import os.path\nfrom msgspec import Struct\nif True:\n    import rich\n")
    assert [name for _, name in imported_modules(probe)] == ["os", "msgspec", "rich"]
