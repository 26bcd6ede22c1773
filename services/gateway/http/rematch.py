"""`/api/games/{game_id}/rematch`: accept or decline a rematch of a finished unrated game."""

from __future__ import annotations

import msgspec
from litestar import Controller, get, post
from litestar.datastructures import State
from litestar.params import JSONBody

from events.contracts import game as wire
from services.gateway import rematch
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import BEARER, asked_again, gateway_of, refused, strict_bools
from services.gateway.http.games import GAME_ID, canonical_game_id
from services.gateway.http.security import Caller, account_required
from services.gateway.notices import RematchChanged, publish
from services.gateway.rematch import RematchRefusal


class RematchAnswer(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Accept (the default) or decline the rematch."""

    accept: bool = True


class Rematch(msgspec.Struct, frozen=True, kw_only=True):
    """A finished game's rematch: its ``players`` (the people who played), who ``accepted``,
    who ``declined``; ``new_game_id`` once everyone accepted."""

    game_id: str
    players: tuple[str, ...]
    accepted: tuple[str, ...] = ()
    declined: str | None = None
    new_game_id: str | None = None


_table_reply = msgspec.json.Decoder(wire.TableReply)


def _shown(game_id: str, row: object) -> Rematch:
    return Rematch(
        game_id=game_id,
        players=tuple(row["players"]),  # type: ignore[index]
        accepted=tuple(row["accepted"]),  # type: ignore[index]
        declined=row["declined"],  # type: ignore[index]
        new_game_id=None if row["new_game_id"] is None else str(row["new_game_id"]),  # type: ignore[index]
    )


class Rematches(Controller):
    """Rematches of finished unrated games."""

    path = "/api/games"
    tags = ["games"]  # noqa: RUF012
    guards = [account_required, canonical_game_id]  # noqa: RUF012

    @get(
        "/{game_id:str}/rematch",
        responses=ERROR_RESPONSES,
        summary="Who accepted a rematch",
        security=BEARER,
    )
    async def status(self, game_id: GAME_ID, request: Caller, state: State) -> Rematch:
        """The rematch as it stands (nobody answered yet: no one accepted). The refusals of
        the POST below, but `already_accepted` and `rematch_declined`."""
        gateway = gateway_of(state)
        try:
            game = await rematch.finished_game(gateway.store, game_id)
            rematch.may_answer(game, request.user.player_id)
        except RematchRefusal as exc:
            raise ApiError(exc.status, exc.code, exc.message) from None
        row = await rematch.read(gateway.pool, game_id)
        if row is None:
            return Rematch(game_id=game_id, players=game.people)
        return _shown(game_id, row)

    @post(
        "/{game_id:str}/rematch",
        responses=ERROR_RESPONSES,
        status_code=200,
        summary="Accept or decline a rematch",
        security=BEARER,
    )
    async def answer(
        self, game_id: GAME_ID, data: JSONBody[RematchAnswer], request: Caller, state: State
    ) -> Rematch:
        """Accept (or, with `accept: false`, decline) a rematch of a finished unrated game you
        played. When everyone who played has accepted, the new game opens (same seats and
        rules, the deal passed on): its id is `new_game_id`, and every player gets a
        `rematch` message. 404 `unknown_game`; 403 `not_a_player`; 409 `rated_game` (play
        again by queueing), `game_not_finished`, `player_left`, `rematch_declined`,
        `already_accepted`."""
        gateway = gateway_of(state)
        player = request.user.player_id
        await strict_bools(request, "accept")
        try:
            game = await rematch.finished_game(gateway.store, game_id)
            rematch.may_answer(game, player)
            async with gateway.pool.acquire() as conn, conn.transaction():
                row = await rematch.locked(conn, game_id, game.people)
                accepted, declined = rematch.answered(row, player, data.accept)
                new_game_id = None
                if declined is None and set(accepted) >= set(game.people):
                    body = rematch.open_request(game_id, game)
                    # resent while unanswered (one game per command id, opened once)
                    answer, _ = await asked_again(gateway, gateway.subjects.table_open(), body)
                    reply = _table_reply.decode(answer)
                    if not reply.ok:
                        raise refused(reply.code, reply.message)
                    new_game_id = reply.game_id
                row = await rematch.save(conn, game_id, accepted, declined, new_game_id)
        except RematchRefusal as exc:
            raise ApiError(exc.status, exc.code, exc.message) from None
        shown = _shown(game_id, row)
        await publish(
            gateway,
            shown.players,
            RematchChanged(
                game_id=game_id,
                players=shown.players,
                accepted=shown.accepted,
                declined=shown.declined,
                new_game_id=shown.new_game_id,
            ),
        )
        return shown


__all__ = ["Rematch", "RematchAnswer", "Rematches"]
