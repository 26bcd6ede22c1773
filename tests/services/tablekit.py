"""A player's side of the table service for tests: requests over real NATS."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid

import msgspec
from nats.aio.client import Client as NATS

from events.contracts import game as wire
from events.contracts.audience import FRAMES, Frame, frame_decoder
from events.contracts.game import stream_of
from events.store import InMemoryEventStore
from events.subjects import Subjects
from services.table import commit
from services.table.decided import Decided
from services.table.tables import Table
from tests.moves import choose

_reply = msgspec.json.Decoder(wire.TableReply)


class TableClient:
    """Sends table requests as one player would through the gateway."""

    def __init__(self, nc: NATS, subjects: Subjects, player_id: str) -> None:
        self.nc = nc
        self.subjects = subjects
        self.player_id = player_id
        self.unavailable = 0  # answers `unavailable` that were sent again
        # how long one send waits for its answer before it is sent again; a fault test may
        # resend as soon as the gateway does (`services.gateway.state.OWNER_TIMEOUT`)
        self.request_timeout = 10.0

    async def request(self, subject: str, body: bytes, within: float = 60.0) -> wire.TableReply:
        """Send until a replica answers (one may be taking a slot over).

        Nobody listening fails at once and is retried, and so is an ``unavailable`` answer (the
        game's slot is changing hands, or the database is away); a request that reached a
        replica is given 10 s to be answered before it is sent again, so a slow answer on a
        loaded machine is not turned into a retry (the same command id then answers ``retry``).
        """
        deadline = asyncio.get_running_loop().time() + within
        while True:
            try:
                msg = await self.nc.request(subject, body, timeout=self.request_timeout)
                reply = _reply.decode(msg.data)
            except Exception:
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.1)
                continue
            if reply.code != "unavailable" or asyncio.get_running_loop().time() > deadline:
                return reply
            self.unavailable += 1  # the slot is changing hands: the contract is to resend
            await asyncio.sleep(0.1)

    async def open_practice(
        self, bots: str = "baseline", *, untimed: bool = False, **rules: str | int | bool
    ) -> wire.TableReply:
        """Open a practice table with bots of level ``bots``; return the reply (game_id inside)."""
        body = msgspec.json.encode(
            wire.OpenPractice(
                player_id=self.player_id,
                command_id=uuid.uuid4(),
                rules=rules,
                bots=bots,
                untimed=untimed,
            )
        )
        return await self.request(self.subjects.table_open(), body)

    async def open_casual(
        self, seats: tuple[str, ...], **rules: str | int | bool
    ) -> wire.TableReply:
        """Open an unrated table for ``seats`` (player ids in seat order); return the reply."""
        body = msgspec.json.encode(
            wire.OpenCasual(players=seats, command_id=uuid.uuid4(), rules=rules)
        )
        return await self.request(self.subjects.table_open(), body)

    async def wait_for_game(self, game_id: str, within: float = 60.0) -> None:
        """Wait until the table has opened ``game_id`` (a match reaches it through the relay)."""
        body = msgspec.json.encode(wire.GetView(game_id=game_id, player_id=self.player_id))
        subject = self.subjects.table_command(game_id)
        deadline = asyncio.get_running_loop().time() + within
        while (await self.request(subject, body)).code == "unknown_game":
            assert asyncio.get_running_loop().time() < deadline, f"game {game_id} never opened"
            await asyncio.sleep(0.1)

    async def view(self, game_id: str) -> wire.SeatViewWire:
        """Return this player's view of the game."""
        reply = await self.request(
            self.subjects.table_command(game_id),
            msgspec.json.encode(wire.GetView(game_id=game_id, player_id=self.player_id)),
        )
        assert reply.ok, reply
        assert reply.view is not None
        return reply.view

    async def send(
        self, game_id: str, command: wire.AnySeatCommand, command_id: uuid.UUID | None = None
    ) -> wire.TableReply:
        """Send one seat command and return the table's answer."""
        request = wire.SubmitCommand(
            game_id=game_id,
            player_id=self.player_id,
            command_id=command_id or uuid.uuid4(),
            command=command,
        )
        return await self.request(
            self.subjects.table_command(game_id), msgspec.json.encode(request)
        )

    async def play_turn(self, game_id: str) -> wire.SeatViewWire | None:
        """Play a move (`tests.moves`) if it is this player's turn; return the view acted on."""
        view = await self.view(game_id)
        if view.phase == "over" or not my_turn(view):
            return None
        reply = await self.send(game_id, move(view))
        assert reply.ok or reply.code in ("out_of_turn", "conflict"), reply
        return view


def my_turn(view: wire.SeatViewWire) -> bool:
    """Return whether the view's seat is on turn with something to send."""
    return view.phase != "over" and bool(view.legal)


def move(view: wire.SeatViewWire) -> wire.AnySeatCommand:
    """Return the seat's move: the suggestion at a practice table, else `tests.moves`' pick."""
    if view.suggestion is not None:
        return view.suggestion
    picked: wire.AnySeatCommand = choose(view.legal, view.hand)
    return picked


POLL_SECONDS = 0.25
"""How long a seat off turn waits for the game's next frame before it asks for its view again
(the frame normally wakes it first: the poll only bounds a frame it missed)."""


async def play_together(clients: list[TableClient], game_id: str) -> None:
    """Every client plays its bot suggestion whenever it is on turn, until the game ends.

    A seat off turn asks for its view again when the game's next frame is published (the
    table's audience subject), not every 10 ms: with bots to wait for, polling cost more CPU
    (table, NATS and test, ~100 views a second a seat) than the game. The wake-up is armed
    before each view is asked for, so a frame published meanwhile is never missed.
    """
    wakes = [asyncio.Event() for _ in clients]

    async def heard(_: object) -> None:
        for wake in wakes:
            wake.set()

    nc, subjects = clients[0].nc, clients[0].subjects
    sub = await nc.subscribe(subjects.game_audiences(game_id), cb=heard)

    async def seat(client: TableClient, wake: asyncio.Event) -> None:
        while True:
            wake.clear()
            view = await client.view(game_id)
            if view.phase == "over":
                return
            if not my_turn(view):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), POLL_SECONDS)
                continue
            await client.send(game_id, move(view))

    try:
        await asyncio.gather(*(seat(c, w) for c, w in zip(clients, wakes, strict=True)))
    finally:
        await sub.unsubscribe()


async def append_as_the_table(
    store: InMemoryEventStore, table: Table, events: list[wire.GameEvent], actor: str = "x"
) -> Frame:
    """Append ``events`` to a table without a service, by the service's own two halves of a
    commit (`services.table.commit`), and return the frame it publishes, decoded as the gateway
    gets it. A `Decided` brings the states its deciding computed; other events are applied."""
    states = events.after if isinstance(events, Decided) else table.states_after(events)
    now = time.time()
    new = commit.records(table, events, states, now, id_seed=str(uuid.uuid4()), actor=actor)
    stored = await store.append(stream_of(table.game_id), table.version, new)
    frame = commit.fold(table, stored, events, states, now)
    table.recent.append(frame)
    return frame_decoder.decode(FRAMES.encode(frame))
