"""What a table decided to append: each event in its wire form, with the engine state after it.

The table's deciding methods (`services.table.tables.Table.decide`, ``bot_events``,
``timeout_events``, the openings...) return a `Decided`. Its events are the engine events
`engine.decide` returned, each applied once to the table's state and converted once to its wire
form (`events.contracts.game.to_wire`), which is what the store records and every audience is
sent. The append path folds those states (`Table.fold` with ``after``); nothing converts the
wire events back to the engine's to fold them again. Only a game read from the store is folded
from its wire events (`events.contracts.game.fold`): that is the one place wire -> engine is
needed.

A `Decided` is a list of its wire events, so whoever only needs those (the store's records, a
test looking at what was decided) reads it as one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import engine
from events.contracts import game as wire


class Decided(list[wire.GameEvent]):
    """Events to append (their wire forms) and ``after``: the engine state after each."""

    __slots__ = ("after",)

    def __init__(self, steps: Iterable[tuple[wire.GameEvent, engine.GameState]] = ()) -> None:
        pairs = list(steps)
        super().__init__(event for event, _ in pairs)
        self.after: list[engine.GameState] = [state for _, state in pairs]

    @classmethod
    def facts(cls, state: engine.GameState, *events: wire.GameEvent) -> Decided:
        """Return the table's own facts (``events`` the engine never sees: a seat's timeout or
        abandonment, table talk, a restarted clock), which leave the game at ``state``."""
        return cls((event, state) for event in events)

    @classmethod
    def applied(
        cls,
        state: engine.GameState,
        events: Iterable[engine.Event],
        to_wire: Callable[[engine.Event], wire.GameEvent] = wire.to_wire,
    ) -> Decided:
        """Return engine ``events`` applied once each from ``state``, in their wire forms."""
        steps = []
        for event in events:
            state = engine.apply(state, event)
            steps.append((to_wire(event), state))
        return cls(steps)

    def then(self, more: Decided) -> Decided:
        """Return these events followed by ``more`` (decided from where these leave the game)."""
        return Decided([*zip(self, self.after, strict=True), *zip(more, more.after, strict=True)])
