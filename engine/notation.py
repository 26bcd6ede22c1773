"""The notation of a transcript (`engine.transcript`): how each fact of a game is written as
one line, and read back from it.

A line records an engine event (`engine.model`: cards as the engine's numbers, written by
name) or one of the table's facts the engine never sees, declared here as plain records:
`Opened` (the first line: who sits where), `TimedOut`, `ClockRestarted`, `Abandoned` and
`Talk` (table talk). ``describe`` writes a line (face down: no hidden card, and of talk only
what spectators may hear); `Notation` reads every line after the first two back into the
same value (`engine.transcript` reads those two, the table's seats and the start of the game),
refusing what is not a line of the format with a `LineRefused` carrying a stable ``code``.
Neither checks a line against the rules: `engine.transcript` does, line by line, as it reads.

    table 0b6c... opened on casual (unrated, 25.0 s a turn): N ann, E bot:1 (bot), S cy, W di
    N bids 3
    N plays 2C
      trick 2C 9C QC 4C won by S
    N says to partner: sure 4 (heard by S)
    E says to table: "good luck, all" (heard by N S W, spectators)
    talk withheld
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine import model
from engine.cards import Card, InvalidCard, card_str, parse_card, seat_name

MOE_NAMES = {6: "Little", 8: "Big"}
"""How a Moe bid is written: "N bids Little Moe" (6 in a row), "N bids Big Moe" (8)."""
WITHHELD = "talk withheld"
"""The line of talk that spectators of a game in progress may not hear."""


# -- the table's facts, beside the engine's events ----------------------------------------------


@dataclass(frozen=True, slots=True)
class Opened:
    """The first line: the game, its ladder, rated or not, the turn clock, and who sits where
    (``bots``: the seats a bot plays from the start)."""

    game_id: str
    ladder: str
    rated: bool
    players: tuple[str, ...]
    bots: tuple[int, ...] = ()
    match_id: str | None = None
    turn_seconds: float = 25.0


@dataclass(frozen=True, slots=True)
class TimedOut:
    """A seat let its turn run out (``streak`` times in a row); a bot's action follows."""

    seat: int
    streak: int


@dataclass(frozen=True, slots=True)
class ClockRestarted:
    """The seat on turn was given its turn again, ``seconds`` later (the game went unserved)."""

    seat: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Abandoned:
    """A seat's player timed out ``streak`` times in a row, or left the table himself
    (``left``, after ``streak`` timeouts in a row): a bot plays the rest."""

    seat: int
    player_id: str
    streak: int
    left: bool = False


@dataclass(frozen=True, slots=True)
class Talk:
    """Seat ``seat`` said a ``preset`` (with ``n``) or ``text`` to its ``to`` ("partner" or
    "table"); ``hearers`` the seats told, ``spectators`` whether the spectators were."""

    seat: int
    to: str
    preset: str = ""
    n: int = 0
    text: str = ""
    hearers: tuple[int, ...] = ()
    spectators: bool = False


Fact = Opened | TimedOut | ClockRestarted | Abandoned | Talk
"""The table's facts about seats that a transcript records and the engine never sees."""
Entry = Fact | model.Event
"""What one line of a transcript records."""


