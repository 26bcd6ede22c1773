"""`artifacts/bench.json`: figures merged across benchmarks under the names issue #12 and #14
use, and a tiny real run of the gateway bench that writes every one of its figures.

Nothing here is timed: the figures' values are the benchmark's business, only their names,
units and the merging are checked.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import artifact
from benchmarks import gateway as gateway_bench
from services.tools.infra import EmbeddedNats
from tests.infra import Servers


@pytest.fixture
def bench_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The artifact's path for this test (never the repository's artifacts/bench.json)."""
    target = tmp_path / "artifacts" / "bench.json"
    monkeypatch.setenv("SPADES_BENCH_ARTIFACT", str(target))
    return target


def test_the_artifact_module_examples_hold() -> None:
    failed, tried = doctest.testmod(artifact)
    assert tried >= 3
    assert failed == 0


def test_a_run_of_one_benchmark_keeps_the_figures_of_the_others(bench_json: Path) -> None:
    engine_meta = artifact.run_metadata()
    artifact.record("engine", {"engine.hands_per_cpu_s": 5000.0}, engine_meta)
    artifact.record(
        "gateway",
        {
            "full_stack.tables_100": {"plays_per_s": 600.0, "cpu_us_per_play": {"gateway": 9.0}},
            "full_stack.raw_baseline_plays_per_s": 5100.0,
        },
        {"date": "first"},
    )
    # a second gateway run that measured one level only
    artifact.record(
        "gateway",
        {"full_stack.tables_100.cpu_us_per_play": {"table": 3.0}},
        {"date": "second"},
    )
    data = json.loads(bench_json.read_text())
    assert artifact.lookup(data, "engine.hands_per_cpu_s") == 5000.0
    assert artifact.lookup(data, "full_stack.tables_100.plays_per_s") == 600.0
    assert artifact.lookup(data, "full_stack.tables_100.cpu_us_per_play") == {
        "gateway": 9.0,
        "table": 3.0,
    }
    assert artifact.lookup(data, "full_stack.raw_baseline_plays_per_s") == 5100.0
    assert data["meta"]["gateway"] == {"date": "second"}
    assert data["meta"]["engine"]["git_commit"] == engine_meta["git_commit"]


def test_a_figure_replaces_the_old_value_and_a_broken_file_is_replaced(bench_json: Path) -> None:
    bench_json.parent.mkdir(parents=True)
    bench_json.write_text("{not json")
    artifact.record("engine", {"engine.hands_per_cpu_s": 1.23456}, {})
    artifact.record("engine", {"engine.hands_per_cpu_s": 2.0}, {})
    data = json.loads(bench_json.read_text())
    assert data["engine"] == {"hands_per_cpu_s": 2.0}
    assert not bench_json.with_suffix(".json.tmp").exists()


def test_a_name_that_is_both_a_figure_and_a_group_is_refused() -> None:
    with pytest.raises(ValueError, match="both a figure and a group"):
        artifact.nest({"a.b": 1, "a.b.c": 2})
    with pytest.raises(KeyError, match="no 'x'"):
        artifact.lookup({"a": {"b": 1}}, "a.x")


def test_run_metadata_names_the_run() -> None:
    meta = artifact.run_metadata()
    assert len(meta["git_commit"]) == 40
    assert meta["cpu_count"] >= 1
    assert len(meta["load_average_start"]) == 3
    assert meta["date"].endswith("+00:00")


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _positive(data: dict[str, Any], name: str) -> float:
    value = artifact.lookup(data, name)
    assert isinstance(value, int | float), name
    assert value > 0, name
    return float(value)


