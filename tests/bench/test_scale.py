"""`python -m benchmarks scale` writes every figure issue #32 asks of a shape: plays/s, p50/p99,
CPU per play of each kind of process (PostgreSQL and NATS included), the busiest process, the
efficiency against T x the 1 x 1 figure, the cost of spreading a table's seats over the
gateways, and the stack's CPU per play as a multiple of the raw in-process flow. A tiny run
(1 x 1 and 2 gateways x 1 table, one game table each, a two-second window) on real servers;
the figures themselves are `make bench`'s business, not this test's."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import artifact, scale
from benchmarks import gateway as gateway_bench
from services.tools.infra import EmbeddedNats
from tests.bench.test_artifact import _positive, _read, bench_json  # noqa: F401 - a fixture
from tests.infra import Servers


@pytest.mark.infra
async def test_the_scale_bench_writes_every_figure_of_a_shape(
    servers: Servers,
    private_nats: EmbeddedNats,
    bench_json: Path,  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in {
        "SHAPES": ((1, 1), (2, 1)),
        "TABLES_PER_REPLICA": 1,
        "WINDOW": 2.0,
        "CLIENTS": 1,
    }.items():
        monkeypatch.setattr(scale, name, value)
    monkeypatch.setattr(gateway_bench, "WINDOW", 2.0)  # the raw flow's window
    pid = private_nats.pid()
    assert pid is not None
    urls = {
        "SPADES_DATABASE_URL": servers.database_url,
        "SPADES_NATS_URL": private_nats.url,
        "nats_pid": str(pid),
    }
    await scale.bench(urls)

    data = _read(bench_json)
    for shape in ("shape_1x1", "shape_2x1", "shape_2x1_spread"):
        f = f"scale.{shape}"
        p50 = _positive(data, f"{f}.p50_ms_all_four")
        assert _positive(data, f"{f}.p99_ms_all_four") >= p50
        _positive(data, f"{f}.plays_per_s")
        for kind in ("gateway", "table", "relay", "postgres", "nats", "client"):
            _positive(data, f"{f}.cpu_us_per_play.{kind}")
        _positive(data, f"{f}.efficiency")
        _positive(data, f"{f}.stack_to_raw_cpu")
        assert artifact.lookup(data, f"{f}.busiest_process").rstrip("0123456789") in {
            "gateway",
            "table",
            "relay",
            "postgres",
            "nats",
        }
    assert artifact.lookup(data, "scale.shape_1x1.efficiency") == 1.0
    assert isinstance(artifact.lookup(data, "scale.shape_2x1_spread.cost_of_spreading_pct"), float)
    _positive(data, "scale.raw_baseline.cpu_us_per_play")
    assert data["meta"]["scale"]["shapes"] == ["1x1", "2x1"]
