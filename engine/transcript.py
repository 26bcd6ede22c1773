"""Plain-text transcripts of a game: `export` writes one, `parse` reads one back.

The format lives beside the rules it records (as python-chess keeps `chess.pgn` in the chess
package): this module and its line notation (`engine.notation`) are its one definition, over
the engine's own events and the table's few facts the engine never sees (`notation.Opened`,
`TimedOut`, `ClockRestarted`, `Abandoned`, `Talk`). The platform keeps only the adapter from
its stored events to these values and back (`services.records.transcript`).

A transcript is one line per event of the game's stream, numbered like the stream (from 1,
no gaps)::

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

`parse` reads a face-up transcript back into the game's entries, checking each seat's action
with `decide` from the state the lines before it fold to, and each fact the engine derives
(tricks, scores, the end, the next deal's hand number and dealer) against the engine's. It
needs no seed: the deals are taken from the text (checked to be deals of the ruleset's deck),
or, when a seed is written, checked against the seed's deals. Errors are `TranscriptError`s
with a stable ``code`` and the line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence

from engine import fairness, model
from engine.cards import card_str, seat_name
from engine.errors import RuleViolation
from engine.game import decide
from engine.notation import (
    SEAT,
    TOKEN,
    Abandoned,
    ClockRestarted,
    Entry,
    LineRefused,
    Notation,
    Opened,
    Talk,
    TimedOut,
    describe,
    untoken,
)
from engine.rules import InvalidRuleset, Ruleset
from engine.state import GameState, apply, initial_state

__all__ = [
    "FACE_DOWN_NOTE",
    "MAX_LINE",
    "Transcript",
    "TranscriptError",
    "export",
    "finished",
    "lines",
    "numbered",
    "parse",
]

FACE_DOWN_NOTE = "(game in progress: hands and seed are hidden until it ends)"
MAX_LINE = 1000
"""Longest line a transcript may hold (a four-hand deal line is about 180 characters)."""


class TranscriptError(ValueError):
    """A transcript that cannot be replayed: ``code`` for programs, ``line`` (from 1) where."""

    def __init__(self, code: str, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.code = code
        self.line = line
        self.detail = message
        """What is wrong, without the line's number."""


@dataclasses.dataclass(frozen=True, slots=True)
class Transcript:
    """What a transcript reads back to: the game's entries (stream order), the state they fold
    to, and whether the text carried the seed (else ``GameStarted.seed`` 0)."""

    entries: tuple[Entry, ...]
    state: GameState
    seeded: bool

    @property
    def opened(self) -> Opened:
        """Return the table's opening line."""
        opened = self.entries[0]
        assert isinstance(opened, Opened)
        return opened


# -- writing ----------------------------------------------------------------------------------


def numbered(seq: int, line: str) -> str:
    """Return a line with its event number in front."""
    return f"{seq:5d}  {line}"


def finished(entries: Sequence[object]) -> bool:
    """Return whether these entries end a game (its transcript is then face up)."""
    return any(isinstance(e, model.GameFinished) for e in entries)


def lines(
    entries: Sequence[Entry], *, seed: bool = False, until: int | None = None
) -> Iterator[str]:
    """Yield the numbered lines of a game's entries (entry ``i`` is number ``i + 1``), up to
    number ``until`` (all when None): face up when the entries end the game, face down when
    they do not; the seed only face up and when asked for."""
    face_up = finished(entries)
    opened = next((e for e in entries if isinstance(e, Opened)), None)
    players = len(opened.players) if opened else 4
    for seq, entry in enumerate(entries[:until], 1):
        yield numbered(seq, describe(entry, players, face_up=face_up, seed=seed))


def export(entries: Sequence[Entry], *, seed: bool = False) -> str:
    """Return the transcript of a game's entries (see the module's docstring)."""
    out = list(lines(entries, seed=seed))
    if not finished(entries):
        out.append(FACE_DOWN_NOTE)
    return "".join(f"{line}\n" for line in out)


# -- reading ----------------------------------------------------------------------------------

