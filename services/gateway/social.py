"""The people a player chooses to meet or not: follows, blocks, mutes, reports, presence.

The gateway owns the accounts, so it owns these choices too (tables `social_*`, migration 17).
Other services learn of them only through their contracts:

- Blocks (`block`): an account blocked, or blocking, is never seated with the other in a
  ranked game: the gateway adds both directions to `JoinQueue.avoid` (`apart_from`), as it
  does the fair-play links. At a table, partner talk between them is refused and neither
  hears the other's table talk (`Say.apart`). A friends' table asks `invitation_refused`
  before seating or inviting one of them. The blocked account learns nothing of it beyond
  "not available": no route answers who blocked whom, except to the blocker his own list.
- Mutes (`mute`): at one game, the muter hears nothing more the muted says (`Say.deaf`);
  the muted one is not told.
- Reports (`report`): a player or a message (the game and the event's ``seq``) with a reason,
  queued for an operator (`spades reports`, `services.tools.reports`).
- Follows and presence (`follow`, `seen`, `following`): whom a player follows, whether each is
  online (an open authenticated WebSocket on some gateway replica within `ONLINE_SECONDS`) and
  at which live table he is seated, when that table is public.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

REASONS = ("abuse", "cheating", "spam", "other")
"""The reasons a report may give."""
MAX_LIST = 500
"""Follows, blocks and mutes one account may hold at most (each)."""
NOTE_CHARS = 500
"""The most characters of a report's note."""
ONLINE_SECONDS = 90.0
"""An account is online while a gateway replica saw it connected within this many seconds
(each replica writes its connected accounts every `PRESENCE_INTERVAL`)."""
PRESENCE_INTERVAL = 30.0


class SocialRefused(Exception):
    """A social request refused: ``code`` for programs, ``status`` for HTTP."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


async def account_exists(pool: asyncpg.Pool, player_id: str) -> bool:
    """Return whether ``player_id`` is a person's account (bots are not followed or blocked)."""
    found = await pool.fetchval(
        "SELECT 1 FROM gateway_accounts WHERE player_id = $1 AND NOT bot", player_id
    )
    return found is not None


async def _other(pool: asyncpg.Pool, me: str, other: str) -> None:
    if other == me:
        raise SocialRefused(409, "not_yourself", "that is your own account")
    if not await account_exists(pool, other):
        raise SocialRefused(404, "not_found", f"no player {other[:40]!r}")


async def _add(pool: asyncpg.Pool, table: str, mine: str, theirs: str, me: str, other: str) -> bool:
    """Insert (me, other) into a list, within `MAX_LIST`; return whether it is new."""
    async with pool.acquire() as conn, conn.transaction():
        count = await conn.fetchval(f"SELECT count(*) FROM {table} WHERE {mine} = $1", me)
        if count >= MAX_LIST:
            raise SocialRefused(409, "too_many", f"at most {MAX_LIST}: remove some first")
        status = await conn.execute(
            f"INSERT INTO {table} ({mine}, {theirs}) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            me,
            other,
        )
    return bool(status.endswith(" 1"))


# -- blocks -------------------------------------------------------------------------------------


async def block(pool: asyncpg.Pool, me: str, other: str) -> bool:
    """Block ``other`` (idempotent); return whether it is new. Unfollows both ways."""
    await _other(pool, me, other)
    new = await _add(pool, "social_blocks", "blocker", "blocked", me, other)
    await pool.execute(
        "DELETE FROM social_follows WHERE (follower = $1 AND followed = $2)"
        " OR (follower = $2 AND followed = $1)",
        me,
        other,
    )
    return new


async def unblock(pool: asyncpg.Pool, me: str, other: str) -> None:
    """Lift a block (idempotent)."""
    await pool.execute("DELETE FROM social_blocks WHERE blocker = $1 AND blocked = $2", me, other)


