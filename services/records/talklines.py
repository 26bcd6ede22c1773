"""Table talk in a transcript (`services.records.transcript`): one line per `Talked` event.

    17  N says to partner: sure 4 (heard by S)
    18  E says to table: "good luck, all" (heard by N S W, spectators)
    19  talk withheld

A finished game's transcript shows everything said, with who heard it at the time; a game in
progress shows only what its spectators may hear (`events.contracts.talk.told`), the rest as
"talk withheld" (such a transcript is face down and is not read back anyway).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from events.contracts.talk import Talked
from services.records.textparts import LineRefused, untoken

_SEAT = r"(?:[NESW]|P\d{1,2})"
WITHHELD = "talk withheld"

PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            rf"(?P<seat>{_SEAT}) says to (?P<to>partner|table): "
            r'(?:(?P<preset>[a-z_]{1,20})(?: (?P<n>\d{1,2}))?|(?P<text>"(?:[^"\\]|\\.)*"))'
            rf" \(heard by (?P<hearers>nobody|{_SEAT}(?: {_SEAT})*)(?P<spectators>, spectators)?\)"
        ),
        "talk",
    ),
    (re.compile(WITHHELD), "hidden"),
]
"""The reader's patterns of a talk line and the kind each builds."""


def describe(event: Talked, name: Callable[[int], str], *, face_up: bool) -> str:
    """Return the line of ``event``: all of it face up, else what spectators may hear."""
    if not face_up and not event.spectators:
        return WITHHELD
    if event.text:
        what = json.dumps(event.text, ensure_ascii=False)
    else:
        what = f"{event.preset} {event.n}" if event.n else event.preset
    heard = " ".join(name(s) for s in event.hearers) or "nobody"
    also = ", spectators" if event.spectators else ""
    return f"{name(event.seat)} says to {event.to}: {what} (heard by {heard}{also})"


def build(m: re.Match[str], seat: Callable[[str], int]) -> Talked:
    """Return the `Talked` event a talk line matched by `PATTERNS` stands for."""
    text = untoken(m["text"]) if m["text"] else ""
    if m["text"] and not text:
        raise LineRefused("malformed_line", "empty talk")
    hearers = () if m["hearers"] == "nobody" else tuple(seat(s) for s in m["hearers"].split())
    return Talked(
        seat=seat(m["seat"]),
        to=m["to"],
        preset=m["preset"] or "",
        n=int(m["n"] or 0),
        text=text,
        hearers=hearers,
        spectators=m["spectators"] is not None,
    )
