"""Accounts, passwords and access tokens.

- A player id is the account name in lower case (`ann`); a bot account's is `bot:<name>`, the
  prefix the table and matchmaking already treat as a bot's (ranked queues refuse it, so bots
  never reach the human ladder). Names start with a letter, so no account can be `bot:1`, a
  practice table's built-in bot.
- Passwords are hashed with argon2id (memory-hard); hashing runs in a worker thread so a login
  never stalls the event loop. An unknown name costs the same hash as a wrong password.
- Access tokens are HS256 JWTs (`sub` = player id, `bot`, `iat`, `exp`, `iss`, `typ`), valid
  `SPADES_TOKEN_SECONDS` (15 minutes by default); a client logs in again to get a new one.
"""

from __future__ import annotations

import asyncio
import re
import time
from datetime import datetime
from typing import Annotated, Any

import asyncpg
import jwt
import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

ISSUER = "spades-gateway"
TOKEN_TYPE = "access"
BOT_PREFIX = "bot:"
NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{2,23}$"
_NAME = re.compile(NAME_PATTERN)

_hasher = PasswordHasher()
# Verified against when the name is unknown, so both failures take one argon2 verification.
_DUMMY_HASH = _hasher.hash("not a password of anyone")

Name = Annotated[
    str,
    msgspec.Meta(
        pattern=NAME_PATTERN,
        description="3 to 24 letters, digits, '_' or '-', starting with a letter",
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


class TokenError(Exception):
    """An access token that cannot be used: ``code`` is token_expired or token_invalid."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class NameTaken(Exception):
    """Another account already has this name (names are unique ignoring case)."""


def player_id_of(name: str, bot: bool) -> str:
    """Return the player id of an account name."""
    return f"{BOT_PREFIX}{name.lower()}" if bot else name.lower()


def valid_name(name: str) -> bool:
    """Return whether ``name`` can name an account."""
    return bool(_NAME.match(name))


async def hash_password(password: str) -> str:
    """Return the argon2id hash of ``password`` (computed off the event loop)."""
    return await asyncio.to_thread(_hasher.hash, password)


async def verify_password(password_hash: str | None, password: str) -> bool:
    """Return whether ``password`` matches ``password_hash`` (None: an unknown account)."""

    def check() -> bool:
        try:
            return _hasher.verify(password_hash or _DUMMY_HASH, password) and bool(password_hash)
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
