"""Every NATS subject and JetStream stream name of the platform, and nothing else.

No other module writes a subject literal: they call these functions. A `Subjects` carries a
prefix so that tests (and, if ever needed, two deployments on one NATS) never see each other's
traffic; the default prefix comes from `$SPADES_NATS_PREFIX` (empty in production).

Layout:

    {p}ev.{category}.{id}.{Type}    an event of stream `{category}-{id}` (JetStream EVENTS)
    {p}aud.{slot}.{game_id}         what each audience of a game is sent (core NATS, by its owner)
    {p}cmd.table.{slot}.{game_id}   request/reply: a command for the replica owning that slot
    {p}cmd.table.open               request/reply: open a practice table (any replica)
    {p}cmd.matchmaking.join|leave|status   request/reply: queue requests (any replica)
    {p}cmd.matchmaking.ladder.{ladder}.join|leave   request/reply: the ladder's owner only
    {p}cmd.rating.ladder|player|stats|season   request/reply: ladder, player, statistics and
                                               season reads
    {p}cmd.bots.decide|hint|transcript|analyse|queue   request/reply: the bot tier (any worker)
    {p}parked.{consumer}            messages a consumer set aside (JetStream PARKED)

Putting the event type in the subject lets a consumer filter server-side (rating only pulls
`ev.game.*.GameFinished`) without decoding anything.
"""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass

__all__ = ["SLOTS", "Subjects", "current", "slot_of", "split_stream_id"]

_TOKEN = re.compile(r"^[A-Za-z0-9_\-]+$")

SLOTS = 1024
"""How many hash slots games fall into: a constant of the platform, never a setting.

Table replicas own slots (each a fenced lease), not single games, and a game's slot never
changes, so adding or removing replicas moves whole slots and never remaps a game. 1,024 is
enough for hundreds of replicas to each hold a few slots (the balance is within one slot:
at 200 replicas, 5 or 6 each) and few enough that one replica holding all of them renews
them in one statement a tick. Changing it would move every live game to another slot: it is
not a knob (the operator guide, "Table ownership", says why). It is a multiple of the 16
partitions before it, so a game's old partition is its slot modulo 16.
"""


def slot_of(game_id: str) -> int:
    """Return the hash slot of a game (0 .. SLOTS - 1): its owner is the slot's lease holder."""
    return zlib.crc32(game_id.encode()) % SLOTS


def split_stream_id(stream_id: str) -> tuple[str, str]:
    """Return (category, id) of a stream id `category-id` (the id may contain dashes)."""
    category, sep, ident = stream_id.partition("-")
    if not sep or not ident or not _TOKEN.match(category) or not _TOKEN.match(ident):
        raise ValueError(f"stream id {stream_id!r} is not 'category-id' with subject-safe tokens")
    return category, ident


def _token(value: str, what: str) -> str:
    if value != "*" and not _TOKEN.match(value):
        raise ValueError(f"{what} {value!r} cannot be a NATS subject token")
    return value


