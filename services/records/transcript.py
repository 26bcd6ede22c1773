"""Plain-text transcripts of a game: `export` writes one, `parse` reads one back.

Both live here so the format has one definition. A transcript is one line per event of the
game's stream, numbered like the stream (from 1, no gaps)::

        1  table 0b6c... opened on casual (unrated, 25.0 s a turn): N ann, E bot:1 (bot), S cy, W di
        2  game started, first dealer W, rules: target=150 nil_value=50
        3  hand 1 dealt by W: N 2C 7C ...; E ...; S ...; W ...
        4  N bids 3
       ...
        9  N plays 2C
       ...
       12    trick 2C 9C QC 4C won by S
       ...
      128  hand 1 scored: tricks [3, 4, 3, 3] points [60, -70] -> scores [60, -70], bags [0, 0]
      ...
      900  game over (target): winner side 0, scores (520, 310)

Player ids, ladders and ids that are not plain words are written as JSON strings. A finished
game is written face up (every dealt hand, the draw deal's stock, exchanged and drawn cards);
a game in progress face down (no hand, no exchanged or drawn card) and it cannot be read back.
The deck seed is written only when asked for (`spades replay`), never by the HTTP API.

`parse` reads a face-up transcript back into the game's events, checking each seat's action
with `engine.decide` from the state the lines before it fold to, and each fact the engine
derives (tricks, scores, the end, the next deal's hand number and dealer) against the engine's.
It needs no seed: the deals are taken from the text (checked to be deals of the ruleset's deck),
or, when a seed is written, checked against the seed's deals. Errors are `TranscriptError`s with
a stable ``code`` and the line.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Sequence

import engine
import engine.fairness
from events.contracts import game as wire
from events.contracts.talk import Talked
from events.errors import Refusal
from services.records import talklines
from services.records.textparts import LineRefused as _Refused
from services.records.textparts import card_list as _card_list
from services.records.textparts import ints as _ints
from services.records.textparts import untoken as _untoken

MOE_NAMES = {6: "Little", 8: "Big"}
"""How a Moe bid is written: "N bids Little Moe" (6 in a row), "N bids Big Moe" (8)."""
FACE_DOWN_NOTE = "(game in progress: hands and seed are hidden until it ends)"
MAX_LINE = 1000
"""Longest line a transcript may hold (a four-hand deal line is about 180 characters)."""


class TranscriptError(Refusal, ValueError):
    """A transcript that cannot be replayed: ``code`` for programs, ``line`` (from 1) where."""

    def __init__(self, code: str, line: int, message: str) -> None:
        super().__init__(code, f"line {line}: {message}")
        self.line = line


@dataclasses.dataclass(frozen=True, slots=True)
class Transcript:
    """What a transcript reads back to: the game's events (wire form, stream order), the
    state they fold to, and whether the text carried the seed (else ``GameStarted.seed`` 0)."""

    events: tuple[wire.GameEvent, ...]
    state: engine.GameState
    seeded: bool

    @property
    def opened(self) -> wire.TableOpened:
        """Return the table's opening event."""
        opened = self.events[0]
        assert isinstance(opened, wire.TableOpened)
        return opened


# -- writing ----------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9_.:@+-]+")


def _token(text: str) -> str:
    return text if _WORD.fullmatch(text) else json.dumps(text)


def _cards(cards: Sequence[str]) -> str:
    return " ".join(cards)


