"""The open database over HTTP: a player's rated games as NDJSON, finished months as gzip.

`GET /api/players/{name}/games.ndjson` streams one line per finished rated game the player
sat at (like lichess's game export), oldest first; `GET /api/exports/{YYYY-MM}/games.ndjson.gz`
streams a finished month's export (the same lines `spades export` writes). A month still
running is refused: its file would change under the downloader.
"""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import AsyncIterator
from typing import Annotated

from litestar import Controller, get
from litestar.datastructures import State
from litestar.params import Parameter
from litestar.response import Stream

from services.gateway import auth
from services.gateway.errors import ERROR_RESPONSES, ApiError
from services.gateway.http.common import gateway_of
from services.gateway.http.ladders import PLAYER_ID
from services.records import export

ALL_TIME = (dt.datetime(2000, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 1, 1, tzinfo=dt.UTC))


class Exports(Controller):
    """Open data: finished rated games, per player or per month."""

    path = "/api"
    tags = ["exports"]  # noqa: RUF012

    @get(
        "/players/{name:str}/games.ndjson",
        responses=ERROR_RESPONSES,
        summary="A player's finished rated games, one JSON object a line",
        media_type="application/x-ndjson",
    )
    async def player_games(self, name: PLAYER_ID, state: State) -> Stream:
        """Every finished rated game ``name`` played, oldest first: players and ratings, rules,
        result and every event with the deals and the revealed seed (404 for nobody)."""
        pool = gateway_of(state).pool
        ids = await export.finished_games(pool, *ALL_TIME, player=name)
        if not ids and await auth.find_account(pool, name) is None:
            raise ApiError(404, "not_found", f"no player {name[:40]!r}")

        async def lines() -> AsyncIterator[bytes]:
            async for record in export.records(pool, ids):
                yield export.encode_line(record)

        return Stream(lines(), media_type="application/x-ndjson")

    @get(
        "/exports/{month:str}/games.ndjson.gz",
        responses=ERROR_RESPONSES,
        summary="A finished month's rated games, gzipped NDJSON",
        media_type="application/gzip",
    )
    async def month(
        self,
        month: Annotated[str, Parameter(pattern=r"^[1-9][0-9]{3}-(0[1-9]|1[0-2])$")],
        state: State,
    ) -> Stream:
        """One line per rated game that finished in ``month`` (YYYY-MM, UTC), oldest first."""
        if not export.month_over(month):
            raise ApiError(404, "month_not_finished", f"{month} is not over: no export yet")
        try:
            start, end = export.month_bounds(month)
        except export.BadMonth as exc:
            raise ApiError(400, "bad_month", str(exc)) from None
        pool = gateway_of(state).pool
        ids = await export.finished_games(pool, start, end)

        async def chunks() -> AsyncIterator[bytes]:
            packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip container
            async for record in export.records(pool, ids):
                chunk = packer.compress(export.encode_line(record))
                if chunk:
                    yield chunk
            yield packer.flush()

        return Stream(
            chunks(),
            media_type="application/gzip",
            headers={
                "Content-Disposition": f'attachment; filename="spades-games-{month}.ndjson.gz"'
            },
        )
