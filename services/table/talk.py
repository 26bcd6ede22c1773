"""Table talk at the table: who may say what, when, to whom (`events.contracts.talk`).

Pure and synchronous like `services.table.tables`: `decide` turns a seat's `Say` into the one
`Talked` event to append, or raises `Rejected` with a code of its own; nothing else changes.
The rules, each refused with its own code:

- ``talk_not_seated``: only a seat talks (a spectator, or a seat a bot took over, does not).
- ``talk_unknown_preset``: a preset that does not exist, ``n`` out of 1..13 for "sure" and
  "maybe" (or given to another preset), a preset and text together, or neither.
- ``talk_wrong_phase``: a bidding preset outside the bidding, a courtesy preset during it, or
  anything once the game is over.
- ``talk_no_partner``: a bidding preset at a table without partnerships (2, 3 or 5 seats).
- ``talk_unavailable``: partner talk where the partner and the speaker are apart (one blocked
  the other, `Say.apart`); the message never says who blocked whom.
- ``talk_free_text_off``: text at a table that does not allow it (`TableOpened.free_text_chat`).
- ``talk_too_long``: text over SPADES_TALK_MAX_CHARS characters (after trimming).
- ``talk_flood``: more than SPADES_TALK_PER_MINUTE messages of one seat within a minute (counted
  from the times the log recorded, so a new owner counts the same).

Free text is cleaned (control characters dropped, whitespace runs made one space) and passed
through the operator's word filter (SPADES_TALK_WORDS_FILE: one word or phrase a line, ``#``
comments; each match, whole words, any case, is replaced by asterisks) before it is recorded:
the log never holds what the filter took out.
"""

from __future__ import annotations

import functools
import re
import time
import unicodedata
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from msgspec import Meta

import engine
from events.contracts import talk
from events.contracts.talk import Say, Talked
from events.settings import from_environ
from services.table.refusals import Rejected

if TYPE_CHECKING:
    from services.table.tables import Table

WINDOW = 60.0
"""Seconds over which SPADES_TALK_PER_MINUTE counts a seat's messages."""


@dataclass(frozen=True, slots=True)
class TalkSettings:
    """The operator's settings of table talk (read once per process from the environment)."""

    talk_max_chars: Annotated[int, Meta(ge=1, le=500)] = 200
    talk_per_minute: Annotated[int, Meta(ge=1)] = 12
    talk_words_file: str = ""


@functools.cache
def settings() -> TalkSettings:
    """Return the talk settings of this process (SPADES_TALK_*)."""
    return from_environ(TalkSettings)


@functools.cache
def word_filter(path: str) -> re.Pattern[str] | None:
    """Return the pattern of the words listed in ``path`` (None: no file, or no word)."""
    if not path:
        return None
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    words = sorted({w.strip().casefold() for w in lines if w.strip() and not w.startswith("#")})
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def check() -> TalkSettings:
    """Return this process's talk settings, its word file read; raise `SettingsError` (or
    OSError for a word file that cannot be read) now rather than at the first message."""
    policy = settings()
    word_filter(policy.talk_words_file)
    return policy


def clean(text: str, words: re.Pattern[str] | None) -> str:
    """Return ``text`` as it is recorded: no control characters, single spaces, filtered."""
    kept = "".join(" " if unicodedata.category(c).startswith("C") else c for c in text)
    kept = " ".join(kept.split())
    if words is not None:
        kept = words.sub(lambda m: "*" * len(m.group(0)), kept)
    return kept


@dataclass
class TalkLog:
    """What a table remembers of its talk: when each seat last spoke (the flood rule)."""

    said: dict[int, deque[float]] = field(default_factory=dict)

    def heard(self, seat: int, at: float) -> None:
        """Count a message of ``seat`` recorded at ``at`` (unix seconds)."""
        self.said.setdefault(seat, deque(maxlen=1000)).append(at)

    def recent(self, seat: int, now: float) -> int:
        """Return how many messages ``seat`` said within the last `WINDOW` seconds."""
        return sum(1 for at in self.said.get(seat, ()) if at > now - WINDOW)