def _rule_value(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def describe(event: wire.GameEvent, players: int, *, face_up: bool, seed: bool = False) -> str:
    """Return the line of one event (without its number); face down, no hidden card."""

    def name(seat: int) -> str:
        return engine.seat_name(seat, players)

    match event:
        case wire.TableOpened():
            bots = set(event.bots)
            seats = ", ".join(
                f"{name(s)} {_token(p)}{' (bot)' if s in bots else ''}"
                for s, p in enumerate(event.players)
            )
            facts = ["rated" if event.rated else "unrated", f"{event.turn_seconds!r} s a turn"]
            if event.match_id is not None:
                facts.append(f"match {_token(event.match_id)}")
            return (
                f"table {_token(event.game_id)} opened on {_token(event.ladder)}"
                f" ({', '.join(facts)}): {seats}"
            )
        case wire.GameStarted():
            changes = wire.stored_rules(event.rules).changes()
            rules = " ".join(f"{k}={_rule_value(v)}" for k, v in changes.items())
            # a committed game deals from its server seed (revealed at the end), not ``seed``
            shown = f", seed {event.seed}" if face_up and seed and not event.commitment else ""
            if event.commitment:
                who = " ".join(name(s) for s in event.contributors) or "none"
                shown += (
                    f", deals {event.scheme} committed to {event.commitment}"
                    f" (contributions from {who})"
                )
            return (
                f"game started, first dealer {name(event.dealer)}{shown},"
                f" rules: {rules or 'ladder defaults'}"
            )
        case wire.SeedContributed():
            return f"{name(event.seat)} contributes {event.value} to the deals"
        case wire.SeedRevealed():
            return f"server seed revealed: {event.server_seed}"
        case wire.HandDealt():
            line = f"hand {event.hand} dealt by {name(event.dealer)}"
            if event.face_up:
                # Power checks are public: written face down too.
                up = "; ".join(f"{name(s)} {_cards(c)}" for s, c in enumerate(event.face_up))
                line += f" (face up {up})"
            if not face_up:
                return line
            parts = [f"{name(s)} {_cards(cards)}" for s, cards in enumerate(event.hands) if cards]
            if event.stock:
                parts.append(f"stock {_cards(event.stock)}")
            return f"{line}: {'; '.join(parts)}"
        case wire.CardDrawn():
            if not face_up:
                return f"{name(event.seat)} draws"
            return f"{name(event.seat)} keeps {event.kept}, discards {event.discarded}"
        case wire.BlindNilDeclared():
            return f"{name(event.seat)} bids blind nil"
        case wire.BlindNilDeclined():
            return f"{name(event.seat)} declines blind nil"
        case wire.BidPlaced():
            if event.moe:
                return f"{name(event.seat)} bids {MOE_NAMES[event.tricks]} Moe"
            if event.blind:
                return f"{name(event.seat)} bids blind {event.tricks}"
            return f"{name(event.seat)} bids {'nil' if event.tricks == 0 else event.tricks}"
        case wire.CardsPassed():
            cards = _cards(event.cards) if face_up else f"{len(event.cards)} cards"
            return f"{name(event.seat)} passes {cards} to {name(event.to_seat)}"
        case wire.CardPlayed():
            return f"{name(event.seat)} plays {event.card}"
        case wire.TrickWon():
            return f"  trick {_cards(event.cards)} won by {name(event.seat)}"
        case wire.HandScored():
            return (
                f"hand {event.hand} scored: tricks {list(event.tricks)} points {list(event.points)}"
                f" -> scores {list(event.scores)}, bags {list(event.bags)}"
            )
        case wire.TurnTimedOut():
            return f"{name(event.seat)} timed out ({event.streak} in a row); bot plays"
        case wire.TurnClockRestarted():
            return f"{name(event.seat)} turn restarted (+{event.seconds:.1f} s)"
        case wire.SeatAbandoned():
            return (
                f"{name(event.seat)} {_token(event.player_id)} abandoned after {event.streak}"
                " timeouts in a row: a bot plays the rest of the game"
            )
        case Talked():
            return talklines.describe(event, name, face_up=face_up)
        case wire.GameFinished():
            return (
                f"game over ({event.reason}): winner side {event.winner},"
                f" scores {tuple(event.scores)}"
            )
    raise TypeError(f"no transcript line for {type(event).__name__}")


def numbered(seq: int, line: str) -> str:
    """Return a line with its event number in front."""
    return f"{seq:5d}  {line}"


def lines(
    events: Sequence[wire.GameEvent], *, seed: bool = False, until: int | None = None
) -> Iterator[str]:
    """Yield the numbered lines of a game's events (event ``i`` is number ``i + 1``), up to
    number ``until`` (all when None): face up when the events end the game, face down when
    they do not; the seed only face up and when asked for."""
    face_up = finished(events)
    opened = next((e for e in events if isinstance(e, wire.TableOpened)), None)
    players = len(opened.players) if opened else 4
    for seq, event in enumerate(events[:until], 1):
        yield numbered(seq, describe(event, players, face_up=face_up, seed=seed))


def finished(events: Sequence[wire.GameEvent]) -> bool:
    """Return whether these events end a game (its transcript is then face up)."""
    return any(isinstance(e, wire.GameFinished) for e in events)


def export(events: Sequence[wire.GameEvent], *, seed: bool = False) -> str:
    """Return the transcript of a game's events (see the module's docstring)."""
    out = list(lines(events, seed=seed))
    if not finished(events):
        out.append(FACE_DOWN_NOTE)
    return "".join(f"{line}\n" for line in out)


# -- reading ----------------------------------------------------------------------------------

_TOKEN = r'(?:"(?:[^"\\]|\\.)*"|[A-Za-z0-9_.:@+-]+)'
_SEAT = r"(?:[NESW]|P\d{1,2})"
_CARD = r"(?:[2-9TJQKA][CDHS]|LJ|BJ)"
_CARDS = rf"{_CARD}(?: {_CARD})*"
_NUM = r"-?\d{1,9}"
_LIST = rf"[\[(]{_NUM}(?:, {_NUM})*,?[\])]"

_STEP = re.compile(r" *(\d{1,7})  +(\S.*)")
_OPENED = re.compile(
    rf"table (?P<game>{_TOKEN}) opened on (?P<ladder>{_TOKEN})"
    rf" \((?P<rated>rated|unrated), (?P<turn>\d{{1,9}}(?:\.\d{{1,9}})?) s a turn"
    rf"(?:, match (?P<match>{_TOKEN}))?\): (?P<seats>.+)"
)
_OPENED_SEAT = re.compile(rf"(?P<seat>{_SEAT}) (?P<player>{_TOKEN})(?P<bot> \(bot\))?(?:, |$)")
_STARTED = re.compile(
    rf"game started, first dealer (?P<dealer>{_SEAT})(?:, seed (?P<seed>-?\d{{1,20}}))?"
    rf"(?:, deals (?P<scheme>[a-z0-9-]{{1,40}}) committed to (?P<commitment>[0-9a-f]{{64}})"
    rf" \(contributions from (?P<contributors>none|{_SEAT}(?: {_SEAT})*)\))?,"
    r" rules: (?P<rules>.+)"
)
_RULE = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_-]{0,40})=(?P<value>[A-Za-z0-9_-]{1,20})")
_DEALT = re.compile(
    rf"hand (?P<hand>\d{{1,4}}) dealt by (?P<dealer>{_SEAT})"
    rf"(?: \(face up (?P<up>[^)]+)\))?(?:: (?P<cards>.+))?"
)
_DEAL_PART = re.compile(rf"(?P<who>{_SEAT}|stock) (?P<cards>{_CARDS})")

