"""`benchmarks.bots`: the bot report counts what it says it counts.

Nothing here is timed or compared with a measured rate: the judge of a card is checked on
hand-built tricks, and a tiny match is played for the shape and sums of its figures.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks import artifact, bots
from engine import HandScored, PlayCard, Ruleset, parse_card, replay
from engine.bot import play_game
from tests.engine.support import bid_round, hands, run, start

DEAL = hands(
    "AH 9H 3H 4C 5C 6C 7C 8C 9C TC JC QC KC",
    "KH 8H 2H 2D 3D 4D 5D 7D 8D 9D TD JD QD",
    "QH 7H 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS",
    "JH 6H 5H 4H TH AS AD KD 6D 2C 3C AC KS",
)


def test_a_last_card_over_the_partners_winner_is_an_overtake() -> None:
    # N leads 3H, E 8H, S 7H: W, last, may keep E's trick with 6H or take it with JH.
    state = bid_round(start(Ruleset(), DEAL, dealer=3), {0: 3, 1: 3, 2: 3, 3: 3})
    state, _ = run(state, *(PlayCard(s, parse_card(c)) for s, c in enumerate(["3H", "8H", "7H"])))
    tally = bots.Tally()
    bots.judge(state, parse_card("6H"), tally)
    assert tally.overtakes == 0
    bots.judge(state, parse_card("JH"), tally)
    assert tally.overtakes == 1


def test_a_card_under_the_trick_beside_a_nil_still_to_play_is_a_cover_failure() -> None:
    # N bid nil; E leads 8H and S, before N, holds QH (heads it) and 7H (does not).
    state = bid_round(start(Ruleset(), DEAL, dealer=0), {1: 3, 2: 4, 3: 3, 0: 0})
    state, _ = run(state, PlayCard(1, parse_card("8H")))
    tally = bots.Tally()
    bots.judge(state, parse_card("QH"), tally)
    assert (tally.cover_chances, tally.cover_failures) == (1, 0)
    bots.judge(state, parse_card("7H"), tally)
    assert (tally.cover_chances, tally.cover_failures) == (2, 1)


def test_a_games_bids_and_nils_are_counted_per_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bots, "BOT_PLAYOUTS", 16)
    result = bots.match(Ruleset(target=200), 2)
    assert result["games"] == 2
    assert sum(result["ends"].values()) == 2
    assert 0 <= result["strong_win_rate_low95"] <= result["strong_win_rate"]
    assert result["strong_win_rate"] <= result["strong_win_rate_high95"] <= 1
    for level in bots.LEVELS:
        figures = result[level]
        assert 0 <= figures["nil_made"] <= 1
        assert 0 <= figures["cover_failures"] <= figures["cover_chances"]
        assert (
            figures["decision_ms_p50"] <= figures["decision_ms_p95"] <= figures["decision_ms_max"]
        )


def test_hands_tally_every_seats_bid() -> None:
    events, state = play_game(Ruleset(target=200), 3)
    tallies: dict[str, bots.Tally] = {"baseline": bots.Tally()}
    ends: Counter[str] = Counter()
    hands_, _ = bots.add_game(events, ("baseline",) * 4, tallies, ends)
    tally = tallies["baseline"]
    assert tally.bids == 4 * hands_
    assert tally.bidders + tally.nils == tally.bids
    assert ends == Counter({state.reason: 1})


def test_baseline_self_play_counts_every_game() -> None:
    figures = bots.selfplay(Ruleset(target=200), 3)
    assert figures["games"] == 3
    assert 0 <= figures["target_share"] <= 1
    assert figures["overtakes"] == 0


def test_tricks_minus_bid_is_the_mean_over_non_nil_bids_of_tricks_taken_less_the_bid() -> None:
    # Worked out here from the hands' own bids and tricks, apart from the tally.
    events, _ = play_game(Ruleset(target=300), 5)
    tallies: dict[str, bots.Tally] = {"baseline": bots.Tally()}
    bots.add_game(events, ("baseline",) * 4, tallies, Counter())
    overs = []
    state = replay([])
    for event in events:
        if isinstance(event, HandScored):
            overs += [t - b for t, b in zip(event.tricks, state.bids, strict=True) if b != 0]
        state = replay([event], state)
    assert overs
    figures = tallies["baseline"].figures()
    assert figures["tricks_minus_bid"] == pytest.approx(sum(overs) / len(overs))


def test_tricks_minus_bid_by_spare_splits_the_same_bids_by_the_tables_unbid_tricks() -> None:
    # The spare of each hand worked out here: 13 less the table's non-nil bids, clamped.
    events, _ = play_game(Ruleset(target=300), 5)
    tallies: dict[str, bots.Tally] = {"baseline": bots.Tally()}
    bots.add_game(events, ("baseline",) * 4, tallies, Counter())
    expected: dict[int, list[int]] = {}
    state = replay([])
    for event in events:
        if isinstance(event, HandScored):
            spare = 13 - sum(b for b in state.bids if b != 0)
            spare = min(max(spare, bots.SPARE_CLAMP[0]), bots.SPARE_CLAMP[1])
            for t, b in zip(event.tricks, state.bids, strict=True):
                if b != 0:
                    expected.setdefault(spare, []).append(t - b)
        state = replay([event], state)
    figures = tallies["baseline"].figures()
    assert figures["bids_by_spare"] == {str(k): len(v) for k, v in sorted(expected.items())}
    assert figures["tricks_minus_bid_by_spare"] == pytest.approx(
        {str(k): sum(v) / len(v) for k, v in expected.items()}
    )
    # Weighted by their bids, the parts give back the whole mean.
    by_spare = figures["tricks_minus_bid_by_spare"]
    total = sum(m * figures["bids_by_spare"][k] for k, m in by_spare.items())
    assert total / sum(figures["bids_by_spare"].values()) == pytest.approx(
        figures["tricks_minus_bid"]
    )


def test_the_report_of_a_game_goes_into_the_artifact() -> None:
    # The figures of a played game nest into bench.json as they are (the by-spare tables'
    # keys once were numbers: `python -m benchmarks bots` played every game, then raised).
    events, _ = play_game(Ruleset(target=200), 3)
    tallies: dict[str, bots.Tally] = {"baseline": bots.Tally()}
    bots.add_game(events, ("baseline",) * 4, tallies, Counter())
    figures = tallies["baseline"].figures()
    nested = artifact.nest({"bots.ladder": {"baseline": figures}})
    assert nested["bots"]["ladder"]["baseline"]["bids_by_spare"] == figures["bids_by_spare"]
    assert json.loads(json.dumps(nested)) == nested
