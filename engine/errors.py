"""Typed rejections: each names the rule broken and carries a stable machine ``code``."""

from __future__ import annotations

from typing import ClassVar


class RuleViolation(Exception):
    """A command breaks a rule of the game; the state is unchanged."""

    code: ClassVar[str] = "rule_violation"


class UnknownCommand(RuleViolation):
    """The command is not one the engine knows."""

    code = "unknown_command"


class GameNotStarted(RuleViolation):
    """A move was sent before the game started."""

    code = "game_not_started"


class GameAlreadyStarted(RuleViolation):
    """StartGame was sent to a game that already started."""

    code = "game_already_started"


class GameOver(RuleViolation):
    """A move was sent after the game finished."""

    code = "game_over"


class NotYourSeat(RuleViolation):
    """The seat does not exist at this table."""

    code = "not_your_seat"


class WrongPhase(RuleViolation):
    """The command belongs to another phase of the hand (e.g. a bid during play)."""

    code = "wrong_phase"


class OutOfTurn(RuleViolation):
    """Another seat is due to act."""

    code = "out_of_turn"


class CardNotInHand(RuleViolation):
    """The seat does not hold the card it tried to play or pass."""

    code = "card_not_in_hand"


class MustFollowSuit(RuleViolation):
    """A player able to follow the suit led must do so."""

    code = "must_follow_suit"


class SpadesNotBroken(RuleViolation):
    """Spades may not be led before they are broken unless the leader holds only spades."""

    code = "spades_not_broken"


class FirstLeadRule(RuleViolation):
    """The first trick's variant (2C leads, lowest club) demands another card."""

    code = "first_lead"


class BidOutOfRange(RuleViolation):
    """A bid is below the minimum or above the tricks of a hand."""

    code = "bid_out_of_range"


class NilNotAllowed(RuleViolation):
    """Nil is not allowed at this table or for this seat now."""

    code = "nil_not_allowed"


class TeamMinimumBid(RuleViolation):
    """The partnership's contract would stay below the table's team minimum."""

    code = "team_minimum_bid"


class SuicideBid(RuleViolation):
    """In suicide each partnership bids exactly one nil and one bid of at least four."""

    code = "suicide_bid"


class BlindNilNotAllowed(RuleViolation):
    """Blind nil is off, the team does not trail enough, or the hand was already seen."""

    code = "blind_nil_not_allowed"


class BlindBidNotAllowed(RuleViolation):
    """Blind bids are off, the side does not trail enough, or the hand was already seen."""

    code = "blind_bid_not_allowed"


class BlindChoicePending(RuleViolation):
    """A blind candidate must first bid blind or decline (and see the hand)."""

    code = "blind_choice_pending"


class InvalidPass(RuleViolation):
    """A blind-nil exchange gives the wrong number of cards or cards not held."""

    code = "invalid_pass"


class MoeNotAllowed(RuleViolation):
    """A Big or Little Moe bid the table or the bidding so far does not allow."""

    code = "moe_not_allowed"


class ContributionRefused(RuleViolation):
    """A deal contribution that is malformed, late, repeated or from a seat not asked for one."""

    code = "contribution_refused"
