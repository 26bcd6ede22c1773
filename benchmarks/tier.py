"""The bot tier's figures: `python -m benchmarks tier`.

1. In process, on the views of 4-player bot games: decisions per CPU-second of a bot worker
   (`services.bots.app.decide`, view decoding included) for the baseline and the strong bot,
   the strong bot's decision time p50/p95/max, and what the table's own fallback costs (the
   baseline's move on the table: p50/p99/max).
2. As real processes (a table replica, a bot worker, embedded PostgreSQL and NATS): another
   game's command latency p50/p99 while nobody else asks anything, then while twelve
   practice seats with strong bots ask for their view and hints as fast as they can; the
   ratio of the two p99s (goal 1.5 at most); the table's CPU per play and the searches the
   spam caused (one per seat's turn at most).

SPADES_BENCH_TIER_VIEWS (default 400) views; SPADES_BENCH_TIER_WINDOW (default 10) seconds
a phase. Figures go to `artifacts/bench.json` under ``tier.*``.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
import uuid
from typing import Any

import msgspec
import structlog

import engine
import engine.bot
from benchmarks import artifact
from benchmarks.e2e import REPO, fresh_database, run_on_servers, terminate
from benchmarks.gateway import cpu_seconds
from events.bus import close_nats, connect, ensure_streams
from events.contracts import game as wire
from events.contracts.audience import CatchupReply
from events.contracts.bots import encode_view
from events.subjects import Subjects
from services.bots.app import decide
from tests.moves import choose

VIEWS = int(os.environ.get("SPADES_BENCH_TIER_VIEWS", "400"))
WINDOW = float(os.environ.get("SPADES_BENCH_TIER_WINDOW", "10"))
PARTITIONS = 16
_reply = msgspec.json.Decoder(wire.TableReply)
_catchup = msgspec.json.Decoder(CatchupReply)
_encoder = msgspec.json.Encoder()


def pct(values: list[float], q: float) -> float:
    """Return the q-quantile of ``values`` (0 when empty), in their own unit."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def views(count: int, seed: int = 1) -> list[engine.SeatView]:
    """Return ``count`` views of the seat on turn, from seeded 4-player baseline games."""
    found: list[engine.SeatView] = []
    game = 0
    while len(found) < count:
        events, _ = engine.bot.play_game(engine.Ruleset(), seed * 1000 + game)
        state = engine.initial_state()
        for event in events:
            state = engine.apply(state, event)
            if state.turn >= 0 and state.phase != "over" and engine.view(state, state.turn).legal:
                found.append(engine.view(state, state.turn))
        game += 1
    return found[:count]


def in_process() -> dict[str, float]:
    """Return the worker's and the fallback's figures on the same views."""
    log = structlog.get_logger("bench")
    sample = views(VIEWS)
    figures: dict[str, float] = {}
    for level in ("baseline", "strong"):
        times = []
        for n, view in enumerate(sample):
            data = encode_view(view)
            started = time.process_time()
            reply = decide("decide", "bench", n, view.seat, level, data, 0.15, log)
            times.append(time.process_time() - started)
            assert reply.ok, reply
            assert not reply.fallback, reply
        figures[f"{level}_decisions_per_cpu_s"] = len(times) / sum(times)
        figures[f"{level}_decision_ms_p50"] = 1000 * pct(times, 0.50)
        figures[f"{level}_decision_ms_p95"] = 1000 * pct(times, 0.95)
        figures[f"{level}_decision_ms_max"] = 1000 * max(times)
    fallback = []
    for view in sample:
        started = time.process_time()
        engine.bot.choose(view, random.Random(1))
        fallback.append(time.process_time() - started)
    figures["table_fallback_us_p50"] = 1e6 * pct(fallback, 0.50)
    figures["table_fallback_us_p99"] = 1e6 * pct(fallback, 0.99)
    figures["table_fallback_us_max"] = 1e6 * max(fallback)
    return figures


async def request(nc: Any, subject: str, body: msgspec.Struct, within: float = 10.0) -> bytes:
    msg = await nc.request(subject, _encoder.encode(body), timeout=within)
    return bytes(msg.data)


async def play_other(
    nc: Any, subjects: Subjects, game_id: str, players: tuple[str, ...], until: float
) -> list[float]:
    """Play a casual game of four people as fast as they answer; return command latencies."""
    latencies: list[float] = []
    subject = subjects.table_command(game_id, PARTITIONS)
    while time.monotonic() < until:
        progressed = False
        for player in players:
            got = _reply.decode(
                await request(nc, subject, wire.GetView(game_id=game_id, player_id=player))
            )
            view = got.view
            assert view is not None
            if view.phase == "over":
                return latencies
            if not view.legal:
                continue
            command = wire.SubmitCommand(
                game_id=game_id,
                player_id=player,
                command_id=uuid.uuid4(),
                command=choose(view.legal, view.hand),
            )
            started = time.perf_counter()
            answer = _reply.decode(await request(nc, subject, command))
            latencies.append(time.perf_counter() - started)
            assert answer.ok, answer
            progressed = True
        if not progressed:
            await asyncio.sleep(0.005)
    return latencies


async def spam(nc: Any, subjects: Subjects, game_id: str, player: str, until: float) -> int:
    """Ask for a practice seat's view and hints as fast as the table answers; return how many."""
    asked = 0
    subject = subjects.table_command(game_id, PARTITIONS)
    while time.monotonic() < until:
        for body in (
            wire.Catchup(game_id=game_id, player_id=player, hints=True),
            wire.GetView(game_id=game_id, player_id=player),
        ):
            await request(nc, subject, body)
            asked += 1
    return asked


