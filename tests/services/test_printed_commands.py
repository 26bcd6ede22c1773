"""Every command a person is shown works as shown, in a fresh shell (no SPADES_* variables, no
virtualenv activated, no `uv` on the PATH of its own): the ones `spades dev` prints on a
SPADES_HOME of its own, run against that running stack, and every command of the README."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.infra import REPO
from tests.services.test_devstack import _dev_env, _free_ports, _wait_for

ASSIGNMENT = re.compile(r"^(?:[A-Z_]+=\S*\s+)*")
COMMAND_START = re.compile(
    r"^(?:[A-Z_]+=\S*\s+)*(?:make|uv|spades|\.venv/bin/\S+|python3?|source)(?:\s|$)"
)


def fresh_env() -> dict[str, str]:
    """A new login's environment: PATH without the virtualenv, nothing of the project."""
    venv = str(REPO / ".venv")
    path = [p for p in os.environ.get("PATH", "").split(":") if p and not p.startswith(venv)]
    path = [p for p in path if not Path(p, "uv").exists()]  # `uv` is not on a new PATH
    env = {"PATH": ":".join(path), "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
    return env


def shell(line: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run one line in a fresh bash in the repository."""
    return subprocess.run(
        ["bash", "-c", line],
        cwd=REPO,
        env=fresh_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def readme_commands(text: str) -> list[str]:
    """Every command line of the README: code-block lines and inline spans that start a
    command (`make`, `.venv/bin/...`, `python3 ...`, `spades`, `uv`, `source`)."""
    found = []
    prose = []
    for line in text.splitlines():
        if line.startswith("    ") and not line.startswith("     "):
            code = line.strip().split("  #")[0].strip()
            if COMMAND_START.match(code):
                found.append(code)
        else:
            prose.append(line)
    for span in re.findall(r"`([^`]+)`", " ".join(prose)):
        if COMMAND_START.match(span) and " " in span.strip():
            found.append(span.strip())
    return found


def check_runs(command: str) -> str | None:
    """Run what `command` needs to work as printed; return why it does not, or None."""
    words = shlex.split(ASSIGNMENT.sub("", command).rstrip("& "))
    head = words[0]
    if head == "uv":
        return "`uv` is not on the PATH after `make install`: name .venv/bin/... or make"
    if head == "make":
        probe = f"make -n --no-print-directory {shlex.join(words[1:])}"
    elif head in (".venv/bin/spades", "spades"):
        sub = next((w for w in words[1:] if not w.startswith("-")), None)
        probe = f"{head} {sub} --help" if sub else f"{head} --help"
        if head == "spades":
            probe = f"source .venv/bin/activate && {probe}"
    elif head in (".venv/bin/python", "python3", "python") and words[1:2] == ["-m"]:
        module = words[2]
        if module == "uv":
            probe = f"{head} -m uv --version"
        else:
            found = f"sys.exit(u.find_spec({module!r}) is None)"
            probe = f'{head} -c "import importlib.util as u, sys; {found}"'
    elif head == "source":
        probe = f"source {words[1]} && command -v spades"
    else:
        probe = f"command -v {head}"
    done = shell(probe)
    if done.returncode != 0:
        return f"`{probe}` exited {done.returncode}: {(done.stdout + done.stderr)[-400:]}"
    return None


def test_every_readme_command_works_as_printed_in_a_fresh_shell() -> None:
    commands = readme_commands((REPO / "README.md").read_text())
    assert any(c.startswith(".venv/bin/spades replay") for c in commands), commands
    assert any(c.startswith("make dev") for c in commands), commands
    failures = {c: why for c in commands if (why := check_runs(c)) is not None}
    assert not failures, failures


def test_every_command_spades_dev_prints_works_as_printed_in_a_fresh_shell(
    tmp_path: Path,
) -> None:
    """`spades dev` on a home of its own (as "Running two" does): the commands it prints name
    that home, so a new shell in the repository finds the running stack's database."""
    env = _dev_env(Path(tempfile.mkdtemp(prefix="spd-")), _free_ports(6))
    out = tmp_path / "dev.out"
    with out.open("wb") as sink:
        dev = subprocess.Popen(
            [sys.executable, "-m", "services.tools.cli", "dev"],
            cwd=REPO,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        console = _wait_for(out, "Ctrl-C stops it", dev, 600)
        printed = re.findall(r"^(?:replay it|check its deals): (.+)$", console, re.M)
        printed += [span for span in re.findall(r"`([^`]+)`", console) if COMMAND_START.match(span)]
        assert len(printed) == 3, console  # replay, verify, infra down
        down = [c for c in printed if c.endswith("infra down")]
        assert len(down) == 1, printed
        for command in printed:
            if command in down:
                continue
            done = shell(command)
            assert done.returncode == 0, (command, done.stdout, done.stderr)
            assert "no database" not in done.stdout + done.stderr
        replayed = shell(next(c for c in printed if " replay " in c)).stdout
        assert "game over" in replayed or "GameFinished" in replayed, replayed
        # the demo game is nobody's: an account named "you" inherits no game
        url = re.search(r"play in the browser: (http://\S+)", console)
        assert url
        listed = httpx.get(f"{url.group(1)}api/players/you/games", timeout=30)
        assert listed.status_code == 200
        assert listed.json() == []
        os.killpg(dev.pid, signal.SIGINT)
        dev.wait(60)
        assert dev.returncode == 0, out.read_text()
        stopped = shell(down[0])
        assert stopped.returncode == 0, stopped.stderr
        assert "stopped" in stopped.stdout
        deadline = time.monotonic() + 60
        status = [sys.executable, "-m", "services.tools.cli", "infra", "status"]
        while subprocess.run(status, cwd=REPO, env=env, capture_output=True).returncode == 0:
            assert time.monotonic() < deadline, "infra down left a server running"
            time.sleep(0.2)
    finally:
        if dev.poll() is None:
            os.killpg(dev.pid, signal.SIGKILL)
            dev.wait()
        subprocess.run(
            [sys.executable, "-m", "services.tools.cli", "infra", "down"],
            cwd=REPO,
            env=env,
            check=False,
            capture_output=True,
        )
        shutil.rmtree(env["SPADES_HOME"], ignore_errors=True)
