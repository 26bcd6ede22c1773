"""Scale-out (issue #12): two gateways and two table replicas, one game spread over both
gateways, and one gateway killed (SIGKILL) in the middle of a hand.

Every service is a real process (`spades serve gateway|table|relay`) on the test's own
database and NATS prefix. Seats 0 and 1 and an account's spectator connect to gateway A;
seats 2 and 3 and an anonymous spectator to gateway B. The seats play whatever `your_turn`
offers (`legal`), the way a careful client does: a `your_turn` older than what it already
knows is ignored, and a command whose answer was lost is sent again with the same
`command_id`. When a seat on A has just sent a card into a trick already led, A is killed;
its three clients reconnect to B and resume with `last_seq` as PROTOCOL.md says (`auth`, then
`subscribe {game_id, last_seq}`, then the unanswered command again).

Only the client-facing protocol (services/gateway/PROTOCOL.md) is used: the gateway's
serving path may be rewritten underneath and this test still says whether it keeps the
contract: every client gets every event once, in order, across the reconnect; each seat's
hand is the true one and every card it is asked to play is in it; spectators get no hand
and no card before its trick is complete; nobody learns a hidden card; no legal command is
refused; the game finishes; both table replicas stay up, each owning partitions.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from nats.aio.client import Client as NATS
from websockets.exceptions import ConnectionClosed

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import PostgresEventStore
from events.subjects import SLOTS, Subjects, slot_of
from tests.gateway.conftest import GatewayProcess, register_and_login, start_gateway
from tests.gateway.hidden import leaks, states
from tests.gateway.test_ws_play import open_casual
from tests.gateway.wsclient import WsClient
from tests.infra import Processes, eventually
from tests.moves import choose_json
from tests.services.opskit import ops_port, sample, scrape

# A whole game through five service processes on a shared two-core machine.
pytestmark = pytest.mark.timeout(600)

TARGET = 100  # the lowest target the rules allow: a few hands
SEATS = ("sofi", "sven", "sara", "saul")  # seats 0..3; 0 and 1 start on gateway A
WATCHER = "wanda"  # an account without a seat, watching on gateway A
SERVICE_ENV = {
    "SPADES_OPS_PORT": "0",
    # people act in time: no turn times out while the killed gateway's seats come back
    "SPADES_TURN_SECONDS": "600",
}


@dataclass(eq=False)
class Person:
    """One client of the game, seat or spectator (seat -1), across its connections.

    ``client.received`` keeps every message of every connection, in arrival order.
    """

    seat: int
    client: WsClient
    game_id: str
    fallback: str
    """The WebSocket URL to resume on when the current connection is lost."""
    anonymous: bool = False
    urls: list[str] = field(default_factory=list)
    """The URL of each connection, in order."""
    hand: list[str] | None = None
    pending: tuple[int, str, dict[str, Any]] | None = None
    """The command sent and not yet answered: (seq of its your_turn, command_id, command)."""
    acked_to: int = 0
    """The highest seq an ack said its command's events end at."""
    asked: list[tuple[int, int, list[str], list[str]]] = field(default_factory=list)
    """Each card turn: (connection number, seq, the legal cards, the hand held then)."""
    in_trick: int = 0
    stale_turns: int = 0
    reconnect_seq: int | None = None
    """The seq this client resumed from after losing its gateway."""
    resending: str | None = None
    """The command_id left unanswered when the connection was lost."""
    resent: list[str] = field(default_factory=list)
    """The ack codes of commands sent again after a reconnect."""
    sent: set[str] = field(default_factory=set)
    """Every command_id sent (one per turn: a resend reuses it)."""
    clock_seq: int = 0
    """The highest seq of a ``clock`` received (sent live, to spectators too)."""
    on_sent: Callable[[Person, int], None] | None = None
    """Called after each card sent: (self, seq of the turn); the test's fault trigger."""
    before_last_card: Callable[[int], Awaitable[None]] | None = None
    """Awaited before the fourth card of a trick is sent: (seq of the turn)."""

    @property
    def seq(self) -> int:
        """Return the highest seq of an event or view received (what resuming starts from)."""
        return self.client.last_seq(self.game_id)

    async def connect(self) -> None:
        self.urls.append(self.client.url)
        welcome = await self.client.connect(auth=not self.anonymous)
        assert self.anonymous or welcome is not None

    async def run(self) -> None:
        """Follow (and play) the game to its end, resuming on ``fallback`` after a drop."""
        subscribe: dict[str, Any] = {"type": "subscribe", "game_id": self.game_id}
        while True:
            try:
                await self.client.send(subscribe)
                if await self._follow():
                    return
            except ConnectionClosed:
                pass
            # the gateway went away: resume on the other one from the last seq received
            assert self.client.url != self.fallback, "the second gateway dropped us too"
            self.reconnect_seq = self.seq
            self.resending = None if self.pending is None else self.pending[1]
            self.client.url = self.fallback
            await self.connect()
            subscribe = {"type": "subscribe", "game_id": self.game_id, "last_seq": self.seq}

    async def _follow(self) -> bool:
        while True:
            body = await self.client.recv(180)
            kind = body["type"]
            if kind == "subscribed" and self.pending is not None:
                # its answer was lost with the connection: the same command_id again
                await self._send(*self.pending)
            elif kind == "view":
                self.hand = list(body["view"]["hand"])
            elif kind == "event":
                if body.get("hand") is not None:
                    self.hand = list(body["hand"])
                event_type = body["event"]["type"]
                if event_type == "GameFinished":
                    return True
                if event_type == "CardPlayed":
                    self.in_trick += 1
                elif event_type in ("TrickWon", "HandDealt"):
                    self.in_trick = 0
            elif kind == "ack":
                assert body["code"] in ("applied", "already_applied"), body
                if body["command_id"] == self.resending:
                    self.resent.append(body["code"])
                if self.pending is not None and body["command_id"] == self.pending[1]:
                    self.pending = None
                self.acked_to = max(self.acked_to, body["seq"])
            elif kind == "clock":
                self.clock_seq = max(self.clock_seq, body["seq"])
            elif kind == "your_turn":
                await self._on_turn(body)

    async def _on_turn(self, body: dict[str, Any]) -> None:
        seq = body["seq"]
        if self.pending is not None and self.pending[0] == seq:
            await self._send(*self.pending)  # the same turn again: the same command again
            return
        if seq < max(self.seq, self.acked_to) or (self.pending and self.pending[0] > seq):
            self.stale_turns += 1  # the game has moved on since: nothing to do
            return
        # a later turn of ours: the pending command's turn is over (its ack may come later)
        self.pending = None
        legal = body["legal"]
        cards = [c["card"] for c in legal if c["type"] == "PlayCard"]
        if cards:
            self.asked.append((len(self.urls), seq, cards, list(self.hand or [])))
        command = choose_json(legal, self.hand or [])
        if cards and self.in_trick == 3 and self.before_last_card is not None:
            await self.before_last_card(seq)
        self.pending = (seq, str(uuid.uuid4()), command)
        await self._send(*self.pending)
        if command["type"] == "PlayCard" and self.on_sent is not None:
            self.on_sent(self, seq)

    async def _send(self, _seq: int, command_id: str, command: dict[str, Any]) -> None:
        self.sent.add(command_id)
        await self.client.command(self.game_id, command, command_id)

    def bodies(self, kind: str) -> list[dict[str, Any]]:
        return [
            r.body
            for r in self.client.received
            if r.body["type"] == kind and r.body.get("game_id") in (None, self.game_id)
        ]


