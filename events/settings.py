"""The one typed loader of settings from environment variables.

A settings class is a dataclass whose fields are the settings and whose defaults are the
documented defaults; the variable of field ``ops_port`` is ``SPADES_OPS_PORT``. Values are
decoded by ``msgspec.convert`` in lax mode (a string becomes an int, float or bool: ``1``,
``true``, ``0``, ``false``), and the fields' types carry the rules (``Annotated[int,
msgspec.Meta(ge=1)]``, ``Literal[...]``). A value that does not fit raises SettingsError
naming the variable, the value and what was expected.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec

__all__ = [
    "PREFIX",
    "SettingsError",
    "from_environ",
    "infra_setting",
    "no_database",
    "read_infra_env",
    "spades_home",
    "variable_of",
]

PREFIX = "SPADES_"

T = TypeVar("T")

_WHERE = re.compile(r"^(?P<reason>.*) - at `\$\.(?P<field>\w+)`$")


def spades_home() -> Path:
    """Return the project-local folder for server data ($SPADES_HOME, default ./.spades)."""
    return Path(os.environ.get("SPADES_HOME", ".spades")).resolve()


def read_infra_env(home: Path | None = None) -> dict[str, str]:
    """Return the variables a running embedded stack wrote to ``$SPADES_HOME/infra.env``
    (`spades infra up`, `spades dev`): empty when there is none. The one reader of that file.
    """
    try:
        text = ((home or spades_home()) / "infra.env").read_text()
    except OSError:
        return {}
    pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, _, value in pairs}


def no_database() -> str:
    """Return why no database was found and how to name one (where it looked included)."""
    return (
        f"no database: no running stack's infra.env in {spades_home()}; set SPADES_HOME to the"
        " folder of the running `spades dev` (it prints it) or `spades infra up`, or"
        " SPADES_DATABASE_URL"
    )


def infra_setting(variable: str, missing: str) -> str:
    """Return ``$variable``, else the running embedded stack's value; exit with ``missing``."""
    value = os.environ.get(variable) or read_infra_env().get(variable)
    if not value:
        raise SystemExit(missing)
    return value


class SettingsError(ValueError):
    """A variable holds a value the service cannot use; the message says which and why."""

    code = "bad_setting"

    def __init__(self, variable: str, value: str, expected: str) -> None:
        self.variable = variable
        self.value = value
        self.expected = expected
        super().__init__(f"{variable}={value!r} is not usable: {expected}")


def variable_of(field: str, prefix: str = PREFIX) -> str:
    """Return the environment variable of a settings field (``ops_port`` → SPADES_OPS_PORT)."""
    return f"{prefix}{field.upper()}"


def from_environ(cls: type[T], environ: Mapping[str, str] | None = None, prefix: str = PREFIX) -> T:
    """Return ``cls`` (a dataclass) from the variables of ``environ`` (default os.environ).

    Unset variables keep the field's default; so does a blank one for a field whose default
    is not a string (``SPADES_OPS_PORT=`` means the default port, not an error).
    """
    env = os.environ if environ is None else environ
    raw: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        value = env.get(variable_of(field.name, prefix))
        if value is None:
            continue
        if not value.strip() and not isinstance(field.default, str):
            continue
        raw[field.name] = value.strip() if not isinstance(field.default, str) else value
    try:
        return msgspec.convert(raw, cls, strict=False)
    except msgspec.ValidationError as exc:
        found = _WHERE.match(str(exc))
        if found is None or found["field"] not in raw:
            raise SettingsError(f"{prefix}*", "", str(exc)) from None
        name = found["field"]
        reason = found["reason"].replace("Expected", "expected", 1)
        raise SettingsError(variable_of(name, prefix), str(raw[name]), reason) from None