class LineRefused(ValueError):
    """A line the reader refuses: ``code`` for programs (`engine.transcript` adds where)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# -- the words of a line ------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9_.:@+-]+")


def _token(text: str) -> str:
    """Return a name as written: a plain word, else a JSON string."""
    return text if _WORD.fullmatch(text) else json.dumps(text)


def untoken(text: str) -> str:
    """Return a name as written: a plain word, or a JSON string."""
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            raise LineRefused("malformed_line", f"bad quoted name {text[:40]}") from None
        if not isinstance(value, str):
            raise LineRefused("malformed_line", f"bad quoted name {text[:40]}")
        return value
    return text


def _ints(text: str) -> tuple[int, ...]:
    """Return the numbers of a written list ("[1, 2]" or "(1, 2)")."""
    return tuple(int(part) for part in text.strip("[]()").split(",") if part.strip())


def _card(name: str) -> Card:
    try:
        return parse_card(name)
    except InvalidCard as exc:
        raise LineRefused("malformed_line", str(exc)) from None


def _card_list(text: str) -> tuple[Card, ...]:
    """Return the cards of a space-separated list, in the written order."""
    return tuple(_card(name) for name in text.split())


def _names(cards: Sequence[Card]) -> str:
    return " ".join(card_str(c) for c in cards)


def _rule_value(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


# -- writing --------------------------------------------------------------------------------------


def describe(entry: Entry, players: int, *, face_up: bool, seed: bool = False) -> str:
    """Return the line of one entry (without its number); face down, no hidden card."""

    def name(seat: int) -> str:
        return seat_name(seat, players)

    match entry:
        case Opened():
            bots = set(entry.bots)
            seats = ", ".join(
                f"{name(s)} {_token(p)}{' (bot)' if s in bots else ''}"
                for s, p in enumerate(entry.players)
            )
            facts = ["rated" if entry.rated else "unrated", f"{entry.turn_seconds!r} s a turn"]
            if entry.match_id is not None:
                facts.append(f"match {_token(entry.match_id)}")
            return (
                f"table {_token(entry.game_id)} opened on {_token(entry.ladder)}"
                f" ({', '.join(facts)}): {seats}"
            )
        case model.GameStarted():
            changes = entry.ruleset.changes()
            rules = " ".join(f"{k}={_rule_value(v)}" for k, v in changes.items())
            # a committed game deals from its server seed (revealed at the end), not ``seed``
            shown = f", seed {entry.seed}" if face_up and seed and not entry.commitment else ""
            if entry.commitment:
                who = " ".join(name(s) for s in entry.contributors) or "none"
                shown += (
                    f", deals {entry.scheme} committed to {entry.commitment}"
                    f" (contributions from {who})"
                )
            return (
                f"game started, first dealer {name(entry.dealer)}{shown},"
                f" rules: {rules or 'ladder defaults'}"
            )
        case model.SeedContributed():
            return f"{name(entry.seat)} contributes {entry.value} to the deals"
        case model.SeedRevealed():
            return f"server seed revealed: {entry.server_seed}"
        case model.HandDealt():
            line = f"hand {entry.hand} dealt by {name(entry.dealer)}"
            if entry.face_up:
                # Power checks are public: written face down too.
                up = "; ".join(f"{name(s)} {_names(c)}" for s, c in enumerate(entry.face_up))
                line += f" (face up {up})"
            if not face_up:
                return line
            parts = [f"{name(s)} {_names(cards)}" for s, cards in enumerate(entry.hands) if cards]
            if entry.stock:
                parts.append(f"stock {_names(entry.stock)}")
            return f"{line}: {'; '.join(parts)}"
        case model.CardDrawn():
            if not face_up:
                return f"{name(entry.seat)} draws"
            kept, discarded = card_str(entry.kept), card_str(entry.discarded)
            return f"{name(entry.seat)} keeps {kept}, discards {discarded}"
        case model.BlindNilDeclared():
            return f"{name(entry.seat)} bids blind nil"
        case model.BlindNilDeclined():
            return f"{name(entry.seat)} declines blind nil"
        case model.BidPlaced():
            if entry.moe:
                return f"{name(entry.seat)} bids {MOE_NAMES[entry.tricks]} Moe"
            if entry.blind:
                return f"{name(entry.seat)} bids blind {entry.tricks}"
            return f"{name(entry.seat)} bids {'nil' if entry.tricks == 0 else entry.tricks}"
        case model.CardsPassed():
            cards = _names(entry.cards) if face_up else f"{len(entry.cards)} cards"
            return f"{name(entry.seat)} passes {cards} to {name(entry.to_seat)}"
        case model.CardPlayed():
            return f"{name(entry.seat)} plays {card_str(entry.card)}"
        case model.TrickWon():
            return f"  trick {_names(entry.cards)} won by {name(entry.seat)}"
        case model.HandScored():
            return (
                f"hand {entry.hand} scored: tricks {list(entry.tricks)} points {list(entry.points)}"
                f" -> scores {list(entry.scores)}, bags {list(entry.bags)}"
            )
        case TimedOut():
            return f"{name(entry.seat)} timed out ({entry.streak} in a row); bot plays"
        case ClockRestarted():
            return f"{name(entry.seat)} turn restarted (+{entry.seconds:.1f} s)"
        case Abandoned() if entry.left:
            return (
                f"{name(entry.seat)} {_token(entry.player_id)} left the table after"
                f" {entry.streak} timeouts in a row: a bot plays the rest of the game"
            )
        case Abandoned():
            return (
                f"{name(entry.seat)} {_token(entry.player_id)} abandoned after {entry.streak}"
                " timeouts in a row: a bot plays the rest of the game"
            )
        case Talk():
            return _talk(entry, name, face_up=face_up)
        case model.GameFinished():
            return (
                f"game over ({entry.reason}): winner side {entry.winner},"
                f" scores {tuple(entry.scores)}"
            )
    raise TypeError(f"no transcript line for {type(entry).__name__}")


def _talk(talk: Talk, name: Callable[[int], str], *, face_up: bool) -> str:
    """Return the line of ``talk``: all of it face up, else what spectators may hear (a game in
    progress shows the rest as "talk withheld")."""
    if not face_up and not talk.spectators:
        return WITHHELD
    if talk.text:
        what = json.dumps(talk.text, ensure_ascii=False)
    else:
        what = f"{talk.preset} {talk.n}" if talk.n else talk.preset
    heard = " ".join(name(s) for s in talk.hearers) or "nobody"
    also = ", spectators" if talk.spectators else ""
    return f"{name(talk.seat)} says to {talk.to}: {what} (heard by {heard}{also})"


# -- reading --------------------------------------------------------------------------------------

TOKEN = r'(?:"(?:[^"\\]|\\.)*"|[A-Za-z0-9_.:@+-]+)'
"""A name: a plain word or a JSON string (`untoken` reads it)."""
SEAT = r"(?:[NESW]|P\d{1,2})"
"""A seat: N E S W at four players, else P0, P1, ..."""
_CARD = r"(?:[2-9TJQKA][CDHS]|LJ|BJ)"
_CARDS = rf"{_CARD}(?: {_CARD})*"
_NUM = r"-?\d{1,9}"
_LIST = rf"[\[(]{_NUM}(?:, {_NUM})*,?[\])]"

_DEALT = re.compile(
    rf"hand (?P<hand>\d{{1,4}}) dealt by (?P<dealer>{SEAT})"
    rf"(?: \(face up (?P<up>[^)]+)\))?(?:: (?P<cards>.+))?"
)
_DEAL_PART = re.compile(rf"(?P<who>{SEAT}|stock) (?P<cards>{_CARDS})")

_LINES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            rf"(?P<seat>{SEAT}) says to (?P<to>partner|table): "
            r'(?:(?P<preset>[a-z_]{1,20})(?: (?P<n>\d{1,2}))?|(?P<text>"(?:[^"\\]|\\.)*"))'
            rf" \(heard by (?P<hearers>nobody|{SEAT}(?: {SEAT})*)(?P<spectators>, spectators)?\)"
        ),
        "talk",
    ),
    (re.compile(WITHHELD), "hidden"),
    (
        re.compile(rf"(?P<seat>{SEAT}) keeps (?P<kept>{_CARD}), discards (?P<discarded>{_CARD})"),
        "drawn",
    ),
    (re.compile(rf"(?P<seat>{SEAT}) draws"), "hidden"),
    (
        re.compile(rf"(?P<seat>{SEAT}) contributes (?P<value>[0-9a-f]{{64}}) to the deals"),
        "seeded",
    ),
    (re.compile(r"server seed revealed: (?P<seed>[0-9a-f]{64})"), "revealed"),
    (re.compile(rf"(?P<seat>{SEAT}) bids blind nil"), "blind_nil"),
    (re.compile(rf"(?P<seat>{SEAT}) declines blind nil"), "declined"),
    (re.compile(rf"(?P<seat>{SEAT}) bids (?P<moe>Little|Big) Moe"), "moe"),
    (re.compile(rf"(?P<seat>{SEAT}) bids (?P<blind>blind )?(?P<tricks>nil|\d{{1,3}})"), "bid"),
    (re.compile(rf"(?P<seat>{SEAT}) passes \d{{1,3}} cards to {SEAT}"), "hidden"),
    (re.compile(rf"(?P<seat>{SEAT}) passes (?P<cards>{_CARDS}) to (?P<to>{SEAT})"), "passed"),
    (re.compile(rf"(?P<seat>{SEAT}) plays (?P<card>{_CARD})"), "played"),
    (re.compile(rf"trick (?P<cards>{_CARDS}) won by (?P<seat>{SEAT})"), "trick"),
    (
        re.compile(
            rf"hand (?P<hand>\d{{1,4}}) scored: tricks (?P<tricks>{_LIST})"
            rf" points (?P<points>{_LIST}) -> scores (?P<scores>{_LIST}), bags (?P<bags>{_LIST})"
        ),
        "scored",
    ),
    (
        re.compile(rf"(?P<seat>{SEAT}) timed out \((?P<streak>\d{{1,4}}) in a row\); bot plays"),
        "timeout",
    ),
    (re.compile(rf"(?P<seat>{SEAT}) turn restarted \(\+(?P<s>\d{{1,6}}\.\d) s\)"), "clock"),
    (
        re.compile(
            rf"(?P<seat>{SEAT}) (?P<player>{TOKEN}) abandoned after (?P<streak>\d{{1,4}})"
            " timeouts in a row: a bot plays the rest of the game"
        ),
        "abandoned",
    ),
    (
        re.compile(
            rf"(?P<seat>{SEAT}) (?P<player>{TOKEN}) left the table after (?P<streak>\d{{1,4}})"
            " timeouts in a row: a bot plays the rest of the game"
        ),
        "left",
    ),
    (
        re.compile(
            rf"game over \((?P<reason>[a-z_]{{1,20}})\): winner side (?P<winner>{_NUM}),"
            rf" scores (?P<scores>{_LIST})"
        ),
        "finished",
    ),
]
"""Every other line's pattern and the kind of entry it reads to, tried in order."""


