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
BIDDING_ORDERS = ("clockwise", "partners")
MOES = {6: 150, 8: 300}
"""Little Moe (6 tricks in a row) and Big Moe (8 in a row): the run and its value."""

BOUNDS: dict[str, tuple[int, int]] = {
    "target": (100, 1000),
    "mercy": (-1000, 0),
    "hand_cap": (1, 100),
    "nil_value": (1, 500),
    "blind_nil_deficit": (0, 1000),
    "blind_bid_deficit": (0, 1000),
    "bag_limit": (1, 50),
    "bag_penalty": (0, 500),
}
"""The range (inclusive) of each numeric option; any other whole-number option is held to
`OTHER_BOUND`. Every game must end within ``hand_cap`` hands, and no option may make a table
that a person would not choose to play (a target of a billion, a mercy floor below reach)."""
OTHER_BOUND = (-1000, 1000)


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

    - ``players``: 4 (partnerships N+S v E+W), 2 (heads-up), 3 (cut-throat) or 5 (each
      for himself).
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
    - ``moe`` (Big and Little Moe contracts), ``little_willie`` (JJD), ``blind_bid_min``,
      ``ten_for_two_blind``, ``set_scores_zero``, ``bidding_order`` ("clockwise" or
      "partners"), ``nil_exchange`` / ``nil_exchange_deficit`` / ``nil_exchange_peek``,
      ``suicide_forcing``, ``power_checks`` (face-up cards per player, 0..3).
    - Per-player minimum of two in partnerships is ``min_bid=2`` with ``players=4``.

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
    - Ten for two hundred: a partnership contract of 10 or more, made, scores 200 (the
      rule book's "team bid >= 10 made scores 200": 200 for 10, 11, 12 or 13, never 20
      per trick) plus bags; set scores the usual -10 per trick bid. Games recorded
      before this decision scored 20 per trick; their stored rules (no
      ``ten_for_two_scoring``) decode to "per_trick" so they replay as played. With
      ``ten_for_two_blind`` a contract of 10 or more bid entirely blind (every trick of
      it bid blind, the partner nil or blind too) scores 400 when made, no bags, as
      blind bids never count overtricks; set, -10 per trick bid.
    - Ten for two with a blind half (the rule book is silent): a made contract of 10 or
      more of which only a part was bid blind scores the better of ten for two's 200
      and the blind rule's 20 per blind trick and 10 per seen trick, never less than the
      same contract bid seen (bid 5 blind and 5 seen: 200, not 150; 9 blind and 4 seen:
      220); as every contract with a blind part, no overtricks and no bags; set, -10 per
      trick bid. Games recorded before this decision (issue 28) scored the blind rule
      alone: their stored rules decode to ``ten_for_two_part_blind="blind_rule"``.
    - Boston: a contract of all the hand's tricks (13) made wins the game at once
      whatever the scores; set it costs 250 instead of 130.
    - Bags off: overtricks still score 1 point each, with no penalty.
    - ``first_lead="any"`` frees only the first lead: later leads follow the broken
      rule, and a spade led to the first trick breaks spades. "no_spade" is the plain
      broken rule (a leader holding only spades may lead one). Any spade played breaks
      spades, a spade-only leader's lead included (the rule book's "broken" is "a spade
      played on another suit's lead" and is silent on that leader's spade; online rooms
      count it): after it every leader may lead spades.
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
    - Five players (seed 004): each for himself, 10 cards and 10 tricks each; with jokers
      all four deuces are removed (50 cards, the rule book), without jokers (the rule book
      is silent) 2C and 2D, the pair it removes for jokers (50 cards).
      ``deuces_high`` and the two-of-clubs lead are refused (no deuce left to rank).
    - Three players with jokers: no card removed, 54 cards, 18 each, 18 tricks (bids
      0..18). ``deuces_high`` stays refused with three players.
    - Big and Little Moe (``moe``, partnerships): the first partner of a side to bid may
      bid Little Moe (6) or Big Moe (8) instead of a number; his partner's only bid is
      then to second it (the same Moe), so the side's whole contract is the Moe. Made
      when the side takes at least that many tricks in a row (a trick taken by either
      opponent resets the run, a partner's trick continues it): +150 / +300; otherwise
      it is set (the rule book is silent): -150 / -300 (0 with ``set_scores_zero``).
      Tricks are never bags and score nothing more. Moe cannot be bid blind, and is
      refused with suicide.
    - Little Willie (``little_willie``, Joker-Joker-Deuce only): a trick whose winning
      card is 2C counts two toward its side's contract; overtricks (points and bags)
      are counted from the real tricks only, so the extra trick is never a bag. A nil
      bidder's Willie is just a trick (it breaks the nil).
    - ``blind_bid_min`` (partnerships): a blind bid (not blind nil) must be at least it,
      per seat: the rule book's "some require a minimum bid, generally six or seven" is
      read as each blind bidder's own bid (a partner bidding blind bids at least it too;
      a partner's seen bid does not count toward it), as blind bids are made one seat at
      a time before the seat sees a card.
    - ``set_scores_zero``: a set contract (plain, blind, ten-for-two or Moe) scores 0
      instead of minus its value ("a broken contract scores 0 instead"); a nil is no
      contract, so a failed nil still costs the nil value (the rule book is silent), and
      a set Boston still costs 250.
    - ``bidding_order="partners"``: dealer's left, his partner, dealer's partner,
      dealer. The first lead stays with dealer's left.
    - Nil card exchange (``nil_exchange``, partnerships): when a seat bids nil (not
      blind) before its partner has bid, and its side trails by at least
      ``nil_exchange_deficit`` (0: always), it swaps one card with the partner at once,
      then the bidding goes on. With ``nil_exchange_peek`` the nil bidder gives first
      and the partner sees that card before giving one back (any card, the received
      one included); without it the partner gives first, blind to what he will get,
      then the nil bidder gives. A blind nil keeps its own after-bidding exchange. A
      partner still offered a blind choice (his side trails by a blind deficit) takes
      part too: the exchange shows him his hand, which ends his blind choice (the rule
      book's swap comes "before partner bids", from a hand he must see to give a card).
    - Suicide, forcing (``suicide_forcing``): the second partner may also copy the
      first's bid. Copying a number makes the first partner nil at once; copying nil
      sends the bidding back to the first partner, who must now bid at least 4 (he
      may not copy back), before it goes on in order.
    - Power checks (``power_checks`` = k): the first k cards each seat is dealt are
      face up: every seat and spectator sees them until played (a face-up card given
      in an exchange is no longer shown). Not with the draw deal.

    Bounds (`BOUNDS`, inclusive), held by `from_options`, the door every table's options
    come through (anything beyond is an InvalidRuleset naming the range); a game already
    recorded replays with the rules it was played with, whatever the bounds are today:
    ``target`` 100..1000, ``mercy`` -1000..0, ``hand_cap`` 1..100, ``nil_value``
    1..500, ``blind_nil_deficit`` and ``blind_bid_deficit`` 0..1000, ``bag_limit``
    1..50, ``bag_penalty`` 0..500; ``min_bid`` 0..tricks of a hand and ``team_min_bid``
    0..13 (their own checks below); any other whole-number option -1000..1000. An option
    takes only its own type (a bool is not a number, a number not a bool).

    >>> Ruleset.from_options({"target": 1_000_000_000})
    Traceback (most recent call last):
    ...
    engine.rules.InvalidRuleset: target must be between 100 and 1000, not 1000000000
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
    moe: bool = False
    """Big (8 in a row, 300) and Little (6 in a row, 150) Moe contracts may be bid."""
    little_willie: bool = False
    """Joker-Joker-Deuce: a trick won with 2C counts two toward the contract."""
    blind_bid_min: int = 0
    """Partnerships: the least a blind bid may be (0 = no minimum; the page says 6 or 7)."""
    ten_for_two_blind: bool = False
    """A contract of ten or more bid entirely blind scores 400 (needs ten_for_two_hundred)."""
    set_scores_zero: bool = False
    """A set contract scores 0 instead of -10 per trick bid (the solo variant)."""
    bidding_order: str = "clockwise"
    """Bidding order: "clockwise", or "partners" (left, his partner, dealer's partner, dealer)."""
    nil_exchange: bool = False
    """A nil bidder swaps one card with the partner before the partner bids."""
    nil_exchange_deficit: int = 0
    """The nil card exchange needs the side to trail by at least this (0 = always)."""
    nil_exchange_peek: bool = True
    """The partner sees the nil bidder's card before giving his (else he gives first)."""
    suicide_forcing: bool = False
    """Suicide: the second partner may copy the first's bid, forcing him into the opposite."""
    power_checks: int = 0
    """Cards per player dealt face up, seen by every seat (0..3)."""
    ten_for_two_scoring: str = "flat"
    """Ten for two hundred above ten: "flat" (200, the rule book) or "per_trick" (20 a trick,
    how games recorded before issue 18 were scored; their stored rules decode to it)."""
    ten_for_two_part_blind: str = "best"
    """A made contract of ten or more with a blind part (not all of it): "best" (the better
    of ten for two's score and the blind rule's) or "blind_rule" (the blind rule alone, how
    games recorded before issue 28 were scored; their stored rules decode to it)."""

    def __post_init__(self) -> None:
        reason = self._inconsistency()
        if reason:
            raise InvalidRuleset(reason)

    def _inconsistency(self) -> str:
        return _wrong_type(self) or self._contradiction()

    def _contradiction(self) -> str:
        if self.players not in (2, 3, 4, 5):
            return f"players must be 2, 3, 4 or 5, not {self.players}"
        for name in ("target", "nil_value", "bag_limit", "hand_cap"):
            if getattr(self, name) < 1:
                return f"{name} must be positive"
        for name in (
            "blind_nil_deficit",
            "bag_penalty",
            "blind_bid_deficit",
            "min_bid",
            "nil_exchange_deficit",
            "blind_bid_min",
        ):
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
        partnership_only = (
            ("moe", self.moe),
            ("little_willie", self.little_willie),
            ("blind_bid_min", self.blind_bid_min),
            ("ten_for_two_blind", self.ten_for_two_blind),
            ("bidding_order=partners", self.bidding_order == "partners"),
            ("nil_exchange", self.nil_exchange),
            ("suicide_forcing", self.suicide_forcing),
        )
        for name, on in partnership_only:
            if on and self.players != 4:
                return f"{name} is a partnership rule: it needs players=4"
        if self.ten_for_two_scoring not in ("flat", "per_trick"):
            return "ten_for_two_scoring must be flat or per_trick"
        if self.ten_for_two_scoring == "per_trick" and not self.ten_for_two_hundred:
            return "ten_for_two_scoring=per_trick needs ten_for_two_hundred"
        if self.ten_for_two_part_blind not in ("best", "blind_rule"):
            return "ten_for_two_part_blind must be best or blind_rule"
        if self.ten_for_two_part_blind == "blind_rule" and not (
            self.ten_for_two_hundred and self.blind_bids
        ):
            return "ten_for_two_part_blind=blind_rule needs ten_for_two_hundred and blind_bids"
        if self.bidding_order not in BIDDING_ORDERS:
            return f"bidding_order must be one of {', '.join(BIDDING_ORDERS)}"
        if self.little_willie and not (self.jokers and self.deuces_high):
            return "little_willie is a Joker-Joker-Deuce rule: it needs jokers and deuces_high"
        if self.blind_bid_min and not self.blind_bids:
            return "blind_bid_min needs blind_bids"
        if self.blind_bid_min > 13:
            return "blind_bid_min is above the 13 tricks of a hand"
        if self.ten_for_two_blind and not (self.ten_for_two_hundred and self.blind_bids):
            return "ten_for_two_blind needs ten_for_two_hundred and blind_bids"
        if self.nil_exchange and not self.nil_allowed:
            return "nil_exchange needs nil_allowed"
        if self.nil_exchange_deficit and not self.nil_exchange:
            return "nil_exchange_deficit needs nil_exchange"
        if self.suicide_forcing and not self.suicide:
            return "suicide_forcing is a suicide rule: it needs suicide"
        if self.moe and self.suicide:
            return "moe with suicide: a Moe side bids no nil, suicide demands one"
        if not 0 <= self.power_checks <= 3:
            return "power_checks must be 0..3 face-up cards per player"
        if self.power_checks and self.deal == "draw":
            return "power_checks need a dealt hand: the draw deal deals nothing face up"
        if self.players == 5 and self.deuces_high:
            return "deuces_high needs 2, 3 or 4 players: five players remove the deuces"
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
        if self.players == 3 and self.deuces_high:
            return "deuces_high needs 2 or 4 players (cut-throat removes 2C, or uses jokers)"
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
        if self.players == 3:
            return 18 if self.jokers else 17
        return 10 if self.players == 5 else 13

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
        """Return the ranked ladder changed by ``options`` (CLI strings are converted), each
        whole number within its bounds (`BOUNDS`).

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
        rules = cls(**values)
        reason = _out_of_bounds(rules)
        if reason:
            raise InvalidRuleset(reason)
        return rules


def _wrong_type(rules: Ruleset) -> str:
    """Return why an option has the wrong type, or ""."""
    for field in dataclasses.fields(rules):
        value = getattr(rules, field.name)
        if field.type in (bool, "bool"):
            if not isinstance(value, bool):
                return f"{field.name} takes yes/no (true or false), not {value!r}"
        elif field.type in (int, "int"):
            if not isinstance(value, int) or isinstance(value, bool):
                return f"{field.name} takes a whole number, not {value!r}"
        elif field.type in (str, "str") and not isinstance(value, str):
            return f"{field.name} takes a word, not {value!r}"
    return ""


def _out_of_bounds(rules: Ruleset) -> str:
    """Return why a whole-number option lies outside its bounds (`BOUNDS`), or ""."""
    for field in dataclasses.fields(rules):
        if field.type in (int, "int"):
            value = getattr(rules, field.name)
            low, high = BOUNDS.get(field.name, OTHER_BOUND)
            if not low <= value <= high:
                return f"{field.name} must be between {low} and {high}, not {value}"
    return ""


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
    if rules.players == 3 and not rules.jokers:
        removed.add(TWO_OF_CLUBS)
    if rules.players == 5:
        # Five players: 50 cards, 10 each.
        removed |= set(deuce.values()) if rules.jokers else {deuce[CLUBS], deuce[DIAMONDS]}
    if rules.jokers and rules.deuces_high:
        removed |= {deuce[HEARTS], deuce[DIAMONDS]}
        power[deuce[SPADES]], power[LITTLE_JOKER], power[BIG_JOKER] = 13, 14, 15
    elif rules.jokers and rules.players != 3:
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
