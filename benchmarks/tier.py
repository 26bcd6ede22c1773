"""The bot tier's figures: `python -m benchmarks tier`.

1. In process, on the views of 4-player bot games: decisions per CPU-second of a bot worker
   (`services.bots.app.decide`, view decoding included) for the baseline and the strong bot,
   the strong bot's decision time p50/p95/max, and what the table's own fallback costs (the
   baseline's move on the table: p50/p99/max).
2. As real processes (a table replica, a bot worker, a gateway, embedded PostgreSQL and
   NATS): another game's command latency p50/p99 while nobody else asks anything, then while
   twelve practice seats of four accounts, strong bots at each table, ask for their view and
   hints:

   - ``sockets`` (the issue's goal: p99 within 1.5x the quiet one): twelve WebSockets of the
     gateway, each sending ``view`` as fast as the gateway lets a connection send
     (SPADES_WS_MESSAGES_PER_SECOND, 50 a second: what anyone on the internet can do) and
     subscribing again (with hints) as often as it lets one (SPADES_WS_SUBSCRIBES_PER_MINUTE);
   - ``spam``: the same pace straight to the table over NATS, a view and a catch-up with hints
     in turn (what the table would be sent were the gateway to forward every request);
   - ``flood``: as fast as the table answers, straight over NATS (only a process inside the
     cluster can; a reference for the table's own ceiling).

   The spammers run in a process of their own, so the measured client's event loop is never
   theirs, and at nice SPADES_BENCH_TIER_SPAM_NICE (10): they stand for clients on other
   machines, whose CPU a deployment never pays, and on a 2-core machine their own sending and
   reading would otherwise compete with the services as much as the services' work does. They
   still send at their pace (the requests sent are printed: a spammer that fell behind shows).
   Also the table's, the gateway's and the spammers' CPU in each phase.

SPADES_BENCH_TIER_VIEWS (default 400) views; SPADES_BENCH_TIER_WINDOW (default 20) seconds
a phase. Figures go to `artifacts/bench.json` under ``tier.*``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import time
import uuid
from typing import Any

import msgspec
import structlog
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from websockets.asyncio.client import ClientConnection

import engine
import engine.bot
from benchmarks import artifact
from benchmarks.e2e import REPO, fresh_database, run_on_servers, terminate
from benchmarks.gateway import SECRET, connect_seat, cpu_seconds, start_gateway
from events.bus import close_nats, connect, ensure_streams
from events.contracts import game as wire
from events.contracts.audience import CatchupReply
from events.contracts.bots import encode_view
from events.subjects import Subjects
from services.bots.app import decide
from tests.moves import choose

VIEWS = int(os.environ.get("SPADES_BENCH_TIER_VIEWS", "400"))
WINDOW = float(os.environ.get("SPADES_BENCH_TIER_WINDOW", "20"))
SPAM_NICE = int(os.environ.get("SPADES_BENCH_TIER_SPAM_NICE", "10"))
GATEWAY_PACE = 50
"""Requests a second one WebSocket connection may send (SPADES_WS_MESSAGES_PER_SECOND's
default): the most any client reaches the table with."""
SUBSCRIBE_PACE = 1.0
"""Subscribes a second one connection may send (SPADES_WS_SUBSCRIBES_PER_MINUTE's default)."""
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
    subject = subjects.table_command(game_id)
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


async def spam(
    nc: Any, subjects: Subjects, game_id: str, player: str, until: float, rate: float
) -> int:
    """Ask for a practice seat's view and hints until ``until``, ``rate`` requests a second
    (0: as fast as the table answers); return how many."""
    asked = 0
    subject = subjects.table_command(game_id)
    started = time.monotonic()
    while time.monotonic() < until:
        for body in (
            wire.Catchup(game_id=game_id, player_id=player, hints=True),
            wire.GetView(game_id=game_id, player_id=player),
        ):
            await request(nc, subject, body)
            asked += 1
            if rate:
                await asyncio.sleep(max(0.0, started + asked / rate - time.monotonic()))
    return asked


async def spam_socket(ws: ClientConnection, game_id: str, until: float, rate: float) -> int:
    """Send ``view`` on one watching socket at ``rate`` a second, and subscribe again (with
    hints) at the gateway's subscribe pace, until ``until``; return how many were sent."""
    sent = subscribes = 0
    started = time.monotonic()
    while time.monotonic() < until:
        if subscribes < (time.monotonic() - started) * SUBSCRIBE_PACE:
            message = {"type": "subscribe", "game_id": game_id, "hints": True}
            subscribes += 1
        else:
            message = {"type": "view", "game_id": game_id}
        await ws.send(_encoder.encode(message).decode())
        sent += 1
        await asyncio.sleep(max(0.0, started + sent / rate - time.monotonic()))
    return sent


async def read_socket(ws: ClientConnection, refused: list[str]) -> None:
    """Read what the gateway sends a spamming socket, keeping the codes of its errors."""
    async for text in ws:
        body = msgspec.json.decode(text)
        if isinstance(body, dict) and body.get("type") == "error":
            refused.append(str(body.get("code")))


async def spam_sockets(
    ws_url: str, seats: list[tuple[str, str]], seconds: float, rate: float
) -> int:
    """Watch every practice seat through the gateway, then spam on every socket for
    ``seconds``; return how many messages were sent (raise if the gateway refused any)."""
    sockets: list[ClientConnection] = []
    refused: list[str] = []
    readers: list[asyncio.Task[None]] = []
    for game_id, player in seats:
        ws = await connect_seat(ws_url, player)
        await ws.send(_encoder.encode({"type": "subscribe", "game_id": game_id}).decode())
        sockets.append(ws)
        readers.append(asyncio.create_task(read_socket(ws, refused)))
    print("ready", flush=True)  # the measured client starts its window now
    until = time.monotonic() + seconds
    try:
        sent = await asyncio.gather(
            *(spam_socket(ws, g, until, rate) for ws, (g, _) in zip(sockets, seats, strict=True))
        )
    finally:
        for ws in sockets:
            await ws.close()
        for reader in readers:
            with contextlib.suppress(Exception):
                await reader
    if refused:
        raise SystemExit(f"the gateway refused {len(refused)} messages: {sorted(set(refused))}")
    return sum(sent)


def spam_process(
    nats_url: str,
    prefix: str,
    seats: list[tuple[str, str]],
    seconds: float,
    rate: float,
    ws_url: str = "",
) -> None:
    """The spammers' own process: every seat spams for ``seconds`` (through the gateway's
    WebSockets at ``ws_url`` if given, else straight to the table); prints the total sent."""

    async def run() -> int:
        if ws_url:
            return await spam_sockets(ws_url, seats, seconds, rate)
        nc = await connect(nats_url, name="bench-tier-spam")
        try:
            print("ready", flush=True)  # the measured client starts its window now
            until = time.monotonic() + seconds
            asked = await asyncio.gather(
                *(spam(nc, Subjects(prefix), g, p, until, rate) for g, p in seats)
            )
            return sum(asked)
        finally:
            await close_nats(nc)

    sent = asyncio.run(run())
    print(sent, time.process_time(), flush=True)


async def spam_elsewhere(
    nats_url: str,
    prefix: str,
    seats: list[tuple[str, str]],
    seconds: float,
    rate: float,
    ws_url: str = "",
) -> asyncio.Task[tuple[int, float]]:
    """Start `spam_process` as a separate Python process and return once it spams: a task
    that returns how many requests it made and the CPU seconds it used."""
    code = (
        "import sys, json; from benchmarks.tier import spam_process;"
        " a = json.loads(sys.argv[1]); spam_process(*a)"
    )
    args = json.dumps([nats_url, prefix, seats, seconds, rate, ws_url])
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        args,
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        preexec_fn=lambda: os.nice(SPAM_NICE),
    )
    assert proc.stdout is not None
    ready = await proc.stdout.readline()
    assert ready == b"ready\n", f"the spam process did not start: {ready!r}"

    async def total() -> tuple[int, float]:
        out, _ = await proc.communicate()
        assert proc.returncode == 0, f"the spam process exited {proc.returncode}"
        sent, cpu = out.decode().split()[-2:]
        return int(sent), float(cpu)

    return asyncio.create_task(total())


