"""Practice tables: the caller and bots, unrated, with any rules the engine accepts."""

from __future__ import annotations

import uuid

import msgspec
from litestar import Controller, get, post
from litestar.datastructures import State
from litestar.params import JSONBody

from events.contracts import game as wire
from events.contracts import ladders
from events.contracts.game import stream_of
from events.pgstore import count_unfinished_openings, stream_exists
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import BEARER, asked_again, gateway_of, refused
from services.gateway.http.security import Caller, account_required


class PracticeRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Rule options of a practice table (empty: the ladder's); ``command_id`` makes a retry
    open the same table."""

    rules: dict[str, wire.RuleValue] = {}
    command_id: uuid.UUID | None = None
    bots: str = "baseline"
    """The bots' level: "baseline" (quick, sound) or "strong" (searches each card)."""
    untimed: bool = False
    """No turn timer: the bots wait for you (a practice game only; ranked games are timed)."""
    free_text_chat: bool = False
    """Free text at the table besides the talk presets (`events.contracts.talk`)."""


class RulesCheck(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Rule options to check as a practice table would (empty: the ladder's)."""

    rules: dict[str, wire.RuleValue] = {}


class RulesChecked(msgspec.Struct, frozen=True, kw_only=True):
    """The options make a valid table; ``rules`` is every option as the table would play."""

    rules: dict[str, wire.RuleValue]


class RulePreset(msgspec.Struct, frozen=True, kw_only=True):
    """A named variant of the rule book: the options it changes from the ladder's."""

    name: str
    label: str
    description: str
    rules: dict[str, wire.RuleValue]


class RuleBook(msgspec.Struct, frozen=True, kw_only=True):
    """What a rules form needs: every option's default, the bounds (inclusive) of the
    whole-number options (``other_bound`` for any not listed), and the named variants."""

    defaults: dict[str, wire.RuleValue]
    bounds: dict[str, tuple[int, int]]
    other_bound: tuple[int, int]
    presets: list[RulePreset]


class Opened(msgspec.Struct, frozen=True, kw_only=True):
    """A table was opened: play it over the WebSocket with this game id."""

    game_id: str


class Practice(Controller):
    """Practice tables: the caller and bots."""

    path = "/api/practice"
    tags = ["games"]  # noqa: RUF012
    guards = [account_required]  # noqa: RUF012

    @get(
        "/rules",
        responses=ERROR_RESPONSES,
        summary="The rule book: defaults, bounds, variants",
        security=BEARER,
    )
    async def rules(self) -> RuleBook:
        """Every rule option's default, the server's bounds of the whole-number options
        (`engine.rules.BOUNDS`) and the rule book's named variants (standard, two players,
        cut-throat, five players, jokers, Joker-Joker-Deuce, suicide, Moe, tournament)."""
        return msgspec.convert(ladders.rule_book(), RuleBook)

    @post(
        "/rules/check",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Check rule options as a practice table would",
        security=BEARER,
    )
    async def check_rules(self, data: JSONBody[RulesCheck]) -> RulesChecked:
        """200 with every option when these make a valid table; 400 `invalid_ruleset` with
        the reason (a bound, or a dependency such as "little_willie ... needs jokers and
        deuces_high") otherwise. Nothing is opened."""
        problem = ladders.rule_problem(dict(data.rules))
        if problem:
            raise ApiError(400, "invalid_ruleset", problem)
        full = {**ladders.rule_book()["defaults"], **data.rules}  # type: ignore[dict-item]
        return RulesChecked(rules=full)

    @post(
        "/",
        responses=ERROR_RESPONSES,
        status_code=201,
        summary="Open a practice table with bots",
        security=BEARER,
    )
    async def open(self, data: JSONBody[PracticeRequest], request: Caller, state: State) -> Opened:
        """Open an unrated table: the caller at seat 0, bots at the others, these rules.
        An account has at most `SPADES_LIVE_TABLES_PER_ACCOUNT` (3) unfinished practice or
        casual tables: 409 `too_many_tables` beyond (a retry of one already opened, same
        ``command_id``, is answered with its game)."""
        gateway = gateway_of(state)
        player_id = request.user.player_id
        # litestar converts bodies laxly (0 would pass as false): a flag must be a JSON boolean
        raw = await request.json()
        for flag in ("untimed", "free_text_chat"):
            if isinstance(raw, dict) and not isinstance(raw.get(flag, False), bool):
                raise ApiError(400, "malformed", f"{flag} must be true or false")
        body = wire.OpenPractice(
            player_id=player_id,
            command_id=scoped_id(player_id, data.command_id or uuid.uuid4()),
            rules=data.rules,
            bots=data.bots,
            untimed=data.untimed,
            free_text_chat=data.free_text_chat,
        )
        # One opening at a time per account (a transaction-scoped advisory lock): the count
        # and the table's append are serialised, so parallel requests cannot pass the cap.
        async with gateway.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))", LIVE_TABLES_LOCK, player_id
            )
            retry = await stream_exists(conn, stream_of(practice_game_id(body.command_id)))
            live = (
                0
                if retry
                else await count_unfinished_openings(
                    conn, "TableOpened", "GameFinished", player=player_id, unless="rated"
                )
            )
            cap = gateway.config.live_tables_per_account
            if live >= cap:
                raise ApiError(
                    409,
                    "too_many_tables",
                    f"you have {live} unfinished practice or casual tables (at most {cap}):"
                    " finish one or leave it first (Leave, in your games in the lobby)",
                )
            # resent while unanswered: the command id names the game, opened once
            answer, _ = await asked_again(gateway, gateway.subjects.table_open(), body)
            reply = _table_reply.decode(answer)
        if not reply.ok:
            raise refused(reply.code, reply.message)
        return Opened(game_id=reply.game_id)


_table_reply = msgspec.json.Decoder(wire.TableReply)
LIVE_TABLES_LOCK = 0x5ADE7
"""First key of the two-key advisory lock serialising one account's table openings."""


def practice_game_id(command_id: uuid.UUID) -> str:
    """Return the game id the table gives a practice table opened with ``command_id``."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"practice:{command_id}"))


_PRACTICE_NAMESPACE = uuid.UUID("5ade5000-0000-4000-8000-0000000097ac")


def scoped_id(player_id: str, command_id: uuid.UUID) -> uuid.UUID:
    """Return a client's command id scoped to its player (ids of others cannot collide)."""
    return uuid.uuid5(_PRACTICE_NAMESPACE, f"{player_id}\n{command_id}")


__all__ = ["Opened", "Practice", "PracticeRequest", "practice_game_id", "scoped_id"]
