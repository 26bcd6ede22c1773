"""The table's side of the bot tier: a bot seat's move and a practice seat's hint, asked of
`services.bots` over NATS, never searched here.

A table replica only validates, appends, publishes and arms timers. When a strong bot is to
move (a practice table's bots, a seat a person timed out of or abandoned) or a practice seat
wants a hint, it sends the seat's view to any bot worker and waits the budget plus
`events.contracts.bots.ANSWER_MARGIN`; with no legal answer by then it plays the baseline's
move (about 20 µs of CPU) so that no game ever waits for the tier.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

import engine
from events.contracts import game as wire
from events.contracts.bots import ANSWER_MARGIN, Decide, DecideReply, Hint, encode_view
from services.runtime import ops
from services.runtime.service import Runtime
from services.table.tables import Table

__all__ = ["BotTier"]

_encoder = msgspec.json.Encoder()
_reply = msgspec.json.Decoder(DecideReply)


class BotTier:
    """Asks the bot tier for moves and hints on behalf of one table replica."""

    def __init__(self, rt: Runtime, log: Any) -> None:
        self.rt = rt
        self.log = log
        self.hinting: dict[tuple[str, int, int], asyncio.Future[engine.Command | None]] = {}
        """The hint requests in flight: concurrent asks for one turn share one."""
        self.asked: dict[str, tuple[str, int, int]] = {}
        """Per game this replica serves, the last turn a hint was asked for (dropped with
        the game, `Timers.forget`)."""

    async def move(self, table: Table, seat: int) -> engine.Command:
        """Return the move of the bot playing ``seat`` now, decided on the seat's view only.

        The strong bot's search runs in the bot tier (`services.bots`), never here: the table
        asks any worker and waits the budget plus `ANSWER_MARGIN`. With no answer in time (no
        worker, a worker killed mid-search, NATS away), or an answer that is not a legal move,
        the table plays the baseline's move (about 20 µs of CPU), so a game never waits for
        the tier. The baseline level is played here directly: asking for it would cost the
        table more than deciding it, except where it searches (suicide's nil side late in a
        hand, `engine.botnil`: up to tenths of a second), which the tier decides too. The
        table's own fallback never searches.
        """
        level = table.bot_level(seat)
        if level == "baseline" and not table.baseline_searches(seat):
            ops.TABLE_BOT_MOVES.labels(source="table").inc()
            return table.baseline_move(seat)
        view = engine.view(table.state, seat)
        request = Decide(
            game_id=table.game_id,
            version=table.version,
            seat=seat,
            level=level,
            view=encode_view(view),
            seconds=self.rt.settings.bot_seconds,
        )
        move = await self._ask(self.rt.subjects.bots_decide(), request, view)
        if move is not None:
            ops.TABLE_BOT_MOVES.labels(source="tier").inc()
            return move
        ops.TABLE_BOT_MOVES.labels(source="fallback").inc()
        return table.baseline_move(seat)

    async def _ask(
        self, subject: str, request: Decide | Hint, view: engine.SeatView
    ) -> engine.Command | None:
        """Return the bot tier's legal move for ``view``, or None when none came in time."""
        try:
            msg = await self.rt.nc.request(
                subject,
                _encoder.encode(request),
                timeout=self.rt.settings.bot_seconds + ANSWER_MARGIN,
            )
            reply = _reply.decode(msg.data)
            if reply.ok and reply.command is not None:
                move = wire.command_to_engine(reply.command, view.seat)
                if move in view.legal:
                    return move
            self.log.warning("bot tier answered no legal move", code=reply.code)
        except Exception as exc:  # no worker, a timeout, NATS away: the caller falls back
            self.log.warning("bot tier did not answer", error=type(exc).__name__)
        return None

    async def hint(self, table: Table, seat: int) -> None:
        """Ask the bot tier for ``seat``'s suggestion once per turn (practice tables only)
        and keep it on the table: a view, a re-subscribe or a repeated ask never searches
        again, and concurrent asks for one turn share one request. A turn whose hint did not
        come in time is not asked again either: a busy tier gets one request a turn from
        each practice seat, however often its view is asked for."""
        if table.suggestion(seat) is not None or table.seat_to_act() != seat:
            return
        key = (table.game_id, table.version, seat)
        if self.asked.get(table.game_id) == key and key not in self.hinting:
            return  # asked for this turn already, and nothing came in time
        self.asked[table.game_id] = key
        pending = self.hinting.get(key)
        if pending is None:
            view = engine.view(table.state, seat)
            request = Hint(
                game_id=table.game_id,
                version=table.version,
                seat=seat,
                view=encode_view(view),
                seconds=self.rt.settings.bot_seconds,
            )
            pending = asyncio.ensure_future(self._ask(self.rt.subjects.bots_hint(), request, view))
            self.hinting[key] = pending
            pending.add_done_callback(lambda _: self.hinting.pop(key, None))
        move = await asyncio.shield(pending)
        if move is not None and table.version == key[1]:
            table.hint = (key[1], seat, move)
