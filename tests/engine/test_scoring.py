"""Scoring of a hand (RULES.md "Scoring"), option by option."""

from __future__ import annotations

from engine import Ruleset
from tests.engine.support import score

LADDER = Ruleset()


def test_seed_001_worked_example_337_bid_5_takes_7_8_9() -> None:
    # N+S at 337 with 7 bags bid 5 (3 + 2); E+W bid 6 and take the rest.
    expected = {7: (389, 9), 8: (290, 0), 9: (291, 1)}
    for tricks, (total, bags) in expected.items():
        n = tricks // 2
        _, scores, bag_counts, _ = score(
            LADDER, (3, 3, 2, 3), (n, 3, tricks - n, 10 - tricks), scores=(337, 0), bags=(7, 0)
        )
        assert (scores[0], bag_counts[0]) == (total, bags), tricks


def test_made_contract_scores_ten_per_trick_bid_plus_one_per_overtrick() -> None:
    points, _, bags, _ = score(LADDER, (3, 3, 2, 3), (4, 3, 2, 4))
    assert points == (51, 61)
    assert bags == (1, 1)


def test_set_contract_loses_ten_per_trick_bid() -> None:
    points, _, bags, _ = score(LADDER, (4, 3, 2, 3), (2, 5, 2, 4))
    assert points[0] == -60
    assert bags[0] == 0


def test_nil_made_with_partner_made() -> None:
    points, _, bags, _ = score(LADDER, (0, 3, 4, 3), (0, 4, 5, 4))
    assert points[0] == 100 + 41
    assert bags[0] == 1


def test_nil_made_with_partner_set() -> None:
    points, *_ = score(LADDER, (0, 3, 4, 3), (0, 5, 3, 5))
    assert points[0] == 100 - 40


def test_nil_failed_with_partner_made_its_tricks_are_bags() -> None:
    points, _, bags, _ = score(LADDER, (0, 3, 4, 3), (2, 4, 4, 3))
    assert points[0] == -100 + 40 + 2
    assert bags[0] == 2


def test_nil_failed_tricks_never_count_toward_partner_bid() -> None:
    # S bid 4 and took 3; N's 2 tricks would have made it but do not count.
    points, _, bags, _ = score(LADDER, (0, 3, 4, 3), (2, 4, 3, 4))
    assert points[0] == -100 - 40 + 2
    assert bags[0] == 2


def test_blind_nil_made_scores_twice_nil_value() -> None:
    points, *_ = score(LADDER, (0, 3, 4, 3), (0, 4, 5, 4), blind=(True, False, False, False))
    assert points[0] == 200 + 41


def test_blind_nil_failed_with_partner_set_loses_twice_nil_value() -> None:
    points, *_ = score(LADDER, (0, 3, 4, 3), (1, 5, 3, 4), blind=(True, False, False, False))
    assert points[0] == -200 - 40 + 1


def test_both_partners_nil_each_scored_on_its_own() -> None:
    points, _, bags, _ = score(LADDER, (0, 3, 0, 3), (0, 6, 0, 7))
    assert points[0] == 200
    assert bags[0] == 0
    points, _, bags, _ = score(LADDER, (0, 3, 0, 3), (1, 6, 0, 6))
    assert points[0] == 100 - 100 + 1
    assert bags[0] == 1


def test_nil_value_50() -> None:
    points, *_ = score(Ruleset(nil_value=50), (0, 3, 4, 3), (0, 4, 5, 4))
    assert points[0] == 50 + 41


def test_bags_carry_over_across_hands() -> None:
    scores, bags = (0, 0), (7, 0)
    _, scores, bags, _ = score(LADDER, (2, 3, 2, 3), (3, 3, 3, 4), scores=scores, bags=bags)
    assert (scores[0], bags[0]) == (42, 9)
    _, scores, bags, _ = score(LADDER, (2, 3, 2, 3), (4, 2, 3, 4), scores=scores, bags=bags)
    assert (scores[0], bags[0]) == (42 + 43 - 100, 2)
    _, scores, bags, _ = score(LADDER, (1, 1, 1, 1), (6, 0, 4, 3), scores=scores, bags=bags)
    assert (scores[0], bags[0]) == (-15 + 28 - 100, 0)


