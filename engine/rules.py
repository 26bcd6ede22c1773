"""The ruleset: one immutable, validated value holding every option of RULES.md."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from engine.cards import (
    BIG_JOKER,
    CLUBS,
    DIAMONDS,
    HEARTS,
    LITTLE_JOKER,
    SPADES,
    TWO_OF_CLUBS,
    make_card,
    team_of,
)

FIRST_LEADS = ("no_spade", "two_of_clubs", "any", "lowest_club")
DEALS = ("deal", "draw")


class InvalidRuleset(ValueError):
    """A ruleset's options contradict each other or are out of range."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Ruleset:
    """Every option of a table; the defaults are the ranked ladder (RULES.md).

    >>> Ruleset().target, Ruleset(players=2).tricks_per_hand, Ruleset(players=3).tricks_per_hand
    (500, 13, 17)
    >>> Ruleset(suicide=True, players=2)
    Traceback (most recent call last):
    ...
    engine.rules.InvalidRuleset: suicide is a partnership game: it needs players=4

    Fields:

    - ``players``: 4 (partnerships N+S v E+W), 2 (heads-up) or 3 (cut-throat).
    - ``target``: a side at or above it after a hand wins (higher score if several).
    - ``mercy``: a side at or below this (negative) score after a hand loses at once;
      0 turns the mercy rule off.
    - ``nil_allowed`` / ``nil_value``; ``blind_nil`` / ``blind_nil_deficit`` /
      ``blind_nil_exchange`` (cards given each way, 0..2).
    - ``bags`` (False = bags off), ``bag_limit``, ``bag_penalty``.
    - ``first_lead``: "no_spade" (dealer's left leads any non-spade), "two_of_clubs"
      (its holder must lead it), "any" (dealer's left leads any card), "lowest_club"
      (two-player: everyone plays his lowest club to the first trick).
    - ``min_bid`` (each non-nil bid) and ``team_min_bid`` (partnership contract).
    - ``ten_for_two_hundred``, ``boston``, ``blind_bids`` / ``blind_bid_deficit``,
      ``jokers``, ``deuces_high``, ``suicide``, ``deal`` ("deal" or "draw"),
      ``hand_cap``.

    Details the sources leave open, decided as established online rooms play them:

    - Dealing: each hand's shuffle is ``random.Random(f"{seed}/{hand}")``; the first
      dealer is drawn from ``random.Random(f"{seed}/dealer")``. With two players and
      ``deal="deal"`` 13 cards each are dealt and the other 26 stay unseen.
    - Blind nil (and blind bids) are offered to an eligible seat at its turn to bid,
      before its hand is shown; a team "trails by d" when the best other side's score
      minus its own is at least d. Declining shows the hand and the seat bids
      normally. The exchange (partnerships only; ignored with 2 or 3 players) runs in
      bidding order: the blind-nil bidder gives ``blind_nil_exchange`` cards to the
      partner, who then gives as many back (any cards, including those received).
      If both partners bid blind nil, each one's exchange runs in turn. A blind bid of
      0 where nil is allowed is blind nil (DeclareBlindNil), not a blind bid. Blind
      options need a dealt hand, so they are invalid with ``deal="draw"``.
    - Nil: a nil bidder's tricks never count toward the partner's bid; each one is a
      bag (and, like every bag, scores 1 point). Both partners nil: contract 0, each
      nil scored on its own. With ``nil_allowed=False`` a 0 bid is a plain contract
      (then ``min_bid`` may be 0); with nil allowed ``min_bid`` (>= 1) binds non-nil
      bids only, so the legal bids are 0 (nil) and min_bid..tricks.
    - ``team_min_bid`` (partnerships): the second partner to bid must bring the
      team's contract (nil counts 0) up to it; the first partner bids freely.
    - Suicide: the first partner of each team bids nil or at least 4, the second must
      bid the opposite (at least 4 after a nil, nil after a bid).
    - Blind bids (``blind_bids``): a seat whose side trails by ``blind_bid_deficit``
      may bid a number before seeing its hand. If its side makes the contract the
      blind part scores 20 per trick (the rest 10 per trick) and overtricks score
      nothing and are not bags; if set the side loses the usual 10 per trick bid.
    - Ten for two hundred: a partnership contract of 10 or more, made, scores 20 per
      trick bid (200 for 10) plus bags; set scores the usual -10 per trick bid.
    - Boston: a contract of all the hand's tricks (13) made wins the game at once
      whatever the scores; set it costs 250 instead of 130.
    - Bags off: overtricks still score 1 point each, with no penalty.
    - ``first_lead="any"`` frees only the first lead: later leads follow the broken
      rule, and a spade led to the first trick breaks spades. "no_spade" is the plain
      broken rule (a leader holding only spades may lead one).
    - Hands in events and in the state are sorted by card number.
    - Jokers: big > little > ace of spades, 2C and 2D removed. ``deuces_high`` alone
      ranks 2H > 2C > 2D > 2S above the ace of spades (all four deuces are trumps);
      with jokers as well it is Joker-Joker-Deuce: big > little > 2S > AS, 2H and 2D
      removed. Neither with three players.
    - Three-player cut-throat: 2C removed, 17 cards and 17 tricks each, every player
      his own side, scored like a partnership of one (nil, bags, set, mercy, target);
      blind nil and blind bids use "behind the best other player".
    - Two-player "draw": the non-dealer draws first; each turn a player looks at the
      top card, keeps it and discards the next, or discards it and keeps the next.
      "lowest_club": a player holding a club must play his lowest one to the first
      trick; one without clubs follows the led suit if he can, else plays a
      non-spade if he can.
    - Every game ends: after ``hand_cap`` (50) hands the higher score wins, an exact
      tie at the top is a draw (winner -1). A mercy end with a tie at the top is a
      draw too; a target end with a tie at the top plays another hand.
    - Order of the end checks after a hand: Boston made, mercy, target, hand cap; the
      winner is always the side with the unique top score (or the Boston side).
    """

    players: int = 4
    target: int = 500
    mercy: int = -200
    nil_value: int = 100
    nil_allowed: bool = True
    blind_nil: bool = True
    blind_nil_deficit: int = 100
    blind_nil_exchange: int = 2
    bags: bool = True
    bag_limit: int = 10
    bag_penalty: int = 100
    first_lead: str = "no_spade"
    min_bid: int = 1
    team_min_bid: int = 0
    ten_for_two_hundred: bool = False
    boston: bool = False
    blind_bids: bool = False
    blind_bid_deficit: int = 100
    jokers: bool = False
    deuces_high: bool = False
    suicide: bool = False
    deal: str = "deal"
    hand_cap: int = 50

    def __post_init__(self) -> None:
        reason = self._inconsistency()
        if reason:
            raise InvalidRuleset(reason)

    def _inconsistency(self) -> str:
        if self.players not in (2, 3, 4):
            return f"players must be 2, 3 or 4, not {self.players}"
        for name in ("target", "nil_value", "bag_limit", "hand_cap"):
            if getattr(self, name) < 1:
                return f"{name} must be positive"
        for name in ("blind_nil_deficit", "bag_penalty", "blind_bid_deficit", "min_bid"):
            if getattr(self, name) < 0:
                return f"{name} must not be negative"
        if self.mercy > 0:
            return "mercy is a negative score to lose at (0 = off)"
        if self.blind_nil_exchange not in (0, 1, 2):
            return "blind_nil_exchange must be 0, 1 or 2 cards"
        if self.first_lead not in FIRST_LEADS:
            return f"first_lead must be one of {', '.join(FIRST_LEADS)}"
        if self.deal not in DEALS:
            return f"deal must be one of {', '.join(DEALS)}"
        if self.blind_nil and not self.nil_allowed:
            return "blind nil needs nil_allowed"
        if self.nil_allowed and self.min_bid < 1:
            return "min_bid 0 would be nil: with nil allowed min_bid must be at least 1"
        if self.min_bid > self.tricks_per_hand:
            return f"min_bid is above the {self.tricks_per_hand} tricks of a hand"
        if self.team_min_bid and self.players != 4:
            return "team_min_bid is a partnership rule: it needs players=4"
        if self.team_min_bid > 13:
            return "team_min_bid is above the 13 tricks of a hand"
        if self.suicide and self.players != 4:
            return "suicide is a partnership game: it needs players=4"
        if self.suicide and not self.nil_allowed:
            return "suicide needs nil_allowed (one partner bids nil)"
        if self.suicide and self.team_min_bid > 4:
            return "suicide with team_min_bid above 4: a nil after a 4 could never be bid"
        if self.ten_for_two_hundred and self.players != 4:
            return "ten_for_two_hundred is a partnership rule: it needs players=4"
        if self.boston and self.players != 4:
            return "boston is a partnership rule: it needs players=4"
        if self.players == 3 and (self.jokers or self.deuces_high):
            return "jokers and deuces_high need 2 or 4 players (cut-throat removes 2C)"
        if self.deal == "draw" and self.players != 2:
            return "the draw deal is a two-player variant: it needs players=2"
        if self.deal == "draw" and (self.blind_nil or self.blind_bids):
            return "blind bids need a dealt hand: in the draw deal every card is seen"
        if self.first_lead == "lowest_club" and self.players != 2:
            return "first_lead=lowest_club is a two-player variant: it needs players=2"
        if self.first_lead == "two_of_clubs":
            if self.players != 4:
                return "first_lead=two_of_clubs needs all 52 cards dealt: players=4"
            if self.jokers or self.deuces_high:
                return "first_lead=two_of_clubs: 2C is removed or a trump in this deck"
        return ""

    @property
    def tricks_per_hand(self) -> int:
        """Return the number of tricks (and cards per player) of one hand."""
        return 17 if self.players == 3 else 13

    @property
    def teams(self) -> int:
        """Return the number of scoring sides (two partnerships, or one per player)."""
        return 2 if self.players == 4 else self.players

    def to_dict(self) -> dict[str, Any]:
        """Return the options as a plain dict (the inverse of ``Ruleset(**d)``)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def changes(self) -> dict[str, Any]:
        """Return only the options that differ from the ranked ladder."""
        base = Ruleset()
        return {k: v for k, v in self.to_dict().items() if getattr(base, k) != v}

    @classmethod
    def from_options(cls, options: dict[str, str | int | bool]) -> Ruleset:
        """Return the ranked ladder changed by ``options`` (CLI strings are converted).

        >>> Ruleset.from_options({"players": "2", "blind_nil": "no"}).players
        2
        >>> Ruleset.from_options({"mercy": "off", "bags": "off"}).changes()
        {'mercy': 0, 'bags': False}
        """
        kinds = {f.name: f.type for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, raw in options.items():
            name = key.strip().replace("-", "_")
            if name not in kinds:
                raise InvalidRuleset(f"unknown option {key!r}; options: {', '.join(kinds)}")
            values[name] = _convert(name, kinds[name], raw)
        return cls(**values)


def _convert(name: str, kind: object, raw: str | int | bool) -> object:
    if not isinstance(raw, str):
        return raw
    text = raw.strip().lower()
    if kind in (bool, "bool"):
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise InvalidRuleset(f"{name} takes yes/no, not {raw!r}")
    if kind in (int, "int"):
        if text in ("off", "none"):
            return 0
        try:
            return int(text)
        except ValueError:
            raise InvalidRuleset(f"{name} takes a whole number, not {raw!r}") from None
    return text


def ranked_default() -> Ruleset:
    """Return the ranked ladder's ruleset (every option at its default)."""
    return Ruleset()


