// Cards by their wire names ("QS", "TH", "LJ", "BJ"), seats and rules as people read them.

import { h, playerName } from "./ui.js";

const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
const SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const RANK_NAME = {
  2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight", 9: "Nine",
  T: "Ten", J: "Jack", Q: "Queen", K: "King", A: "Ace",
};
const RANKS = "23456789TJQKA";
const SUIT_ORDER = "SHCD"; // alternating colours in the hand: ♠ ♥ ♣ ♦

/** Return the card as people say it: "Queen of spades", "Big joker". */
export function cardLabel(card) {
  if (card === "BJ") return "Big joker";
  if (card === "LJ") return "Little joker";
  return `${RANK_NAME[card[0]]} of ${SUIT_NAME[card[1]]}`;
}

/** Return the suit a card plays in (jokers are spades; with deuces high, as the engine's
 *  `engine.rules` tables say, the deuces that are trumps: all four, or with jokers the 2♠). */
export function suitOf(card, rules = null) {
  if (card === "BJ" || card === "LJ") return "S";
  if (rules && rules.deuces_high && card[0] === "2" && (!rules.jokers || card[1] === "S")) return "S";
  return card[1];
}

/** Return a card's strength within the suit it plays in (`suitOf`), as the engine ranks it. */
function power(card, rules = null) {
  if (rules && rules.deuces_high && (card === "BJ" || card === "LJ")) return card === "BJ" ? 15 : 14;
  if (card === "BJ") return 101;
  if (card === "LJ") return 100;
  if (rules && rules.deuces_high && card[0] === "2") {
    if (!rules.jokers) return 13 + "SDCH".indexOf(card[1]); // 2♠ < 2♦ < 2♣ < 2♥, above the ace
    if (card[1] === "S") return 13; // Joker-Joker-Deuce: 2♠ above the ace, under the jokers
  }
  return RANKS.indexOf(card[0]);
}

/** Return the hand sorted by suit (♠ ♥ ♣ ♦), high cards first within a suit (with
 *  ``rules``: trump deuces among the spades, in their place). */
export function sortHand(cards, rules = null) {
  return [...cards].sort(
    (a, b) => SUIT_ORDER.indexOf(suitOf(a, rules)) - SUIT_ORDER.indexOf(suitOf(b, rules)) || power(b, rules) - power(a, rules),
  );
}

/** The face of a card: rank and suit glyph, red or black. */
export function cardFace(card) {
  if (card === "BJ" || card === "LJ") {
    return [h("span", { class: "rank" }, card === "BJ" ? "BJ" : "LJ"), h("span", { class: "suit" }, "★")];
  }
  const rank = card[0] === "T" ? "10" : card[0];
  return [h("span", { class: "rank" }, rank), h("span", { class: "suit" }, SUIT[card[1]])];
}

/** Return the CSS classes of a card's colour. */
export function cardClass(card) {
  const red = card === "BJ" || card[1] === "H" || card[1] === "D";
  return red ? "card red" : "card black";
}

/** A card shown (not playable): a span with the card's name for screen readers. */
export function cardView(card, extra = "") {
  return h("span", { class: `${cardClass(card)} ${extra}`, role: "img", "aria-label": cardLabel(card) }, cardFace(card));
}

/** Return the short text of a card: "Q♠", "10♥". */
export function cardText(card) {
  if (card === "BJ" || card === "LJ") return card === "BJ" ? "Big joker" : "Little joker";
  return `${card[0] === "T" ? "10" : card[0]}${SUIT[card[1]]}`;
}

/** Return the compass name of a seat for a table of `n` players. */
export function seatName(seat, n) {
  if (n === 4) return ["North", "East", "South", "West"][seat];
  return `Seat ${seat + 1}`;
}

/** A small compass rose for a felt: each seat's letter where `spotOf(seat)` draws that seat,
 *  so a turned table shows which way North lies. Four-seat tables only (null otherwise). */
export function compass(n, spotOf) {
  if (!n) return null;
  // four seats by their compass names; two, three or five by number, as "Seat 1" is named
  const letters = n === 4 ? ["N", "E", "S", "W"] : Array.from({ length: n }, (_, seat) => String(seat + 1));
  return h("div", { class: `compass compass-n${n}`, "aria-hidden": "true", "data-testid": "compass" },
    letters.map((letter, seat) => h("span", { class: `compass-${spotOf(seat)}`, "data-seat": seat }, letter)));
}

/** Return the side (team) of a seat: partners opposite with four players, else each alone. */
export function teamOf(seat, n) {
  return n === 4 ? seat % 2 : seat;
}

/** Return the seats of one side. */
export function membersOf(team, n) {
  return n === 4 ? [team, team + 2] : [team];
}

/** Return a side's name: "N+S", "E+W", or the player's name. */
export function teamName(team, n, players) {
  if (n === 4) return team === 0 ? "N+S" : "E+W";
  return playerName(players[team]);
}

/** Return a bid as people read it: "–" before bidding, "Nil", "Blind nil", "B4", "3",
 * "Big Moe" (8 in a row), "Little Moe" (6 in a row). */
export function bidText(bid, blind, rules, moe = false) {
  if (bid === undefined || bid < 0) return "–";
  if (moe) return bid === 8 ? "Big Moe" : "Little Moe";
  const nilAllowed = !rules || rules.nil_allowed !== false;
  if (bid === 0 && nilAllowed) return blind ? "Blind nil" : "Nil";
  return blind ? `B${bid}` : String(bid);
}

