"""Arena events running: the start, a game for every two free pairs, results, the end.

`services.gateway.eventrun` hands an arena here: `start` (at its time, or when its host
starts it) sets its end time (``minutes`` after, on the stack's clock, which a test moves
with SPADES_CLOCK_FILE) and pairs the pairs at once; each pass of the driver (`advance`)
records the games that finished (the winner from the game's own `GameFinished`, the points
by `services.gateway.arena.award`; a pair all of whose people left their seats to bots is
paused), then, before the end time, pairs the free pairs
(`arena.pair_free`) and opens a game for each two (an ordinary unrated game the table opens,
dealt from its committed seed as every game is); from the end time on it opens none, and
once the last game is over the event is finished. Every step is in the event's audit log:
EventStarted (with ``ends_at``), ArenaGameOpened, ArenaGameResult, EventFinished.
"""

from __future__ import annotations

import uuid

import asyncpg
import msgspec

from events.contracts import game as wire
from events.contracts.game import stream_of
from events.envelope import REGISTRY
from events.pgstore import Conn
from services.gateway import arena, arenarows, duplicate
from services.gateway.state import Gateway, Unavailable, ask
from services.gateway.tourneys import (
    BOT,
    _json,
    add_bot_pair,
    cancel_for_want_of_pairs,
    log,
    pairs_of,
)

_table_reply = msgspec.json.Decoder(wire.TableReply)


async def start(
    gateway: Gateway, conn: Conn, row: asyncpg.Record, now: float, *, fill_with_bots: bool
) -> bool:
    """Start a locked open arena: it runs ``minutes`` from ``now``; pair its pairs at once.
    Fewer than two pairs cancel it (an odd count is fine: one waits for the next free; a
    private one may be filled to an even count with a bot pair)."""
    tourney_id = row["tourney_id"]
    pairs = await pairs_of(conn, tourney_id)
    if len(pairs) % 2 and row["private"] and fill_with_bots:
        pairs.append(await add_bot_pair(conn, tourney_id, pairs))
    if len(pairs) < 2:
        await cancel_for_want_of_pairs(conn, tourney_id)
        return False
    ends_at = now + 60 * row["minutes"]
    await conn.execute(
        "UPDATE tourneys SET status = 'running', round = 1, ends_at = to_timestamp($2),"
        " updated_at = now() WHERE tourney_id = $1",
        tourney_id,
        ends_at,
    )
    await log(conn, tourney_id, "EventStarted", pairs=[p.pair for p in pairs], ends_at=ends_at)
    await open_games(gateway, conn, tourney_id, now)
    return True


async def game_end(gateway: Gateway, game_id: str) -> tuple[wire.GameFinished, list[str]] | None:
    """Return a game's `GameFinished` and the players who left their seats to a bot in it,
    None while it is played."""
    stored = await gateway.store.read(stream_of(game_id))
    if not any(s.type == "GameFinished" for s in stored):
        return None
    events = [REGISTRY.decode(s) for s in stored if s.type in ("GameFinished", "SeatAbandoned")]
    finished = next(e for e in events if isinstance(e, wire.GameFinished))
    return finished, [e.player_id for e in events if isinstance(e, wire.SeatAbandoned)]


async def open_games(gateway: Gateway, conn: Conn, tourney_id: uuid.UUID, now: float) -> int:
    """Pair the free pairs (entered, not paused, at no table of the event) and open a game
    for each two; return how many opened. ``now`` (the arena's clock) goes in the log."""
    games = await arenarows.games_of(conn, tourney_id)
    busy = {p for g in games if g.winner is None for p in (g.ns, g.ew)}
    points, last = arena.points_of(games), arena.last_opponents(games)
    rows = await conn.fetch(
        "SELECT pair, extract(epoch FROM free_since)::float8 AS since FROM tourney_pairs"
        " WHERE tourney_id = $1 AND NOT paused",
        tourney_id,
    )
    free = [
        arena.Free(r["pair"], points.get(r["pair"], 0), last.get(r["pair"]), r["since"])
        for r in rows
        if r["pair"] not in busy
    ]
    tables = arena.pair_free(free)
    if not tables:
        return 0
    rules = dict(
        _json(await conn.fetchval("SELECT rules FROM tourneys WHERE tourney_id = $1", tourney_id))
    )
    pairs = {p.pair: p for p in await pairs_of(conn, tourney_id)}
    number = max((g.number for g in games), default=0)
    for ns_pair, ew_pair in tables:
        number += 1
        ns, ew = pairs[ns_pair], pairs[ew_pair]
        names = duplicate.seats_of((ns.player, ns.partner), (ew.player, ew.partner))
        body = wire.OpenCasual(
            players=tuple(f"bot:{s}" if n == BOT else n for s, n in enumerate(names)),
            bots=tuple(s for s, n in enumerate(names) if n == BOT),
            # the pairing in the id: a pass rolled back and paired otherwise opens anew
            command_id=uuid.uuid5(tourney_id, f"arena/{number}/{ns_pair}/{ew_pair}"),
            rules=rules,
            unlisted=True,
        )
        reply = _table_reply.decode(await ask(gateway, gateway.subjects.table_open(), body))
        if not reply.ok or reply.game_id is None:
            raise Unavailable(f"the table did not open arena game {number}: {reply.code}")
        await conn.execute(
            "INSERT INTO tourney_arena_games (tourney_id, game_no, ns_pair, ew_pair, game_id)"
            " VALUES ($1, $2, $3, $4, $5)",
            tourney_id,
            number,
            ns_pair,
            ew_pair,
            uuid.UUID(reply.game_id),
        )
        await log(
            conn,
            tourney_id,
            "ArenaGameOpened",
            game=number,
            game_id=reply.game_id,
            ns=ns_pair,
            ew=ew_pair,
            clock=now,
        )
    return len(tables)


