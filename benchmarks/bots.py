"""The bot report: how the baseline and the strong bot bid, cover, overtake and win.

`python -m benchmarks bots` plays duplicate-seated games (`services.tools.simulate.seating`: each
deal once from each side) of the strong bot against the baseline in every variant named by
SPADES_BENCH_BOT_VARIANTS ("ladder"; "all" for every variant of `spades simulate`), and a
match of the strong bot against a team playing random legal moves, then writes per bot:

- ``tricks_minus_bid``: mean tricks taken minus the bid, per non-nil bidder and hand (0 to
  +0.5 is a bot that bids what it takes; below 0 it overbids, above it underbids);
- ``nil_rate`` (nils among its bids) and ``nil_made`` (their share made);
- ``contracts_made``: its sides' contracts made (nils apart);
- ``cover_failures``: cards played, with the partner's nil intact and winning the trick so
  far or still to play to it, that did not head the trick although a legal card would have
  (``cover_chances``: the cards played where one would have);
- ``overtakes``: cards played last to a trick the partner (not nil) was winning, that took
  it from him while a legal card would have let him keep it;
- ``decision_ms_p50/p95/max``: CPU time per decision (cards and bids alike);
- ``tricks_minus_bid_by_spare`` (and ``bids_by_spare``): the same mean split by the hand's
  spare, the tricks less the table's non-nil bids (clamped to -2..4): where a bot's
  overtricks come from. The baseline's grow with the spare (issue #28: beside the strong bot,
  5 games of seed 1, +0.04 at spare 1, +0.64 at 2, +1.3 at 3 and more), as do its own
  self-play ones for the last bidder (+0.17 at 0 to +1.0 at 3);

and per variant the strong side's win rate over the baseline with its 95% Wilson interval,
bag penalties per hand and how the games ended; and the baseline's own figures over cheap
self-play games (``baseline_selfplay``: all four seats baseline). Figures go under
``bots.<variant>.*`` (and ``bots.random_match.*``) in `artifacts/bench.json`.

Knobs: SPADES_BENCH_BOT_GAMES (8, even: whole duplicate pairs), SPADES_BENCH_BOT_RANDOM_GAMES
(4), SPADES_BENCH_BOT_SELFPLAY_GAMES (100), SPADES_BENCH_BOT_PLAYOUTS (the strong bot's
default) and SPADES_BENCH_BOT_SEED (1).
The games are played with the time cap off, so the figures do not depend on the machine's
load, only the decision times do. Not part of `make bench`: it measures play, not speed.

16 games a variant (seed 1; `SPADES_BENCH_BOT_GAMES=16`, 200 self-play games):
ladder: strong won 75% (95% 51%..90%), 13 games by the target and 3 by mercy; baseline
tricks - bid +0.62 (self-play +0.29, 94% by the target), strong +0.37; strong's nils 9% of
its bids, 93% made; cover failures 0 of 59, overtakes 0; strong's decision CPU p95 112 ms,
max 181. Jokers: strong won 88% (64%..97%), 14 by the target; baseline +0.88 (self-play
+0.42, 93%), strong +0.34; nils 13%, 97% made; cover failures 0 of 72, overtakes 0; p95 91
ms, max 195. Cut-throat: strong won 81% (57%..93%), 15 by the target; baseline +0.67
(self-play +0.42, 95%), strong +0.09; p95 87 ms, max 157.

After the baseline's unbid-trick bid (below), `SPADES_BENCH_BOT_VARIANTS=ladder,jokers
SPADES_BENCH_BOT_GAMES=16 SPADES_BENCH_BOT_SELFPLAY_GAMES=200`: ladder: strong won 94%
(72%..99%), 14 games by the target and 2 by mercy; baseline +0.46 over its bid (self-play
+0.23, 92% by the target), contracts made 76%; strong +0.51, contracts made 90%, nils 8%
(96% made); cover failures 0 of 58, overtakes 0; p95 84 ms, max 158. Jokers: strong won
69% (44%..86%), 13 by the target; baseline +0.74 (self-play +0.36, 92%); strong +0.47,
nils 13% (91% made); cover failures 0 of 61; p95 86 ms, max 178. The strong bot now takes
the tricks the baseline's higher bids no longer leave it, and sets it more (ladder: the
baseline's contracts made 76%). Mixed games by the target, a larger sample before the
change: 26 of 32 duplicate ladder games of seed 1 (6 by mercy: the baseline's side fell in
4, the strong side in 2).

Where the baseline's overtricks beside the strong bot come from (issue #28; 4
duplicate strong-v-baseline ladder games of seed 1 against 40 baseline self-play games, each
trick the baseline won classed by its side's state when it played to it): won after its
side's contract was made, per bid, while ducking 0.37 (self-play 0.22; 23 of 32 of them with
one legal card left) and while chasing a set (`engine.botplay.SET_SHARE_BONUS`) 0.20 (0.16).
The strong bot sheds its winners once its own contract is made, so the tricks nobody bid are
left in the hands of the side that ducks worse. Neither lever below moves that (nor did the
last bidder's bid-up, `engine.bot.MARGIN`):

- Chasing sets less (`SET_SHARE_BONUS` 0.1 -> 0.3): the same 4 games at +0.53 over the bid
  (+0.50 before): tricks won chasing fell to 0.06 a bid and tricks won ducking rose to 0.47,
  the same spare taken later. Self-play unchanged (ladder +0.30, 93.5% by the target).
- Bidding closer whenever a set leaves the side 200 (300) points above the mercy floor, the
  margin less 0.2. 200 self-play games, seeds 1000+: ladder +0.29 -> +0.14, contracts made
  78.6% -> 71.9%, by the target 93.5% -> 88% (90% at 300); jokers +0.42 -> +0.34, 91%;
  cut-throat +0.42 -> +0.25, 94.5%; at 0.35 less the ladder ended 75.5% by the target. A
  0.2 margin moves tricks - bid by about 0.15, so bringing the mixed games' +0.56 (jokers
  +0.82, cut-throat +0.66) under +0.5 this way takes the ladder's self-play under 90%.

Measured again over 32 duplicate ladder games (seed 1, 596 baseline bids, +0.58 over the
bid; strong +0.39), each side's hand from the trick that made its contract: the strong
side made it with 2.93 tricks left holding 1.86 spades and took 1.04 more; the baseline
side made it with 3.98 left holding 2.63 spades and took 1.61 more. Its tricks after the
contract, per bid: 0.69 (ducking 0.37, chasing a set 0.32; 0.29 with one legal card left),
the strong bot's 0.49. Few were the card's fault: of the 79 it won ducking with a choice
of card, 12 could have lost given the cards the others played. The cards held were:
needing tricks, the strong bot wins with its highest winner in 256 of the 1,156 tricks it
takes holding two or more (the baseline 11 of 1,061, always the cheapest). Two play levers
tried on the same deals and not kept: winning the trick that makes the contract with the
highest winner (12 games: +0.62 over the bid against +0.63), and cashing top spades before
side winners while the side needs tricks (8 games: +0.62 against +0.56).

What moved it is the bid: the tricks the table's bids leave unbid (`engine.bot.unbid`) told
the baseline's overtricks apart beside the strong bot (+0.83 and +1.16 where two and three
or more were left) and hardly in self-play (+0.32, +0.37), so the baseline now bids half of
them past the first (`engine.bot.TABLE_SPARE_SHARE`). The same 16 ladder games as above:
baseline +0.62 -> +0.46 over its bid, strong +0.37 -> +0.51, strong won 12 -> 15 of 16.
Against the baseline without it, 500 duplicate self-play ladder games (seeds 7000+ and
9000+): 254 won. Self-play, 300 games from seed 1000: ladder +0.29 -> +0.23, 93.0% ->
92.7% by the target; jokers +0.43 -> +0.36, 92.0% -> 92.7%; jjd-little-willie +0.41 ->
+0.35, 90.0% -> 89.7% (one game). 120 games from seed 1000, by the target before -> after:
moe, boston, blind-bids-min-6 91.7% -> 90.0%; ten-for-two-blind 92.5% both; partners-order
90.0% -> 92.5%; nil-exchange and nil-exchange-blind 92.5% -> 90.0%; power-checks 95.8% ->
95.0%; cut-throat and three-jokers 95.8% -> 95.0% (tricks over the bid -0.05 to -0.07 in
each). Not at tables with minimum bids, where it cost the most (`engine.bot.TABLE_SPARE_SHARE`).

Cut-throat after that change (16 games of seed 1, 200 self-play games): the baseline +0.65
over its bid beside the strong bot (two baseline seats, one strong; self-play +0.34, 95% by
the target), the strong bot +0.06, strong won 69%. In three-handed games every trick goes to
a bidder, so the strong bot's honest bids leave the whole spare to the two baseline seats.
With the margin 0.5 instead of 0.7 while the seat stands 150 or more above the mercy floor
(`engine.bot.CLOSE_MARGIN`), the same games: baseline +0.44, strong +0.08, strong won 75%
(12 of 16); self-play +0.18, 95.3% by the target (300 games from seed 1000; 95.0% from
seed 7000). The margin 0.5 at every score: +0.40 beside the strong bot but self-play 92.3%
and 91.0% by the target.

Jokers (four-handed) stays above +0.5 beside the strong bot: every bid lever that would
move it costs self-play games by the target, already 92.7% (seed 1000) and 91.7% (seed
7000) with `DECK_MARGIN` 0.9. Self-play, 300 games from seed 1000 unless said, tricks over
the bid and games by the target: margin 0.7 +0.26, 90.0%; `TABLE_SPARE_SHARE` 1.0 +0.26,
88.3%; both +0.20, 89.7%; margin 0.5 while 150 above the floor (`CLOSE_MARGIN`) +0.17,
89.7%; 0.6 from 200 +0.22, 91.0% (seed 7000: 88.7%); 0.6 from 300 +0.25, 90.7% (90.3%);
0.5 from 300 +0.21, 91.0%. None was tried beside the strong bot: a drop of about 0.1 to 0.2
would not bring +0.74 under +0.5, and each leaves self-play at the 90% line.

The strong bot's ladder overtricks, a larger sample (24 more duplicate games, seed 2,
`SPADES_BENCH_BOT_SEED=2 SPADES_BENCH_BOT_GAMES=24`): strong +0.56 over its bid (with the 16
of seed 1 at +0.51, it stays above +0.5), baseline +0.46; strong won 23 of 24, 20 games
by the target; decision CPU p95 91 ms, max 155. Its bid search bid 0.58 tricks under the
baseline's bid on average (196 first-round bids of 50 ladder deals from seed 100): the
rollouts play its seat worse than the search does, so the best mean margin undercounts it.
It now bids the highest bid within `engine.search.BID_TOLERANCE` (3) points of the best
mean margin. The same 24 games of seed 2: strong +0.56 -> +0.39 over its bid (6 points:
+0.35), its contracts made 90% -> 84%, won 23 -> 21 of 24 (6 points: 19); baseline +0.46
-> +0.50; 20 -> 19 games by the target. The 16 ladder games of seed 1: strong +0.51 ->
+0.44, won 15 -> 14, 14 by the target either way; baseline +0.46; decision CPU p95 99 ms,
max 199 (a loaded machine). Jokers, 16 games of seed 1: strong +0.47 -> +0.33, won 11 -> 14;
baseline +0.74 either way; but 10 games by the target against 13 (6 by mercy). In all 6
the baseline's side fell, with the strong side at 434 to 513 (ending the hand it reached
the target in one): games the strong side was winning, ended by the loser's last gambles.
Cut-throat with both changes (16 games of seed 1, 200 self-play games, 4 random-team games):
baseline +0.39 (self-play +0.19, 95% by the target), strong +0.14, strong won 11 of 16, 15
by the target; decision CPU p95 79 ms, max 143; the strong pair lost 0 of 4 to random play.

Jokers, read by what the bids before the baseline's showed (issue #28; the same 16 games of
seed 1 and 16 of seed 2, 507 baseline bids, against 600 self-play games from seed 1000): by
its place in the bidding, the numbers bid before it, an opponent's nil before it, the
table's unbid tricks, the excess over self-play is broad (+0.63 to +0.98 against +0.21 to
+0.56), but one place stands out: the partner of a blind nil took +3.13 over 31 bids
(self-play +1.83 over 538; a seen nil's partner +0.16): the baseline's side trails the
strong bot and bids blind nil three times as often, and the nil hands its high cards over
after the bids. Counting them (`engine.bot.BLIND_NIL_CARD_TRICKS`), interleaved on the same
deals: seed 1 baseline +0.74 -> +0.65, games by the target 10 -> 13 of 16, strong won 14 ->
13; seed 2 +0.83 -> +0.72, 15 -> 14 by the target, strong won 13 either way; the strong
bot's nils 11-13% of its bids (91-97% made), cover failures 0, overtakes 0 either way. The
command above after it (load 5.0 -> 3.5): strong won 81% (57%..93%), 13 games by the target
and 3 by mercy; baseline +0.65 over its bid (self-play +0.33, 92% by the target), contracts
made 83%; strong +0.33, nils 13% (94% made), cover failures 0 of 71, overtakes 0; decision
CPU p50 27 ms, p95 60, max 108; the strong pair lost 0 of 4 to random play. Still above +0.5:
the rest is spread over every bidding place. The next such place, an opponent's nil before
the bid (+0.85 over 61 bids beside the strong bot, +0.12 in self-play), now counts a whole
trick with jokers (`engine.bot.DECK_OPPONENT_NIL_TRICKS`): the same 32 games, baseline +0.65
-> +0.57 (seed 1) and +0.72 -> +0.60 (seed 2), by the target 13 -> 14 and 14 -> 14, strong
won 13 -> 14 and 13 -> 15. The command above after both (load 2.1 -> 5.7): strong won 88%
(64%..97%), 14 games by the target and 2 by mercy (10 and 6 before both); baseline +0.57
over its bid (self-play +0.32, 94% by the target), contracts made 82%; strong +0.41, nils
13% (91% made), contracts made 90%, cover failures 0 of 68, overtakes 0; decision CPU p50
31 ms, p95 72, max 125; the strong pair lost 0 of 4 to random play. Ladder mixed games are
untouched by both (jokers deck only; the nil search of `engine.botnil` plays suicide only).

Games by the target and the jokers overtricks over a larger sample (issue #28; 16 duplicate
games each of seeds 1, 2 and 3, ladder and jokers: 96 games). 15 ended by mercy (ladder 9,
jokers 6), the baseline's side falling every time, 14 of them right after its failed blind
nil: beside the strong bot, which attacks nils, its blind nils made 44 of 92 (jokers
self-play 74%), most bid from below 100 points, often a second one after the first failed.
It no longer bids a blind nil whose failure, with its partner set beside it, would leave its
side within 50 points of the mercy floor (`engine.botblind.BLIND_NIL_ROOM`): ladder 39 -> 48
of 48 games by the target, jokers 42 -> 46; self-play (300 games from seeds 1000 and
7000) 90.7%..93.0% -> 95.7%..97.0%. The jokers
overtricks were broad (+0.62 over 48 games against +0.32 in self-play) but largest where the
baseline trailed, as it does in most hands beside the strong bot (+0.94 trailing by 200 or
more, +1.00 below zero; self-play +0.41 and +0.43): trailing by 50 or more, 200 above the
floor, it now bids half a trick closer (`engine.bot.TRAIL_MARGIN`, four-handed jokers): the
same 48 jokers games +0.57/+0.60/+0.68 -> +0.45/+0.43/+0.47, 47 by the target, strong won
45 either way. The command above with SPADES_BENCH_BOT_VARIANTS=ladder,jokers, before ->
after both (load 1.9 -> 1.8 at the start, 5-6 during the after run): ladder: 14 -> 16 games
by the target, strong won 88% either way (64%..97%); baseline +0.46 -> +0.43 over its bid
(self-play +0.23 -> +0.21, 92% -> 96% by the target), strong +0.44 -> +0.46, nils 9% (93%
made), cover failures 0 of 59 -> 0 of 60, overtakes 0; decision CPU p95 62 -> 50 ms, max
109 -> 83. Jokers: 14 -> 16 by the target, strong won 88% -> 94% (72%..99%); baseline
+0.57 -> +0.45 (self-play +0.32 -> +0.25, 94% -> 96%), contracts made 82% -> 77%; strong
+0.41 -> +0.38, nils 13% -> 12% (91% -> 94% made), cover failures 0 of 68 -> 0 of 65,
overtakes 0; p95 61 -> 62 ms, max 108 -> 101; the strong pair lost 0 of 4 to random play.
Seed 2 after (SPADES_BENCH_BOT_SEED=2): ladder 16 of 16 by the target, strong won 81%
(57%..93%), baseline +0.43, strong +0.45, nils 10% (94% made); jokers 16 of 16, strong won
94%, baseline +0.43, strong +0.32, nils 13% (88% made); cover failures 0 of 72 and 0 of 64,
overtakes 0, decision CPU p95 68 and 66 ms, max 106 and 110.
"""

