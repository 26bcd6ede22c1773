"""How a table opens a casual game with bots, and a rematch's first dealer (pure, no servers)."""

from __future__ import annotations

import uuid

import pytest

from engine import fairness
from events.contracts import game as wire
from services.table.openings import opening_events, opening_of, seed_dealing_first
from services.table.tables import Rejected


@pytest.mark.parametrize(("players", "dealer"), [(4, 0), (4, 3), (3, 2), (2, 1), (5, 4)])
def test_a_chosen_first_dealer_is_drawn_by_a_fresh_committed_seed(
    players: int, dealer: int
) -> None:
    seed = seed_dealing_first(dealer, players)
    assert fairness.first_dealer(bytes.fromhex(seed), players) == dealer
    assert seed != seed_dealing_first(dealer, players)  # a fresh secret every time


def test_a_casual_table_seats_its_bots_and_passes_the_deal_on() -> None:
    request = wire.OpenCasual(
        players=("ann", "bot:1", "bob", "bot:3"),
        bots=(1, 3),
        bot_level="strong",
        command_id=uuid.uuid4(),
        dealer=2,
        unlisted=True,
    )
    game_id, how = opening_of(request)
    events = opening_events(game_id, seed=0, server_seed="ab" * 32, turn_seconds=25.0, **how)
    opened, started = events[0], events[1]
    assert isinstance(opened, wire.TableOpened)
    assert opened.bots == (1, 3)
    assert opened.bot_level == "strong"
    assert opened.unlisted
    assert isinstance(started, wire.GameStarted)
    assert started.dealer == 2
    assert started.server_seed != "ab" * 32  # replaced by one that draws dealer 2


@pytest.mark.parametrize(
    ("players", "bots", "level", "dealer", "code"),
    [
        (("ann", "bob", "cyd", "dan"), (1,), "baseline", -1, "malformed"),  # a bot seat's name
        (("ann", "bot:1", "cyd", "dan"), (), "baseline", -1, "malformed"),  # a person named bot
        (("ann", "bot:1", "cyd", "dan"), (1,), "godlike", -1, "unknown_bot_level"),
        (("ann", "bot:1", "cyd", "dan"), (1,), "baseline", 4, "malformed"),  # no seat 4
        (("ann", "ann", "cyd", "dan"), (), "baseline", -1, "malformed"),  # one player twice
    ],
)
def test_bad_casual_openings_are_refused(
    players: tuple[str, ...], bots: tuple[int, ...], level: str, dealer: int, code: str
) -> None:
    request = wire.OpenCasual(
        players=players, bots=bots, bot_level=level, command_id=uuid.uuid4(), dealer=dealer
    )
    with pytest.raises(Rejected) as refused:
        opening_of(request)
    assert refused.value.code == code


def test_a_duplicate_board_is_dealt_from_its_committed_seed_with_no_contribution() -> None:
    board = bytes(range(32)).hex()
    games = []
    for players in (("ann", "bob", "cyd", "dan"), ("eve", "fay", "gus", "hal")):
        request = wire.OpenCasual(
            players=players, command_id=uuid.uuid4(), rules={"hand_cap": 1}, board_seed=board
        )
        game_id, how = opening_of(request)
        # the table's own fresh seed and contributors give way to the board's
        games.append(
            opening_events(
                game_id,
                seed=0,
                server_seed="ab" * 32,
                contributors=(0, 1, 2, 3),
                turn_seconds=25.0,
                **how,
            )
        )
    for events in games:
        started = events[1]
        assert isinstance(started, wire.GameStarted)
        assert started.commitment == fairness.commitment(bytes.fromhex(board))
        assert started.contributors == ()
        assert started.dealer == fairness.first_dealer(bytes.fromhex(board), 4)
    dealt = [[e for e in events if isinstance(e, wire.HandDealt)] for events in games]
    assert dealt[0]  # no contribution awaited: dealt at once
    assert dealt[0][0].hands == dealt[1][0].hands  # the same cards at both tables


@pytest.mark.parametrize(
    ("board_seed", "dealer"), [("zz" * 32, -1), ("ab" * 31, -1), ("ab" * 32, 2)]
)
def test_a_board_seed_that_is_not_64_hex_digits_or_with_a_dealer_is_refused(
    board_seed: str, dealer: int
) -> None:
    request = wire.OpenCasual(
        players=("ann", "bob", "cyd", "dan"),
        command_id=uuid.uuid4(),
        board_seed=board_seed,
        dealer=dealer,
    )
    with pytest.raises(Rejected) as refused:
        opening_of(request)
    assert refused.value.code == "malformed"
