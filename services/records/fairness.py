"""`spades verify GAME_ID`: recompute every deal of a finished game from its revealed seed.

`verify` is pure: it takes a game's events (as the log or the public replay holds them) and
either returns what it checked or raises `NotVerified` naming the first thing that differs.
A committed game (docs/FAIRNESS.md) is checked with the revealed seed only: the commitment is
its SHA-256, the first dealer and every deck come from it and the contributions recorded
before hand 1. A legacy game is checked against its log's seed (operators only: that seed
never leaves the server).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import engine
import engine.bot
from engine import fairness
from events.contracts import game as wire
from events.errors import Refusal


class NotVerified(Refusal):
    """A game whose deals or commitment do not check: ``code`` for programs."""


@dataclass(frozen=True, slots=True)
class Verified:
    """What a verification checked."""

    scheme: str
    commitment: str
    server_seed: str
    contributions: tuple[str, ...]
    hands: int


def verify(events: Sequence[wire.GameEvent]) -> Verified:
    """Return what was checked of a finished game's deals; raise `NotVerified` if one differs."""
    started = next((e for e in events if isinstance(e, wire.GameStarted)), None)
    if started is None:
        raise NotVerified("not_started", "the game has no GameStarted event")
    if not any(isinstance(e, wire.GameFinished) for e in events):
        raise NotVerified("not_finished", "the game is not over: its seed is still secret")
    rules = engine.Ruleset.from_options(dict(started.rules))
    t = engine.rules.tables(rules)
    if started.scheme == fairness.LEGACY:
        return _verify_legacy(events, started, rules, t)
    if started.scheme != fairness.SCHEME:
        raise NotVerified("unknown_scheme", f"unknown deal derivation {started.scheme!r}")
    revealed = [e for e in events if isinstance(e, wire.SeedRevealed)]
    if len(revealed) != 1:
        raise NotVerified("not_revealed", "the game's server seed was not revealed once")
    try:
        seed = fairness.check_hex32(revealed[0].server_seed, "server seed")
    except fairness.InvalidContribution as exc:
        raise NotVerified("bad_seed", str(exc)) from None
    if fairness.commitment(seed) != started.commitment:
        raise NotVerified(
            "commitment_mismatch",
            f"SHA-256 of the revealed seed is {fairness.commitment(seed)},"
            f" not the commitment {started.commitment}",
        )
    if started.server_seed and started.server_seed != revealed[0].server_seed:
        raise NotVerified("seed_mismatch", "the revealed seed is not the one the game started with")
    if fairness.first_dealer(seed, rules.players) != started.dealer:
        raise NotVerified("dealer_mismatch", "the seed draws another first dealer")
    contributions = [""] * rules.players
    hands = 0
    for event in events:
        if isinstance(event, wire.SeedContributed):
            if hands or event.seat not in started.contributors or contributions[event.seat]:
                raise NotVerified(
                    "contribution_misplaced",
                    f"seat {event.seat}'s contribution is not one taken before hand 1",
                )
            try:
                fairness.check_hex32(event.value)
            except fairness.InvalidContribution as exc:
                raise NotVerified("bad_contribution", str(exc)) from None
            contributions[event.seat] = event.value
        elif isinstance(event, wire.HandDealt):
            hands += 1
            deck = list(fairness.shuffled(t.deck, seed, contributions, event.hand))
            dealt = engine.game.deal_out(rules, t, deck, event.hand, event.dealer)
            expected = wire.to_wire(dealt)
            _compare(event, expected)
    return Verified(
        scheme=started.scheme,
        commitment=started.commitment,
        server_seed=revealed[0].server_seed,
        contributions=tuple(contributions),
        hands=hands,
    )


def verify_committed(events: Sequence[wire.GameEvent], commitment: str) -> Verified:
    """Return what was checked of a game dealt from a seed committed elsewhere before it
    started (a duplicate event's board, its SHA-256 on the event's page): the game's own
    commitment must be that one, its deals the revealed seed's, no contribution mixed in.
    Raise `NotVerified` (``commitment_mismatch``, ``contribution_misplaced``, ...) if not."""
    checked = verify(events)
    if checked.commitment != commitment.strip().lower():
        raise NotVerified(
            "commitment_mismatch",
            f"the game was dealt from the seed committed as {checked.commitment or '(none)'},"
            f" not the published {commitment}",
        )
    if any(checked.contributions):
        raise NotVerified(
            "contribution_misplaced", "a board is dealt from its seed alone: a seat contributed"
        )
    return checked


def _verify_legacy(
    events: Sequence[wire.GameEvent],
    started: wire.GameStarted,
    rules: engine.Ruleset,
    t: engine.rules.Tables,
) -> Verified:
    if engine.game.first_dealer(started.seed, rules.players) != started.dealer:
        raise NotVerified("dealer_mismatch", "the seed draws another first dealer")
    hands = 0
    for event in events:
        if isinstance(event, wire.HandDealt):
            hands += 1
            dealt = engine.deal(rules, t, started.seed, event.hand, event.dealer)
            _compare(event, wire.to_wire(dealt))
    return Verified(
        scheme=started.scheme, commitment="", server_seed="", contributions=(), hands=hands
    )


def _compare(event: wire.HandDealt, expected: wire.GameEvent) -> None:
    assert isinstance(expected, wire.HandDealt)
    if event.hands == expected.hands and event.stock == expected.stock:
        return
    for seat, (got, due) in enumerate(zip(event.hands, expected.hands, strict=False)):
        if got != due:
            extra = sorted(set(got) - set(due))
            raise NotVerified(
                "deal_mismatch",
                f"hand {event.hand}: seat {seat} was dealt {' '.join(got)};"
                f" the seed deals {' '.join(due)} (differs at {' '.join(extra) or 'order'})",
            )
    raise NotVerified("deal_mismatch", f"hand {event.hand}: the stock is not the seed's")


def bot_game(
    rules: engine.Ruleset, server_seed: str, contributions: dict[int, str], rng: random.Random
) -> list[engine.Event]:
    """Return the events of a committed game the baseline bots play to the end, the given
    seats contributing before hand 1 (simulations, benchmarks and tests)."""
    start = engine.StartGame(rules, 0, server_seed=server_seed, contributors=tuple(contributions))
    events = engine.decide(engine.initial_state(), start)
    state = engine.replay(events)
    for seat, value in sorted(contributions.items()):
        new = engine.decide(state, engine.Contribute(seat, value))
        events += new
        state = engine.replay(new, state)
    while state.phase != "over":
        new = engine.decide(state, engine.bot.choose(engine.view(state, state.turn), rng))
        events += new
        state = engine.replay(new, state)
    return events