async def replicas_sharing(ports: list[int]) -> list[float] | None:
    """Return each table replica's owned slots once every replica owns some and
    together they own all; None before."""
    owned = [sample(await asyncio.to_thread(scrape, p), "spades_slots_owned") for p in ports]
    counts = [o or 0.0 for o in owned]
    return counts if all(counts) and sum(counts) == SLOTS else None


async def test_a_gateway_killed_mid_hand_loses_no_event_and_the_game_finishes(
    processes: Processes, nc: NATS, subjects: Subjects, event_store: PostgresEventStore
) -> None:
    tables = [
        processes.start("-m", "services.tools.cli", "serve", "table", env=SERVICE_ENV)
        for _ in range(2)
    ]
    relay = processes.start("-m", "services.tools.cli", "serve", "relay", env=SERVICE_ENV)
    a, b = [await start_gateway(processes, **SERVICE_ENV) for _ in range(2)]
    table_ports = [await ops_port(processes, t) for t in tables]
    await eventually(
        lambda: replicas_sharing(table_ports),
        within=120,
        interval=0.2,
        what="both table replicas to own partitions",
    )

    async with httpx.AsyncClient(base_url=a.url, timeout=60) as http:
        tokens = [await register_and_login(http, name) for name in (*SEATS, WATCHER)]
    game_id = await open_casual(nc, subjects, list(SEATS), target=TARGET)

    def person(seat: int, token: str, home: GatewayProcess, away: GatewayProcess) -> Person:
        return Person(seat, WsClient(home.ws_url, token), game_id, away.ws_url, not token)

    seats = [person(s, tokens[s], a if s < 2 else b, b if s < 2 else a) for s in range(4)]
    watchers = [person(-1, tokens[4], a, b), person(-1, "", b, a)]
    everyone = [*seats, *watchers]
    on_a = [seats[0], seats[1], watchers[0]]

    killed: dict[str, Any] = {}

    def kill_a(sender: Person, seq: int) -> None:
        """A seat on A has just sent a card into a trick already led: kill A (SIGKILL)."""
        if killed or sender.in_trick == 0 or seq < 20:
            return
        os.kill(a.proc.pid, signal.SIGKILL)
        killed.update(at=time.time(), seq=seq, seat=sender.seat)

    held_back: list[int] = []

    async def spectators_one_trick_behind(seq: int) -> None:
        """Hold the trick's last card until both spectators have been told the turn after its
        third (a live clock): a card leaked early would be with them by then; none may be."""
        await eventually(
            lambda: all(w.clock_seq >= seq for w in watchers),
            within=120,
            what=f"both spectators' clock for seq {seq}",
        )
        for w in watchers:
            early = [e["seq"] for e in w.bodies("event") if e["seq"] > seq - 3]
            assert early == [], f"spectator on {w.client.url} got {early} mid-trick at {seq}"
        held_back.append(seq)

    for p in everyone:
        await p.connect()
        p.before_last_card = spectators_one_trick_behind
    for p in on_a:
        p.on_sent = kill_a if p.seat >= 0 else None

    playing = [asyncio.create_task(p.run()) for p in everyone]
    try:
        await until_done(playing, everyone)
    except (AssertionError, TimeoutError) as exc:
        raise AssertionError(await stalled(exc, everyone, event_store, processes)) from exc
    finally:
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        for p in everyone:
            await p.client.close()

    # -- the fault happened where it was meant to --------------------------------------------
    assert killed, "no seat of gateway A was ever asked to play into a trick already led"
    assert a.proc.wait(timeout=30) == -signal.SIGKILL
    for p in on_a:
        assert p.urls == [a.ws_url, b.ws_url], (p.seat, p.urls)
    for p in seats[2:] + watchers[1:]:
        assert p.urls == [b.ws_url], (p.seat, p.urls)

    stored = await event_store.read(stream_of(game_id))
    decoded = [REGISTRY.decode(s) for s in stored]
    assert isinstance(decoded[0], wire.TableOpened)
    assert isinstance(decoded[-1], wire.GameFinished)
    assert max(decoded[-1].scores) >= TARGET or min(decoded[-1].scores) <= -200
    truth = states(stored)
    hands_dealt = sum(isinstance(e, wire.HandDealt) for e in decoded)
    # mid-hand, mid-trick: the card in flight followed another card of its trick
    assert isinstance(decoded[killed["seq"] - 1], wire.CardPlayed)

    for p in everyone:
        who = f"seat {p.seat} ({'A' if p in on_a else 'B'})"
        # no refusal of any kind reached anyone: every command sent was legal when sent
        assert p.bodies("error") == [], (who, p.bodies("error"))
        # one snapshot (the first subscription), then every event once, in order, to the end
        views = p.bodies("view")
        assert len(views) == 1, (who, [v["seq"] for v in views])
        seqs = [e["seq"] for e in p.bodies("event")]
        assert seqs == list(range(views[0]["seq"] + 1, len(stored) + 1)), (who, seqs)
        # nobody learns a card it may not know, nor a seed
        assert leaks(p.client.received, game_id, p.seat, truth) == [], who

    for p in seats:
        who = f"seat {p.seat}"
        # after every view and event, before and after the reconnect, the hand the client
        # holds (the last one it was told) is the true hand at that seq
        held: list[str] = []
        for body in p.bodies("view") + p.bodies("event"):
            hand = body["view"]["hand"] if body["type"] == "view" else body.get("hand")
            held = held if hand is None else hand
            expected = list(wire.visible_hand(truth[body["seq"]], p.seat) or ())
            assert held == expected, (who, body["seq"], held, expected)
        # every card it was asked to play was in the hand it held
        assert p.asked, who
        for connection, seq, cards, holding in p.asked:
            assert set(cards) <= set(holding), (who, connection, seq, cards, holding)
        acks = p.bodies("ack")
        assert acks, who
        assert all(a["code"] in ("applied", "already_applied") for a in acks), who
    for p in (seats[0], seats[1]):  # the killed gateway's seats played on after resuming
        assert [t for t in p.asked if t[0] == 2], f"seat {p.seat} never played on gateway B"
        assert p.reconnect_seq is not None
        assert p.reconnect_seq < len(stored)

    # spectators: no hand, and a card only once its trick is complete (checked live before
    # every trick's last card, and here against the time each trick was won)
    tricks = sum(isinstance(e, wire.TrickWon) for e in decoded)
    assert len(held_back) == tricks, (len(held_back), tricks)
    for p in watchers:
        assert p.bodies("view")[0]["view"]["hand"] == []
        for body in p.bodies("event"):
            assert body.get("hand") is None, body
        received_at = {r.body["seq"]: r.at for r in p.client.received if r.body["type"] == "event"}
        for seq, at in received_at.items():
            if isinstance(decoded[seq - 1], wire.CardPlayed):
                done = next(
                    s
                    for s, e in zip(stored[seq:], decoded[seq:], strict=True)
                    if isinstance(e, wire.TrickWon)
                )
                assert at >= done.recorded_at.timestamp() - 0.05, (p.seat, seq, at)

    # the turn and its deadline are facts of the game: both gateways tell everyone the same
    told: dict[int, set[tuple[int, float]]] = {}
    for p in everyone:
        for clock in p.bodies("clock"):
            told.setdefault(clock["seq"], set()).add((clock["seat"], clock["deadline"]))
    assert {seq: t for seq, t in told.items() if len(t) > 1} == {}
    for p in seats:
        for turn in p.bodies("your_turn"):
            assert told.get(turn["seq"], {(p.seat, turn["deadline"])}) == {
                (p.seat, turn["deadline"])
            }, (p.seat, turn)
    for p in on_a:  # a watcher is told the clock when it subscribes, on B too
        again = [r.body["type"] for r in p.client.received if r.at > killed["at"]]
        assert "clock" in again[again.index("subscribed") :], (p.seat, again[:10])

    # both table replicas stayed up, each still owning slots; the game's owner served it
    for proc in (*tables, relay, b.proc):
        assert proc.poll() is None, processes.log(proc)[-3000:]
    texts = [await asyncio.to_thread(scrape, port) for port in table_ports]
    owned = [sample(t, "spades_slots_owned") or 0 for t in texts]
    assert all(owned), owned
    assert sum(owned) == SLOTS, owned
    # each replica claimed its leases, and neither was ever refused an append as a stale owner
    for text in texts:
        assert (sample(text, 'spades_lease_changes_total{event="claimed"}') or 0) > 0
        assert (sample(text, 'spades_lease_changes_total{event="fenced"}') or 0) == 0
    handled = [command_total(t) for t in texts]
    # each turn's command was applied exactly once, whichever gateway carried it (or both)
    commands = {s.metadata.command_id for s in stored if s.metadata.actor in SEATS}
    assert len(commands) == sum(len(p.sent) for p in seats), (len(commands), handled)
    assert sum(handled) == len(commands), (handled, len(commands))
    # how long the killed gateway's clients were without a game: kill to `subscribed` on B
    back_after = [
        next(
            r.at
            for r in p.client.received
            if r.body["type"] == "subscribed" and r.at > killed["at"]
        )
        - killed["at"]
        for p in on_a
    ]
    print(
        f"\ngame {game_id} (slot {slot_of(game_id)}): {len(stored)} events,"
        f" {hands_dealt} hands; table replicas own {owned} partitions and handled {handled}"
        f" commands; gateway A killed after seat {killed['seat']}'s card"
        f" (its turn at seq {killed['seq']});"
        f" resumed from {[p.reconnect_seq for p in on_a]} after"
        f" {', '.join(f'{t:.2f}' for t in back_after)} s; commands sent again and answered:"
        f" {[p.resent for p in on_a]}; stale your_turns ignored:"
        f" {[p.stale_turns for p in seats]}; tricks held for the spectators check: {len(held_back)}"
    )


