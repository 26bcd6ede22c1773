"""Table talk on the wire: what a seat may say (`Say`), what the log records (`Talked`), and
who may be told of it (`told`).

The seed's way (../shared/seeds/000_*.txt): "a certain amount of unspecified bantering about
'halves' and 'maybes' is permitted, but not specific information about cards held". So while
the cards are bid, partners may exchange only the `BID_PRESETS` (partner-only, never heard by
the opponents or the spectators while the game runs); once the bidding is over (the deal, the
exchange, the play) the whole table may exchange the courtesy `TABLE_PRESETS`. Free text is
said to the whole table (never partner-only, which would be a channel for the hand) and only
where the table allows it (`TableOpened.free_text_chat`).

Everything said is an event of the game stream (`Talked`), replayed and exported with it, and
a table-only fact the engine never sees (`events.contracts.bridge.steps` skips it). Who hears
it is decided once, when it is said, and written in the event: ``hearers`` (the seats told in
real time) and ``spectators`` (whether the game's spectators are: never at a rated game, never
partner talk). `told` is the one rule every audience path applies (`events.contracts.game.redact`,
which the table's per-audience frames, catch-ups and replays all call): a seat or spectator
that may not hear it receives `TalkWithheld`, which says nothing (not even who spoke), so the
event numbering has no gap. After the game everything said is public in the replay.
"""

from __future__ import annotations

from events.contracts.game_wire import GameEvent, SeatCommand

PARTNER = "partner"
"""`Talked.to` of a bidding preset: heard by the speaker's partner only."""
TABLE = "table"
"""`Talked.to` of a courtesy preset or free text: heard by every seat."""

BID_PRESETS: dict[str, str] = {
    "sure": "I can take {n}",
    "maybe": "Maybe {n}",
    "half": "And a half, maybe",
    "nil": "I might go nil",
    "no_help": "No help here",
    "how_many": "How many can you take?",
}
"""The bidding banter partners may exchange, and nothing else ("{n}": tricks, 1..13)."""
TABLE_PRESETS: dict[str, str] = {
    "hello": "Hello!",
    "nice": "Nice!",
    "sorry": "Sorry",
    "thanks": "Thanks",
    "well_played": "Well played",
    "good_game": "Good game",
}
"""The courtesy presets every seat may say once the bidding is over."""
COUNTED = frozenset({"sure", "maybe"})
"""The presets that carry a number of tricks ``n``."""
MAX_TRICKS = 13


class Say(SeatCommand, frozen=True, kw_only=True):
    """Say something at one's table: a ``preset`` (``n`` tricks for "sure" and "maybe"), or
    ``text`` where the table allows free text. Never names a seat: who hears it follows from
    the preset and the table.

    ``apart`` and ``deaf`` are filled in by the gateway, never by a client (it refuses them):
    ``apart`` the accounts the speaker blocked or is blocked by (partner talk to one of them
    is refused ``talk_unavailable``; none of them hears table talk), ``deaf`` the accounts that
    muted the speaker at this table (they do not hear him; he is not told)."""

    preset: str = ""
    n: int = 0
    text: str = ""
    apart: tuple[str, ...] = ()
    deaf: tuple[str, ...] = ()


CLIENT_FIELDS = frozenset({"preset", "n", "text"})
"""The fields of `Say` a client may send."""


class Talked(GameEvent, frozen=True, kw_only=True):
    """Seat ``seat`` said a ``preset`` (with ``n``) or ``text`` to its ``to`` (`PARTNER` or
    `TABLE`); ``hearers`` are the seats told at once (besides the speaker), ``spectators``
    whether the game's spectators are (one trick behind, like every event)."""

    seat: int
    to: str
    preset: str = ""
    n: int = 0
    text: str = ""
    hearers: tuple[int, ...] = ()
    spectators: bool = False


class TalkWithheld(GameEvent, frozen=True, kw_only=True):
    """Something was said at the table that this audience may not hear (now)."""


WITHHELD = TalkWithheld()


def told(event: Talked, seat: int) -> Talked | TalkWithheld:
    """Return what ``seat`` (-1: a spectator) is told of ``event`` while the game runs."""
    if seat < 0:
        return event if event.spectators else WITHHELD
    return event if seat == event.seat or seat in event.hearers else WITHHELD


def phrase(event: Talked) -> str:
    """Return what was said, as words ("I can take 4"; free text as it was written)."""
    if event.text:
        return event.text
    template = BID_PRESETS.get(event.preset) or TABLE_PRESETS.get(event.preset) or event.preset
    return template.format(n=event.n)