async def blocked_by_me(pool: asyncpg.Pool, me: str) -> list[str]:
    """Return the accounts ``me`` blocked (only he may ask)."""
    rows = await pool.fetch(
        "SELECT blocked FROM social_blocks WHERE blocker = $1 ORDER BY blocked", me
    )
    return [r["blocked"] for r in rows]


async def apart_from(pool: asyncpg.Pool, player_id: str) -> set[str]:
    """Return the accounts ``player_id`` blocked or is blocked by: never seated together in a
    ranked game (`JoinQueue.avoid`), no talk between them."""
    rows = await pool.fetch(
        "SELECT blocked AS other FROM social_blocks WHERE blocker = $1"
        " UNION SELECT blocker FROM social_blocks WHERE blocked = $1",
        player_id,
    )
    return {r["other"] for r in rows}


async def invitation_refused(pool: asyncpg.Pool, host: str, guest: str) -> bool:
    """Return whether ``host`` may not invite or seat ``guest`` at a friends' table (one of
    them blocked the other). Refuse it as "not available", never saying which."""
    return guest in await apart_from(pool, host)


# -- mutes --------------------------------------------------------------------------------------


async def mute(pool: asyncpg.Pool, game_id: str, me: str, other: str) -> None:
    """Mute ``other`` at ``game_id`` for ``me`` (idempotent)."""
    if other == me:
        raise SocialRefused(409, "not_yourself", "that is your own account")
    count = await pool.fetchval(
        "SELECT count(*) FROM social_mutes WHERE game_id = $1 AND muter = $2", game_id, me
    )
    if count >= MAX_LIST:
        raise SocialRefused(409, "too_many", f"at most {MAX_LIST} mutes at one game")
    await pool.execute(
        "INSERT INTO social_mutes (game_id, muter, muted) VALUES ($1, $2, $3)"
        " ON CONFLICT DO NOTHING",
        game_id,
        me,
        other,
    )


async def unmute(pool: asyncpg.Pool, game_id: str, me: str, other: str) -> None:
    """Lift a mute (idempotent)."""
    await pool.execute(
        "DELETE FROM social_mutes WHERE game_id = $1 AND muter = $2 AND muted = $3",
        game_id,
        me,
        other,
    )


async def muted_by_me(pool: asyncpg.Pool, game_id: str, me: str) -> list[str]:
    """Return the accounts ``me`` muted at ``game_id``."""
    rows = await pool.fetch(
        "SELECT muted FROM social_mutes WHERE game_id = $1 AND muter = $2 ORDER BY muted",
        game_id,
        me,
    )
    return [r["muted"] for r in rows]


async def deaf_to(pool: asyncpg.Pool, game_id: str, speaker: str) -> set[str]:
    """Return the accounts that muted ``speaker`` at ``game_id`` (`Say.deaf`)."""
    rows = await pool.fetch(
        "SELECT muter FROM social_mutes WHERE game_id = $1 AND muted = $2", game_id, speaker
    )
    return {r["muter"] for r in rows}


# -- reports ------------------------------------------------------------------------------------


async def report(
    pool: asyncpg.Pool,
    me: str,
    other: str,
    reason: str,
    *,
    note: str = "",
    game_id: str | None = None,
    seq: int | None = None,
    per_day: int = 20,
) -> int:
    """Queue a report of ``other`` (a message when ``seq`` is given) for an operator; return
    its id. At most ``per_day`` reports a day per reporter (``report_flood``)."""
    await _other(pool, me, other)
    if reason not in REASONS:
        raise SocialRefused(400, "unknown_reason", f"reason is one of {', '.join(REASONS)}")
    if len(note) > NOTE_CHARS:
        raise SocialRefused(400, "too_long", f"a note has at most {NOTE_CHARS} characters")
    if seq is not None and game_id is None:
        raise SocialRefused(404, "not_a_message", "a reported message names its game")
    recent = await pool.fetchval(
        "SELECT count(*) FROM social_reports"
        " WHERE reporter = $1 AND created_at > now() - interval '1 day'",
        me,
    )
    if recent >= per_day:
        raise SocialRefused(429, "report_flood", f"at most {per_day} reports a day")
    report_id: int = await pool.fetchval(
        "INSERT INTO social_reports (reporter, reported, game_id, seq, reason, note)"
        " VALUES ($1, $2, $3, $4, $5, $6) RETURNING report_id",
        me,
        other,
        game_id,
        seq,
        reason,
        note,
    )
    return report_id