class Notation:
    """Reads the lines of a transcript after its first two (`engine.transcript` reads those:
    the table and its seats, the start of the game) at a table of ``players`` seats."""

    def __init__(self, players: int) -> None:
        self.players = players

    def seat(self, name: str) -> int:
        """Return the seat a name stands for at this table."""
        if self.players == 4 and name in "NESW" and len(name) == 1:
            return "NESW".index(name)
        if self.players != 4 and name.startswith("P") and int(name[1:]) < self.players:
            return int(name[1:])
        raise LineRefused("malformed_line", f"no seat {name} at a table of {self.players}")

    def entry(self, body: str) -> Entry:
        """Return what a line after the second records (face down lines are refused)."""
        dealt = _DEALT.fullmatch(body)
        if dealt is not None:
            return self._dealt(dealt)
        for pattern, kind in _LINES:
            match = pattern.fullmatch(body)
            if match is not None:
                return self._build(kind, match)
        raise LineRefused("malformed_line", f"not a line of the transcript format: {body[:60]!r}")

    def _parts(self, text: str, what: str, *, stock: bool) -> list[tuple[int, tuple[Card, ...]]]:
        """Return (seat, cards) of each part of '<seat> <cards>; ...' as written, each seat
        once (-1: the stock, where ``stock`` allows one)."""
        parts: list[tuple[int, tuple[Card, ...]]] = []
        seen: set[str] = set()
        for part in text.split("; "):
            found = _DEAL_PART.fullmatch(part)
            if found is None or found["who"] in seen or (found["who"] == "stock" and not stock):
                raise LineRefused("malformed_line", f"{what} '<seat> <cards>; ...': {part[:40]!r}")
            seen.add(found["who"])
            cards = _card_list(found["cards"])
            parts.append((-1 if found["who"] == "stock" else self.seat(found["who"]), cards))
        return parts

    def _dealt(self, match: re.Match[str]) -> model.HandDealt:
        if match["cards"] is None:
            raise LineRefused(
                "face_down", "a transcript of a game in progress hides the hands: no replay"
            )
        hands: list[tuple[Card, ...]] = [()] * self.players
        stock: tuple[Card, ...] = ()
        for seat, cards in self._parts(match["cards"], "a deal is", stock=True):
            if seat < 0:
                stock = cards
            else:
                hands[seat] = tuple(sorted(cards))  # hands are kept in card order (the engine's)
        face_up: tuple[tuple[Card, ...], ...] = ()
        if match["up"] is not None:
            ups: list[tuple[Card, ...]] = [()] * self.players
            for seat, cards in self._parts(match["up"], "face-up cards are", stock=False):
                ups[seat] = tuple(sorted(cards))
            face_up = tuple(ups)
        return model.HandDealt(
            int(match["hand"]), self.seat(match["dealer"]), tuple(hands), stock, face_up
        )

    def _build(self, kind: str, m: re.Match[str]) -> Entry:
        if kind == "hidden":
            raise LineRefused(
                "face_down", "a transcript of a game in progress hides cards: no replay"
            )
        if kind == "talk":
            return self._talk(m)
        if kind == "revealed":
            return model.SeedRevealed(m["seed"])
        if kind == "scored":
            return model.HandScored(
                hand=int(m["hand"]),
                tricks=_ints(m["tricks"]),
                points=_ints(m["points"]),
                scores=_ints(m["scores"]),
                bags=_ints(m["bags"]),
            )
        if kind == "finished":
            return model.GameFinished(int(m["winner"]), m["reason"], _ints(m["scores"]))
        seat = self.seat(m["seat"])
        match kind:
            case "trick":
                return model.TrickWon(seat, _card_list(m["cards"]))
            case "drawn":
                return model.CardDrawn(seat, _card(m["kept"]), _card(m["discarded"]))
            case "blind_nil":
                return model.BlindNilDeclared(seat)
            case "declined":
                return model.BlindNilDeclined(seat)
            case "bid":
                tricks = 0 if m["tricks"] == "nil" else int(m["tricks"])
                return model.BidPlaced(seat, tricks, blind=m["blind"] is not None)
            case "moe":
                return model.BidPlaced(seat, 6 if m["moe"] == "Little" else 8, moe=True)
            case "passed":
                return model.CardsPassed(seat, self.seat(m["to"]), _card_list(m["cards"]))
            case "played":
                return model.CardPlayed(seat, _card(m["card"]))
            case "timeout":
                return TimedOut(seat, int(m["streak"]))
            case "clock":
                return ClockRestarted(seat, float(m["s"]))
            case "seeded":
                return model.SeedContributed(seat, m["value"])
        # "abandoned" or "left"
        return Abandoned(seat, untoken(m["player"]), int(m["streak"]), left=kind == "left")

    def _talk(self, m: re.Match[str]) -> Talk:
        text = untoken(m["text"]) if m["text"] else ""
        if m["text"] and not text:
            raise LineRefused("malformed_line", "empty talk")
        hearers = () if m["hearers"] == "nobody" else tuple(map(self.seat, m["hearers"].split()))
        return Talk(
            seat=self.seat(m["seat"]),
            to=m["to"],
            preset=m["preset"] or "",
            n=int(m["n"] or 0),
            text=text,
            hearers=hearers,
            spectators=m["spectators"] is not None,
        )