_EVENTS: list[tuple[re.Pattern[str], str]] = [
    *talklines.PATTERNS,
    (
        re.compile(rf"(?P<seat>{_SEAT}) keeps (?P<kept>{_CARD}), discards (?P<discarded>{_CARD})"),
        "drawn",
    ),
    (re.compile(rf"(?P<seat>{_SEAT}) draws"), "hidden"),
    (
        re.compile(rf"(?P<seat>{_SEAT}) contributes (?P<value>[0-9a-f]{{64}}) to the deals"),
        "seeded",
    ),
    (re.compile(r"server seed revealed: (?P<seed>[0-9a-f]{64})"), "revealed"),
    (re.compile(rf"(?P<seat>{_SEAT}) bids blind nil"), "blind_nil"),
    (re.compile(rf"(?P<seat>{_SEAT}) declines blind nil"), "declined"),
    (re.compile(rf"(?P<seat>{_SEAT}) bids (?P<moe>Little|Big) Moe"), "moe"),
    (re.compile(rf"(?P<seat>{_SEAT}) bids (?P<blind>blind )?(?P<tricks>nil|\d{{1,3}})"), "bid"),
    (re.compile(rf"(?P<seat>{_SEAT}) passes \d{{1,3}} cards to {_SEAT}"), "hidden"),
    (re.compile(rf"(?P<seat>{_SEAT}) passes (?P<cards>{_CARDS}) to (?P<to>{_SEAT})"), "passed"),
    (re.compile(rf"(?P<seat>{_SEAT}) plays (?P<card>{_CARD})"), "played"),
    (re.compile(rf"trick (?P<cards>{_CARDS}) won by (?P<seat>{_SEAT})"), "trick"),
    (
        re.compile(
            rf"hand (?P<hand>\d{{1,4}}) scored: tricks (?P<tricks>{_LIST})"
            rf" points (?P<points>{_LIST}) -> scores (?P<scores>{_LIST}), bags (?P<bags>{_LIST})"
        ),
        "scored",
    ),
    (
        re.compile(rf"(?P<seat>{_SEAT}) timed out \((?P<streak>\d{{1,4}}) in a row\); bot plays"),
        "timeout",
    ),
    (re.compile(rf"(?P<seat>{_SEAT}) turn restarted \(\+(?P<s>\d{{1,6}}\.\d) s\)"), "clock"),
    (
        re.compile(
            rf"(?P<seat>{_SEAT}) (?P<player>{_TOKEN}) abandoned after (?P<streak>\d{{1,4}})"
            " timeouts in a row: a bot plays the rest of the game"
        ),
        "abandoned",
    ),
    (
        re.compile(
            rf"game over \((?P<reason>[a-z_]{{1,20}})\): winner side (?P<winner>{_NUM}),"
            rf" scores (?P<scores>{_LIST})"
        ),
        "finished",
    ),
]

