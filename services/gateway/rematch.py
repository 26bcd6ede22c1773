"""Rematch: the same seats and rules again, once every person who played accepts.

At a finished unrated game (a friends' table, a casual or practice game) each seated person may
accept or decline a rematch. The first answer opens the rematch's row in the gateway's
`friends_rematches` (migration 16); every answer takes its lock, so two last acceptances at once
open one game, and an acceptance after a decline is refused. When all have accepted, the table
service opens the new game: the same players at the same seats, the same bots and rules, the
deal passed on (its first dealer the seat after the last hand's dealer). Its id comes from the
finished game's (`uuid5`), so a retried or raced opening is the same game.

A ranked game has no rematch: the same four again would be rating farming (the fair-play record
sees repeated pairings); its players "play again" by queueing (`POST /api/queue`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.errors import Refusal
from events.pgstore import Conn, PostgresEventStore


class RematchRefusal(Refusal):
    """A rematch answer refused: its code, its HTTP status; nothing changed."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(code, message)
        self.status = status


@dataclass(frozen=True)
class Finished:
    """What a rematch needs of a finished game: its opening, rules and last dealer."""

    opened: wire.TableOpened
    rules: dict[str, wire.RuleValue]
    last_dealer: int
    left: tuple[str, ...]
    """People whose seat a bot took (they left, or let their timer run out too often)."""
    over: bool

    @property
    def people(self) -> tuple[str, ...]:
        """Return the game's seated people in seat order."""
        return tuple(p for s, p in enumerate(self.opened.players) if s not in self.opened.bots)


async def finished_game(store: PostgresEventStore, game_id: str) -> Finished:
    """Return the game as a rematch sees it; refuse an unknown one."""
    try:
        uuid.UUID(game_id)
    except ValueError:
        raise RematchRefusal(404, "unknown_game", "no such game") from None
    stored = await store.read(stream_of(game_id))
    if not stored:
        raise RematchRefusal(404, "unknown_game", "no such game")
    events = [REGISTRY.decode(e) for e in stored]
    opened = events[0]
    assert isinstance(opened, wire.TableOpened)
    rules: dict[str, wire.RuleValue] = {}
    dealer = 0
    left: list[str] = []
    over = False
    for event in events:
        if isinstance(event, wire.GameStarted):
            rules, dealer = dict(event.rules), event.dealer
        elif isinstance(event, wire.HandDealt):
            dealer = event.dealer
        elif isinstance(event, wire.SeatAbandoned):
            left.append(event.player_id)
        elif isinstance(event, wire.GameFinished):
            over = True
    return Finished(opened, rules, dealer, tuple(left), over)


def may_answer(game: Finished, player_id: str) -> None:
    """Refuse a rematch answer the game does not allow from ``player_id``."""
    if game.opened.rated:
        raise RematchRefusal(
            409,
            "rated_game",
            "a ranked game has no rematch: play again by queueing (POST /api/queue)",
        )
    if player_id not in game.people:
        raise RematchRefusal(
            403, "not_a_player", "only the people who played may ask for a rematch"
        )
    if not game.over:
        raise RematchRefusal(409, "game_not_finished", "the game is not over yet")
    if game.left:
        raise RematchRefusal(
            409, "player_left", f"{game.left[0]} left the table: no rematch with the same seats"
        )


def open_request(game_id: str, game: Finished) -> wire.OpenPractice | wire.OpenCasual:
    """Return the request that opens ``game``'s rematch (same seats, rules; the deal passed on)."""
    opened = game.opened
    command_id = uuid.uuid5(uuid.UUID(game_id), "rematch")
    dealer = (game.last_dealer + 1) % len(opened.players)
    if opened.ladder == wire.PRACTICE_LADDER:
        return wire.OpenPractice(
            player_id=opened.players[0],
            command_id=command_id,
            rules=game.rules,
            bots=opened.bot_level,
            untimed=opened.turn_seconds <= 0,
            dealer=dealer,
        )
    return wire.OpenCasual(
        players=opened.players,
        command_id=command_id,
        rules=game.rules,
        bots=opened.bots,
        bot_level=opened.bot_level,
        dealer=dealer,
        unlisted=opened.unlisted,
    )


_COLUMNS = "game_id, players, accepted, declined, new_game_id"


async def locked(conn: Conn, game_id: str, people: Sequence[str]) -> asyncpg.Record:
    """Return the game's rematch row, made if new, locked until the transaction ends."""
    await conn.execute(
        "INSERT INTO friends_rematches (game_id, players) VALUES ($1, $2)"
        " ON CONFLICT (game_id) DO NOTHING",
        uuid.UUID(game_id),
        list(people),
    )
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM friends_rematches WHERE game_id = $1 FOR UPDATE",
        uuid.UUID(game_id),
    )
    assert row is not None
    return row


def answered(row: asyncpg.Record, player_id: str, accept: bool) -> tuple[list[str], str | None]:
    """Return who accepted and who declined after ``player_id``'s answer; refuse a second
    answer or one after a decline."""
    accepted = list(row["accepted"])
    if row["declined"] is not None:
        raise RematchRefusal(409, "rematch_declined", f"{row['declined']} declined the rematch")
    if player_id in accepted:
        raise RematchRefusal(409, "already_accepted", "you accepted this rematch already")
    if not accept:
        return accepted, player_id
    return [*accepted, player_id], None


async def save(
    conn: Conn,
    game_id: str,
    accepted: Sequence[str],
    declined: str | None,
    new_game_id: str | None,
) -> asyncpg.Record:
    """Write a locked rematch's answers and return its row."""
    row = await conn.fetchrow(
        "UPDATE friends_rematches SET accepted = $2, declined = $3, new_game_id = $4,"
        f" updated_at = now() WHERE game_id = $1 RETURNING {_COLUMNS}",
        uuid.UUID(game_id),
        list(accepted),
        declined,
        None if new_game_id is None else uuid.UUID(new_game_id),
    )
    assert row is not None
    return row


async def read(pool: asyncpg.Pool, game_id: str) -> asyncpg.Record | None:
    """Return a game's rematch row, or None when nobody answered yet."""
    return await pool.fetchrow(
        f"SELECT {_COLUMNS} FROM friends_rematches WHERE game_id = $1", uuid.UUID(game_id)
    )


__all__ = ["Finished", "RematchRefusal", "answered", "finished_game", "may_answer", "open_request"]