async def until_done(playing: list[asyncio.Task[None]], everyone: list[Person]) -> None:
    """Wait for every client to see the game end; fail if no client has received a new
    event for 120 s (nobody times out at this table, so the game would wait forever)."""
    last, moved_at = -1, time.monotonic()
    while not all(task.done() for task in playing):
        for task in playing:
            if task.done() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        seq = max(p.seq for p in everyone)
        if seq != last:
            last, moved_at = seq, time.monotonic()
        if time.monotonic() - moved_at > 120:
            raise TimeoutError(f"no client received an event after seq {last} for 120 s")
        await asyncio.wait(playing, timeout=1, return_when=asyncio.FIRST_EXCEPTION)
    await asyncio.gather(*playing)


def command_total(metrics: str) -> float:
    """Return the commands a table replica accepted, summed over command types."""
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("spades_commands_handled_total{")
    )


async def stalled(
    exc: BaseException, everyone: list[Person], store: PostgresEventStore, processes: Processes
) -> str:
    """Return where the game and each client stand, and the services' warnings."""
    game_id = everyone[0].game_id
    stored = await store.read(stream_of(game_id))
    lines = [f"{type(exc).__name__}: {exc}", f"the game stands at version {len(stored)}:"]
    lines += [f"  {s.version} {s.type} {s.metadata.actor}" for s in stored[-4:]]
    for p in everyone:
        lines.append(
            f"seat {p.seat} on {p.urls}: seq {p.seq}, pending {p.pending}, acked to {p.acked_to}"
        )
        lines += [f"    {r.text[:200]}" for r in p.client.received[-4:]]
    for proc, _ in processes._procs:
        lines += [
            f"  [{proc.pid}] {line[:300]}"
            for line in processes.log(proc).splitlines()
            if '"warning"' in line or '"error"' in line
        ][-8:]
    return "\n".join(lines)