async def open_casual(nc: Any, subjects: Subjects, players: tuple[str, ...]) -> str:
    body = wire.OpenCasual(players=players, command_id=uuid.uuid4(), rules={"target": 1000})
    reply = _reply.decode(await request(nc, subjects.table_open(), body, 30))
    assert reply.ok, reply
    return reply.game_id


async def services(urls: dict[str, str]) -> dict[str, float]:
    """Return the service figures (see the module docstring)."""
    db_url = await fresh_database(urls["SPADES_DATABASE_URL"])
    prefix = f"tier{os.getpid()}"
    subjects = Subjects(prefix)
    env = {
        **os.environ,
        "SPADES_DATABASE_URL": db_url,
        "SPADES_NATS_URL": urls["SPADES_NATS_URL"],
        "SPADES_NATS_PREFIX": prefix,
        "SPADES_OPS_PORT": "0",
        "SPADES_TURN_SECONDS": "600",
        "SPADES_CONTRIBUTION_SECONDS": "0",
        "SPADES_LOG_LEVEL": "warning",
    }
    procs = {
        name: await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.tools.cli", "serve", name, cwd=REPO, env=env
        )
        for name in ("table", "bots")
    }
    nc = await connect(urls["SPADES_NATS_URL"], name="bench-tier")
    figures: dict[str, float] = {}
    try:
        await ensure_streams(nc.jetstream(), subjects)
        await asyncio.sleep(3.0)  # the table claims its partitions
        practice = []
        for n in range(12):
            body = wire.OpenPractice(
                player_id=f"spam{n}", command_id=uuid.uuid4(), bots="strong", untimed=True
            )
            reply = _reply.decode(await request(nc, subjects.table_open(), body, 30))
            assert reply.ok, reply
            practice.append((reply.game_id, f"spam{n}"))
        await asyncio.sleep(3.0)  # the bots before each person move (through the tier)
        table_pid = procs["table"].pid
        for phase in ("quiet", "spam"):
            players = tuple(f"{phase}{seat}" for seat in range(4))
            game_id = await open_casual(nc, subjects, players)
            cpu_before = cpu_seconds(table_pid)
            until = time.monotonic() + WINDOW
            spammers = (
                [spam(nc, subjects, g, p, until) for g, p in practice] if phase == "spam" else []
            )
            results = await asyncio.gather(
                play_other(nc, subjects, game_id, players, until), *spammers
            )
            latencies: list[float] = results[0]
            cpu = cpu_seconds(table_pid) - cpu_before
            figures[f"other_game_{phase}.command_ms_p50"] = 1000 * pct(latencies, 0.50)
            figures[f"other_game_{phase}.command_ms_p99"] = 1000 * pct(latencies, 0.99)
            figures[f"other_game_{phase}.commands"] = len(latencies)
            figures[f"other_game_{phase}.table_cpu_us_per_command"] = (
                1e6 * cpu / max(1, len(latencies))
            )
            if phase == "spam":
                figures["spam.requests"] = sum(results[1:])
        quiet = figures["other_game_quiet.command_ms_p99"]
        figures["other_game_p99_ratio_spam_to_quiet"] = (
            figures["other_game_spam.command_ms_p99"] / quiet if quiet else 0.0
        )
    finally:
        await close_nats(nc)
        await terminate(list(procs.values()))
    return figures


def main() -> None:
    """Run both parts, print them and record them."""
    meta = artifact.run_metadata()
    local = in_process()
    for level in ("baseline", "strong"):
        print(
            f"{level:8s}: {local[f'{level}_decisions_per_cpu_s']:9.0f} decisions per CPU-s;"
            f" p50 {local[f'{level}_decision_ms_p50']:.2f} ms"
            f" p95 {local[f'{level}_decision_ms_p95']:.2f} ms"
            f" max {local[f'{level}_decision_ms_max']:.2f} ms ({VIEWS} 4-player views)"
        )
    print(
        f"table fallback (baseline on the table): p50 {local['table_fallback_us_p50']:.0f} µs"
        f" p99 {local['table_fallback_us_p99']:.0f} µs max {local['table_fallback_us_max']:.0f} µs"
    )
    served: dict[str, float] = {}

    async def run(urls: dict[str, str]) -> None:
        served.update(await services(urls))

    run_on_servers(run)
    for phase in ("quiet", "spam"):
        print(
            f"another game, {phase:5s}:"
            f" command p50 {served[f'other_game_{phase}.command_ms_p50']:.1f} ms"
            f" p99 {served[f'other_game_{phase}.command_ms_p99']:.1f} ms"
            f" ({served[f'other_game_{phase}.commands']:.0f} commands);"
            f" table {served[f'other_game_{phase}.table_cpu_us_per_command']:.0f} µs CPU/command"
        )
    print(
        f"spam: {served['spam.requests']:.0f} view/hint requests at 12 strong practice seats;"
        f" p99 ratio spam/quiet {served['other_game_p99_ratio_spam_to_quiet']:.2f} (goal <= 1.5)"
    )
    figures = {f"tier.{k}": v for k, v in {**local, **served}.items()}
    print(f"wrote {artifact.record('tier', figures, meta)}")


if __name__ == "__main__":
    main()