def decide(
    table: Table,
    player_id: str,
    say: Say,
    *,
    now: float | None = None,
    policy: TalkSettings | None = None,
) -> list[Talked]:
    """Return the `Talked` event of ``player_id`` saying ``say``; raise `Rejected`."""
    policy = settings() if policy is None else policy
    opened = table.opened
    seat = table.seat_of(player_id)
    if opened is None or seat is None or seat in table.abandoned:
        raise Rejected("talk_not_seated", "only a player seated at this table may talk here")
    if bool(say.preset) == bool(say.text):
        raise Rejected("talk_unknown_preset", "say either a preset or a text")
    state = table.state
    if table.over:
        raise Rejected("talk_wrong_phase", "the game is over: its talk is in the replay")
    count = len(table.players)
    apart = {s for s, p in enumerate(table.players) if p in say.apart}
    deaf = {s for s, p in enumerate(table.players) if p in say.deaf}
    if say.preset:
        to = _preset(say, state.phase)
        text = ""
    else:
        to, text = talk.TABLE, _text(say.text, opened.free_text_chat, policy)
    hearers: tuple[int, ...]
    if to == talk.PARTNER:
        if count != 4:
            raise Rejected("talk_no_partner", "partner talk needs a table of two partnerships")
        partner = engine.partner_of(seat)
        if partner in apart:
            raise Rejected("talk_unavailable", "your partner is not available for talk")
        hearers = () if partner in deaf else (partner,)
    else:
        hearers = tuple(s for s in range(count) if s != seat and s not in apart | deaf)
    moment = time.time() if now is None else now
    if table.talk.recent(seat, moment) >= policy.talk_per_minute:
        raise Rejected(
            "talk_flood",
            f"at most {policy.talk_per_minute} messages a minute: wait a moment",
        )
    return [
        Talked(
            seat=seat,
            to=to,
            preset=say.preset,
            n=say.n,
            text=text,
            hearers=hearers,
            spectators=to == talk.TABLE and not opened.rated,
        )
    ]


def _preset(say: Say, phase: str) -> str:
    """Return to whom a preset is said in ``phase``; raise `Rejected` when it may not be."""
    if say.preset in talk.BID_PRESETS:
        counted = say.preset in talk.COUNTED
        if counted and not 1 <= say.n <= talk.MAX_TRICKS:
            raise Rejected("talk_unknown_preset", f"{say.preset!r} takes n from 1 to 13 tricks")
        if not counted and say.n:
            raise Rejected("talk_unknown_preset", f"{say.preset!r} takes no number")
        if phase != engine.state.BID:
            raise Rejected("talk_wrong_phase", "bidding talk belongs to the bidding")
        return talk.PARTNER
    if say.preset in talk.TABLE_PRESETS:
        if say.n:
            raise Rejected("talk_unknown_preset", f"{say.preset!r} takes no number")
        if phase == engine.state.BID:
            raise Rejected(
                "talk_wrong_phase", "while the cards are bid, only the bidding presets are said"
            )
        return talk.TABLE
    known = ", ".join([*talk.BID_PRESETS, *talk.TABLE_PRESETS])
    raise Rejected("talk_unknown_preset", f"unknown preset {say.preset!r}: one of {known}")


def _text(text: str, allowed: bool, policy: TalkSettings) -> str:
    """Return free text as it is recorded; raise `Rejected` when it may not be said."""
    if not allowed:
        raise Rejected("talk_free_text_off", "this table allows the presets only")
    said = clean(text, word_filter(policy.talk_words_file))
    if len(said) > policy.talk_max_chars:
        raise Rejected(
            "talk_too_long", f"at most {policy.talk_max_chars} characters ({len(said)} given)"
        )
    if not said:
        raise Rejected("talk_unknown_preset", "say either a preset or a text")
    return said
