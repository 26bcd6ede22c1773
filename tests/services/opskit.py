"""Reading a service process's logs and its /metrics, as an operator's tools would."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from typing import Any

from services.runtime import ops
from tests.gateway.conftest import start_gateway as gateway_process
from tests.infra import Processes, eventually


def log_records(text: str) -> list[dict[str, Any]]:
    """Return every line of a service's output as JSON; a line that is not JSON fails."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise AssertionError(f"line {number} is not a JSON log record: {line!r}") from None
        assert isinstance(record, dict), line
        records.append(record)
    return records


async def ops_port(processes: Processes, proc: subprocess.Popen[bytes]) -> int:
    """Wait until the process's ops server listens; return its port (from its log)."""

    def logged() -> int | None:
        assert proc.poll() is None, processes.log(proc)[-5000:]
        for line in processes.log(proc).splitlines():
            if '"ops server listening"' in line:
                return int(json.loads(line)["port"])
        return None

    port: int = await eventually(logged, within=60, what="the ops server to listen")
    return port


def scrape(port: int) -> str:
    """Return the /metrics text of the ops server on ``port``."""
    url = f"http://127.0.0.1:{port}{ops.METRICS}"
    with urllib.request.urlopen(url, timeout=5) as answer:
        return str(answer.read().decode())


def sample(text: str, series: str) -> float | None:
    """Return the value of one series (``name`` or ``name{labels}``), None when absent."""
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name == series:
            return float(value)
    return None


def gauge(port: int, series: str) -> float | None:
    """Return the current value of ``series`` on the service's /metrics."""
    return sample(scrape(port), series)


async def start_gateway(processes: Processes, **env: str) -> tuple[subprocess.Popen[bytes], int]:
    """Start `spades serve gateway` on free ports; return the process and its HTTP port."""
    started = await gateway_process(processes, **env)
    return started.proc, started.http_port
