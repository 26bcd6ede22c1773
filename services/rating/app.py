"""The rating service: GameFinished in, ratings and RatingsUpdated out, exactly once; ladder reads.

    JetStream ev.game.*.GameFinished ──▶ consume() ──▶ one PostgreSQL transaction:
        consumer position for the game stream moves forward
        RatingsUpdated appended to `rating-<game id>` at expected version 0
        `ratings` upserted, `rating_history` rows inserted
    commit, then ack.

Exactly once: the consumer position drops a redelivered or duplicated GameFinished; the
version-0 append is the second lock on the door (a GameFinished that reaches the handler again
by any other route conflicts, and the game counts as already rated). A crash anywhere before
the commit rolls everything back and JetStream redelivers; a crash after the commit finds the
position moved. Ratings are computed at the game's recorded time, not the wall clock, so a
late delivery rates the game exactly as a prompt one would.

What moves (see services/rating/model.py): a rated game with a winner rates the partnerships
or the two players (Plackett-Luce), with the abandonment rule of the model; a game of players
each for himself (cut-throat, five players) rates the field by final score (`rate_field`).
Which ladders exist, their seats and whether they are rated: the ladders file
(`events.contracts.ladders`). An unrated game (practice) or a draw at
the hand cap moves nothing and appends nothing. A rated GameFinished that cannot be rated (an
unknown ladder, the wrong number of players, not from a game stream) is parked, not retried.

Reads (core NATS request/reply, JSON, any instance answers):
- `Subjects.rating_ladder()`  {ladder, offset, limit} -> players by ordinal (decay applied at
  read time), with the provisional flag;
- `Subjects.rating_player()`  {player_id} -> ratings per ladder and the history;
- `Subjects.rating_stats()`  a player's statistics per ladder (`services/rating/stats.py`);
- `Subjects.rating_season()`  a season's leaderboard, frozen once ended (`seasons.py`,
  which also closes each season as it ends, on the clock SPADES_CLOCK_FILE can move).
Every answer is `{ok, code, message, ...}`; bad input gets `malformed` or `unknown_ladder`.

Test hook: `SPADES_CRASH_POINT=rating-after-append` SIGKILLs the process after the append and
before the commit (the worst moment: the event is written but not yet committed).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

import msgspec
from nats.aio.msg import Msg

from events.consumer import Received, Unprocessable
from events.contracts.game import GameFinished
from events.contracts.ladders import UnknownLadder, ruleset_of
from events.contracts.rating import (
    LadderEntry,
    LadderQuery,
    PlayerQuery,
    PlayerRating,
    RatingChange,
    RatingHistory,
    RatingsUpdated,
    Reply,
    display_rating,
    rating_stream,
)
from events.contracts.seasons import SeasonQuery
from events.contracts.stats import StatsQuery
from events.envelope import REGISTRY, Metadata
from events.pgstore import Conn, append_with
from events.store import ConcurrencyConflict
from events.subjects import split_stream_id
from services.rating import seasons, stats
from services.rating.model import (
    INACTIVITY_C,
    PROVISIONAL_GAMES,
    SIGMA0,
    Rating,
    decayed,
    rate_field,
    rate_game,
)
from services.rating.stats import stats_page
from services.runtime import logs, ops
from services.runtime.clock import clock_of
from services.runtime.service import Runtime

__all__ = ["CONSUMER", "CRASH_ENV", "main", "rate_finished_game"]

CONSUMER = "rating"
CRASH_ENV = "SPADES_CRASH_POINT"
MAX_PAGE = 200

_encoder = msgspec.json.Encoder()
_ladder_query = msgspec.json.Decoder(LadderQuery)
_player_query = msgspec.json.Decoder(PlayerQuery)
_stats_query = msgspec.json.Decoder(StatsQuery)
_season_query = msgspec.json.Decoder(SeasonQuery)


def _crash_point(name: str) -> None:
    """SIGKILL this process if the test hook names this point (see the module docstring)."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _teams(players: tuple[str, ...], seats: int) -> tuple[list[str], list[str]]:
    """Return the player ids of side 0 and side 1 (team of a seat = seat % 2)."""
    if len(players) != seats or seats not in (2, 3, 4, 5):
        raise Unprocessable(
            f"a rated game needs {seats} players, GameFinished names {len(players)}"
        )
    return [p for s, p in enumerate(players) if s % 2 == 0], [
        p for s, p in enumerate(players) if s % 2 == 1
    ]


