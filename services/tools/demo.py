"""The demo game `spades dev` plays once the platform is up: a practice table opened through
the real services, the human seat played with the bot tier's suggestions (as the browser's
hint button asks for them), each hand's scores printed, and how to replay and verify it.
"""

from __future__ import annotations

import asyncio
import secrets
import uuid
from pathlib import Path

import msgspec
from nats.aio.client import Client as NATS

from events.bus import close_nats, connect
from events.contracts import game as wire
from events.contracts.audience import catchup_decoder
from events.settings import spades_home
from events.subjects import Subjects
from services.runtime.config import Settings

__all__ = ["DEMO_PLAYER", "play_demo", "spades_command"]


def spades_command(words: str) -> str:
    """Return a `spades` command line as it works in a fresh shell in this folder: with
    `SPADES_HOME=...` in front when this stack's home is not the default ./.spades."""
    home = spades_home()
    prefix = "" if home == Path(".spades").resolve() else f"SPADES_HOME={home} "
    return f"{prefix}.venv/bin/spades {words}"


DEMO_PLAYER = "dev:you"
"""Who plays the demo game: no account can be named so (a name has no ":"), so no account
inherits its games, as an account named "you" did."""


async def play_demo(settings: Settings) -> None:
    """Open a practice table and play the human seat with the bot's suggestions."""
    nc = await connect(settings.nats_url, name="spades-dev")
    subjects = Subjects(settings.nats_prefix)
    decode = msgspec.json.Decoder(wire.TableReply).decode
    try:
        body = wire.OpenPractice(player_id=DEMO_PLAYER, command_id=uuid.uuid4())
        reply = decode(
            (await nc.request(subjects.table_open(), msgspec.json.encode(body), 10)).data
        )
        game_id = reply.game_id
        subject = subjects.table_command(game_id)
        print(f"\npractice game {game_id}: you (N) and three bots, played by the bot for you")
        hand = 0
        while True:
            view_req = msgspec.json.encode(wire.GetView(game_id=game_id, player_id=DEMO_PLAYER))
            view = decode((await nc.request(subject, view_req, 10)).data).view
            assert view is not None
            if view.hand_number != hand and view.scores:
                hand = view.hand_number
                print(f"  hand {hand}: scores N+S {view.scores[0]}  E+W {view.scores[1]}")
            if view.phase == "over":
                print(f"game over ({view.reason}): N+S {view.scores[0]}, E+W {view.scores[1]}")
                print(f"replay it: {spades_command(f'replay {game_id}')}")
                print(f"check its deals: {spades_command(f'verify {game_id}')}")
                return
            if view.hand_number == 0 and 0 in view.contributors and not view.contributions[0]:
                # as the browser does: add our randomness to the committed deals (FAIRNESS.md)
                print(f"  deals committed: SHA-256 of the server seed is {view.commitment}")
                command = wire.SubmitCommand(
                    game_id=game_id,
                    player_id=DEMO_PLAYER,
                    command_id=uuid.uuid4(),
                    command=wire.Contribute(value=secrets.token_hex(32)),
                )
                await nc.request(subject, msgspec.json.encode(command), 10)
                continue
            if not view.legal:
                await asyncio.sleep(0.01)
                continue
            command = wire.SubmitCommand(
                game_id=game_id,
                player_id=DEMO_PLAYER,
                command_id=uuid.uuid4(),
                command=await _hint(nc, subject, game_id, view),
            )
            await nc.request(subject, msgspec.json.encode(command), 10)
    finally:
        await close_nats(nc)


async def _hint(
    nc: NATS, subject: str, game_id: str, view: wire.SeatViewWire
) -> wire.AnySeatCommand:
    """Return the bot tier's suggestion for the demo seat's turn, as the browser's hint
    button asks for it (the first legal move when the tier gave none in time)."""
    ask = wire.Catchup(game_id=game_id, player_id=DEMO_PLAYER, after=view.version, hints=True)
    answer = catchup_decoder.decode((await nc.request(subject, msgspec.json.encode(ask), 10)).data)
    turn = msgspec.json.decode(answer.turn) if answer.ok and answer.turn else {}
    suggestion = turn.get("suggestion") if isinstance(turn, dict) else None
    if suggestion is None:
        return view.legal[0]
    command: wire.AnySeatCommand = msgspec.convert(suggestion, wire.AnySeatCommand)
    return command