async def opened(nc: Any, subject: str, body: msgspec.Struct, within: float = 120.0) -> bytes:
    """Send an opening once the table answers (it may still be starting: no responders yet,
    or its partitions not yet claimed); the same command id, so a retry opens nothing twice."""
    deadline = time.monotonic() + within
    while True:
        try:
            answer = await request(nc, subject, body, 30)
        except (NoRespondersError, NatsTimeoutError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
            continue
        if b'"unavailable"' in answer and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            continue
        return answer


async def open_casual(nc: Any, subjects: Subjects, players: tuple[str, ...]) -> str:
    body = wire.OpenCasual(players=players, command_id=uuid.uuid4(), rules={"target": 1000})
    reply = _reply.decode(await opened(nc, subjects.table_open(), body))
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
        "SPADES_JWT_SECRET": SECRET,
        "SPADES_HTTP_HOST": "127.0.0.1",
        "SPADES_WS_PER_ADDRESS": "1000",  # the twelve sockets come from one address
    }
    procs = {
        name: await asyncio.create_subprocess_exec(
            sys.executable, "-m", "services.tools.cli", "serve", name, cwd=REPO, env=env
        )
        for name in ("table", "bots")
    }
    procs["gateway"], port = await start_gateway(env)
    ws_url = f"ws://127.0.0.1:{port}/ws"
    nc = await connect(urls["SPADES_NATS_URL"], name="bench-tier")
    figures: dict[str, float] = {}
    try:
        await ensure_streams(nc.jetstream(), subjects)
        practice = []
        for n in range(12):  # four accounts, three tables each
            body = wire.OpenPractice(
                player_id=f"spam{n % 4}", command_id=uuid.uuid4(), bots="strong", untimed=True
            )
            reply = _reply.decode(await opened(nc, subjects.table_open(), body))
            assert reply.ok, reply
            practice.append((reply.game_id, f"spam{n % 4}"))
        await asyncio.sleep(3.0)  # the bots before each person move (through the tier)
        table_pid, gateway_pid = procs["table"].pid, procs["gateway"].pid
        rates = {
            "quiet": (None, ""),
            "sockets": (float(GATEWAY_PACE), ws_url),
            "spam": (float(GATEWAY_PACE), ""),
            "flood": (0.0, ""),
        }
        for phase, (rate, through) in rates.items():
            players = tuple(f"{phase}{seat}" for seat in range(4))
            game_id = await open_casual(nc, subjects, players)
            spammer = (
                None
                if rate is None
                else await spam_elsewhere(
                    urls["SPADES_NATS_URL"], prefix, practice, WINDOW, rate, through
                )
            )
            cpu_before = cpu_seconds(table_pid)
            gateway_before = cpu_seconds(gateway_pid)
            until = time.monotonic() + WINDOW
            latencies = await play_other(nc, subjects, game_id, players, until)
            asked, spam_cpu = (0, 0.0) if spammer is None else await spammer
            cpu = cpu_seconds(table_pid) - cpu_before
            gateway_cpu = cpu_seconds(gateway_pid) - gateway_before
            figures[f"other_game_{phase}.command_ms_p50"] = 1000 * pct(latencies, 0.50)
            figures[f"other_game_{phase}.command_ms_p99"] = 1000 * pct(latencies, 0.99)
            figures[f"other_game_{phase}.commands"] = len(latencies)
            figures[f"other_game_{phase}.table_cpu_us_per_command"] = (
                1e6 * cpu / max(1, len(latencies))
            )
            figures[f"{phase}.table_cpu_share"] = cpu / WINDOW
            figures[f"{phase}.gateway_cpu_share"] = gateway_cpu / WINDOW
            if rate is not None:
                figures[f"{phase}.requests"] = asked
                figures[f"{phase}.spammers_cpu_share"] = spam_cpu / WINDOW
        quiet = figures["other_game_quiet.command_ms_p99"]
        for phase in ("sockets", "spam", "flood"):
            figures[f"other_game_p99_ratio_{phase}_to_quiet"] = (
                figures[f"other_game_{phase}.command_ms_p99"] / quiet if quiet else 0.0
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
    for phase in ("quiet", "sockets", "spam", "flood"):
        print(
            f"another game, {phase:7s}:"
            f" command p50 {served[f'other_game_{phase}.command_ms_p50']:.1f} ms"
            f" p99 {served[f'other_game_{phase}.command_ms_p99']:.1f} ms"
            f" ({served[f'other_game_{phase}.commands']:.0f} commands);"
            f" table {served[f'{phase}.table_cpu_share']:.0%} of a core,"
            f" gateway {served[f'{phase}.gateway_cpu_share']:.0%}"
            + (
                f", the spammers' own process {served[f'{phase}.spammers_cpu_share']:.0%}"
                if phase != "quiet"
                else ""
            )
        )
    print(
        f"sockets: {served['sockets.requests']:.0f} views and subscribes with hints"
        f" (the pace: {12 * GATEWAY_PACE * WINDOW:.0f}) from 12"
        f" WebSockets of 4 accounts at strong practice tables, {GATEWAY_PACE} a second each (the"
        f" gateway's per-connection pace); p99 ratio sockets/quiet"
        f" {served['other_game_p99_ratio_sockets_to_quiet']:.2f} (goal <= 1.5)"
    )
    print(
        f"spam (the same pace straight to the table): {served['spam.requests']:.0f} requests;"
        f" p99 ratio spam/quiet {served['other_game_p99_ratio_spam_to_quiet']:.2f}"
    )
    print(
        f"flood (straight over NATS, inside the cluster only): {served['flood.requests']:.0f}"
        f" requests, unpaced; p99 ratio flood/quiet"
        f" {served['other_game_p99_ratio_flood_to_quiet']:.2f} (a reference, no goal)"
    )
    figures = {f"tier.{k}": v for k, v in {**local, **served}.items()}
    print(f"wrote {artifact.record('tier', figures, meta)}")


if __name__ == "__main__":
    main()
