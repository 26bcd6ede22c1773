"""Accounts, passwords and access tokens.

- A player id is the account name in lower case (`ann`); a bot account's is `bot:<name>`, the
  prefix the table and matchmaking already treat as a bot's (ranked queues refuse it, so bots
  never reach the human ladder). Names start with a letter, so no account can be `bot:1`, a
  practice table's built-in bot.
- Passwords are hashed with argon2id (memory-hard); hashing runs in a worker thread so a login
  never stalls the event loop. An unknown name costs the same hash as a wrong password.
  Test hook: `SPADES_TEST_CHEAP_HASHING=1` hashes new passwords at argon2id's smallest cost
  (about a millisecond, where the default costs ~0.3 CPU s a hash): the test suite registers
  hundreds of accounts. Never set in production: the gateway logs an error at start when it
  is. A stored hash carries its own parameters, so either kind verifies under either setting.
- Access tokens are HS256 JWTs (`sub` = player id, `bot`, `iat`, `exp`, `iss`, `typ`), valid
  `SPADES_TOKEN_SECONDS` (15 minutes by default). Nothing is stored for them: a token stays
  good until it expires, logout included.
- A login also opens a session (table `gateway_sessions`, migration 6) and returns its refresh
  token, `<session_id>.<secret>` (a uuid, a dot, 43 url-safe characters of
  `secrets.token_urlsafe(32)`). A client trades it for a new access token and a new refresh
  token (`rotate`); the secret is only ever stored as its sha256, and each rotation replaces
  it. A session lasts `SPADES_SESSION_DAYS` (30) after its last use, until logout (`revoke`),
  which takes a secret the session had, like a renewal: a made-up one ends nothing.
- Reuse detection: a well-formed token of an existing session whose secret is the one the last
  renewal replaced (a secret already rotated away: someone else holds a copy) revokes the
  whole session, so whichever of the thief and the owner renews next must log in again.
  A secret the session never had revokes nothing: the session id is no secret (it is the
  first half of every token of the session), and anyone who learned one could otherwise end
  its owner's session with a guess. The hashes of the last `SPENT_KEPT` (64) replaced secrets
  are kept (migration 9) to tell the two apart; an older one is refused without revoking.
  One exception, the
  grace (`SPADES_SESSION_REUSE_SECONDS`, 30): the secret the last renewal replaced still
  renews the session for that long after it was replaced. Two tabs of one browser renewing
  at once (Chromium's localStorage reaches another tab a moment late, so a tab can trade a
  token its sibling has just traded) and a renewal retried after its answer was lost are
  the owner's own, and must not end the session; a thief must present the replaced token
  within those seconds of the owner's renewal to pass, and is caught the time after.
- Refusals are `SessionError`s: `refresh_expired`, or `refresh_invalid` for a token that is
  unknown, garbled, revoked or reused.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import secrets
import time
import uuid
from datetime import datetime
from typing import Annotated, Any

import asyncpg
import jwt
import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from events.errors import Refusal

ISSUER = "spades-gateway"
TOKEN_TYPE = "access"
BOT_PREFIX = "bot:"
NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{2,23}$"
_NAME = re.compile(NAME_PATTERN)
NAME_RULE = "3 to 24 letters, digits, '_' or '-', starting with a letter"

CHEAP_HASHING_ENV = "SPADES_TEST_CHEAP_HASHING"
"""Test hook: ``1`` hashes passwords at argon2id's smallest cost. Never set in production."""
CHEAP_HASHING = os.environ.get(CHEAP_HASHING_ENV, "") == "1"

_hasher = (
    PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    if CHEAP_HASHING
    else PasswordHasher()
)
# Verified against when the name is unknown, so both failures take one argon2 verification.
# The hash of a random secret thrown away, written out rather than computed at import: each
# gateway process saved ~0.25 s of CPU at start. A test checks it carries the hasher's own
# parameters (else the two failures would take different times). The test hook's hasher
# costs next to nothing: its dummy is computed.
DUMMY_HASH = (
    _hasher.hash(secrets.token_urlsafe(16))
    if CHEAP_HASHING
    else (
        "$argon2id$v=19$m=65536,t=3,p=4$FE4J37/NWGLkwuQ3Tn7FOg"
        "$RXwbqkubzKOpLWFxbmp/pESzIeoi8cXFXq5JZta/rxQ"
    )
)

