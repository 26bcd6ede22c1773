"""Suicide and the mercy rule: how often nils must make for games to end by the target.

Issue #14 asks that bot-only games end by the target in at least 90% of games for every
variant. Every variant does (`spades simulate --variant all`) but suicide, where each side
must bid one nil every hand and the ladder's mercy rule ends a game at -200: two failed nils
more than the side's contracts win back. This module measures why, in two steps:

1. **Observed:** SPADES_BENCH_SUICIDE_GAMES (300) baseline suicide games, seeded: how they
   ended, how often the forced nil made, and each side's points of a hand apart from its nil
   (contract, bags), separately for hands whose nil made and hands whose nil failed.
2. **Model:** the same games again as a random walk: each hand, each side's nil makes with
   probability p (+100, else -100) and the rest of its points is drawn from the observed
   hands of that kind; a side at or below -200 loses, one at 500 or more ahead wins. Printed
   for p from the observed rate to 0.95: the share of games ending by the target. The model is
   checked against step 1 at the observed p (it is printed beside it).

What play changes (issue #28, measured with this module's 300 games and more from seed
5000, baseline in every seat). Before the partner's play changed (below): nils made 44.7%
and 21% of games ended by the target. The nil fails mostly late, holding spades: of 1,034
first tricks a nil took in 150 games, about four in ten were a spade it had to play from
the eighth trick on, and in nine of ten of those the partner had played to the trick before
it. Tried and kept out then, each
within the noise: the partner leading its top unseen spade to draw the nil's, its highest
spade, the nil discarding its most dangerous card instead of its highest, the first
partner's nil threshold `SUICIDE_NIL_FROM` at 0.2, 0.4, 0.5 instead of 0.3.

What moved it (`engine.botplay`'s docstring): the nil's partner stops spending high
cards that do not help. Before the nil he ruffs a side suit with the lowest trump that heads
the trick, not his top one, and plays low when nothing of his heads it. This module's 300
games now: **nils made 49.6%, 42.7% of games end by the target** (128 of 300; mercy 172).
Tried
and kept out: `SUICIDE_NIL_FROM` 0.1, 0.2, 0.4, 0.5 (on seeds 5000+ 0.3 stays
best: 126 of 300 games by the target against 108 and 114 at 0.1 and 0.2). Opponents and the
nil of the other side: pressing it (ducking under a winning opponent nil) lowers both sides'
nils to 40.1% and 11% of games by the target (measured before the partner's changes; 157 of 300
duplicate games won against leaving it alone, within the noise); leaving it (overtaking a
winning opponent nil when able) 44.7% and 23%, and lost 139 of 300. So the baseline keeps
its indifference. Double-dummy bounds say little (`engine.ddcore`, 20 sides of 10 deals, a
search over 3 million nodes counted as a failed nil): with every hand seen, 2 of 20 sides
have a nil that survives opponents who attack it, and all 20 have one that the three other
seats could let through; real play sits between the two.

Why the sides sink (150 baseline suicide games from seed 5000, 82 ended by mercy): of the
413 hands the sides that fell to the floor played, 332 had the forced nil fail (it took one
trick in 164, two in 104, three or more in 64), 103 had the partner's contract set (78 of
them by one trick; 90 of the 103 beside a failed nil too), 59 paid a bag penalty. Every one
of the 82 last hands had a failed nil (34 with the contract set as well). The failed nil,
not the contract or the bags, is what sinks a side.

Which partner takes the nil, and what the first trick a nil takes looks like (issue #28, 300
baseline games from seed 5000 unless said; the oracle is this module's `oracle`, the rest
were counted by one-off scripts): today
nils made 50.3%, 48.0% of games by the target. **An oracle that sees both hands** and sends
the nil to the partner whose hand `engine.bothand.nil_chance` rates safer made 53.8% of nils
and 56.7% of games by the target: no rule on the first bidder's own hand (what
`engine.bot.SUICIDE_NIL_FROM` is) can do better than that, so the choice of partner is not
what is missing. Bidding the partner's contract closer or looser (`SUICIDE_FIT`'s intercept
1.68 moved by +0.3, +0.5, -0.3): 40.7%, 35.0%, 46.3% by the target (sets cost more than the
bags save). The first trick each nil took (60 games from seed 5000): the nil had no card
that lost to the trick so far in every one (the nil never takes a trick it could lose); it
followed suit with only higher cards in 203, held nothing but spades when void in 119, and
had to play over a spade lead in 29; its partner had played to the trick before it in 260
of 351. Half (185) came from the ninth trick on (the spade-only ones nearly all there),
when the nil holds what its deal left it.
The partner's lead tried on the same 300 games: a top card of any suit (spades too) before
a low side card, 49.0% by the target (51.3% of nils); a suit the nil has shown void in (it
sheds its danger cards), 46.7% (49.8%); both, 46.7% (51.0%): all within the noise.

Where the nils are lost, and what card play could still save (issue #28, this branch;
one-off scripts beside `bound`). **With every card seen, the nil side keeps its nil** (the
others playing the baseline's card rules, `bound`, 60 games from seed 5000, 786 nils, 50,000
positions a nil): at least 73.2% of nils, at most 95.2% (38 proven lost, 173 undecided),
where the baseline made 49.1% of the same nils. Replaying the failed nils of 12 games from
seed 6000 that such a line could have saved (5,000 positions), the first card after which
none was left was the partner's in 30 of 40: 19 leads (13 from the seventh trick on), 8
plays void in the led suit (all late), 3 following; the nil's own in 10 (9 discarding
void). The saving card the search saw was
often a spade lead drawing the nil's last spades, where the rule led a side suit the nil,
holding only spades, had to ruff. Rules drawn from that and not kept (200 to 600 games
from seed 5000, interleaved with the rules as they are, which ended 45.8% to 49.0% by the
target): the partner leading his top spade while the nil has shown void in a side suit,
36.5%; from five, four, three or two tricks left, 45.0% (2), 42.0% (3), 40.8% (4), 34.5% (5);
only when every side suit he holds is one the nil is void in, 46.5% against 46.5% (nils
49.8% against 50.3%); never leading a suit the nil is void in, 36.5%; the partner not
heading a side suit the nil has shown void in, 46.2% against 45.8%. A top spade drawn by
rule spends the trumps the partner heads the nil's tricks with later.

What moved it is a search (`engine.botnil`): from the fourth trick from the end, the nil and
its partner play the card that keeps the nil alive in the most of 8 sampled deals (the
`nil_saved` search in each). 200 games from seed 5000, interleaved with the rules alone:
nils made 50.6% -> 52.5%, games by the target 49.0% -> 54.0% (98 -> 108). This module's
300 games (`python -m benchmarks suicide`, seeds 1000+): nils made 49.6% -> 51.5%, games by
the target 43.0% -> 47.3% (129 -> 142); 150 games from seed 8000: 50.0% -> 51.0%, 46.0% ->
47.3% (from five tricks left: 52.6%, 50.0%, at four times the CPU); suicide with forcing,
150 games from seed 5000: 52.1% -> 55.1%, 48.7% -> 56.7%. The oracle's choice of partner
on top of it (`oracle`, 300 games from seed 5000): nils made 55.4%, 61.7% of games by the
target (56.7% before). The model puts 75% of nils made at 89.1% of games by the target,
80% at 92.6%.
The strong bot in every seat (5 games of seed 5, `services.tools.simulate.play_one`): all 5
ended by mercy, 6 of 30 nils made: its rollouts attack a nil, and nils fall against them.

The ~80% of nils made that the ladder's mercy of -200 needs for 90% of games by the target
(the table printed below) stays far off: play got from 45% to about 50%; a nil side
seeing every card would reach 73% or more. What would get there is
the mercy itself: the suicide ladder plays the `engine.presets` "suicide" variant with the
default mercy of -200, and a lower mercy for suicide is the operator's choice (a rules
question, not the bots').

Figures: ``suicide.observed.*``, ``suicide.target_share_at_nil_rate.<p>``,
``suicide.oracle_choice.*`` and ``suicide.seen_all_bound.*`` (`bound`: its knobs
SPADES_BENCH_SUICIDE_BOUND_GAMES, 20, and SPADES_BENCH_SUICIDE_BOUND_NODES, 20000; 0 games
skips it) in `artifacts/bench.json`. With the nil search, the run's bound: 286 nils of 20
games from seed 5000, at least 71.3% and at most 97.6% savable, 49.0% made in play. Not part
of `make bench` (it measures the game, not the code's speed).

Run: `uv run --frozen python -m benchmarks suicide`.
"""

