"""`spades dev`: the whole platform on this machine, on embedded PostgreSQL and NATS.

Starts (or reuses) the embedded servers, applies the migrations, runs relay, table,
matchmaking, rating and the gateway as one process each (logs under .spades/logs/), waits
until every service is ready, plays one practice game through the real services so you see
it work, and keeps everything running until Ctrl-C. `--no-demo` skips the game.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import msgspec

from events import game as wire
from events.bus import close_nats, connect
from events.subjects import Subjects
from services.config import Settings
from services.infra import run as infra_run
from services.infra import spades_home

SERVICES = ("relay", "table", "matchmaking", "rating", "gateway")
FIRST_OPS_PORT = int(os.environ.get("SPADES_DEV_OPS_PORT", "9101"))
"""The services' ops ports are this and the next four, in the order of SERVICES."""


def _start_services(env: dict[str, str], logs: Path) -> dict[str, subprocess.Popen[bytes]]:
    logs.mkdir(parents=True, exist_ok=True)
    procs = {}
    for offset, name in enumerate(SERVICES):
        log = open(logs / f"{name}.log", "ab")  # noqa: SIM115 - the child owns it
        procs[name] = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "serve", name],
            env={
                **env,
                "SPADES_OPS_PORT": str(FIRST_OPS_PORT + offset),
                "SPADES_LOG_FORMAT": "json",
            },
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return procs


def ready(port: int) -> bool:
    """Return whether the service whose ops server is on ``port`` answers /readyz with 200."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _wait_ready(procs: dict[str, subprocess.Popen[bytes]], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    pending = dict(enumerate(SERVICES))
    while pending:
        for offset, name in list(pending.items()):
            if procs[name].poll() is not None:
                raise SystemExit(f"{name} exited; see .spades/logs/{name}.log")
            if ready(FIRST_OPS_PORT + offset):
                print(f"  {name:12s} ready   http://127.0.0.1:{FIRST_OPS_PORT + offset}/metrics")
                del pending[offset]
        if time.monotonic() > deadline:
            raise SystemExit(f"not ready after {timeout:.0f}s: {', '.join(pending.values())}")
        time.sleep(0.2)


async def _demo(settings: Settings) -> None:
    """Open a practice table and play the human seat with the bot's suggestions."""
    nc = await connect(settings.nats_url, name="spades-dev")
    subjects = Subjects(settings.nats_prefix)
    decode = msgspec.json.Decoder(wire.TableReply).decode
    try:
        body = wire.OpenPractice(player_id="you", command_id=uuid.uuid4())
        reply = decode(
            (await nc.request(subjects.table_open(), msgspec.json.encode(body), 10)).data
        )
        game_id = reply.game_id
        subject = subjects.table_command(game_id, settings.table_partitions)
        print(f"\npractice game {game_id}: you (N) and three bots, played by the bot for you")
        hand = 0
        while True:
            view_req = msgspec.json.encode(wire.GetView(game_id=game_id, player_id="you"))
            view = decode((await nc.request(subject, view_req, 10)).data).view
            assert view is not None
            if view.hand_number != hand and view.scores:
                hand = view.hand_number
                print(f"  hand {hand}: scores N+S {view.scores[0]}  E+W {view.scores[1]}")
            if view.phase == "over":
                print(f"game over ({view.reason}): N+S {view.scores[0]}, E+W {view.scores[1]}")
                print(f"replay it: uv run spades replay {game_id}")
                print(f"check its deals: uv run spades verify {game_id}")
                return
            if view.hand_number == 0 and 0 in view.contributors and not view.contributions[0]:
                # as the browser does: add our randomness to the committed deals (FAIRNESS.md)
                print(f"  deals committed: SHA-256 of the server seed is {view.commitment}")
                command = wire.SubmitCommand(
                    game_id=game_id,
                    player_id="you",
                    command_id=uuid.uuid4(),
                    command=wire.Contribute(value=secrets.token_hex(32)),
                )
                await nc.request(subject, msgspec.json.encode(command), 10)
                continue
            if view.suggestion is None:
                await asyncio.sleep(0.01)
                continue
            command = wire.SubmitCommand(
                game_id=game_id, player_id="you", command_id=uuid.uuid4(), command=view.suggestion
            )
            await nc.request(subject, msgspec.json.encode(command), 10)
    finally:
        await close_nats(nc)


def run(args: argparse.Namespace) -> int:
    """Run the platform until Ctrl-C; return the exit code."""
    print("starting embedded PostgreSQL and NATS ...")
    infra_run(argparse.Namespace(action="up"))
    settings = Settings.from_env()
    env = {
        "SPADES_GATEWAY_DEV": "1",  # a throwaway signing key unless SPADES_JWT_SECRET is set
        **os.environ,
        "SPADES_DATABASE_URL": settings.database_url,
        "SPADES_NATS_URL": settings.nats_url,
    }
    subprocess.run([sys.executable, "-m", "services.cli", "migrate"], env=env, check=True)
    # SIGTERM (a supervisor, `timeout`) must stop the children too, like Ctrl-C does
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    procs = _start_services(env, spades_home() / "logs")
    try:
        _wait_ready(procs)
        url = f"http://127.0.0.1:{settings.http_port}/"
        print(f"\nplay in the browser: {url}  (sign up, then 'Shuffle and play')")
        print(
            f"API: {url}api (OpenAPI at {url}schema), WebSocket: ws://127.0.0.1:{settings.http_port}/ws"
        )
        if not getattr(args, "no_demo", False):
            asyncio.run(_demo(settings))
        print(f"\nthe platform is running at {url}; Ctrl-C stops it")
        print("(`spades infra down` then stops PostgreSQL and NATS)")
        with contextlib.suppress(KeyboardInterrupt):
            while all(p.poll() is None for p in procs.values()):
                time.sleep(0.5)
    finally:
        for proc in procs.values():
            proc.send_signal(signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0