def _moves(
    finished: GameFinished,
    ruleset: Any,
    before: dict[str, Rating],
    now: float,
    abandoned: frozenset[str],
) -> dict[str, Rating]:
    """Return the new ratings of one game: two sides (partnerships, heads-up) or a field of
    players each for himself (cut-throat, five players)."""
    if ruleset.teams == 2:
        teams = _teams(finished.players, ruleset.players)
        return rate_game(teams, before, finished.winner, now, abandoned)
    _teams(finished.players, ruleset.players)
    if len(finished.scores) != len(finished.players):
        raise Unprocessable("a game of players each for himself needs a score per seat")
    return rate_field(
        list(finished.players), list(finished.scores), finished.winner, before, now, abandoned
    )


async def rate_finished_game(conn: Conn, received: Received, log: Any) -> str:
    """Apply one GameFinished inside the consumer's transaction; return what happened.

    Returns "unrated", "draw", "applied" or "duplicate".
    """
    finished = received.payload
    if not isinstance(finished, GameFinished):
        raise Unprocessable(f"expected GameFinished, got {received.event.type}")
    category, game_id = split_stream_id(received.event.stream_id)
    if category != "game":
        raise Unprocessable(f"GameFinished from stream {received.event.stream_id!r}")
    bound = log.bind(game_id=game_id, ladder=finished.ladder)
    if not finished.rated:
        bound.info("unrated game: no rating moves")
        return "unrated"
    try:
        ruleset = ruleset_of(finished.ladder)
    except UnknownLadder as exc:
        raise Unprocessable(str(exc)) from None
    if not 0 <= finished.winner < ruleset.teams:
        bound.info("no winner (draw): no rating moves", winner=finished.winner)
        return "draw"
    _teams(finished.players, ruleset.players)
    if len(set(finished.players)) != len(finished.players):
        raise Unprocessable("a player sits twice in one rated game")
    abandoned = frozenset(
        finished.players[s] for s in finished.abandoned if 0 <= s < len(finished.players)
    )
    now = received.event.recorded_at.timestamp()

    # Serialise updates per ladder: two games sharing a player never read the same "before".
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"rating:{finished.ladder}")
    rows = await conn.fetch(
        "SELECT player_id, mu, sigma, games, last_played FROM ratings"
        " WHERE ladder = $1 AND player_id = ANY($2::text[])",
        finished.ladder,
        list(finished.players),
    )
    before = {
        r["player_id"]: Rating(r["mu"], r["sigma"], r["games"], r["last_played"]) for r in rows
    }
    after = _moves(finished, ruleset, before, now, abandoned)
    changes = []
    for player in finished.players:
        if player not in after:
            continue
        old = decayed(before.get(player, Rating()), now)
        new = after[player]
        changes.append(
            RatingChange(
                player_id=player,
                mu_before=old.mu,
                sigma_before=old.sigma,
                mu_after=new.mu,
                sigma_after=new.sigma,
                ordinal_before=old.ordinal,
                ordinal_after=new.ordinal,
                games=new.games,
            )
        )
    event = RatingsUpdated(
        game_id=game_id, ladder=finished.ladder, changes=tuple(changes), rated_at=now
    )
    metadata = Metadata(causation_id=received.event.event_id, actor="rating")
    try:
        await append_with(conn, rating_stream(game_id), 0, [REGISTRY.new_event(event, metadata)])
    except ConcurrencyConflict:
        bound.info("game already rated: RatingsUpdated exists")
        return "duplicate"
    _crash_point("rating-after-append")
    for change in changes:
        await conn.execute(
            "INSERT INTO ratings (ladder, player_id, mu, sigma, games, last_played)"
            " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (ladder, player_id) DO UPDATE SET"
            " mu = EXCLUDED.mu, sigma = EXCLUDED.sigma, games = EXCLUDED.games,"
            " last_played = EXCLUDED.last_played",
            finished.ladder,
            change.player_id,
            change.mu_after,
            change.sigma_after,
            change.games,
            now,
        )
    await conn.executemany(
        "INSERT INTO rating_history (game_id, ladder, player_id, mu_before, sigma_before,"
        " mu_after, sigma_after, ordinal_before, ordinal_after, games, rated_at)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        [
            (
                game_id,
                finished.ladder,
                c.player_id,
                c.mu_before,
                c.sigma_before,
                c.mu_after,
                c.sigma_after,
                c.ordinal_before,
                c.ordinal_after,
                c.games,
                now,
            )
            for c in changes
        ],
    )
    bound.info(
        "ratings updated",
        players=[c.player_id for c in changes],
        deltas=[round(c.mu_after - c.mu_before, 3) for c in changes],
    )
    return "applied"