@dataclass(frozen=True)
class Report:
    """A report as the operator's queue lists it."""

    report_id: int
    reporter: str
    reported: str
    game_id: str | None
    seq: int | None
    reason: str
    note: str
    created_at: str
    closed: bool


async def reports(pool: asyncpg.Pool, *, include_closed: bool = False) -> list[Report]:
    """Return the reports, oldest open first."""
    rows = await pool.fetch(
        "SELECT report_id, reporter, reported, game_id, seq, reason, note, created_at,"
        " closed_at IS NOT NULL AS closed FROM social_reports"
        " WHERE $1 OR closed_at IS NULL ORDER BY created_at, report_id",
        include_closed,
    )
    return [
        Report(**{**dict(r), "created_at": r["created_at"].isoformat(timespec="seconds")})
        for r in rows
    ]


async def close_report(pool: asyncpg.Pool, report_id: int) -> bool:
    """Close a report (the operator dealt with it); return whether it was open."""
    status = await pool.execute(
        "UPDATE social_reports SET closed_at = now() WHERE report_id = $1 AND closed_at IS NULL",
        report_id,
    )
    return bool(status.endswith(" 1"))


# -- follows and presence -----------------------------------------------------------------------


async def follow(pool: asyncpg.Pool, me: str, other: str) -> bool:
    """Follow ``other`` (idempotent); a blocked pair cannot (``not_available``)."""
    await _other(pool, me, other)
    if other in await apart_from(pool, me):
        raise SocialRefused(409, "not_available", "this player is not available")
    return await _add(pool, "social_follows", "follower", "followed", me, other)


async def unfollow(pool: asyncpg.Pool, me: str, other: str) -> None:
    """Stop following (idempotent)."""
    await pool.execute(
        "DELETE FROM social_follows WHERE follower = $1 AND followed = $2", me, other
    )


async def seen(pool: asyncpg.Pool, where: dict[str, str | None]) -> None:
    """Record that these accounts are connected now, each at the game he is seated at (None:
    none, or not a public one)."""
    if not where:
        return
    players = sorted(where)
    await pool.execute(
        "INSERT INTO social_presence (player_id, seen_at, game_id)"
        " SELECT p, now(), g FROM unnest($1::text[], $2::text[]) AS t(p, g)"
        " ON CONFLICT (player_id) DO UPDATE SET seen_at = now(), game_id = excluded.game_id",
        players,
        [where[p] for p in players],
    )


@dataclass(frozen=True)
class Followed:
    """A followed player: whether he is online and at which public table he sits."""

    player_id: str
    name: str
    online: bool
    game_id: str | None


async def following(pool: asyncpg.Pool, me: str) -> list[Followed]:
    """Return whom ``me`` follows, the online ones first."""
    rows = await pool.fetch(
        "SELECT f.followed AS player_id, a.name,"
        " coalesce(p.seen_at > now() - make_interval(secs => $2), false) AS online,"
        " p.game_id FROM social_follows f"
        " JOIN gateway_accounts a ON a.player_id = f.followed"
        " LEFT JOIN social_presence p ON p.player_id = f.followed"
        " WHERE f.follower = $1 ORDER BY online DESC, a.name",
        me,
        ONLINE_SECONDS,
    )
    return [
        Followed(
            player_id=r["player_id"],
            name=r["name"],
            online=r["online"],
            game_id=r["game_id"] if r["online"] else None,
        )
        for r in rows
    ]