def two_player_default() -> Ruleset:
    """Return the heads-up ruleset of seed 003: 13 cards dealt each, no blind nil."""
    return Ruleset(players=2, blind_nil=False, blind_nil_exchange=0)


class Tables(NamedTuple):
    """Per-ruleset lookup tables computed once per game (kept in the state)."""

    deck: tuple[int, ...]
    suit: tuple[int, ...]
    """Effective suit of each card (trump deuces and jokers are spades)."""
    power: tuple[int, ...]
    """Strength of each card within its effective suit; trumps are offset by 100."""
    team: tuple[int, ...]
    players: int
    teams: int
    tricks: int
    contiguous: bool
    """Whether each effective suit is one run of card numbers (all decks but deuces-high)."""
    members: tuple[tuple[int, ...], ...]
    """The seats of each side."""
    bids: tuple[int, ...]
    """The bids allowed before any partner constraint (0 = nil first where allowed)."""


_last_tables: tuple[Ruleset | None, Tables | None] = (None, None)


def tables(rules: Ruleset) -> Tables:
    """Return the deck and card-order tables of a ruleset."""
    # Hashing a Ruleset (23 fields) for the cache costs more than the rest of a
    # game's start: the ruleset seen last is recognised by identity.
    global _last_tables
    last, found = _last_tables
    if rules is last and found is not None:
        return found
    found = _tables(rules)
    _last_tables = rules, found
    return found