from __future__ import annotations

import os
import random
from collections import Counter

from benchmarks import artifact
from engine import (
    GameFinished,
    HandScored,
    StartGame,
    decide,
    initial_state,
    replay,
    view,
)
from engine.bot import _rule, choose, play_game, wanted_bid
from engine.bothand import nil_chance
from engine.botnil import nil_saved
from engine.model import PlaceBid
from engine.state import OVER, PLAY, is_nil
from services.tools.simulate import variant_rules

GAMES = int(os.environ.get("SPADES_BENCH_SUICIDE_GAMES", "300"))
ORACLE_SEED = int(os.environ.get("SPADES_BENCH_SUICIDE_ORACLE_SEED", "5000"))
WALKS = int(os.environ.get("SPADES_BENCH_SUICIDE_WALKS", "20000"))
BOUND_GAMES = int(os.environ.get("SPADES_BENCH_SUICIDE_BOUND_GAMES", "20"))
BOUND_NODES = int(os.environ.get("SPADES_BENCH_SUICIDE_BOUND_NODES", "20000"))
RATES = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
RULES = variant_rules("suicide", [])
NIL, TARGET, MERCY = RULES.nil_value, RULES.target, RULES.mercy  # the ladder's: 100, 500, -200
HAND_CAP = 200  # hands per modelled game before it counts as unfinished


