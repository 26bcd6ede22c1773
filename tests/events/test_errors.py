"""One error base: every exception of the platform that carries a code for programs derives
from `events.errors.Refusal`, and the HTTP edge maps any refusal by its code in one table."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from events.errors import Refusal
from services.gateway.errors import EXCEPTION_HANDLERS, refusal_error, status_of

ROOT = Path(__file__).resolve().parents[2]


def coded_exceptions() -> list[tuple[str, str]]:
    """Return (module, class) of every class under events/ and services/ that sets
    ``self.code`` or whose base already is one of them: the errors told to a person."""
    found = []
    for path in sorted([*(ROOT / "events").rglob("*.py"), *(ROOT / "services").rglob("*.py")]):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef):
                continue
            sets_code = any(
                isinstance(t, ast.Attribute) and t.attr == "code"
                for sub in ast.walk(node)
                if isinstance(sub, ast.Assign)
                for t in sub.targets
            )
            if sets_code:
                found.append((module, node.name))
    return found


def test_the_scan_finds_the_refusals_it_must() -> None:
    names = {name for _, name in coded_exceptions()}
    assert {"Refusal", "ApiError"} <= names


@pytest.mark.parametrize(("module", "name"), coded_exceptions())
def test_every_coded_exception_is_a_refusal(module: str, name: str) -> None:
    cls = getattr(importlib.import_module(module), name)
    if name == "ApiError" or issubclass(cls, SystemExit):
        return  # the HTTP edge's own answer (a status too), or an exit status (`code`: 2)
    assert issubclass(cls, Refusal), f"{module}.{name} carries a code: derive it from Refusal"


@pytest.mark.parametrize(
    "module_name",
    [
        ("services.gateway.state", "Unavailable"),
        ("services.table.tables", "Rejected"),
        ("services.gateway.auth", "TokenError"),
        ("services.records.transcript", "TranscriptError"),
    ],
)
def test_the_refusals_that_existed_before_the_base_derive_from_it(
    module_name: tuple[str, str],
) -> None:
    module, name = module_name
    assert issubclass(getattr(importlib.import_module(module), name), Refusal)


def test_the_http_edge_answers_a_refusal_at_its_codes_status() -> None:
    assert EXCEPTION_HANDLERS[Refusal] is refusal_error
    assert status_of("unknown_game") == 404
    assert status_of("unavailable") == 503
    assert status_of("a_code_no_table_names") == 400
    answer = refusal_error(None, Refusal("in_game", "you are seated"))  # type: ignore[arg-type]
    assert answer.status_code == 409
    assert answer.content.code == "in_game"
    assert answer.content.message == "you are seated"
