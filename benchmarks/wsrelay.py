"""Bare WebSocket relay bench: what the event loop and uvicorn's WebSocket code cost alone.

The gateway's own work (folding, redaction, NATS) moves with the forwarder rewrite; the server
underneath stays. This bench isolates it: a litestar app served by uvicorn in its own process,
rooms of four sockets, every message a client sends relayed to the four members of its room
(a card play's fan-out, with a frame of about the gateway's size). One room sends one message
at a time (the next after all four got the last), SPADES_BENCH_RELAY_ROOMS (100) rooms at
once, for SPADES_BENCH_SECONDS (15) per variant. Per variant of `VARIANTS` (event loop ×
uvicorn WebSocket implementation, the HTTP parser beside): relayed messages per second and the
server's CPU µs per relayed message (utime + stime from /proc: a cost that holds still when
other work shares the machine, unlike the rate). Variants run interleaved for
SPADES_BENCH_RELAY_ROUNDS (2) rounds; the median of each is kept.

Figures: ``ws_relay.<variant>.{msgs_per_s,server_cpu_us_per_msg}`` and each variant's ratio
to the first (``ratio_to_<first>``) in `artifacts/bench.json`.

Run: `uv run --frozen --group bench python -m benchmarks wsrelay`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from collections import defaultdict
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect

from benchmarks import artifact
from benchmarks.e2e import REPO
from benchmarks.gateway import VARIANTS, CpuWindow, load1

WINDOW = float(os.environ.get("SPADES_BENCH_RELAY_SECONDS", "10"))
ROOMS = int(os.environ.get("SPADES_BENCH_RELAY_ROOMS", "100"))
ROUNDS = int(os.environ.get("SPADES_BENCH_RELAY_ROUNDS", "2"))
RELAY_VARIANTS = tuple(
    name
    for name in os.environ.get(
        "SPADES_BENCH_RELAY_VARIANTS",
        "asyncio_websockets,uvloop_websockets,asyncio_sansio,uvloop_sansio,uvloop_wsproto",
    ).split(",")
    if name.strip()
)
# about the size of a seat's CardPlayed event message from the gateway
FRAME = msgspec.json.encode(
    {
        "type": "event",
        "game_id": "b56437dc-4b90-5f6b-9fc7-fde34aa67d4a",
        "seq": 123,
        "event": {"type": "CardPlayed", "seat": 2, "card": "QH", "trick": 7},
        "pad": "x" * 80,
    }
).decode()


# -- the server (its own process) --------------------------------------------------------------


def serve(event_loop: str, ws: str, http: str) -> None:
    """Serve the relay on a free port (printed as its first line) until killed."""
    import uvicorn
    from litestar import Litestar, WebSocket, websocket
    from litestar.exceptions import WebSocketDisconnect

    from services.runtime.loop import loop_factory

    rooms: dict[int, list[WebSocket[Any, Any, Any]]] = defaultdict(list)

    @websocket("/ws/{room:int}")
    async def relay(socket: WebSocket[Any, Any, Any], room: int) -> None:
        await socket.accept()
        members = rooms[room]
        members.append(socket)
        try:
            while True:
                text = await socket.receive_text()
                for peer in members:
                    await peer.send_text(text)
        except WebSocketDisconnect:
            pass  # the bench closed its clients
        finally:
            members.remove(socket)

    app = Litestar([relay], logging_config=None)

    async def main() -> None:
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            ws=ws,
            http=http,
            log_config=None,
            access_log=False,
            ws_per_message_deflate=False,
            lifespan="off",
        )
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        while not server.started:  # noqa: ASYNC110 - uvicorn offers no event to wait on
            await asyncio.sleep(0.01)
        print(server.servers[0].sockets[0].getsockname()[1], flush=True)
        await task

    _, factory = loop_factory(event_loop)
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main())


# -- the clients (this process) ----------------------------------------------------------------


async def measure(name: str) -> dict[str, float]:
    """Start the relay of variant ``name``, drive it for the window; return its figures."""
    event_loop, ws, http = VARIANTS[name]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "benchmarks.wsrelay",
        "serve",
        event_loop,
        ws,
        http,
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        port = int(await asyncio.wait_for(proc.stdout.readline(), 60))
        url = f"ws://127.0.0.1:{port}/ws"
        sockets: list[list[ClientConnection]] = []
        for room in range(ROOMS):
            members = []
            for _ in range(4):
                members.append(
                    await ws_connect(
                        f"{url}/{room}", ping_interval=None, compression=None, open_timeout=120
                    )
                )
            sockets.append(members)
        sent = 0
        stop = asyncio.Event()

        async def room_loop(members: list[ClientConnection]) -> None:
            nonlocal sent
            turn = 0
            while not stop.is_set():
                await members[turn % 4].send(FRAME)
                for member in members:
                    await member.recv()
                sent += 1
                turn += 1

        tasks = [asyncio.create_task(room_loop(m)) for m in sockets]
        await asyncio.sleep(1.0)  # every room under way
        load = load1()
        counted = sent
        window = CpuWindow({"server": proc.pid, "bench": os.getpid()})
        await asyncio.sleep(WINDOW)
        elapsed, used, busy = window.close()
        counted = sent - counted
        stop.set()
        await asyncio.gather(*tasks)
        for members in sockets:
            for member in members:
                await member.close()
    finally:
        proc.terminate()
        await proc.wait()
    return {
        "msgs_per_s": counted / elapsed,
        "relayed_frames_per_s": 4 * counted / elapsed,
        "server_cpu_us_per_msg": 1e6 * used["server"] / max(counted, 1),
        "bench_cpu_us_per_msg": 1e6 * used["bench"] / max(counted, 1),
        "machine_busy_pct": 100 * busy,
        "load_average_start": load,
    }


async def bench() -> None:
    """Run every variant ROUNDS times, interleaved; print and record the medians."""
    meta = artifact.run_metadata()
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in RELAY_VARIANTS}
    print(f"{ROOMS} rooms of four, {WINDOW:.0f} s per variant, {ROUNDS} rounds", flush=True)
    for round_ in range(ROUNDS):
        for name in RELAY_VARIANTS:
            f = await measure(name)
            runs[name].append(f)
            print(
                f"  {name:20s} round {round_ + 1}: {f['msgs_per_s']:7.0f} msgs/s relayed to four,"
                f" server {f['server_cpu_us_per_msg']:5.0f} µs CPU per msg;"
                f" load {f['load_average_start']:.2f}",
                flush=True,
            )
    figures: dict[str, Any] = {"rooms": ROOMS, "rounds": ROUNDS}
    for name, levels in runs.items():
        figures[name] = {
            "settings": dict(zip(("event_loop", "ws", "http"), VARIANTS[name], strict=True)),
            **{
                key: statistics.median(f[key] for f in levels)
                for key in ("msgs_per_s", "server_cpu_us_per_msg", "bench_cpu_us_per_msg")
            },
            "load_average_start": [f["load_average_start"] for f in levels],
        }
    base = RELAY_VARIANTS[0]
    for name in RELAY_VARIANTS[1:]:
        ratio = {
            "msgs_per_s": figures[name]["msgs_per_s"] / figures[base]["msgs_per_s"],
            "server_cpu_us_per_msg": figures[name]["server_cpu_us_per_msg"]
            / figures[base]["server_cpu_us_per_msg"],
        }
        figures[name][f"ratio_to_{base}"] = ratio
        print(
            f"  {name} / {base}: msgs/s x{ratio['msgs_per_s']:.2f},"
            f" server CPU per msg x{ratio['server_cpu_us_per_msg']:.2f}"
        )
    print(f"wrote {artifact.record('wsrelay', {'ws_relay': figures}, meta)}")


def main() -> None:
    """Run the relay bench (called by `python -m benchmarks`)."""
    from services.runtime.loop import run

    run(bench())


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(*sys.argv[2:5])
    else:
        main()
