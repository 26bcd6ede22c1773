"""The Spades rules engine: pure, deterministic, standard library only.

The game is a fold of events. ``decide(state, command)`` returns the events a
command causes (or raises a `RuleViolation` naming the rule broken),
``apply(state, event)`` folds one event, ``replay(events)`` folds them all, and
``view(state, seat)`` gives one seat only what it may know.

>>> from engine import *
>>> state = initial_state()
>>> events = decide(state, StartGame(ranked_default(), seed=7))
>>> state = replay(events)
>>> while state.phase != "over":
...     command = legal_actions(state, state.turn)[0]
...     new = decide(state, command)
...     events += new
...     for event in new:
...         state = apply(state, event)
>>> replay(events) == state
True
>>> state.reason in ("target", "mercy", "hand_cap")
True
"""

from engine.cards import (
    BIG_JOKER,
    CLUBS,
    DIAMONDS,
    HEARTS,
    LITTLE_JOKER,
    SPADES,
    SPECTATOR,
    InvalidCard,
    card_str,
    cards_str,
    make_card,
    next_seat,
    parse_card,
    parse_cards,
    partner_of,
    rank_of,
    seat_name,
    suit_of,
    team_of,
)
from engine.errors import (
    BidOutOfRange,
    BlindBidNotAllowed,
    BlindChoicePending,
    BlindNilNotAllowed,
    CardNotInHand,
    FirstLeadRule,
    GameAlreadyStarted,
    GameNotStarted,
    GameOver,
    InvalidPass,
    MustFollowSuit,
    NilNotAllowed,
    NotYourSeat,
    OutOfTurn,
    RuleViolation,
    SpadesNotBroken,
    SuicideBid,
    TeamMinimumBid,
    UnknownCommand,
    WrongPhase,
)
from engine.game import deal, decide, legal_actions, legal_bids, legal_cards, score_hand
from engine.model import (
    COMMAND_TYPES,
    EVENT_TYPES,
    BidPlaced,
    BlindNilDeclared,
    BlindNilDeclined,
    CardDrawn,
    CardPlayed,
    CardsPassed,
    Command,
    DeclareBlindNil,
    DeclineBlindNil,
    DrawCard,
    Event,
    GameFinished,
    GameStarted,
    HandDealt,
    HandScored,
    PassCards,
    PlaceBid,
    PlayCard,
    SeatCommand,
    StartGame,
    TrickWon,
)
from engine.rules import InvalidRuleset, Ruleset, ranked_default, two_player_default
from engine.state import GameState, Trick, apply, initial_state, replay
from engine.view import SeatView, view

__all__ = [
    "BIG_JOKER",
    "CLUBS",
    "COMMAND_TYPES",
    "DIAMONDS",
    "EVENT_TYPES",
    "HEARTS",
    "LITTLE_JOKER",
    "SPADES",
    "SPECTATOR",
    "BidOutOfRange",
    "BidPlaced",
    "BlindBidNotAllowed",
    "BlindChoicePending",
    "BlindNilDeclared",
    "BlindNilDeclined",
    "BlindNilNotAllowed",
    "CardDrawn",
    "CardNotInHand",
    "CardPlayed",
    "CardsPassed",
    "Command",
    "DeclareBlindNil",
    "DeclineBlindNil",
    "DrawCard",
    "Event",
    "FirstLeadRule",
    "GameAlreadyStarted",
    "GameFinished",
    "GameNotStarted",
    "GameOver",
    "GameStarted",
    "GameState",
    "HandDealt",
    "HandScored",
    "InvalidCard",
    "InvalidPass",
    "InvalidRuleset",
    "MustFollowSuit",
    "NilNotAllowed",
    "NotYourSeat",
    "OutOfTurn",
    "PassCards",
    "PlaceBid",
    "PlayCard",
    "RuleViolation",
    "Ruleset",
    "SeatCommand",
    "SeatView",
    "SpadesNotBroken",
    "StartGame",
    "SuicideBid",
    "TeamMinimumBid",
    "Trick",
    "TrickWon",
    "UnknownCommand",
    "WrongPhase",
    "apply",
    "card_str",
    "cards_str",
    "deal",
    "decide",
    "initial_state",
    "legal_actions",
    "legal_bids",
    "legal_cards",
    "make_card",
    "next_seat",
    "parse_card",
    "parse_cards",
    "partner_of",
    "rank_of",
    "ranked_default",
    "replay",
    "score_hand",
    "seat_name",
    "suit_of",
    "team_of",
    "two_player_default",
    "view",
]
