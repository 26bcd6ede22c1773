// Committed deals in the browser (docs/FAIRNESS.md): the seat's own random contribution before
// hand 1, and at the game's end the check that every deal is the one the revealed seed, the
// contributions and the hand number give. WebCrypto only: SHA-256 and HMAC-SHA256.

export const SCHEME = "hmac-sha256-fy-v1";

const RANKS = "23456789TJQKA";
const SUITS = "CDHS";
const enc = new TextEncoder();

/** 32 random bytes as 64 lowercase hex digits (the Contribute command's value). */
export function makeContribution() {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return hex(bytes);
}

function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function unhex(text) {
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** The card name of a card number (suit * 13 + rank; 52 LJ, 53 BJ). */
export function cardName(card) {
  if (card === 52) return "LJ";
  if (card === 53) return "BJ";
  return RANKS[card % 13] + SUITS[Math.floor(card / 13)];
}

/** The ruleset's deck, ascending card numbers (engine/rules.py `_tables`). */
export function deckOf(rules) {
  const removed = new Set();
  const players = rules.players || 4;
  if (players === 3 && !rules.jokers) removed.add(0); // 2C
  if (players === 5) [0, 13, ...(rules.jokers ? [26, 39] : [])].forEach((c) => removed.add(c));
  if (rules.jokers && rules.deuces_high) { removed.add(26); removed.add(13); } // 2H 2D
  else if (rules.jokers && players !== 3) { removed.add(0); removed.add(13); } // 2C 2D
  const deck = [];
  for (let c = 0; c < 52; c += 1) if (!removed.has(c)) deck.push(c);
  if (rules.jokers) deck.push(52, 53);
  return deck;
}

async function hmacKey(seed) {
  return crypto.subtle.importKey("raw", unhex(seed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

/** Stream of 32-bit words: HMAC-SHA256(seed, message + "/" + block), big-endian. */
function words(key, message) {
  let block = 0;
  let buffer = [];
  return async () => {
    if (!buffer.length) {
      const mac = new DataView(await crypto.subtle.sign("HMAC", key, enc.encode(`${message}/${block}`)));
      for (let i = 0; i < 32; i += 4) buffer.push(mac.getUint32(i, false));
      block += 1;
    }
    return buffer.shift();
  };
}

async function below(next, n) {
  const limit = 2 ** 32 - (2 ** 32 % n);
  for (;;) {
    const w = await next();
    if (w < limit) return w % n;
  }
}

function context(label, contributions) {
  return ["spades-deal-v1", label, ...contributions].join("/");
}

/** The deck permuted for hand `hand` (Fisher–Yates, last position first). */
export async function shuffled(deck, key, contributions, hand) {
  const cards = [...deck];
  const next = words(key, context(`hand/${hand}`, contributions));
  for (let i = cards.length - 1; i > 0; i -= 1) {
    const j = await below(next, i + 1);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

/** Check a finished game's public events; `mine` is the contribution this client sent.
 * Resolve to {ok: true, hands} or {ok: false, reason}. */
export async function verifyDeals(events, mine) {
  const started = events.find((e) => e.type === "GameStarted");
  const revealed = events.find((e) => e.type === "SeedRevealed");
  if (!started || started.scheme !== SCHEME) return { ok: false, reason: "this game's deals are not committed" };
  if (!revealed) return { ok: false, reason: "the server seed was not revealed" };
  const seed = revealed.server_seed;
  if (!/^[0-9a-f]{64}$/.test(seed)) return { ok: false, reason: "the revealed seed is malformed" };
  const digest = hex(new Uint8Array(await crypto.subtle.digest("SHA-256", unhex(seed))));
  if (digest !== started.commitment) return { ok: false, reason: "the revealed seed does not match the commitment" };
  const rules = started.rules || {};
  const players = rules.players || 4;
  const contributions = Array(players).fill("");
  for (const e of events) if (e.type === "SeedContributed") contributions[e.seat] = e.value;
  if (mine && !contributions.includes(mine)) return { ok: false, reason: "your contribution is not the one recorded" };
  const key = await hmacKey(seed);
  const dealerNext = words(key, context("dealer", []));
  if ((await below(dealerNext, players)) !== started.dealer) return { ok: false, reason: "the seed draws another first dealer" };
  const deck = deckOf(rules);
  let hands = 0;
  for (const e of events) {
    if (e.type !== "HandDealt") continue;
    hands += 1;
    const cards = await shuffled(deck, key, contributions, e.hand);
    if (e.stock && e.stock.length) {
      if (cards.map(cardName).join(" ") !== e.stock.join(" ")) return { ok: false, reason: `hand ${e.hand}: the stock differs` };
      continue;
    }
    const tricks = e.hands[0].length;
    for (let s = 0; s < players; s += 1) {
      const due = [];
      for (let k = (((s - e.dealer - 1) % players) + players) % players; k < players * tricks; k += players) due.push(cards[k]);
      due.sort((a, b) => a - b);
      const got = [...e.hands[s]].join(" ");
      if (due.map(cardName).join(" ") !== got) return { ok: false, reason: `hand ${e.hand}: seat ${s}'s cards differ` };
    }
  }
  return { ok: true, hands };
}