_STEP = re.compile(r" *(\d{1,7})  +(\S.*)")
_OPENED = re.compile(
    rf"table (?P<game>{TOKEN}) opened on (?P<ladder>{TOKEN})"
    rf" \((?P<rated>rated|unrated), (?P<turn>\d{{1,9}}(?:\.\d{{1,9}})?) s a turn"
    rf"(?:, match (?P<match>{TOKEN}))?\): (?P<seats>.+)"
)
_OPENED_SEAT = re.compile(rf"(?P<seat>{SEAT}) (?P<player>{TOKEN})(?P<bot> \(bot\))?(?:, |$)")
_STARTED = re.compile(
    rf"game started, first dealer (?P<dealer>{SEAT})(?:, seed (?P<seed>-?\d{{1,20}}))?"
    rf"(?:, deals (?P<scheme>[a-z0-9-]{{1,40}}) committed to (?P<commitment>[0-9a-f]{{64}})"
    rf" \(contributions from (?P<contributors>none|{SEAT}(?: {SEAT})*)\))?,"
    r" rules: (?P<rules>.+)"
)
_RULE = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_-]{0,40})=(?P<value>[A-Za-z0-9_-]{1,20})")

# the events a seat's command causes first; everything else the engine derives (or the table)
_ACTIONS = (
    model.CardDrawn,
    model.BlindNilDeclared,
    model.BlindNilDeclined,
    model.BidPlaced,
    model.CardsPassed,
    model.CardPlayed,
)
_FACE_DOWN = "a transcript of a game in progress hides the hands: no replay"


