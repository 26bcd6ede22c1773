"""`spades replay GAME_ID [--at N]`: a game card by card, folded from its events in the log.

A finished game is shown face up (every dealt hand). A game still in progress shows only its
public part: bids, played cards, tricks and scores, never a hand or the seed, because whoever
runs the command could pass them to a player.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterator

import asyncpg

import engine
from events import game as wire
from events.envelope import REGISTRY, StoredEvent
from events.pgstore import PostgresEventStore
from services.config import Settings
from services.table.tables import stream_of


def describe(event: wire.GameEvent, face_up: bool, players: int) -> str | None:
    """Return one line for an event (None for what a face-down replay must not show)."""
    name = engine.seat_name
    match event:
        case wire.TableOpened():
            seats = ", ".join(f"{name(s, players)} {p}" for s, p in enumerate(event.players))
            rated = "rated" if event.rated else "unrated"
            return f"table opened on {event.ladder} ({rated}): {seats}"
        case wire.GameStarted():
            changes = engine.Ruleset.from_options(dict(event.rules)).changes() if face_up else None
            rules = f" rules {changes or 'ladder defaults'}" if changes is not None else ""
            seed = f" seed {event.seed}" if face_up else ""
            return f"game started, first dealer {name(event.dealer, players)}{rules}{seed}"
        case wire.HandDealt():
            line = f"hand {event.hand} dealt by {name(event.dealer, players)}"
            if face_up:
                hands = "; ".join(
                    f"{name(s, players)} {' '.join(cards)}" for s, cards in enumerate(event.hands)
                )
                line += f": {hands}" if hands else f": stock {' '.join(event.stock)}"
            return line
        case wire.CardDrawn():
            if not face_up:
                return f"{name(event.seat, players)} draws"
            return f"{name(event.seat, players)} keeps {event.kept}, discards {event.discarded}"
        case wire.BlindNilDeclared():
            return f"{name(event.seat, players)} bids blind nil"
        case wire.BlindNilDeclined():
            return f"{name(event.seat, players)} declines blind nil"
        case wire.BidPlaced():
            bid = "nil" if event.tricks == 0 else str(event.tricks)
            blind = "blind " if event.blind else ""
            return f"{name(event.seat, players)} bids {blind}{bid}"
        case wire.CardsPassed():
            cards = " ".join(event.cards) if face_up else f"{len(event.cards)} cards"
            return f"{name(event.seat, players)} passes {cards} to {name(event.to_seat, players)}"
        case wire.CardPlayed():
            return f"{name(event.seat, players)} plays {event.card}"
        case wire.TrickWon():
            return f"  trick {' '.join(event.cards)} won by {name(event.seat, players)}"
        case wire.HandScored():
            return (
                f"hand {event.hand} scored: tricks {list(event.tricks)} points {list(event.points)}"
                f" -> scores {list(event.scores)}, bags {list(event.bags)}"
            )
        case wire.TurnTimedOut():
            return f"{name(event.seat, players)} timed out ({event.streak} in a row); bot plays"
        case wire.SeatAbandoned():
            return f"{name(event.seat, players)} abandoned: a bot plays the rest of the game"
        case wire.GameFinished():
            return f"game over ({event.reason}): winner side {event.winner}, scores {event.scores}"
    return None


def transcript(stored: list[StoredEvent], at: int | None = None) -> Iterator[str]:
    """Yield the replay's lines up to version ``at`` (all when None), then the state there."""
    decoded = [REGISTRY.decode(s) for s in stored]
    face_up = any(isinstance(e, wire.GameFinished) for e in decoded)
    opened = next((e for e in decoded if isinstance(e, wire.TableOpened)), None)
    players = len(opened.players) if opened else 4
    state = engine.initial_state()
    for s, event in zip(stored, decoded, strict=True):
        if at is not None and s.version > at:
            break
        engine_event = wire.to_engine(event)
        if engine_event is not None:
            state = engine.apply(state, engine_event)
        line = describe(event, face_up, players)
        if line is not None:
            yield f"{s.version:5d}  {line}"
    if at is not None:
        yield f"state at step {min(at, len(stored))}: phase {state.phase}, scores {state.scores}"
        for seat, hand in enumerate(state.hands if face_up else ()):
            yield f"  {engine.seat_name(seat, players)} holds {engine.cards_str(hand)}"
    if not face_up:
        yield "(game in progress: hands and seed are hidden until it ends)"


async def _read(game_id: str) -> list[StoredEvent]:
    settings = Settings.from_env()
    if not settings.database_url:
        raise SystemExit("no database: set SPADES_DATABASE_URL or run `spades infra up`")
    pool = await asyncpg.create_pool(settings.database_url, min_size=1, max_size=1)
    try:
        return await PostgresEventStore(pool).read(stream_of(game_id))
    finally:
        await pool.close()


def run(args: argparse.Namespace) -> int:
    """Print a game's replay; exit 1 when the game does not exist."""
    import events.matchmaking  # noqa: F401  (registers every context the log may hold)

    stored = asyncio.run(_read(args.game_id))
    if not stored:
        print(f"no game {args.game_id}")
        return 1
    try:
        for line in transcript(stored, args.at):
            print(line)
    except BrokenPipeError:  # `spades replay ... | head` is fine
        sys.stderr.close()
    return 0