# -- reads ----------------------------------------------------------------------------------


def _answer(ok: bool, code: str, message: str, **details: Any) -> bytes:
    return _encoder.encode(Reply(ok=ok, code=code, message=message, **details))


# Ordinal with inactivity decay at read time, in SQL so the page is ordered and cut by it.
_DECAYED_SIGMA = (
    "CASE WHEN last_played IS NULL OR $2 <= last_played THEN sigma"
    " ELSE LEAST($3::float8, sqrt(sigma * sigma + $4::float8 * $4::float8"
    " * ($2 - last_played) / 86400.0)) END"
)


async def ladder_page(pool: Any, query: LadderQuery, now: float) -> bytes:
    """Answer one ladder page: players by decayed ordinal, best first."""
    try:
        ruleset_of(query.ladder)
    except UnknownLadder as exc:
        return _answer(False, exc.code, str(exc))
    if query.offset < 0 or not 1 <= query.limit <= MAX_PAGE:
        return _answer(False, "malformed", f"offset must be >= 0 and limit 1..{MAX_PAGE}")
    # One snapshot for the page and its total: read apart, a game rated between the two
    # reads answered "4 players" with an empty page.
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
        rows = await conn.fetch(
            f"SELECT player_id, mu, games, {_DECAYED_SIGMA} AS sigma FROM ratings"
            f" WHERE ladder = $1 ORDER BY mu - 3 * ({_DECAYED_SIGMA}) DESC, player_id"
            " OFFSET $5 LIMIT $6",
            query.ladder,
            now,
            SIGMA0,
            INACTIVITY_C,
            query.offset,
            query.limit,
        )
        total = await conn.fetchval("SELECT count(*) FROM ratings WHERE ladder = $1", query.ladder)
    players = [
        LadderEntry(
            rank=query.offset + i + 1,
            player_id=r["player_id"],
            mu=r["mu"],
            sigma=r["sigma"],
            ordinal=r["mu"] - 3 * r["sigma"],
            games=r["games"],
            provisional=r["games"] < PROVISIONAL_GAMES,
            display=display_rating(r["mu"]),
        )
        for i, r in enumerate(rows)
    ]
    return _answer(
        True,
        "ladder",
        f"{len(players)} of {total} players",
        ladder=query.ladder,
        total=total,
        players=players,
    )