@pytest.mark.infra
async def test_the_gateway_bench_writes_every_figure_of_issue_12(
    servers: Servers,
    private_nats: EmbeddedNats,
    bench_json: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a tiny run: one playing table, two idle ones, one raw table, two variants compared
    for name, value in {
        "WINDOW": 2.0,
        "TABLES": (1,),
        "IDLE_TABLES": 2,
        "IDLE_WINDOW": 1.0,
        "RAW_TABLES": 1,
        "COMPARE": ("asyncio_websockets", "uvloop_sansio"),
        "COMPARE_TABLES": 1,
        "ROUNDS": 1,
    }.items():
        monkeypatch.setattr(gateway_bench, name, value)
    from benchmarks import wsrelay

    monkeypatch.setattr(wsrelay, "WINDOW", 1.0)  # the bare relay of the same run, tiny too
    monkeypatch.setattr(wsrelay, "ROOMS", 2)
    artifact.record("engine", {"engine.hands_per_cpu_s": 1000.0}, {})  # an earlier run's
    pid = private_nats.pid()
    assert pid is not None
    urls = {
        "SPADES_DATABASE_URL": servers.database_url,
        "SPADES_NATS_URL": private_nats.url,
        "nats_pid": str(pid),
    }
    await gateway_bench.bench(urls)

    data = _read(bench_json)
    level = "full_stack.tables_1"
    _positive(data, f"{level}.plays_per_s")
    p50 = _positive(data, f"{level}.p50_ms_all_four")
    assert _positive(data, f"{level}.p99_ms_all_four") >= p50
    for service in ("gateway", "table", "relay"):
        _positive(data, f"{level}.cpu_us_per_play.{service}")
    for server in ("postgres", "nats"):  # issue #32: the stack counts its servers too
        _positive(data, f"{level}.cpu_us_per_play.{server}")
    stack = _positive(data, f"{level}.stack_cpu_us_per_play")
    assert stack > artifact.lookup(data, f"{level}.cpu_us_per_play.gateway")
    _positive(data, "full_stack.raw_baseline_plays_per_s")
    raw = _positive(data, "full_stack.raw_baseline.cpu_us_per_play")
    assert _positive(data, "full_stack.raw_baseline.cpu_us_per_play_with_servers") > raw
    ratio = _positive(data, f"{level}.stack_to_raw_cpu")
    assert ratio == pytest.approx(stack / raw, rel=1e-3)  # (the artifact rounds figures)
    _positive(data, f"{level}.stack_to_raw_cpu_with_servers")
    bare = _positive(data, "full_stack.bare_relay.server_cpu_us_per_msg")
    gateway = artifact.lookup(data, f"{level}.cpu_us_per_play.gateway")
    ratio = _positive(data, f"{level}.gateway_to_bare_relay_cpu")
    assert ratio == pytest.approx(gateway / bare, rel=1e-3)
    assert artifact.lookup(data, "idle.tables_2.gateway_cpu_s_per_s") >= 0
    _positive(data, "idle.tables_2.nats_rss_mb")
    for variant in ("asyncio_websockets", "uvloop_sansio"):
        _positive(data, f"fast_parts.{variant}.plays_per_s")
        _positive(data, f"fast_parts.{variant}.cpu_us_per_play.gateway")
    _positive(data, "fast_parts.uvloop_sansio.ratio_to_asyncio_websockets.plays_per_s")
    assert artifact.lookup(data, "engine.hands_per_cpu_s") == 1000.0  # kept
    meta = data["meta"]["gateway"]
    assert meta["cpu_count"] >= 1
    assert len(meta["load_average_start"]) == 3
    assert meta["services"]["ws"] in {"websockets", "websockets-sansio", "wsproto"}


async def test_the_relay_bench_writes_its_figures_beside_the_others(
    bench_json: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import wsrelay

    for name, value in {
        "WINDOW": 0.5,
        "ROOMS": 2,
        "ROUNDS": 1,
        "RELAY_VARIANTS": ("asyncio_websockets", "uvloop_sansio"),
    }.items():
        monkeypatch.setattr(wsrelay, name, value)
    artifact.record("engine", {"engine.hands_per_cpu_s": 1000.0}, {})
    await wsrelay.bench()
    data = _read(bench_json)
    for variant in ("asyncio_websockets", "uvloop_sansio"):
        _positive(data, f"ws_relay.{variant}.msgs_per_s")
        _positive(data, f"ws_relay.{variant}.server_cpu_us_per_msg")
    _positive(data, "ws_relay.uvloop_sansio.ratio_to_asyncio_websockets.server_cpu_us_per_msg")
    assert artifact.lookup(data, "engine.hands_per_cpu_s") == 1000.0
    assert "wsrelay" in data["meta"]


@pytest.mark.infra
async def test_the_outbox_relay_bench_writes_both_ways_figures(
    servers: Servers, bench_json: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import relay as outbox

    for name, value in {
        "SPADES_BENCH_OUTBOX_RATES": "50",
        "SPADES_BENCH_OUTBOX_SECONDS": "1",
        "SPADES_BENCH_OUTBOX_EVENTS": "400",
        "SPADES_BENCH_OUTBOX_ROUNDS": "1",
    }.items():
        monkeypatch.setenv(name, value)
    artifact.record("engine", {"engine.hands_per_cpu_s": 1000.0}, {})
    urls = {"SPADES_DATABASE_URL": servers.database_url, "SPADES_NATS_URL": servers.nats_url}
    await outbox.bench(urls)
    data = _read(bench_json)
    for way in ("awaited", "pipelined"):
        _positive(data, f"relay.{way}.steady_50.relay_cpu_us_per_event")
        _positive(data, f"relay.{way}.steady_50.events")
        _positive(data, f"relay.{way}.backlog.events_per_s")
        assert artifact.lookup(data, f"relay.{way}.backlog.events") == 400
    _positive(data, "relay.pipelined.backlog.cpu_ratio_to_awaited")
    assert artifact.lookup(data, "engine.hands_per_cpu_s") == 1000.0
    assert "relay" in data["meta"]