# the events a seat's command causes first; everything else the engine derives (or the table)
_ACTIONS = (
    wire.CardDrawn,
    wire.BlindNilDeclared,
    wire.BlindNilDeclined,
    wire.BidPlaced,
    wire.CardsPassed,
    wire.CardPlayed,
)


class _Reader:
    """Folds a transcript line by line, checking every line against the engine."""

    def __init__(self) -> None:
        self.events: list[wire.GameEvent] = []
        self.state = engine.initial_state()
        self.players = 0
        self.seeded = False
        self.pending: list[engine.Event] = []
        """Events the engine derived from the last action, still to be read."""

    # -- one line ---------------------------------------------------------------------------

    def read(self, line: str) -> None:
        if line.strip() == FACE_DOWN_NOTE:
            raise _Refused(
                "face_down", "a transcript of a game in progress hides the hands: no replay"
            )
        match = _STEP.fullmatch(line)
        if match is None:
            raise _Refused("malformed_line", f"expected '<event number>  <event>': {line[:60]!r}")
        step, body = int(match[1]), match[2].strip()
        if step != len(self.events) + 1:
            raise _Refused("bad_step", f"event number {step} where {len(self.events) + 1} was due")
        if not self.events:
            self.events.append(self._opened(body))
        elif len(self.events) == 1:
            self._started(body)
        else:
            self._event(self._parse(body))

    def _seat(self, name: str) -> int:
        if self.players == 4 and name in "NESW" and len(name) == 1:
            return "NESW".index(name)
        if self.players != 4 and name.startswith("P") and int(name[1:]) < self.players:
            return int(name[1:])
        raise _Refused("malformed_line", f"no seat {name} at a table of {self.players}")

    def _opened(self, body: str) -> wire.TableOpened:
        match = _OPENED.fullmatch(body)
        if match is None:
            raise _Refused(
                "malformed_line", "a transcript starts with 'table <id> opened on <ladder> ...'"
            )
        found = list(_OPENED_SEAT.finditer(match["seats"]))
        if not found or "".join(m[0] for m in found) != match["seats"]:
            raise _Refused("malformed_line", "seats are written '<seat> <player id>, ...'")
        self.players = len(found)
        if self.players not in (2, 3, 4, 5):
            raise _Refused("malformed_line", f"a table has 2 to 5 seats, not {self.players}")
        if [m["seat"] for m in found] != [
            engine.seat_name(s, self.players) for s in range(self.players)
        ]:
            raise _Refused("malformed_line", "seats are listed once each, in seat order")
        return wire.TableOpened(
            game_id=_untoken(match["game"]),
            ladder=_untoken(match["ladder"]),
            rated=match["rated"] == "rated",
            players=tuple(_untoken(m["player"]) for m in found),
            bots=tuple(s for s, m in enumerate(found) if m["bot"]),
            match_id=_untoken(match["match"]) if match["match"] is not None else None,
            turn_seconds=float(match["turn"]),
        )

    def _started(self, body: str) -> None:
        match = _STARTED.fullmatch(body)
        if match is None:
            raise _Refused(
                "malformed_line",
                "the second line is 'game started, first dealer <seat>, rules: ...'",
            )
        rules = self._ruleset(match["rules"])
        if rules.players != self.players:
            raise _Refused(
                "invalid_ruleset", f"{rules.players} players play these rules, not {self.players}"
            )
        dealer = self._seat(match["dealer"])
        self.seeded = match["seed"] is not None
        if self.seeded:
            seed = int(match["seed"])
            decided = engine.decide(self.state, engine.StartGame(rules, seed))
            started = decided[0]
            assert isinstance(started, engine.GameStarted)
            if started.dealer != dealer:
                raise _Refused(
                    "mismatch",
                    f"seed {seed} draws {engine.seat_name(started.dealer, self.players)} as"
                    " first dealer",
                )
            self.pending = decided[1:]
        elif match["commitment"] is not None:
            # a committed game: the deals come from the text, checked against the seed by
            # `services.records.fairness`; hand 1 waits for the contributions
            who = match["contributors"]
            started = engine.GameStarted(
                rules,
                0,
                dealer,
                scheme=match["scheme"],
                commitment=match["commitment"],
                contributors=() if who == "none" else tuple(self._seat(s) for s in who.split()),
            )
            self.pending = [engine.HandDealt(1, dealer, ())]
        else:
            # without the seed the deals come from the text: only hand 1's number and dealer
            # are due (see _deal)
            started = engine.GameStarted(rules, 0, dealer)
            self.pending = [engine.HandDealt(1, dealer, ())]
        self.events.append(wire.to_wire(started))
        self.state = engine.apply(self.state, started)

    def _ruleset(self, text: str) -> engine.Ruleset:
        if text == "ladder defaults":
            return engine.Ruleset()
        options: dict[str, str | int | bool] = {}
        for part in text.split(" "):
            rule = _RULE.fullmatch(part)
            if rule is None or rule["name"] in options:
                raise _Refused(
                    "malformed_line", f"rules are written 'name=value ...': {part[:40]!r}"
                )
            options[rule["name"]] = rule["value"]
        known = {f.name for f in dataclasses.fields(engine.Ruleset)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise _Refused("unknown_rule", f"no rule option {unknown[0]!r}")
        try:
            return engine.Ruleset.from_options(options)
        except engine.InvalidRuleset as exc:
            raise _Refused("invalid_ruleset", str(exc)) from None

    def _parse(self, body: str) -> wire.GameEvent:
        dealt = _DEALT.fullmatch(body)
        if dealt is not None:
            return self._dealt(dealt)
        for pattern, kind in _EVENTS:
            match = pattern.fullmatch(body)
            if match is not None:
                return self._build(kind, match)
        raise _Refused("malformed_line", f"not a line of the transcript format: {body[:60]!r}")

    def _dealt(self, match: re.Match[str]) -> wire.HandDealt:
        if match["cards"] is None:
            raise _Refused(
                "face_down", "a transcript of a game in progress hides the hands: no replay"
            )
        hands: list[tuple[str, ...]] = [()] * self.players
        stock: tuple[str, ...] = ()
        seen: set[str] = set()
        for part in match["cards"].split("; "):
            found = _DEAL_PART.fullmatch(part)
            if found is None or found["who"] in seen:
                raise _Refused("malformed_line", f"a deal is '<seat> <cards>; ...': {part[:40]!r}")
            seen.add(found["who"])
            cards = _card_list(found["cards"])
            if found["who"] == "stock":
                stock = cards
            else:
                # hands are kept in card order (the engine relies on it)
                hands[self._seat(found["who"])] = tuple(
                    engine.card_str(c) for c in sorted(engine.parse_card(n) for n in cards)
                )
        face_up: tuple[tuple[str, ...], ...] = ()
        if match["up"] is not None:
            ups: list[tuple[str, ...]] = [()] * self.players
            named: set[str] = set()
            for part in match["up"].split("; "):
                found = _DEAL_PART.fullmatch(part)
                if found is None or found["who"] in named or found["who"] == "stock":
                    raise _Refused(
                        "malformed_line", f"face-up cards are '<seat> <cards>; ...': {part[:40]!r}"
                    )
                named.add(found["who"])
                ups[self._seat(found["who"])] = tuple(
                    engine.card_str(c)
                    for c in sorted(engine.parse_card(n) for n in _card_list(found["cards"]))
                )
            face_up = tuple(ups)
        return wire.HandDealt(
            hand=int(match["hand"]),
            dealer=self._seat(match["dealer"]),
            hands=tuple(hands),
            stock=stock,
            face_up=face_up,
        )

    def _build(self, kind: str, m: re.Match[str]) -> wire.GameEvent:
        if kind == "hidden":
            raise _Refused("face_down", "a transcript of a game in progress hides cards: no replay")
        if kind == "talk":
            return talklines.build(m, self._seat)
        if kind == "revealed":
            return wire.SeedRevealed(server_seed=m["seed"])
        if kind == "trick":
            return wire.TrickWon(seat=self._seat(m["seat"]), cards=_card_list(m["cards"]))
        if kind == "scored":
            return wire.HandScored(
                hand=int(m["hand"]),
                tricks=_ints(m["tricks"]),
                points=_ints(m["points"]),
                scores=_ints(m["scores"]),
                bags=_ints(m["bags"]),
            )
        if kind == "finished":
            opened = self.events[0]
            assert isinstance(opened, wire.TableOpened)
            abandoned = sorted({e.seat for e in self.events if isinstance(e, wire.SeatAbandoned)})
            return wire.GameFinished(
                winner=int(m["winner"]),
                reason=m["reason"],
                scores=_ints(m["scores"]),
                ladder=opened.ladder,
                rated=opened.rated,
                players=opened.players,
                abandoned=tuple(abandoned),
            )
        seat = self._seat(m["seat"])
        match kind:
            case "drawn":
                return wire.CardDrawn(seat=seat, kept=m["kept"], discarded=m["discarded"])
            case "blind_nil":
                return wire.BlindNilDeclared(seat=seat)
            case "declined":
                return wire.BlindNilDeclined(seat=seat)
            case "bid":
                tricks = 0 if m["tricks"] == "nil" else int(m["tricks"])
                return wire.BidPlaced(seat=seat, tricks=tricks, blind=m["blind"] is not None)
            case "moe":
                tricks = 6 if m["moe"] == "Little" else 8
                return wire.BidPlaced(seat=seat, tricks=tricks, moe=True)
            case "passed":
                return wire.CardsPassed(
                    seat=seat, to_seat=self._seat(m["to"]), cards=_card_list(m["cards"])
                )
            case "played":
                return wire.CardPlayed(seat=seat, card=m["card"])
            case "timeout":
                return wire.TurnTimedOut(seat=seat, streak=int(m["streak"]))
            case "clock":
                return wire.TurnClockRestarted(seat=seat, seconds=float(m["s"]))
            case "seeded":
                return wire.SeedContributed(seat=seat, value=m["value"])
        # "abandoned"
        return wire.SeatAbandoned(
            seat=seat, player_id=_untoken(m["player"]), streak=int(m["streak"])
        )

    # -- checking against the engine ----------------------------------------------------------

    def _event(self, event: wire.GameEvent) -> None:
        state = self.state
        if isinstance(event, wire.TurnTimedOut | wire.SeatAbandoned | wire.TurnClockRestarted):
            if self.pending or event.seat != state.turn or getattr(event, "streak", 1) < 1:
                raise _Refused("mismatch", f"{self._said(event)}: that seat is not to act now")
            if isinstance(event, wire.SeatAbandoned):
                opened = self.events[0]
                assert isinstance(opened, wire.TableOpened)
                if event.player_id != opened.players[event.seat]:
                    raise _Refused("mismatch", f"{self._said(event)}: another player sits there")
            self.events.append(event)
            return
        if isinstance(event, Talked):  # a table-only fact: the engine never sees it
            self.events.append(event)
            return
        if isinstance(event, wire.SeedContributed):
            self._contributed(event)
            return
        if isinstance(event, wire.SeedRevealed):
            if not self.pending or not isinstance(self.pending[0], engine.SeedRevealed):
                raise _Refused("mismatch", "the seed is revealed only when the game ends")
            self.pending.pop(0)
            if engine.fairness.commitment(bytes.fromhex(event.server_seed)) != state.commitment:
                raise _Refused("mismatch", "the revealed seed does not match the commitment")
            self.events.append(event)
            self.state = engine.apply(state, self._engine_event(event))
            return
        if self.pending:
            expected = self.pending.pop(0)
            if isinstance(expected, engine.HandDealt):
                engine_event: engine.Event = self._deal(event, expected)
            else:
                engine_event = self._engine_event(event)
                if engine_event != expected:
                    raise _Refused(
                        "mismatch", f"the engine has {self._said(wire.to_wire(expected))!r} here"
                    )
        elif isinstance(event, _ACTIONS):
            decided = self._decide(event)
            engine_event = decided[0]
            if engine_event != self._engine_event(event):
                raise _Refused(
                    "mismatch", f"the engine has {self._said(wire.to_wire(engine_event))!r} here"
                )
            self.pending = decided[1:]
        else:
            due = "the game is over" if state.phase == "over" else "a seat is to act"
            raise _Refused("mismatch", f"{self._said(event)!r} cannot come here: {due}")
        self.events.append(event)
        self.state = engine.apply(state, engine_event)

    def _contributed(self, event: wire.SeedContributed) -> None:
        state = self.state
        seeding = state.phase == "dealing" and state.hand == 0 and bool(state.commitment)
        if not seeding or event.seat not in state.contributors or state.contributions[event.seat]:
            raise _Refused("mismatch", f"{self._said(event)!r} cannot come here")
        self.events.append(event)
        self.state = engine.apply(state, self._engine_event(event))
        # all contributions in: hand 1 is due at once (else after the table's window)

    def _said(self, event: wire.GameEvent) -> str:
        return describe(event, self.players, face_up=True).strip()

    def _engine_event(self, event: wire.GameEvent) -> engine.Event:
        try:
            converted = wire.to_engine(event)
        except engine.InvalidCard as exc:
            raise _Refused("malformed_line", str(exc)) from None
        assert converted is not None
        return converted

    def _decide(self, event: wire.GameEvent) -> list[engine.Event]:
        state = self.state
        command: engine.Command
        card = engine.parse_card
        match event:
            case wire.CardDrawn():
                keep = bool(state.stock) and card(event.kept) == state.stock[0]
                command = engine.DrawCard(event.seat, keep)
            case wire.BlindNilDeclared():
                command = engine.DeclareBlindNil(event.seat)
            case wire.BlindNilDeclined():
                command = engine.DeclineBlindNil(event.seat)
            case wire.BidPlaced():
                command = engine.PlaceBid(event.seat, event.tricks, event.blind, event.moe)
            case wire.CardsPassed():
                command = engine.PassCards(event.seat, tuple(card(c) for c in event.cards))
            case wire.CardPlayed():
                command = engine.PlayCard(event.seat, card(event.card))
            case _:
                raise AssertionError(type(event).__name__)
        try:
            return engine.decide(state, command)
        except engine.RuleViolation as exc:
            raise _Refused(exc.code, f"{self._said(event)!r}: {exc}") from None

    def _deal(self, event: wire.GameEvent, expected: engine.HandDealt) -> engine.HandDealt:
        due = f"hand {expected.hand} dealt by {engine.seat_name(expected.dealer, self.players)}"
        due_at = (expected.hand, expected.dealer)
        if not isinstance(event, wire.HandDealt) or (event.hand, event.dealer) != due_at:
            raise _Refused("mismatch", f"the engine has {due!r} here")
        dealt = self._engine_event(event)
        assert isinstance(dealt, engine.HandDealt)
        t = self.state.tables
        cards = [c for hand in dealt.hands for c in hand] + list(dealt.stock)
        for c in cards:
            if c not in t.deck:
                raise _Refused("invalid_deal", f"{engine.card_str(c)} is not in this game's deck")
        if len(set(cards)) != len(cards):
            twice = next(c for c in cards if cards.count(c) > 1)
            raise _Refused("invalid_deal", f"{engine.card_str(twice)} is dealt twice")
        if self.state.rules.deal == "draw":
            if any(dealt.hands) or len(dealt.stock) != len(t.deck):
                raise _Refused("invalid_deal", "the draw deal puts the whole deck in the stock")
        elif dealt.stock or any(len(h) != t.tricks for h in dealt.hands):
            raise _Refused("invalid_deal", f"each seat is dealt {t.tricks} cards")
        k = self.state.rules.power_checks
        if k or dealt.face_up:
            ups = dealt.face_up or ((),) * t.players
            if len(ups) != t.players or any(
                len(up) != k or not set(up) <= set(hand)
                for up, hand in zip(ups, dealt.hands, strict=True)
            ):
                raise _Refused(
                    "invalid_deal", f"each seat has {k} face-up cards (power checks) of its hand"
                )
        if self.seeded and dealt != expected:
            raise _Refused("mismatch", "the deal is not the one the written seed deals")
        return dealt

    def finish(self) -> Transcript:
        if len(self.events) < 2:
            raise _Refused("truncated", "a transcript has at least its table and start lines")
        if self.pending or self.state.phase != "over":
            raise _Refused("truncated", "the transcript ends before the game is over")
        return Transcript(events=tuple(self.events), state=self.state, seeded=self.seeded)


def parse(text: str) -> Transcript:
    """Return the game a face-up transcript records, checked against the engine line by line;
    raise `TranscriptError` naming the first line that is not a legal continuation."""
    reader = _Reader()
    rows = text.split("\n")
    number = 0
    for number, row in enumerate(rows, 1):
        line = row.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            if len(line) > MAX_LINE:
                raise _Refused("malformed_line", f"a line is at most {MAX_LINE} characters")
            reader.read(line)
        except _Refused as exc:
            if number == len(rows) and exc.code == "malformed_line":  # no final newline
                raise TranscriptError("truncated", number, f"text stops mid-line: {exc}") from None
            raise TranscriptError(exc.code, number, str(exc)) from None
    try:
        return reader.finish()
    except _Refused as exc:
        raise TranscriptError(exc.code, number, str(exc)) from None