class _Reader:
    """Folds a transcript line by line, checking every line against the engine."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.state = initial_state()
        self.notation = Notation(0)
        self.seeded = False
        self.pending: list[model.Event] = []
        """Events the engine derived from the last action, still to be read."""

    @property
    def players(self) -> int:
        return self.notation.players

    # -- one line ---------------------------------------------------------------------------

    def read(self, line: str) -> None:
        if line.strip() == FACE_DOWN_NOTE:
            raise LineRefused("face_down", _FACE_DOWN)
        match = _STEP.fullmatch(line)
        if match is None:
            raise LineRefused(
                "malformed_line", f"expected '<event number>  <event>': {line[:60]!r}"
            )
        step, body = int(match[1]), match[2].strip()
        if step != len(self.entries) + 1:
            raise LineRefused(
                "bad_step", f"event number {step} where {len(self.entries) + 1} was due"
            )
        if not self.entries:
            self.entries.append(self._opened(body))
        elif len(self.entries) == 1:
            self._started(body)
        else:
            self._entry(self.notation.entry(body))

    def _opened(self, body: str) -> Opened:
        match = _OPENED.fullmatch(body)
        if match is None:
            raise LineRefused(
                "malformed_line", "a transcript starts with 'table <id> opened on <ladder> ...'"
            )
        found = list(_OPENED_SEAT.finditer(match["seats"]))
        if not found or "".join(m[0] for m in found) != match["seats"]:
            raise LineRefused("malformed_line", "seats are written '<seat> <player id>, ...'")
        players = len(found)
        self.notation = Notation(players)
        if players not in (2, 3, 4, 5):
            raise LineRefused("malformed_line", f"a table has 2 to 5 seats, not {players}")
        if [m["seat"] for m in found] != [seat_name(s, players) for s in range(players)]:
            raise LineRefused("malformed_line", "seats are listed once each, in seat order")
        return Opened(
            game_id=untoken(match["game"]),
            ladder=untoken(match["ladder"]),
            rated=match["rated"] == "rated",
            players=tuple(untoken(m["player"]) for m in found),
            bots=tuple(s for s, m in enumerate(found) if m["bot"]),
            match_id=untoken(match["match"]) if match["match"] is not None else None,
            turn_seconds=float(match["turn"]),
        )

    def _started(self, body: str) -> None:
        match = _STARTED.fullmatch(body)
        if match is None:
            raise LineRefused(
                "malformed_line",
                "the second line is 'game started, first dealer <seat>, rules: ...'",
            )
        rules = self._ruleset(match["rules"])
        if rules.players != self.players:
            raise LineRefused(
                "invalid_ruleset", f"{rules.players} players play these rules, not {self.players}"
            )
        dealer = self.notation.seat(match["dealer"])
        self.seeded = match["seed"] is not None
        if self.seeded:
            seed = int(match["seed"])
            decided = decide(self.state, model.StartGame(rules, seed))
            started = decided[0]
            assert isinstance(started, model.GameStarted)
            if started.dealer != dealer:
                raise LineRefused(
                    "mismatch",
                    f"seed {seed} draws {seat_name(started.dealer, self.players)} as first dealer",
                )
            self.pending = decided[1:]
        elif match["commitment"] is not None:
            # a committed game: the deals come from the text, checked against the seed by
            # `services.records.fairness`; hand 1 waits for the contributions
            who = match["contributors"]
            started = model.GameStarted(
                rules,
                0,
                dealer,
                scheme=match["scheme"],
                commitment=match["commitment"],
                contributors=() if who == "none" else tuple(map(self.notation.seat, who.split())),
            )
            self.pending = [model.HandDealt(1, dealer, ())]
        else:
            # without the seed the deals come from the text: only hand 1's number and dealer
            # are due (see _deal)
            started = model.GameStarted(rules, 0, dealer)
            self.pending = [model.HandDealt(1, dealer, ())]
        self.entries.append(started)
        self.state = apply(self.state, started)

    def _ruleset(self, text: str) -> Ruleset:
        if text == "ladder defaults":
            return Ruleset()
        options: dict[str, str | int | bool] = {}
        for part in text.split(" "):
            rule = _RULE.fullmatch(part)
            if rule is None or rule["name"] in options:
                raise LineRefused(
                    "malformed_line", f"rules are written 'name=value ...': {part[:40]!r}"
                )
            options[rule["name"]] = rule["value"]
        known = {f.name for f in dataclasses.fields(Ruleset)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise LineRefused("unknown_rule", f"no rule option {unknown[0]!r}")
        try:
            return Ruleset.from_options(options)
        except InvalidRuleset as exc:
            raise LineRefused("invalid_ruleset", str(exc)) from None

    # -- checking against the engine ----------------------------------------------------------

    def _entry(self, entry: Entry) -> None:
        state = self.state
        if isinstance(entry, TimedOut | Abandoned | ClockRestarted):
            # a player may leave whenever he likes; a timeout is the seat on turn's own
            anytime = isinstance(entry, Abandoned) and entry.left
            on_turn = entry.seat == state.turn and getattr(entry, "streak", 1) >= 1
            if self.pending or not (anytime or on_turn):
                raise LineRefused("mismatch", f"{self._said(entry)}: that seat is not to act now")
            if isinstance(entry, Abandoned):
                opened = self.entries[0]
                assert isinstance(opened, Opened)
                if entry.player_id != opened.players[entry.seat]:
                    raise LineRefused("mismatch", f"{self._said(entry)}: another player sits there")
            self.entries.append(entry)
            return
        if isinstance(entry, Talk):  # a table-only fact: the engine never sees it
            self.entries.append(entry)
            return
        if isinstance(entry, Opened):
            raise LineRefused("malformed_line", "a transcript opens its table once")
        if isinstance(entry, model.SeedContributed):
            self._contributed(entry)
            return
        if isinstance(entry, model.SeedRevealed):
            if not self.pending or not isinstance(self.pending[0], model.SeedRevealed):
                raise LineRefused("mismatch", "the seed is revealed only when the game ends")
            self.pending.pop(0)
            if fairness.commitment(bytes.fromhex(entry.server_seed)) != state.commitment:
                raise LineRefused("mismatch", "the revealed seed does not match the commitment")
            self.entries.append(entry)
            self.state = apply(state, entry)
            return
        if self.pending:
            expected = self.pending.pop(0)
            if isinstance(expected, model.HandDealt):
                entry = self._deal(entry, expected)
            elif entry != expected:
                raise LineRefused("mismatch", f"the engine has {self._said(expected)!r} here")
        elif isinstance(entry, _ACTIONS):
            decided = self._decide(entry)
            if decided[0] != entry:
                raise LineRefused("mismatch", f"the engine has {self._said(decided[0])!r} here")
            self.pending = decided[1:]
        else:
            due = "the game is over" if state.phase == "over" else "a seat is to act"
            raise LineRefused("mismatch", f"{self._said(entry)!r} cannot come here: {due}")
        self.entries.append(entry)
        self.state = apply(state, entry)

    def _contributed(self, entry: model.SeedContributed) -> None:
        state = self.state
        seeding = state.phase == "dealing" and state.hand == 0 and bool(state.commitment)
        if not seeding or entry.seat not in state.contributors or state.contributions[entry.seat]:
            raise LineRefused("mismatch", f"{self._said(entry)!r} cannot come here")
        self.entries.append(entry)
        self.state = apply(state, entry)
        # all contributions in: hand 1 is due at once (else after the table's window)

    def _said(self, entry: Entry) -> str:
        return describe(entry, self.players, face_up=True).strip()

    def _decide(self, entry: model.Event) -> list[model.Event]:
        state = self.state
        command: model.Command
        match entry:
            case model.CardDrawn():
                command = model.DrawCard(
                    entry.seat, bool(state.stock) and entry.kept == state.stock[0]
                )
            case model.BlindNilDeclared():
                command = model.DeclareBlindNil(entry.seat)
            case model.BlindNilDeclined():
                command = model.DeclineBlindNil(entry.seat)
            case model.BidPlaced():
                command = model.PlaceBid(entry.seat, entry.tricks, entry.blind, entry.moe)
            case model.CardsPassed():
                command = model.PassCards(entry.seat, entry.cards)
            case model.CardPlayed():
                command = model.PlayCard(entry.seat, entry.card)
            case _:
                raise AssertionError(type(entry).__name__)
        try:
            return decide(state, command)
        except RuleViolation as exc:
            raise LineRefused(exc.code, f"{self._said(entry)!r}: {exc}") from None

    def _deal(self, entry: Entry, expected: model.HandDealt) -> model.HandDealt:
        due = f"hand {expected.hand} dealt by {seat_name(expected.dealer, self.players)}"
        due_at = (expected.hand, expected.dealer)
        if not isinstance(entry, model.HandDealt) or (entry.hand, entry.dealer) != due_at:
            raise LineRefused("mismatch", f"the engine has {due!r} here")
        dealt, t = entry, self.state.tables
        cards = [c for hand in dealt.hands for c in hand] + list(dealt.stock)
        for c in cards:
            if c not in t.deck:
                raise LineRefused("invalid_deal", f"{card_str(c)} is not in this game's deck")
        if len(set(cards)) != len(cards):
            twice = next(c for c in cards if cards.count(c) > 1)
            raise LineRefused("invalid_deal", f"{card_str(twice)} is dealt twice")
        if self.state.rules.deal == "draw":
            if any(dealt.hands) or len(dealt.stock) != len(t.deck):
                raise LineRefused("invalid_deal", "the draw deal puts the whole deck in the stock")
        elif dealt.stock or any(len(h) != t.tricks for h in dealt.hands):
            raise LineRefused("invalid_deal", f"each seat is dealt {t.tricks} cards")
        k = self.state.rules.power_checks
        if k or dealt.face_up:
            ups = dealt.face_up or ((),) * t.players
            if len(ups) != t.players or any(
                len(up) != k or not set(up) <= set(hand)
                for up, hand in zip(ups, dealt.hands, strict=True)
            ):
                raise LineRefused(
                    "invalid_deal", f"each seat has {k} face-up cards (power checks) of its hand"
                )
        if self.seeded and dealt != expected:
            raise LineRefused("mismatch", "the deal is not the one the written seed deals")
        return dealt

    def finish(self) -> Transcript:
        if len(self.entries) < 2:
            raise LineRefused("truncated", "a transcript has at least its table and start lines")
        if self.pending or self.state.phase != "over":
            raise LineRefused("truncated", "the transcript ends before the game is over")
        return Transcript(entries=tuple(self.entries), state=self.state, seeded=self.seeded)


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
                raise LineRefused("malformed_line", f"a line is at most {MAX_LINE} characters")
            reader.read(line)
        except LineRefused as exc:
            if number == len(rows) and exc.code == "malformed_line":  # no final newline
                raise TranscriptError("truncated", number, f"text stops mid-line: {exc}") from None
            raise TranscriptError(exc.code, number, str(exc)) from None
    try:
        return reader.finish()
    except LineRefused as exc:
        raise TranscriptError(exc.code, number, str(exc)) from None
