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
from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY, StoredEvent
from events.pgstore import PostgresEventStore
from events.settings import no_database
from services.records import transcript as transcripts
from services.runtime.config import Settings


def transcript(stored: list[StoredEvent], at: int | None = None) -> Iterator[str]:
    """Yield the replay's lines up to version ``at`` (all when None), then the state there.

    The lines are those of the transcript format (`engine.transcript`, with the seed once the game
    is over), so a finished game's output reads back with `services.records.transcript.parse`."""
    decoded = [REGISTRY.decode(s) for s in stored]
    face_up = transcripts.finished(decoded)
    until = None if at is None else max(at, 0)
    yield from transcripts.lines(decoded, seed=True, until=until)
    state = wire.fold(decoded[:until])
    opened = next((e for e in decoded if isinstance(e, wire.TableOpened)), None)
    players = len(opened.players) if opened else 4
    if at is not None:
        yield f"state at step {min(at, len(stored))}: phase {state.phase}, scores {state.scores}"
        for seat, hand in enumerate(state.hands if face_up else ()):
            yield f"  {engine.seat_name(seat, players)} holds {engine.cards_str(hand)}"
    if not face_up:
        yield transcripts.FACE_DOWN_NOTE


async def _read(game_id: str) -> list[StoredEvent]:
    settings = Settings.from_env()
    if not settings.database_url:
        raise SystemExit(no_database())
    pool = await asyncpg.create_pool(settings.database_url, min_size=1, max_size=1)
    try:
        return await PostgresEventStore(pool).read(stream_of(game_id))
    finally:
        await pool.close()


def run(args: argparse.Namespace) -> int:
    """Print a game's replay; exit 1 when the game does not exist."""
    import events.contracts.matchmaking  # noqa: F401  (registers every context the log may hold)

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


def verify(args: argparse.Namespace) -> int:
    """Verify a game from the event store; exit 0 when every deal checks, 1 when not."""
    import events.contracts.matchmaking  # noqa: F401  (registers every context the log may hold)
    from events.envelope import REGISTRY
    from services.records.fairness import NotVerified, verify_committed
    from services.records.fairness import verify as verify_game

    stored = asyncio.run(_read(args.game_id))
    if not stored:
        print(f"no game {args.game_id}")
        return 1
    decoded = [REGISTRY.decode(s) for s in stored]
    try:
        if args.commitment:  # a duplicate board: dealt from the seed its event published
            checked = verify_committed(decoded, args.commitment)
        else:
            checked = verify_game(decoded)
    except NotVerified as exc:
        print(f"NOT VERIFIED ({exc.code}): {exc}")
        return 1
    print(f"game {args.game_id}: deals {checked.scheme}")
    if checked.commitment:
        print(f"  commitment   {checked.commitment}")
        print(f"  server seed  {checked.server_seed}  (SHA-256 matches)")
        for seat, value in enumerate(checked.contributions):
            print(f"  seat {seat} contribution {value or '(none)'}")
    if args.commitment:
        print(f"  published    {args.commitment}  (the event's commitment: matches)")
    print(f"deals verified: {checked.hands} hands, every card as the seed deals it")
    return 0