from __future__ import annotations

import os
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from benchmarks import artifact
from engine import CardPlayed, Command, Event, GameFinished, HandScored, Ruleset, replay
from engine.bot import Player, play_game
from engine.cards import SPADES
from engine.game import legal_actions
from engine.model import PlayCard
from engine.rules import tables
from engine.search import PLAYOUTS, player
from engine.state import GameState, is_nil
from engine.view import SeatView
from services.tools.simulate import VARIANTS, pct, play_one, variant_rules, wilson

GAMES = int(os.environ.get("SPADES_BENCH_BOT_GAMES", "8"))
RANDOM_GAMES = int(os.environ.get("SPADES_BENCH_BOT_RANDOM_GAMES", "4"))
SELFPLAY_GAMES = int(os.environ.get("SPADES_BENCH_BOT_SELFPLAY_GAMES", "100"))
BOT_PLAYOUTS = int(os.environ.get("SPADES_BENCH_BOT_PLAYOUTS", str(PLAYOUTS)))
SEED = int(os.environ.get("SPADES_BENCH_BOT_SEED", "1"))
LEVELS = ("baseline", "strong")
SPARE_CLAMP = (-2, 4)
"""The spare (tricks less the sum of the table's non-nil bids) is clamped into this range."""


@dataclass
class Tally:
    """One bot's counts over the games it sat in."""

    bids: int = 0
    nils: int = 0
    nils_made: int = 0
    bidders: int = 0
    over_bid: int = 0
    """Sum over non-nil bids of tricks taken minus the bid."""
    contracts: int = 0
    contracts_made: int = 0
    cover_chances: int = 0
    cover_failures: int = 0
    overtakes: int = 0
    by_spare: dict[int, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    """Per table spare (tricks less the table's bids, `SPARE_CLAMP`): [sum of overs, bids]."""
    times: list[float] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        ms = sorted(t * 1e3 for t in self.times)
        return {
            "tricks_minus_bid": self.over_bid / max(self.bidders, 1),
            "tricks_minus_bid_by_spare": {
                str(k): over / n for k, (over, n) in sorted(self.by_spare.items())
            },
            # Keys as text: the figures are JSON (artifact.record nests them by name).
            "bids_by_spare": {str(k): n for k, (_, n) in sorted(self.by_spare.items())},
            "nil_rate": self.nils / max(self.bids, 1),
            "nils": self.nils,
            "nil_made": self.nils_made / max(self.nils, 1),
            "contracts_made": self.contracts_made / max(self.contracts, 1),
            "cover_chances": self.cover_chances,
            "cover_failures": self.cover_failures,
            "overtakes": self.overtakes,
            "decision_ms_p50": pct(ms, 50),
            "decision_ms_p95": pct(ms, 95),
            "decision_ms_max": ms[-1] if ms else 0.0,
        }


def _value(state: GameState, card: int) -> int:
    """Return the card's power in the trick so far (-1: off suit, no trump)."""
    t = state.tables
    suit = t.suit[card]
    return t.power[card] if suit in (t.suit[state.trick[0]], SPADES) else -1


def _winning(state: GameState) -> tuple[int, int]:
    """Return (seat, power) of the card winning the trick so far."""
    values = [_value(state, c) for c in state.trick]
    best_i = max(range(len(values)), key=values.__getitem__)
    return (state.leader + best_i) % state.tables.players, values[best_i]


def _beats(state: GameState, card: int, best: int) -> bool:
    return _value(state, card) > best


def judge(state: GameState, card: int, tally: Tally) -> None:
    """Count a cover failure or an overtake by the card about to be played in ``state``."""
    t = state.tables
    if t.players != 4 or not state.trick:
        return
    seat = state.turn
    partner = (seat + 2) % 4
    holder, best = _winning(state)
    to_come = (partner - state.leader) % 4 > len(state.trick)
    legal = [c.card for c in legal_actions(state, seat) if isinstance(c, PlayCard)]
    nil = is_nil(state.rules, state.bids[partner]) and state.taken[partner] == 0
    if nil and (holder == partner or to_come):
        heads = [c for c in legal if _beats(state, c, best)]
        if heads:
            tally.cover_chances += 1
            tally.cover_failures += not _beats(state, card, best)
    elif holder == partner and len(state.trick) == 3 and not is_nil(state.rules, state.bids[seat]):
        keeps = [c for c in legal if not _beats(state, c, best)]
        if keeps and _beats(state, card, best):
            tally.overtakes += 1


def add_game(
    events: list[Event], levels: tuple[str, ...], tallies: dict[str, Tally], ends: Counter[str]
) -> tuple[int, int]:
    """Add one game's events to the tallies; return (hands, bag penalties)."""
    state = replay([])
    hands = penalties = 0
    for event in events:
        if isinstance(event, CardPlayed):
            judge(state, event.card, tallies[levels[event.seat]])
        elif isinstance(event, HandScored):
            hands += 1
            t = state.tables
            nonnil = [b for b in state.bids if not is_nil(state.rules, b)]
            spare = min(max(t.tricks - sum(nonnil), SPARE_CLAMP[0]), SPARE_CLAMP[1])
            for s in range(t.players):
                tally = tallies[levels[s]]
                tally.bids += 1
                if is_nil(state.rules, state.bids[s]):
                    tally.nils += 1
                    tally.nils_made += event.tricks[s] == 0
                else:
                    tally.bidders += 1
                    tally.over_bid += event.tricks[s] - state.bids[s]
                    tally.by_spare[spare][0] += event.tricks[s] - state.bids[s]
                    tally.by_spare[spare][1] += 1
            for side, members in enumerate(t.members):
                # The side's bags wrapped round: a penalty (or more) this hand.
                penalties += state.rules.bags and event.bags[side] < state.bags[side]
                bidders = [s for s in members if not is_nil(state.rules, state.bids[s])]
                if not bidders or any(state.moe[s] for s in members if state.moe):
                    continue
                tally = tallies[levels[members[0]]]
                tally.contracts += 1
                contract = sum(state.bids[s] for s in bidders)
                tally.contracts_made += sum(event.tricks[s] for s in bidders) >= contract
        elif isinstance(event, GameFinished):
            ends[event.reason] += 1
        state = replay([event], state)
    return hands, penalties


def match(rules: Ruleset, games: int) -> dict[str, Any]:
    """Play ``games`` duplicate-seated strong-v-baseline games; return the variant's figures."""
    seats = ("strong", "baseline") * (rules.players // 2) + ("baseline",) * (rules.players % 2)
    tallies: dict[str, Tally] = defaultdict(Tally)
    ends: Counter[str] = Counter()
    wins = played = hands = penalties = 0
    team = tables(rules).team
    for i in range(games):
        events, levels, winner, times = play_one(rules, i, SEED, seats, BOT_PLAYOUTS, None)
        got, paid = add_game(events, levels, tallies, ends)
        hands += got
        penalties += paid
        for level, values in times.items():
            tallies[level].times += values
        strong_sides = {team[s] for s in range(rules.players) if levels[s] == "strong"}
        if len(strong_sides) == 1:
            played += 1  # a draw (winner -1) is no win
            wins += winner in strong_sides
    low, high = wilson(wins, played)
    out: dict[str, Any] = {level: tallies[level].figures() for level in LEVELS}
    out.update(
        games=games,
        hands_per_game=hands / max(games, 1),
        bag_penalties_per_hand=penalties / max(hands, 1),
        strong_win_rate=wins / max(played, 1),
        strong_win_rate_low95=low,
        strong_win_rate_high95=high,
        ends={k: v for k, v in sorted(ends.items())},
        target_share=ends["target"] / max(games, 1),
    )
    return out


def selfplay(rules: Ruleset, games: int) -> dict[str, Any]:
    """Baseline bots in every seat (cheap): its bidding, nils and how the games end."""
    tallies: dict[str, Tally] = defaultdict(Tally)
    ends: Counter[str] = Counter()
    for i in range(games):
        events, _ = play_game(rules, SEED * 1000 + i)
        add_game(events, ("baseline",) * rules.players, tallies, ends)
    figures = tallies["baseline"].figures()
    figures.update(games=games, target_share=ends["target"] / max(games, 1))
    return figures


def random_match(games: int) -> dict[str, Any]:
    """Strong partners against a team playing uniformly random legal moves (ladder rules)."""
    rules = Ruleset()
    losses = 0
    search = player("strong", playouts=BOT_PLAYOUTS)

    def strong(view: SeatView) -> Command:
        return search(view, None)

    for i in range(games):
        rng = random.Random(f"{SEED}/{i}/random")

        def randomly(view: SeatView, rng: random.Random = rng) -> Command:
            return rng.choice(view.legal)

        seats: list[Player] = [strong, randomly, strong, randomly]
        if i % 2:
            seats = seats[1:] + seats[:1]
        _, state = play_game(rules, SEED + i // 2, seats)
        strong_side = 0 if i % 2 == 0 else 1
        losses += state.winner != strong_side
    return {"games": games, "strong_losses": losses}


def main() -> None:
    """Play the matches, print the report and record it in the artifact."""
    meta = artifact.run_metadata()
    meta.update(games=GAMES, playouts=BOT_PLAYOUTS, seed=SEED)
    wanted = os.environ.get("SPADES_BENCH_BOT_VARIANTS", "ladder").split(",")
    names = list(VARIANTS) if "all" in wanted else [n.strip() for n in wanted if n.strip()]
    figures: dict[str, Any] = {}
    for name in names:
        rules = variant_rules(name, [])
        result = match(rules, GAMES)
        if SELFPLAY_GAMES:
            result["baseline_selfplay"] = own = selfplay(rules, SELFPLAY_GAMES)
            print(
                f"[{name}] baseline self-play, {SELFPLAY_GAMES} games: tricks-bid"
                f" {own['tricks_minus_bid']:+.2f}, nils {own['nil_rate']:.0%} made"
                f" {own['nil_made']:.0%}, ends by the target {own['target_share']:.0%}"
            )
        figures[f"bots.{name}"] = result
        print(
            f"[{name}] {GAMES} games, strong wins {result['strong_win_rate']:.0%}"
            f" (95% {result['strong_win_rate_low95']:.0%}..{result['strong_win_rate_high95']:.0%})"
            f", ends {result['ends']}"
        )
        for level in LEVELS:
            f = result[level]
            print(
                f"  {level:8} tricks-bid {f['tricks_minus_bid']:+.2f}  nils {f['nil_rate']:.0%}"
                f" made {f['nil_made']:.0%}  contracts made {f['contracts_made']:.0%}"
                f"  cover failures {f['cover_failures']}/{f['cover_chances']}"
                f"  overtakes {f['overtakes']}  decision ms p50 {f['decision_ms_p50']:.1f}"
                f" p95 {f['decision_ms_p95']:.1f} max {f['decision_ms_max']:.1f}"
            )
            spares = f["tricks_minus_bid_by_spare"]
            print(
                f"  {'':8} tricks-bid by spare: "
                + ", ".join(f"{k}: {v:+.2f} ({f['bids_by_spare'][k]})" for k, v in spares.items())
            )
    if RANDOM_GAMES:
        result = random_match(RANDOM_GAMES)
        figures["bots.random_match"] = result
        print(f"[random team] strong lost {result['strong_losses']} of {result['games']}")
    path = artifact.record("bots", figures, meta)
    print(f"written to {path}")