@dataclass(frozen=True)
class Subjects:
    """The subject and stream names under one prefix (`""` in production)."""

    prefix: str = ""

    def __post_init__(self) -> None:
        if self.prefix and not re.fullmatch(r"[A-Za-z0-9_\-]+", self.prefix):
            raise ValueError(f"prefix {self.prefix!r} must be one subject-safe token")

    @property
    def _p(self) -> str:
        return f"{self.prefix}." if self.prefix else ""

    def _stream(self, name: str) -> str:
        return f"{self.prefix.upper().replace('-', '_')}_{name}" if self.prefix else name

    # -- JetStream streams ---------------------------------------------------------------

    @property
    def events_stream(self) -> str:
        """JetStream stream holding every published event."""
        return self._stream("EVENTS")

    def events_stream_subjects(self) -> list[str]:
        """Subjects captured by the events stream."""
        return [f"{self._p}ev.>"]

    @property
    def parked_stream(self) -> str:
        """JetStream stream holding parked (dead-lettered) messages."""
        return self._stream("PARKED")

    def parked_stream_subjects(self) -> list[str]:
        """Subjects captured by the parked stream."""
        return [f"{self._p}parked.>"]

    def durable(self, consumer: str) -> str:
        """Durable consumer name for a logical consumer (`rating`, `gateway-3`...)."""
        return f"{self.prefix}_{consumer}" if self.prefix else consumer

    # -- events ----------------------------------------------------------------------------

    def event(self, stream_id: str, event_type: str) -> str:
        """Subject an event of `stream_id` is published on."""
        category, ident = split_stream_id(stream_id)
        return f"{self._p}ev.{category}.{ident}.{_token(event_type, 'event type')}"

    def all_events(self) -> str:
        """Every event of every stream."""
        return f"{self._p}ev.>"

    def category_events(self, category: str, event_type: str = "*") -> str:
        """Events of every stream of one category, optionally one type only."""
        return f"{self._p}ev.{_token(category, 'category')}.*.{_token(event_type, 'type')}"

    def game_events(self, game_id: str = "*") -> str:
        """Every event of one game (or of all games with the default `*`)."""
        return f"{self._p}ev.game.{_token(game_id, 'game id')}.*"

    def game_finished(self) -> str:
        """GameFinished of every game (rating and matchmaking consume it)."""
        return self.category_events("game", "GameFinished")

    def match_found(self) -> str:
        """MatchFound of every match (tables consume it to open games).

        MatchFound lives in the ladder's queue stream (`queue-<ladder>`), so taking players
        out of the queue and announcing their match is one atomic append.
        """
        return self.category_events("queue", "MatchFound")

    def ratings_updated(self) -> str:
        """RatingsUpdated of every player (matchmaking consumes it)."""
        return self.category_events("rating", "RatingsUpdated")

    def analysis_finished(self) -> str:
        """AnalysisFinished of every game (the gateways push it to the game's players)."""
        return self.category_events("analysis", "AnalysisFinished")

    def season_ended(self) -> str:
        """SeasonEnded of every ladder (matchmaking consumes it: a soft reset of ratings)."""
        return self.category_events("season", "SeasonEnded")

    # -- what each audience of a game is sent (core NATS, from the game's owner) ---------------

    def audiences(self, game_id: str) -> str:
        """Subject of a game's `events.contracts.audience.Frame`s, under its slot."""
        return f"{self._p}aud.{slot_of(game_id)}.{_token(game_id, 'game id')}"

    def slot_audiences(self, slot: int) -> str:
        """The frames of every game of one slot."""
        return f"{self._p}aud.{int(slot)}.*"

    def game_audiences(self, game_id: str) -> str:
        """The frames of one game, whatever its slot (a gateway takes those it serves)."""
        return f"{self._p}aud.*.{_token(game_id, 'game id')}"

    def all_audiences(self) -> str:
        """The frames of every game (tests and tools that watch everything)."""
        return f"{self._p}aud.>"

    # -- commands (core NATS request/reply) ----------------------------------------------------

    def table_command(self, game_id: str) -> str:
        """Request subject of the table replica that owns `game_id`'s slot."""
        return f"{self._p}cmd.table.{slot_of(game_id)}.{_token(game_id, 'game id')}"

    def table_slot_commands(self, slot: int) -> str:
        """Every command for the games of one slot (only its owner subscribes)."""
        return f"{self._p}cmd.table.{int(slot)}.*"

    def player_notices(self) -> str:
        """Gateway to every gateway replica (core NATS): a message for some players' sockets
        (a friends' table changed, a rematch offered), each replica telling its own."""
        return f"{self._p}gw.notices"

    def table_open(self) -> str:
        """Request subject: open a practice table (any replica, queue group)."""
        return f"{self._p}cmd.table.open"

    def table_queue_group(self) -> str:
        """Queue group of the table service instances."""
        return f"{self.prefix}table" if self.prefix else "table"

    def matchmaking_join(self) -> str:
        """Request subject: put a player in a ladder's queue."""
        return f"{self._p}cmd.matchmaking.join"

    def matchmaking_leave(self) -> str:
        """Request subject: take a player out of the queue."""
        return f"{self._p}cmd.matchmaking.leave"

    def matchmaking_status(self) -> str:
        """Request subject: where a player stands in the queues, and the queue sizes."""
        return f"{self._p}cmd.matchmaking.status"

    def matchmaking_queue_group(self) -> str:
        """Queue group of the matchmaking replicas answering the three requests above."""
        return f"{self.prefix}matchmaking" if self.prefix else "matchmaking"

    def ladder_join(self, ladder: str) -> str:
        """Request subject of the replica owning ``ladder``'s queue: queue a player there."""
        return f"{self._p}cmd.matchmaking.ladder.{_token(ladder, 'ladder')}.join"

    def ladder_leave(self, ladder: str) -> str:
        """Request subject of the replica owning ``ladder``'s queue: take a player out."""
        return f"{self._p}cmd.matchmaking.ladder.{_token(ladder, 'ladder')}.leave"

    def rating_ladder(self) -> str:
        """Request subject: one page of a ladder, best conservative ordinal first."""
        return f"{self._p}cmd.rating.ladder"

    def rating_player(self) -> str:
        """Request subject: a player's ratings per ladder and rating history."""
        return f"{self._p}cmd.rating.player"

    def rating_stats(self) -> str:
        """Request subject: a player's statistics per ladder (the rating service's)."""
        return f"{self._p}cmd.rating.stats"

    def rating_season(self) -> str:
        """Request subject: one page of a season's leaderboard (frozen once it ended)."""
        return f"{self._p}cmd.rating.season"

    def bots_decide(self) -> str:
        """Request subject: a bot seat's move (any bot worker, queue group)."""
        return f"{self._p}cmd.bots.decide"

    def bots_hint(self) -> str:
        """Request subject: the strong bot's suggestion for a person's seat (practice)."""
        return f"{self._p}cmd.bots.hint"

    def bots_transcript(self) -> str:
        """Request subject: parse and replay an uploaded transcript."""
        return f"{self._p}cmd.bots.transcript"

    def bots_analyse(self) -> str:
        """Request subject: review a finished game (its transcript) in the bot tier."""
        return f"{self._p}cmd.bots.analyse"

    def bots_queue_analysis(self) -> str:
        """Request subject: queue a finished game's stored review (`events.contracts.analysis`)."""
        return f"{self._p}cmd.bots.queue"

    def bots_queue_group(self) -> str:
        """Queue group of the bot workers answering the requests above."""
        return f"{self.prefix}bots" if self.prefix else "bots"

    # -- parking -------------------------------------------------------------------------------

    def parked(self, consumer: str) -> str:
        """Subject a consumer parks the messages it cannot handle on."""
        return f"{self._p}parked.{_token(consumer, 'consumer')}"


def current() -> Subjects:
    """Return the Subjects for this process's prefix ($SPADES_NATS_PREFIX, default none)."""
    return Subjects(os.environ.get("SPADES_NATS_PREFIX", ""))