Name = Annotated[
    str,
    msgspec.Meta(
        pattern=NAME_PATTERN,
        description=NAME_RULE,
        examples=["ann"],
    ),
]
Password = Annotated[str, msgspec.Meta(min_length=8, max_length=128, examples=["correct horse"])]


class Account(msgspec.Struct, frozen=True, kw_only=True):
    """A player's or bot's account, as the API shows it (never the password hash)."""

    player_id: str
    name: str
    bot: bool
    created_at: datetime


class Claims(msgspec.Struct, frozen=True, kw_only=True):
    """What a verified access token says: who, whether a bot, until when (unix seconds)."""

    player_id: str
    bot: bool
    expires_at: float


class TokenError(Refusal):
    """An access token that cannot be used: ``code`` is token_expired or token_invalid."""


class NameTaken(Exception):
    """Another account already has this name (names are unique ignoring case)."""


def player_id_of(name: str, bot: bool) -> str:
    """Return the player id of an account name."""
    return f"{BOT_PREFIX}{name.lower()}" if bot else name.lower()


def valid_name(name: str) -> bool:
    """Return whether ``name`` can name an account: the whole string, to its very end (a
    Python ``$`` also matches before a final newline, which let ``"ann\\n"`` sit beside
    ``ann``)."""
    return _NAME.fullmatch(name) is not None


async def hash_password(password: str) -> str:
    """Return the argon2id hash of ``password`` (computed off the event loop)."""
    return await asyncio.to_thread(_hasher.hash, password)


async def verify_password(password_hash: str | None, password: str) -> bool:
    """Return whether ``password`` matches ``password_hash`` (None: an unknown account)."""

    def check() -> bool:
        try:
            return _hasher.verify(password_hash or DUMMY_HASH, password) and bool(password_hash)
        except (VerificationError, InvalidHashError):
            return False

    return await asyncio.to_thread(check)