@lru_cache(maxsize=256)
def _tables(rules: Ruleset) -> Tables:
    suit = [c // 13 for c in range(52)] + [SPADES, SPADES]
    power = [c % 13 for c in range(52)] + [13, 14]
    removed: set[int] = set()
    deuce = {s: make_card(s, 0) for s in range(4)}
    if rules.players == 3:
        removed.add(TWO_OF_CLUBS)
    if rules.jokers and rules.deuces_high:
        removed |= {deuce[HEARTS], deuce[DIAMONDS]}
        power[deuce[SPADES]], power[LITTLE_JOKER], power[BIG_JOKER] = 13, 14, 15
    elif rules.jokers:
        removed |= {deuce[CLUBS], deuce[DIAMONDS]}
    elif rules.deuces_high:
        for order, s in enumerate((SPADES, DIAMONDS, CLUBS, HEARTS)):
            suit[deuce[s]] = SPADES
            power[deuce[s]] = 13 + order
    deck = [c for c in range(52) if c not in removed]
    if rules.jokers:
        deck += [LITTLE_JOKER, BIG_JOKER]
    for c in range(54):
        if suit[c] == SPADES:
            power[c] += 100
    return Tables(
        deck=tuple(deck),
        suit=tuple(suit),
        power=tuple(power),
        team=tuple(team_of(s, rules.players) for s in range(rules.players)),
        players=rules.players,
        teams=rules.teams,
        tricks=rules.tricks_per_hand,
        contiguous=not rules.deuces_high or rules.jokers,
        members=tuple(
            tuple(s for s in range(rules.players) if team_of(s, rules.players) == side)
            for side in range(rules.teams)
        ),
        bids=(0,) * rules.nil_allowed + tuple(range(rules.min_bid, rules.tricks_per_hand + 1)),
    )