async def player_page(pool: Any, query: PlayerQuery, now: float) -> bytes:
    """Answer a player's ratings per ladder (decay applied) and his history, newest first."""
    if not query.player_id or not 1 <= query.history_limit <= 1000:
        return _answer(False, "malformed", "player_id must be non-empty, history_limit 1..1000")
    rows = await pool.fetch(
        f"SELECT ladder, mu, games, {_DECAYED_SIGMA} AS sigma FROM ratings"
        " WHERE player_id = $1 ORDER BY ladder",
        query.player_id,
        now,
        SIGMA0,
        INACTIVITY_C,
    )
    history = await pool.fetch(
        "SELECT game_id, ladder, mu_before, sigma_before, mu_after, sigma_after,"
        " ordinal_before, ordinal_after, games, rated_at FROM rating_history"
        " WHERE player_id = $1 ORDER BY rated_at DESC, game_id LIMIT $2",
        query.player_id,
        query.history_limit,
    )
    ratings = {
        r["ladder"]: PlayerRating(
            mu=r["mu"],
            sigma=r["sigma"],
            ordinal=r["mu"] - 3 * r["sigma"],
            games=r["games"],
            provisional=r["games"] < PROVISIONAL_GAMES,
            display=display_rating(r["mu"]),
        )
        for r in rows
    }
    return _answer(
        True,
        "player",
        f"{len(ratings)} ladders, {len(history)} games",
        player_id=query.player_id,
        ratings=ratings,
        history=[
            RatingHistory(
                **dict(h),
                display_before=display_rating(h["mu_before"]),
                display_after=display_rating(h["mu_after"]),
            )
            for h in history
        ],
    )


def _reader(rt: Runtime, decoder: Any, page: Any) -> Any:
    async def handle(msg: Msg) -> None:
        with logs.work(logs.request_id_of(msg.headers)):
            try:
                query = decoder.decode(msg.data)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                answer = _answer(False, "malformed", f"cannot read the request: {exc}")
            else:
                try:
                    answer = await page(rt.pool, query, time.time())
                except Exception as exc:  # an answer, never a silent timeout
                    rt.log.exception("read failed", subject=msg.subject)
                    answer = _answer(False, "unavailable", f"read failed: {type(exc).__name__}")
            if msg.reply:
                await msg.respond(answer)

    return handle


async def main(rt: Runtime) -> None:
    """Run the GameFinished consumers, the season closer and the read API until `rt.stop`;
    then finish in flight."""
    log, clock = rt.log, clock_of(rt)

    async def season(pool: Any, query: SeasonQuery, _now: float) -> bytes:
        return await seasons.season_page(pool, query, clock.now(), ladder_page)

    async def handler(conn: Conn, received: Received) -> None:
        outcome = await rate_finished_game(conn, received, log)
        ops.RATING_UPDATES.labels(
            "applied"
            if outcome == "applied"
            else "duplicate"
            if outcome == "duplicate"
            else "skipped"
        ).inc()

    subs = [
        await rt.nc.subscribe(
            rt.subjects.rating_ladder(), queue="rating", cb=_reader(rt, _ladder_query, ladder_page)
        ),
        await rt.nc.subscribe(
            rt.subjects.rating_player(), queue="rating", cb=_reader(rt, _player_query, player_page)
        ),
        await rt.nc.subscribe(
            rt.subjects.rating_stats(), queue="rating", cb=_reader(rt, _stats_query, stats_page)
        ),
        await rt.nc.subscribe(
            rt.subjects.rating_season(), queue="rating", cb=_reader(rt, _season_query, season)
        ),
    ]
    closer = asyncio.create_task(seasons.run(rt.pool, clock, rt.stop, log))

    async def record(conn: Conn, received: Received) -> None:
        await stats.record_game(conn, received, rt.store)

    consumer = asyncio.create_task(
        rt.consume(CONSUMER, rt.subjects.game_finished(), handler, ack_wait=10.0)
    )
    recorder = asyncio.create_task(
        rt.consume(stats.CONSUMER, rt.subjects.game_finished(), record, ack_wait=30.0)
    )
    log.info("rating consuming", subject=rt.subjects.game_finished())
    stopper = asyncio.create_task(rt.stop.wait())
    await asyncio.wait({consumer, recorder, stopper}, return_when=asyncio.FIRST_COMPLETED)
    for sub in subs:
        await sub.drain()  # type: ignore[no-untyped-call]
    rt.stop.set()
    stopper.cancel()
    await consumer  # returns after the message in hand is committed and acked
    await recorder
    await closer
