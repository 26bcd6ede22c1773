"""Cards, seats and the ruleset: parse/format pairs, helpers, validation."""

from __future__ import annotations

import pytest

from engine import (
    BIG_JOKER,
    LITTLE_JOKER,
    SPADES,
    InvalidCard,
    InvalidRuleset,
    Ruleset,
    card_str,
    parse_card,
    partner_of,
    rank_of,
    ranked_default,
    suit_of,
    team_of,
    two_player_default,
)
from engine.rules import tables


def test_every_card_round_trips_through_its_name() -> None:
    for card in [*range(52), LITTLE_JOKER, BIG_JOKER]:
        assert parse_card(card_str(card)) == card


def test_parse_card_accepts_ten_spelled_10_and_lower_case() -> None:
    assert parse_card("10h") == parse_card("TH")


@pytest.mark.parametrize("text", ["", "1S", "QX", "QSS", "joker"])
def test_parse_card_rejects_non_cards(text: str) -> None:
    with pytest.raises(InvalidCard):
        parse_card(text)


def test_card_str_rejects_numbers_outside_the_deck() -> None:
    with pytest.raises(InvalidCard):
        card_str(54)


def test_suits_ranks_partners_and_teams() -> None:
    assert (suit_of(parse_card("QS")), rank_of(parse_card("QS"))) == (SPADES, 10)
    assert suit_of(BIG_JOKER) == SPADES
    assert rank_of(BIG_JOKER) > rank_of(LITTLE_JOKER)
    assert [partner_of(s) for s in range(4)] == [2, 3, 0, 1]
    assert [team_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert [team_of(s, 3) for s in range(3)] == [0, 1, 2]


def test_ranked_default_is_the_option_table_default() -> None:
    r = ranked_default()
    assert (r.players, r.target, r.mercy, r.nil_value, r.blind_nil_deficit) == (
        4,
        500,
        -200,
        100,
        100,
    )
    assert (r.blind_nil_exchange, r.bag_limit, r.bag_penalty, r.first_lead) == (
        2,
        10,
        100,
        "no_spade",
    )
    assert r.min_bid == 1
    assert not (r.suicide)
    assert not (r.jokers)
    assert not (r.boston)
    assert not (r.ten_for_two_hundred)


def test_two_player_default_is_heads_up_without_blind_nil() -> None:
    r = two_player_default()
    assert r.players == 2
    assert not r.blind_nil
    assert r.tricks_per_hand == 13


def test_ruleset_round_trips_through_to_dict() -> None:
    r = Ruleset(players=2, deal="draw", blind_nil=False, first_lead="lowest_club", target=800)
    assert Ruleset(**r.to_dict()) == r


def test_from_options_converts_cli_strings() -> None:
    r = Ruleset.from_options(
        {"players": "3", "nil-value": "50", "bags": "off", "mercy": "off", "first_lead": "any"}
    )
    assert (r.players, r.nil_value, r.bags, r.mercy, r.first_lead) == (3, 50, False, 0, "any")


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"players": "6"}, "players must be 2, 3, 4 or 5"),
        ({"colour": "red"}, "unknown option"),
        ({"target": "lots"}, "whole number"),
        ({"boston": "maybe"}, "yes/no"),
    ],
)
def test_from_options_rejects_bad_input_with_the_reason(
    options: dict[str, str], reason: str
) -> None:
    with pytest.raises(InvalidRuleset, match=reason):
        Ruleset.from_options(options)


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"suicide": True, "players": 2}, "suicide is a partnership game"),
        ({"suicide": True, "nil_allowed": False, "blind_nil": False}, "suicide needs nil_allowed"),
        ({"deuces_high": True, "players": 3}, "deuces_high needs 2 or 4 players"),
        ({"nil_allowed": False}, "blind nil needs nil_allowed"),
        ({"nil_allowed": True, "min_bid": 0}, "min_bid 0 would be nil"),
        ({"min_bid": 14}, "min_bid is above"),
        (
            {"team_min_bid": 4, "players": 2, "blind_nil": False},
            "team_min_bid is a partnership rule",
        ),
        ({"team_min_bid": 14}, "team_min_bid is above"),
        ({"ten_for_two_hundred": True, "players": 3}, "ten_for_two_hundred is a partnership rule"),
        ({"boston": True, "players": 2}, "boston is a partnership rule"),
        ({"deal": "draw"}, "draw deal is a two-player variant"),
        ({"deal": "draw", "players": 2}, "blind bids need a dealt hand"),
        ({"first_lead": "lowest_club"}, "lowest_club is a two-player variant"),
        ({"first_lead": "two_of_clubs", "players": 3}, "two_of_clubs needs all 52 cards"),
        ({"first_lead": "two_of_clubs", "jokers": True}, "2C is removed or a trump"),
        ({"first_lead": "trump"}, "first_lead must be one of"),
        ({"deal": "pass"}, "deal must be one of"),
        ({"mercy": 100}, "mercy is a negative score"),
        ({"blind_nil_exchange": 3}, "blind_nil_exchange must be 0, 1 or 2"),
        ({"target": 0}, "target must be positive"),
        ({"hand_cap": 0}, "hand_cap must be positive"),
        ({"bag_penalty": -1}, "bag_penalty must not be negative"),
        ({"suicide": True, "team_min_bid": 5}, "suicide with team_min_bid"),
    ],
)
def test_inconsistent_ruleset_is_rejected_with_the_reason(
    options: dict[str, object], reason: str
) -> None:
    with pytest.raises(InvalidRuleset, match=reason):
        Ruleset(**options)  # type: ignore[arg-type]


def test_three_player_deck_drops_the_two_of_clubs_for_17_tricks() -> None:
    t = tables(Ruleset(players=3))
    assert len(t.deck) == 51
    assert parse_card("2C") not in t.deck
    assert t.tricks == 17


def test_jokers_replace_2c_and_2d_and_rank_above_the_ace_of_spades() -> None:
    t = tables(Ruleset(jokers=True))
    assert len(t.deck) == 52
    assert parse_card("2C") not in t.deck
    assert parse_card("2D") not in t.deck
    assert t.power[BIG_JOKER] > t.power[LITTLE_JOKER] > t.power[parse_card("AS")]
    assert t.suit[BIG_JOKER] == SPADES


def test_deuces_high_ranks_2h_2c_2d_2s_above_the_ace_of_spades() -> None:
    t = tables(Ruleset(deuces_high=True))
    order = [parse_card(c) for c in ("2H", "2C", "2D", "2S", "AS", "KS")]
    assert [t.power[c] for c in order] == sorted((t.power[c] for c in order), reverse=True)
    assert all(t.suit[c] == SPADES for c in order)
    assert len(t.deck) == 52


def test_joker_joker_deuce_drops_the_red_deuces_and_puts_2s_under_the_jokers() -> None:
    t = tables(Ruleset(jokers=True, deuces_high=True))
    assert parse_card("2H") not in t.deck
    assert parse_card("2D") not in t.deck
    assert parse_card("2C") in t.deck
    assert t.suit[parse_card("2C")] != SPADES
    bj, lj, two, ace = BIG_JOKER, LITTLE_JOKER, parse_card("2S"), parse_card("AS")
    assert t.power[bj] > t.power[lj] > t.power[two] > t.power[ace]
