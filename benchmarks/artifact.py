"""`artifacts/bench.json`: every benchmark's named figures in one JSON object, merged.

Figures are nested by their dotted names (``full_stack.tables_100.plays_per_s`` is
``data["full_stack"]["tables_100"]["plays_per_s"]``) and carry their unit in the last part of
the name (``_per_s``, ``_ms``, ``_us_per_play``, ``_mb``...). A run of one benchmark replaces the
keys it measured and keeps every other: `python -m benchmarks gateway` leaves the engine's
figures of an earlier `make bench` in place. Each suite's run metadata (UTC date, git commit,
cpu count, load average when it started, Python and event loop) is kept under
``meta.<suite>``, so a figure can always be traced to the run that produced it.

SPADES_BENCH_ARTIFACT names another file (the tests write to a temporary one).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def path() -> Path:
    """Return the artifact's path: SPADES_BENCH_ARTIFACT, else artifacts/bench.json."""
    named = os.environ.get("SPADES_BENCH_ARTIFACT")
    return Path(named) if named else REPO / "artifacts" / "bench.json"


def _git(*args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def run_metadata() -> dict[str, Any]:
    """Return what identifies a run: call it when the suite starts (the load average then)."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "cpu_count": os.cpu_count(),
        "load_average_start": load,
        "python": platform.python_version(),
    }


def nest(figures: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``figures`` with dotted names turned into nested objects.

    >>> nest({"a.b": 1, "a.c.d": 2, "e": {"f.g": 3}})
    {'a': {'b': 1, 'c': {'d': 2}}, 'e': {'f': {'g': 3}}}
    """
    out: dict[str, Any] = {}
    for name, value in figures.items():
        *parents, leaf = name.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"figure {name!r}: {part!r} is both a figure and a group")
        if isinstance(value, Mapping):
            value = nest(value)
            if isinstance(node.get(leaf), dict):
                value = merge(node[leaf], value)
        node[leaf] = value
    return out


def merge(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``old`` updated by ``new`` group by group: a leaf of ``new`` replaces the old one,
    a group merges into the old group, and everything ``new`` does not name is kept.

    >>> merge({"a": {"x": 1, "y": 2}, "b": 3}, {"a": {"y": 5, "z": 6}})
    {'a': {'x': 1, 'y': 5, 'z': 6}, 'b': 3}
    """
    out = dict(old)
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, Mapping):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def record(suite: str, figures: Mapping[str, Any], meta: Mapping[str, Any]) -> Path:
    """Merge ``figures`` (dotted names or nested) and ``meta`` (as ``meta.<suite>``) into the
    artifact; return its path. An unreadable old file is replaced, never half-merged."""
    target = path()
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        data = json.loads(target.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    data = merge(data, _rounded(nest(figures)))
    data = merge(data, {"meta": {suite: dict(meta)}})
    temporary = target.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    temporary.replace(target)  # a reader never sees half a file
    return target


def lookup(data: Mapping[str, Any], name: str) -> Any:
    """Return the figure at dotted ``name``; raise KeyError naming the missing part.

    >>> lookup({"a": {"b": 2}}, "a.b")
    2
    """
    node: Any = data
    for part in name.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(f"{name}: no {part!r}")
        node = node[part]
    return node