def observe(games: int) -> tuple[Counter[str], list[int], list[int]]:
    """Play `games` baseline suicide games; return how they ended and the non-nil points of
    each side's hands whose nil made, and of those whose nil failed."""
    rules = RULES
    ends: Counter[str] = Counter()
    made: list[int] = []
    failed: list[int] = []
    for i in range(games):
        rng = random.Random(i)
        events, _ = play_game(rules, 1000 + i, [lambda v, r=rng: choose(v, r)] * 4)
        state = replay([])
        for event in events:
            if isinstance(event, HandScored):
                for side in (0, 1):
                    nils = [s for s in (side, side + 2) if is_nil(rules, state.bids[s])]
                    assert len(nils) == 1, "suicide: one nil per side every hand"
                    if event.tricks[nils[0]] == 0:
                        made.append(event.points[side] - NIL)
                    else:
                        failed.append(event.points[side] + NIL)
            elif isinstance(event, GameFinished):
                ends[event.reason] += 1
            state = replay([event], state)
    return ends, made, failed


def oracle(games: int, seed: int) -> tuple[Counter[str], float]:
    """Play `games` baseline suicide games in which the first partner of a side sees both
    hands and goes nil when its own `nil_chance` is at least its partner's, else bids the
    number it wants: the best the choice of partner could do. Return how they ended and the
    share of nils made. A measuring device only: no seat may see another's hand in play."""
    rules = RULES
    ends: Counter[str] = Counter()
    made = nils = 0
    for i in range(games):
        rng = random.Random(i)
        state = replay(decide(initial_state(), StartGame(rules, seed + i)))
        while state.phase != OVER:
            seat = state.turn
            seen = view(state, seat)
            command = choose(seen, rng)
            partner = (seat + 2) % 4
            if isinstance(command, PlaceBid) and state.bids[partner] < 0:
                mine = nil_chance(state.hands[seat], rules)
                nil = mine >= nil_chance(state.hands[partner], rules)
                bids = [c for c in seen.legal if isinstance(c, PlaceBid) and not c.blind]
                if nil:
                    command = next(c for c in bids if c.tricks == 0)
                elif command.tricks == 0:
                    want = wanted_bid(seen)
                    command = min(
                        (c for c in bids if c.tricks > 0),
                        key=lambda c: (abs(c.tricks - want), c.tricks),
                    )
            for event in decide(state, command):
                if isinstance(event, HandScored):
                    for s in range(4):
                        if is_nil(rules, state.bids[s]):
                            nils += 1
                            made += event.tricks[s] == 0
                elif isinstance(event, GameFinished):
                    ends[event.reason] += 1
                state = replay([event], state)
    return ends, made / max(nils, 1)


