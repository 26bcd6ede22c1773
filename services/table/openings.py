"""How a table opens: the game id an open request makes, and the game's first events.

Practice (the opener and bots), casual (players in seat order, some seats bots: a friends'
table, a rematch) and a match's rated game. A rematch asks for the first dealer (the deal
passes on): the table then draws server seeds until one draws that dealer, so the deals stay
committed and verifiable (docs/FAIRNESS.md) and the seed stays secret and uniform among the
seeds that give that dealer.
"""

from __future__ import annotations

import secrets
import uuid
from typing import Any

import engine
from engine import fairness
from events.contracts import game as wire
from events.contracts.bots import LEVELS
from events.contracts.game import game_id_of_match
from events.contracts.ladders import UnknownLadder, ladder_of
from services.table.decided import Decided
from services.table.tables import Rejected

OpenRequest = wire.OpenPractice | wire.OpenCasual | wire.OpenMatch
"""The requests that open a table."""


def opening_events(
    game_id: str,
    *,
    ladder: str,
    rated: bool,
    players: tuple[str, ...],
    bots: tuple[int, ...],
    rules: engine.Ruleset,
    seed: int,
    turn_seconds: float,
    match_id: str | None = None,
    server_seed: str = "",
    contributors: tuple[int, ...] = (),
    bot_level: str = "baseline",
    dealer: int = -1,
    unlisted: bool = False,
    free_text_chat: bool = False,
    board_seed: str = "",
) -> Decided:
    """Return the first events of a new game: who sits where, then the start and first deal.

    With a ``server_seed`` (64 hex digits) the deals are committed (docs/FAIRNESS.md): the
    first deal waits for the ``contributors`` seats, unless there are none. A ``dealer`` >= 0
    replaces the server seed by a fresh one that draws that first dealer."""
    if len(players) != rules.players:
        raise Rejected(
            "wrong_player_count", f"{rules.players} players play these rules, not {len(players)}"
        )
    if dealer >= 0 and server_seed:
        server_seed = seed_dealing_first(dealer, rules.players)
    if board_seed:  # a duplicate board: the committed seed deals alike at every table
        server_seed, contributors = board_seed, ()
    opened = wire.TableOpened(
        game_id=game_id,
        ladder=ladder,
        rated=rated,
        players=players,
        bots=bots,
        match_id=match_id,
        turn_seconds=turn_seconds,
        bot_level=bot_level,
        unlisted=unlisted,
        free_text_chat=free_text_chat,
    )
    start = engine.StartGame(rules, seed=seed, server_seed=server_seed, contributors=contributors)
    new = engine.initial_state()
    return Decided.facts(new, opened).then(Decided.applied(new, engine.decide(new, start)))


def seed_dealing_first(dealer: int, players: int) -> str:
    """Return a fresh secret server seed whose first dealer is ``dealer`` (``players`` tries
    on average: each seed draws each dealer alike)."""
    while True:
        seed = secrets.token_hex(32)
        if fairness.first_dealer(bytes.fromhex(seed), players) == dealer:
            return seed


def opening_of(request: OpenRequest) -> tuple[str, dict[str, Any]]:
    """Return the game id an open request makes and how to open it; raise `Rejected`."""
    try:
        if isinstance(request, wire.OpenMatch):
            ladder = ladder_of(request.ladder)  # the ladders file: rules, rated, turn clock
            rules = ladder.rules
        else:
            rules = engine.Ruleset.from_options(dict(request.rules))
    except UnknownLadder as exc:
        raise Rejected("malformed", str(exc)) from None
    except engine.InvalidRuleset as exc:
        raise Rejected("invalid_ruleset", str(exc)) from None
    players: tuple[str, ...]
    if isinstance(request, wire.OpenMatch):
        game_id = game_id_of_match(request.match_id)
        opened: dict[str, Any] = {
            "ladder": request.ladder,
            "rated": ladder.rated,
            "players": tuple(request.seats),
            "bots": (),
            "rules": rules,
            "match_id": request.match_id,
        }
        if ladder.turn_seconds is not None:
            opened["turn_seconds"] = ladder.turn_seconds
        return game_id, opened
    untimed = False
    if isinstance(request, wire.OpenPractice):
        kind = "practice"
        players = (request.player_id, *(f"bot:{seat}" for seat in range(1, rules.players)))
        bots: tuple[int, ...] = tuple(range(1, rules.players))
        level = request.bots
        untimed = request.untimed
    else:
        kind, players, bots, level = "casual", request.players, request.bots, request.bot_level
        if any(not 0 <= s < len(players) or players[s] != f"bot:{s}" for s in bots):
            raise Rejected("malformed", 'a bot seat s holds the player "bot:s"')
        if any(p.startswith("bot:") for s, p in enumerate(players) if s not in bots):
            raise Rejected("malformed", "a person's seat cannot hold a bot's name")
    if level not in LEVELS:
        levels = ", ".join(LEVELS)
        raise Rejected("unknown_bot_level", f"unknown bot level {level!r}: choose one of {levels}")
    if len(set(players)) != len(players):
        raise Rejected("malformed", "a player can sit only once")
    if not -1 <= request.dealer < rules.players:
        raise Rejected("malformed", f"the first dealer is a seat 0..{rules.players - 1} (or -1)")
    game_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{kind}:{request.command_id}"))
    how: dict[str, Any] = {
        "ladder": kind,
        "rated": False,
        "players": players,
        "bots": tuple(sorted(set(bots))),
        "rules": rules,
        "bot_level": level,
        "dealer": request.dealer,
        "free_text_chat": request.free_text_chat,
    }
    if isinstance(request, wire.OpenCasual) and request.unlisted:
        how["unlisted"] = True
    if isinstance(request, wire.OpenCasual) and request.board_seed:
        if request.dealer >= 0:
            raise Rejected("malformed", "a board's seed draws its own first dealer")
        try:
            fairness.check_hex32(request.board_seed, "board seed")
        except fairness.InvalidContribution as exc:
            raise Rejected("malformed", str(exc)) from None
        how["board_seed"] = request.board_seed
    if untimed:
        how["turn_seconds"] = 0.0  # no turn timer for the person (TableOpened says so)
    return game_id, how