async def advance(gateway: Gateway, conn: Conn, row: asyncpg.Record, now: float) -> bool:
    """Move a locked running arena on: record the games over, pair the free pairs before the
    end time, finish the event once the end time passed and no game is left; return whether
    anything changed."""
    tourney_id = row["tourney_id"]
    changed = False
    playing = await conn.fetch(
        "SELECT game_no, ns_pair, ew_pair, game_id FROM tourney_arena_games"
        " WHERE tourney_id = $1 AND winner_pair IS NULL ORDER BY game_no",
        tourney_id,
    )
    persons = {
        p.pair: [n for n in (p.player, p.partner) if n != BOT]
        for p in await pairs_of(conn, tourney_id)
    }
    for g in playing:
        ended = await game_end(gateway, str(g["game_id"]))
        if ended is None:
            continue
        finished, left = ended
        ns, ew = g["ns_pair"], g["ew_pair"]
        winner = arena.winner_of(finished.winner, finished.reason, ns, ew)
        scores = (*finished.scores, 0, 0)[:2]
        await conn.execute(
            "UPDATE tourney_arena_games SET winner_pair = $3, ns_score = $4, ew_score = $5"
            " WHERE tourney_id = $1 AND game_no = $2",
            tourney_id,
            g["game_no"],
            winner,
            scores[0],
            scores[1],
        )
        await conn.execute(
            "UPDATE tourney_pairs SET free_since = now() WHERE tourney_id = $1"
            " AND pair = ANY($2::int[])",
            tourney_id,
            [ns, ew],
        )
        got = arena.awards(await arenarows.games_of(conn, tourney_id))
        await log(
            conn,
            tourney_id,
            "ArenaGameResult",
            game=g["game_no"],
            game_id=str(g["game_id"]),
            ns=ns,
            ew=ew,
            winner=winner,
            ns_score=scores[0],
            ew_score=scores[1],
            ns_points=got[g["game_no"], ns],
            ew_points=got[g["game_no"], ew],
        )
        gone = arena.absent({p: persons[p] for p in (ns, ew)}, left)
        for pair in gone:  # nobody of it is at the table any more: no new game for it
            await conn.execute(
                "UPDATE tourney_pairs SET paused = true WHERE tourney_id = $1 AND pair = $2",
                tourney_id,
                pair,
            )
            await log(conn, tourney_id, "PairPaused", pair=pair, reason="absent")
        changed = True
    if now < row["ends_at"].timestamp():
        return await open_games(gateway, conn, tourney_id, now) > 0 or changed
    left = await conn.fetchval(
        "SELECT count(*) FROM tourney_arena_games WHERE tourney_id = $1 AND winner_pair IS NULL",
        tourney_id,
    )
    if left:
        return changed
    await conn.execute(
        "UPDATE tourneys SET status = 'finished', updated_at = now() WHERE tourney_id = $1",
        tourney_id,
    )
    pairs = [p.pair for p in await pairs_of(conn, tourney_id)]
    standing = arena.standings(pairs, await arenarows.games_of(conn, tourney_id))
    await log(conn, tourney_id, "EventFinished", standings=msgspec.to_builtins(standing))
    return True


__all__ = ["advance", "game_end", "open_games", "start"]