def bound(games: int, seed: int, nodes: int) -> tuple[int, int, int, int]:
    """Play `games` baseline suicide games; at the first card of every hand ask
    `engine.botnil.nil_saved` of each side's nil (the nil side seeing every card, the
    others playing the baseline's card rules): an upper bound on what the nil side's card
    play could save against them, measured cheaply. A measuring device only: no seat may
    see another's hand in play. Return (nils, made in the games, savable, undecided)."""
    nils = made = saved = undecided = 0
    for i in range(games):
        rng = random.Random(i)
        state = replay(decide(initial_state(), StartGame(RULES, seed + i)))
        while state.phase != OVER:
            if state.phase == PLAY and not state.tricks and not state.trick:
                for nil in (s for s in range(4) if is_nil(RULES, state.bids[s])):
                    answer = nil_saved(state, nil, nodes, _rule)
                    nils += 1
                    saved += answer is True
                    undecided += answer is None
            for event in decide(state, choose(view(state, state.turn), rng)):
                if isinstance(event, HandScored):
                    made += sum(
                        event.tricks[s] == 0 for s in range(4) if is_nil(RULES, state.bids[s])
                    )
                state = replay([event], state)
    return nils, made, saved, undecided


def walk(p: float, made: list[int], failed: list[int], rng: random.Random) -> str:
    """Return how one modelled game ends ("target", "mercy" or "hand_cap")."""
    scores = [0, 0]
    for _ in range(HAND_CAP):
        for side in (0, 1):
            if rng.random() < p:
                scores[side] += NIL + rng.choice(made)
            else:
                scores[side] += -NIL + rng.choice(failed)
        if min(scores) <= MERCY:
            return "mercy"
        if max(scores) >= TARGET and scores[0] != scores[1]:
            return "target"
    return "hand_cap"


def target_share(p: float, made: list[int], failed: list[int], walks: int) -> float:
    rng = random.Random(f"suicide/{p}")
    return sum(walk(p, made, failed, rng) == "target" for _ in range(walks)) / walks


def main() -> None:
    """Print the observed suicide games and the modelled share ending by the target."""
    meta = artifact.run_metadata()
    ends, made, failed = observe(GAMES)
    rate = len(made) / (len(made) + len(failed))
    played = sum(ends.values())
    observed_target = ends["target"] / played
    print(
        f"{played} baseline suicide games (ladder mercy {MERCY}): "
        + ", ".join(f"{k} {v}" for k, v in sorted(ends.items()))
        + f"; nils made {100 * rate:.1f}% ({len(made)}/{len(made) + len(failed)})"
    )
    print(
        f"a side's points beside its nil: {sum(made) / len(made):+.1f} when the nil made,"
        f" {sum(failed) / len(failed):+.1f} when it failed"
    )
    modelled = target_share(rate, made, failed, WALKS)
    print(
        f"model at the observed rate {100 * rate:.1f}%: {100 * modelled:.1f}% end by the target"
        f" (observed {100 * observed_target:.1f}%)"
    )
    figures: dict[str, float] = {
        "suicide.observed.games": played,
        "suicide.observed.target_share": observed_target,
        "suicide.observed.nil_rate": rate,
        "suicide.model_target_share_at_observed_rate": modelled,
    }
    for p in RATES:
        share = target_share(p, made, failed, WALKS)
        figures[f"suicide.target_share_at_nil_rate.{int(p * 100)}"] = share
        print(f"  nils make {100 * p:4.0f}%: {100 * share:5.1f}% of games end by the target")
    ends, rate = oracle(GAMES, ORACLE_SEED)
    share = ends["target"] / max(sum(ends.values()), 1)
    print(
        f"oracle choosing the nil with both hands seen (seeds {ORACLE_SEED}+): nils made"
        f" {100 * rate:.1f}%, {100 * share:.1f}% of games by the target"
    )
    figures["suicide.oracle_choice.nil_rate"] = rate
    figures["suicide.oracle_choice.target_share"] = share
    if BOUND_GAMES:
        nils, made_in_play, saved, undecided = bound(BOUND_GAMES, ORACLE_SEED, BOUND_NODES)
        print(
            f"nil side seeing every card against the baseline ({BOUND_GAMES} games from seed"
            f" {ORACLE_SEED}, {nils} nils, {BOUND_NODES} positions each): at least"
            f" {100 * saved / nils:.1f}% can be made, at most"
            f" {100 * (saved + undecided) / nils:.1f}% (played: {100 * made_in_play / nils:.1f}%)"
        )
        figures["suicide.seen_all_bound.nils"] = nils
        figures["suicide.seen_all_bound.made_in_play"] = made_in_play / nils
        figures["suicide.seen_all_bound.savable_at_least"] = saved / nils
        figures["suicide.seen_all_bound.savable_at_most"] = (saved + undecided) / nils
    print(f"wrote {artifact.record('suicide', figures, meta)}")