def test_bag_limit_and_penalty_options() -> None:
    _, scores, bags, _ = score(
        Ruleset(bag_limit=5, bag_penalty=50), (2, 3, 2, 3), (5, 2, 3, 3), bags=(1, 0)
    )
    assert (scores[0], bags[0]) == (44 - 50, 0)


def test_bags_off_overtricks_score_without_penalty() -> None:
    points, _, bags, _ = score(Ruleset(bags=False), (1, 1, 1, 1), (6, 0, 5, 2), bags=(9, 0))
    assert points[0] == 20 + 9
    assert bags == (9, 0)


def test_ten_for_two_hundred_a_made_contract_of_ten_scores_200() -> None:
    rules = Ruleset(ten_for_two_hundred=True)
    points, _, bags, _ = score(rules, (5, 1, 5, 1), (6, 1, 5, 1))
    assert points[0] == 200 + 1
    assert bags[0] == 1
    # Decided by the rule book ("team bid >= 10 made scores 200"): 200 above ten too,
    # never 20 per trick.
    points, *_ = score(rules, (6, 1, 5, 1), (6, 0, 5, 2))
    assert points[0] == 200
    points, *_ = score(rules, (7, 0, 5, 0), (7, 0, 6, 0))
    assert points[0] == 200 + 1
    # games recorded before that decision keep scoring 20 a trick above ten
    legacy = Ruleset(ten_for_two_hundred=True, ten_for_two_scoring="per_trick")
    points, *_ = score(legacy, (6, 1, 5, 1), (6, 0, 5, 2))
    assert points[0] == 220
    points, *_ = score(rules, (5, 1, 5, 1), (5, 2, 4, 2))
    assert points[0] == -100


def test_boston_made_returns_the_winning_side_and_set_costs_250() -> None:
    rules = Ruleset(boston=True)
    points, _, _, side = score(rules, (7, 0, 6, 0), (7, 0, 6, 0))
    assert side == 0
    assert points[0] == 130
    points, _, _, side = score(rules, (7, 0, 6, 0), (7, 0, 5, 1))
    assert side == -1
    assert points[0] == -250
    _, _, _, side = score(LADDER, (7, 0, 6, 0), (7, 0, 6, 0))
    assert side == -1


def test_blind_bid_scores_20_per_blind_trick_and_no_bags() -> None:
    rules = Ruleset(blind_bids=True)
    blind = (True, False, False, False)
    points, _, bags, _ = score(rules, (4, 3, 2, 3), (5, 2, 3, 3), blind=blind)
    assert points[0] == 60 + 40
    assert bags[0] == 0
    points, *_ = score(rules, (4, 3, 2, 3), (3, 4, 2, 4), blind=blind)
    assert points[0] == -60


def test_three_player_cut_throat_scores_each_player_alone() -> None:
    rules = Ruleset(players=3)
    points, scores, bags, _ = score(rules, (5, 0, 6), (7, 0, 10), scores=(10, 20, 30))
    assert points == (52, 100, 64)
    assert scores == (62, 120, 94)
    assert bags == (2, 0, 4)


def test_two_player_scores_each_player_alone() -> None:
    rules = Ruleset(players=2, blind_nil=False)
    points, _, bags, _ = score(rules, (6, 5), (8, 5))
    assert points == (62, 50)
    assert bags == (2, 0)


def test_nil_not_allowed_a_zero_bid_is_a_plain_contract() -> None:
    rules = Ruleset(nil_allowed=False, blind_nil=False, min_bid=0)
    points, _, bags, _ = score(rules, (0, 3, 4, 3), (2, 4, 3, 4))
    assert points[0] == 41
    assert bags[0] == 1