/** The options of RULES.md that a table may choose, for the practice form and rule summaries. */
export const RULE_OPTIONS = [
  { name: "players", label: "Players", kind: "select", value: 4,
    choices: [[4, "4 — two partnerships (N+S v E+W)"], [3, "3 — cut-throat, 17 cards each (18 with jokers)"],
      [2, "2 — heads-up"], [5, "5 — each for himself, 10 cards each"]] },
  { name: "target", label: "Play to (points)", kind: "number", value: 500, min: 1 },
  { name: "mercy", label: "Mercy: a side at or below this score loses (0 = off)", kind: "number", value: -200, max: 0 },
  { name: "nil_allowed", label: "Nil bids allowed", kind: "bool", value: true },
  { name: "nil_value", label: "Nil is worth", kind: "number", value: 100, min: 1 },
  { name: "blind_nil", label: "Blind nil allowed", kind: "bool", value: true },
  { name: "blind_nil_deficit", label: "Blind nil only when behind by at least", kind: "number", value: 100, min: 0 },
  { name: "blind_nil_exchange", label: "Blind nil card exchange", kind: "select", value: 2,
    choices: [[2, "2 cards each way"], [1, "1 card each way"], [0, "no exchange"]] },
  { name: "bags", label: "Bags (sandbagging penalty)", kind: "bool", value: true },
  { name: "bag_limit", label: "Bags before a penalty", kind: "number", value: 10, min: 1 },
  { name: "bag_penalty", label: "Bag penalty", kind: "number", value: 100, min: 0 },
  { name: "first_lead", label: "First lead", kind: "select", value: "no_spade",
    choices: [["no_spade", "Dealer's left leads any non-spade"], ["two_of_clubs", "The 2♣ must lead"],
      ["any", "Dealer's left leads any card"], ["lowest_club", "Everyone plays his lowest club (2 players)"]] },
  { name: "min_bid", label: "Lowest bid other than nil", kind: "number", value: 1, min: 0, max: 17 },
  { name: "team_min_bid", label: "Team minimum contract (0 = none)", kind: "number", value: 0, min: 0, max: 13 },
  { name: "ten_for_two_hundred", label: "Ten for two hundred (team bid ≥ 10 made scores 200)", kind: "bool", value: false },
  { name: "boston", label: "Boston (13 tricks bid and made wins the game)", kind: "bool", value: false },
  { name: "blind_bids", label: "Blind bids (20 a trick when behind)", kind: "bool", value: false },
  { name: "blind_bid_deficit", label: "Blind bids only when behind by at least", kind: "number", value: 100, min: 0 },
  { name: "jokers", label: "Jokers (Big and Little Joker top trumps)", kind: "bool", value: false },
  { name: "deuces_high", label: "Deuces high", kind: "bool", value: false },
  { name: "suicide", label: "Suicide (each team: one nil and one bid ≥ 4)", kind: "bool", value: false },
  { name: "deal", label: "Two-player deal", kind: "select", value: "deal",
    choices: [["deal", "Deal 13 each"], ["draw", "Draw from the stock"]] },
  { name: "hand_cap", label: "Most hands in a game", kind: "number", value: 50, min: 1 },
  { name: "moe", label: "Big and Little Moe (8 or 6 tricks in a row: 300 / 150)", kind: "bool", value: false },
  { name: "little_willie", label: "Little Willie (jokers + deuces high: a trick won with 2♣ counts two)", kind: "bool", value: false },
  { name: "blind_bid_min", label: "Least blind bid (0 = none)", kind: "number", value: 0, min: 0, max: 13 },
  { name: "ten_for_two_blind", label: "Ten for two, bid blind, scores 400", kind: "bool", value: false },
  { name: "set_scores_zero", label: "A broken contract scores zero (not minus the bid)", kind: "bool", value: false },
  { name: "bidding_order", label: "Bidding order", kind: "select", value: "clockwise",
    choices: [["clockwise", "Clockwise from dealer's left"], ["partners", "Dealer's left, his partner, dealer's partner, dealer"]] },
  { name: "nil_exchange", label: "Nil card exchange (nil bidder swaps one card with partner)", kind: "bool", value: false },
  { name: "nil_exchange_deficit", label: "Nil exchange only when behind by at least (0 = always)", kind: "number", value: 0, min: 0 },
  { name: "nil_exchange_peek", label: "Partner sees the nil bidder's card before giving his", kind: "bool", value: true },
  { name: "suicide_forcing", label: "Suicide, forcing (second partner may copy the first's bid)", kind: "bool", value: false },
  { name: "ten_for_two_scoring", label: "Ten for two above a bid of ten", kind: "select", value: "flat",
    choices: [["flat", "200 (the rule book)"], ["per_trick", "20 a trick"]] },
  { name: "power_checks", label: "Power checks (cards each dealt face up)", kind: "select", value: 0,
    choices: [[0, "none"], [1, "1 each"], [2, "2 each"], [3, "3 each"]] },
];

/** Return the number of tricks of a hand (and the highest bid) under these rules. */
export function tricksPerHand(rules, n) {
  if (n === 3) return rules && rules.jokers ? 18 : 17;
  if (n === 5) return 10;
  return 13;
}

/** Return the rules that differ from the ladder's, as "label: value" strings. */
export function ruleChanges(rules) {
  const out = [];
  for (const option of RULE_OPTIONS) {
    if (!(option.name in rules) || rules[option.name] === option.value) continue;
    let value = rules[option.name];
    if (option.kind === "bool") value = value ? "yes" : "no";
    if (option.kind === "select") {
      const found = option.choices.find(([v]) => String(v) === String(value));
      if (found) value = found[1];
    }
    out.push(`${option.label}: ${value}`);
  }
  return out;
}