class Tokens:
    """Issues and verifies the gateway's access tokens with one HS256 key."""

    def __init__(self, secret: str, seconds: int) -> None:
        self._secret = secret
        self.seconds = seconds

    def issue(self, player_id: str, bot: bool, now: float | None = None) -> tuple[str, float]:
        """Return a signed token for ``player_id`` and its expiry (unix seconds)."""
        issued = time.time() if now is None else now
        expires = issued + self.seconds
        claims = {
            "sub": player_id,
            "bot": bot,
            "iat": int(issued),
            "exp": int(expires),
            "iss": ISSUER,
            "typ": TOKEN_TYPE,
        }
        return jwt.encode(claims, self._secret, algorithm="HS256"), expires

    def verify(self, token: str) -> Claims:
        """Return the claims of a valid token; raise TokenError saying why it is not."""
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._secret,
                algorithms=["HS256"],
                issuer=ISSUER,
                options={"require": ["sub", "exp", "iat", "iss"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenError("token_expired", "the access token expired: log in again") from None
        except jwt.PyJWTError:
            raise TokenError("token_invalid", "the token is not one this server signed") from None
        sub, bot = claims.get("sub"), claims.get("bot", False)
        if claims.get("typ") != TOKEN_TYPE or not isinstance(sub, str) or not isinstance(bot, bool):
            raise TokenError("token_invalid", "the access token is not an access token")
        return Claims(player_id=sub, bot=bot, expires_at=float(claims["exp"]))


# -- the accounts table (migration 3) -------------------------------------------------------------


def _account(row: asyncpg.Record) -> Account:
    return Account(
        player_id=row["player_id"], name=row["name"], bot=row["bot"], created_at=row["created_at"]
    )


async def create_account(pool: asyncpg.Pool, name: str, password_hash: str, bot: bool) -> Account:
    """Insert a new account and return it; raise NameTaken when the name is in use."""
    try:
        row = await pool.fetchrow(
            "INSERT INTO gateway_accounts (player_id, name, password_hash, bot)"
            " VALUES ($1, $2, $3, $4) RETURNING player_id, name, bot, created_at",
            player_id_of(name, bot),
            name,
            password_hash,
            bot,
        )
    except asyncpg.UniqueViolationError:
        raise NameTaken(name) from None
    assert row is not None
    return _account(row)


async def find_login(pool: asyncpg.Pool, name: str) -> tuple[Account, str] | None:
    """Return the account named ``name`` (any case) and its password hash, or None."""
    row = await pool.fetchrow(
        "SELECT player_id, name, bot, created_at, password_hash FROM gateway_accounts"
        " WHERE lower(name) = lower($1)",
        name,
    )
    return None if row is None else (_account(row), row["password_hash"])


async def find_account(pool: asyncpg.Pool, player_id: str) -> Account | None:
    """Return the account of ``player_id``, or None."""
    row = await pool.fetchrow(
        "SELECT player_id, name, bot, created_at FROM gateway_accounts WHERE player_id = $1",
        player_id,
    )
    return None if row is None else _account(row)


# -- sessions and refresh tokens (migration 6) ----------------------------------------------------

REFRESH_SECRET_BYTES = 32
SPENT_KEPT = 64
"""Replaced secrets remembered per session: presenting one revokes the session."""
_SECRET = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32), no padding
REFRESH_TOKEN_CHARS = 36 + 1 + 43
"""A refresh token's length: a canonical uuid, a dot and the secret."""


class Session(msgspec.Struct, frozen=True, kw_only=True):
    """A session just opened or renewed: the refresh token to give the client (its only copy),
    whose session it is, and for how many seconds it stays usable without being renewed."""

    refresh_token: str
    player_id: str
    bot: bool
    seconds: int


class SessionError(Refusal):
    """A refresh token that cannot be used: ``code`` is refresh_expired or refresh_invalid."""


def _secret_hash(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def parse_refresh_token(token: str) -> tuple[uuid.UUID, str] | None:
    """Return the session id and secret of a well-formed refresh token, or None."""
    session_text, dot, secret = token.partition(".")
    if not dot or not _SECRET.fullmatch(secret):
        return None
    try:
        session_id = uuid.UUID(session_text)
    except ValueError:
        return None
    # only the form we hand out: no braces, urn: prefix, capitals or missing dashes
    return (session_id, secret) if str(session_id) == session_text else None


def _invalid(message: str = "the refresh token is not valid: log in again") -> SessionError:
    return SessionError("refresh_invalid", message)


async def open_session(pool: asyncpg.Pool, account: Account, seconds: int) -> Session:
    """Open a session for ``account`` (at login) and return its first refresh token.

    The account's sessions that ended (revoked or expired) are deleted on the way: a token of
    one of them is refused as unknown just as it was refused as ended.
    """
    session_id, secret = uuid.uuid4(), secrets.token_urlsafe(REFRESH_SECRET_BYTES)
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "DELETE FROM gateway_sessions"
            " WHERE player_id = $1 AND (revoked_at IS NOT NULL OR expires_at <= now())",
            account.player_id,
        )
        await conn.execute(
            "INSERT INTO gateway_sessions (session_id, player_id, secret_hash, expires_at)"
            " VALUES ($1, $2, $3, now() + $4::integer * interval '1 second')",
            session_id,
            account.player_id,
            _secret_hash(secret),
            seconds,
        )
    return Session(
        refresh_token=f"{session_id}.{secret}",
        player_id=account.player_id,
        bot=account.bot,
        seconds=seconds,
    )


async def rotate_session(
    pool: asyncpg.Pool, refresh_token: str, seconds: int, grace: int = 30
) -> Session:
    """Trade a refresh token for the session's next one; the session then lasts ``seconds``
    more. The secret the last renewal replaced is taken too for ``grace`` seconds after it
    was replaced. Raise SessionError when the token cannot be used; any other replaced secret
    revokes the session (see the module's docstring)."""
    parsed = parse_refresh_token(refresh_token)
    if parsed is None:
        raise _invalid()
    session_id, secret = parsed
    presented = _secret_hash(secret)
    fresh = secrets.token_urlsafe(REFRESH_SECRET_BYTES)
    # One statement, so renewals racing with one token are serialised by the row lock: the
    # first replaces the secret, the next finds it as the previous one (within the grace).
    row = await pool.fetchrow(
        "UPDATE gateway_sessions AS s"
        " SET spent_hashes = CASE WHEN s.previous_hash IS NULL THEN s.spent_hashes"
        "     ELSE (s.spent_hashes || s.previous_hash)"
        f"         [greatest(1, cardinality(s.spent_hashes) + 2 - {SPENT_KEPT}):] END,"
        "     previous_hash = s.secret_hash, rotated_at = now(), secret_hash = $3,"
        "     last_used_at = now(), expires_at = now() + $4::integer * interval '1 second'"
        " FROM gateway_accounts AS a"
        " WHERE s.session_id = $1 AND s.revoked_at IS NULL AND s.expires_at > now()"
        "   AND (s.secret_hash = $2 OR (s.previous_hash = $2"
        "        AND s.rotated_at > now() - $5::integer * interval '1 second'))"
        "   AND a.player_id = s.player_id"
        " RETURNING s.player_id, a.bot",
        session_id,
        presented,
        _secret_hash(fresh),
        seconds,
        grace,
    )
    if row is not None:
        return Session(
            refresh_token=f"{session_id}.{fresh}",
            player_id=row["player_id"],
            bot=row["bot"],
            seconds=seconds,
        )
    # Refused: say why (and revoke on reuse).
    found = await pool.fetchrow(
        "SELECT revoked_at IS NOT NULL AS revoked, expires_at <= now() AS expired"
        " FROM gateway_sessions WHERE session_id = $1",
        session_id,
    )
    if found is None or found["revoked"]:
        raise _invalid()
    if found["expired"]:
        raise SessionError("refresh_expired", "the session expired: log in again")
    # a secret this session really had, replaced (past the grace): a copy is in other hands
    revoked = await pool.execute(
        "UPDATE gateway_sessions SET revoked_at = now()"
        " WHERE session_id = $1 AND revoked_at IS NULL"
        "   AND (previous_hash = $2 OR $2 = ANY (spent_hashes))",
        session_id,
        presented,
    )
    if revoked.endswith(" 1"):
        raise _invalid("the refresh token was already used: the session is revoked, log in again")
    # A secret the session never had (a guess beside a known session id) proves nothing
    # about the owner's token: refusing it must not end his session.
    raise _invalid()


async def revoke_session(pool: asyncpg.Pool, refresh_token: str) -> bool:
    """End the session of ``refresh_token`` (logout); return whether one was open.

    The same rule as `rotate_session`: only a secret the session had ends it — its current
    one, or one a renewal replaced (presenting that to `rotate_session` would revoke the
    session anyway). The session id is no secret, so a secret the open session never had
    ends nothing and raises SessionError `refresh_invalid`; a token of no open session (ended
    already, unknown, garbled) is answered as done, so logging out twice is harmless.
    """
    parsed = parse_refresh_token(refresh_token)
    if parsed is None:
        return False
    session_id, secret = parsed
    presented = _secret_hash(secret)
    status = await pool.execute(
        "UPDATE gateway_sessions SET revoked_at = now()"
        " WHERE session_id = $1 AND revoked_at IS NULL"
        "   AND (secret_hash = $2 OR previous_hash = $2 OR $2 = ANY (spent_hashes))",
        session_id,
        presented,
    )
    if status.endswith(" 1"):
        return True
    open_ = await pool.fetchval(
        "SELECT true FROM gateway_sessions"
        " WHERE session_id = $1 AND revoked_at IS NULL AND expires_at > now()",
        session_id,
    )
    if open_:
        raise _invalid("the refresh token is not this session's: nothing was ended")
    return False
