// What one seat (or a spectator) knows of a game: a `view` snapshot folded with the events
// the gateway sends after it. Nothing here decides a rule: what the seat may do comes from the
// server (`legal`); whose turn it is for the other seats is followed from the events only to
// show it.

import { membersOf, seatName, teamName, teamOf } from "./cards.js";
import { playerName, signed } from "./ui.js";

const REASONS = {
  target: "reached the target",
  mercy: "the mercy rule",
  boston: "a Boston",
  hand_cap: "the hand limit",
};

export class Game {
  constructor(seat, players) {
    this.seat = seat;
    this.players = players || [];
    this.n = this.players.length || 4;
    this.rules = null;
    this.seq = 0;
    this.phase = "new";
    this.hand_number = 0;
    this.dealer = 0;
    this.turn = -1;
    this.hand = [];
    this.hand_hidden = false;
    this.hand_sizes = [];
    this.bids = [];
    this.blind = [];
    this.moe = []; // per seat: its bid is a Big or Little Moe
    this.face_up = []; // per seat: its power checks still held (public)
    this.leader = -1;
    this.trick = [];
    this.trickSeats = [];
    this.taken = [];
    this.scores = [];
    this.bags = [];
    this.winner = -1;
    this.reason = "";
    this.legal = null;
    this.deadline = null;
    this.lastTrick = null;
    this.result = null;
    this.scorecard = []; // one row per scored hand seen: {hand, sides: [{name, bid, took, points, score, bags}]}
    this.over = null;
    this.exchange = [];
    this.stock = 0;
    this.clock = null; // {seat, deadline (this machine's clock), bot} from the server's clock
    this.forced = -1; // suicide, forcing: the seat sent back to bid 4 or more
    this.commitment = ""; // committed deals: SHA-256 of the server seed (docs/FAIRNESS.md)
    this.contributors = [];
    this.contributions = [];
  }

  /** Whether this seat may still add its contribution to the deals (before hand 1). */
  owesContribution() {
    return Boolean(this.commitment) && this.seat >= 0 && this.hand_number === 0
      && this.phase !== "over" && this.contributors.includes(this.seat)
      && !this.contributions[this.seat];
  }

  /** Replace everything with a snapshot at `seq`. */
  applyView(view, seq) {
    this.seq = seq;
    if (view.players && view.players.length) {
      this.players = view.players;
      this.n = view.players.length;
    }
    for (const key of [
      "phase", "hand_number", "dealer", "turn", "hand_hidden", "leader", "winner", "reason",
    ]) {
      this[key] = view[key];
    }
    this.hand = [...view.hand];
    this.commitment = view.commitment || "";
    this.contributors = [...(view.contributors || [])];
    this.contributions = [...(view.contributions || [])];
    this.drawn = view.drawn || null; // two-player draw: the stock's top card, for the drawer only
    this.hand_sizes = [...view.hand_sizes];
    this.bids = [...view.bids];
    this.blind = [...view.blind];
    this.moe = view.moe && view.moe.length ? [...view.moe] : this.bids.map(() => false);
    this.face_up = (view.face_up || []).map((cards) => [...cards]);
    this.trick = [...view.trick];
    this.trickSeats = this.trick.map((_, i) => (view.leader + i) % this.n);
    this.taken = [...view.taken];
    this.scores = [...view.scores];
    this.bags = [...view.bags];
    this.legal = this.seat >= 0 && view.turn === this.seat && view.legal.length ? view.legal : null;
    if (view.phase === "over") this.over = this.over || this.finishedFrom(view.winner, view.reason, view.scores);
  }

  /** Fold one event (numbered `seq`); `hand` is the seat's whole hand when it changed.
   * Return notices for people ("East's time ran out"). */
  applyEvent(event, seq, hand) {
    this.seq = seq;
    this.legal = null;
    this.suggestion = null;
    this.clock = null;
    this.drawn = null;
    if (hand) this.hand = [...hand];
    const notes = [];
    const n = this.n;
    switch (event.type) {
      case "TableOpened":
        this.players = event.players;
        this.n = event.players.length;
        break;
      case "GameStarted":
        this.rules = event.rules;
        this.dealer = event.dealer;
        this.phase = "dealing";
        this.commitment = event.commitment || "";
        this.contributors = [...(event.contributors || [])];
        this.contributions = Array(this.n).fill("");
        this.scores = Array(this.n === 4 ? 2 : this.n).fill(0);
        this.bags = Array(this.n === 4 ? 2 : this.n).fill(0);
        break;
      case "SeedContributed":
        this.contributions[event.seat] = event.value;
        break;
      case "HandDealt":
        this.hand_number = event.hand;
        this.dealer = event.dealer;
        // a seat's or a spectator's deal carries the sizes; a finished game's, every hand
        this.hand_sizes = event.hand_sizes ? [...event.hand_sizes] : (event.hands || []).map((cards) => cards.length);
        this.bids = Array(n).fill(-1);
        this.blind = Array(n).fill(false);
        this.moe = Array(n).fill(false);
        this.forced = -1;
        this.face_up = (event.face_up || []).map((cards) => [...cards]);
        this.taken = Array(n).fill(0);
        this.trick = [];
        this.trickSeats = [];
        this.lastTrick = null;
        this.exchange = [];
        this.stock = event.stock_size || 0;
        this.hand_hidden = this.seat >= 0 && !hand;
        if (!hand && this.seat >= 0) this.hand = [];
        this.phase = this.stock > 0 && this.rules && this.rules.deal === "draw" ? "draw" : "bid";
        this.turn = (event.dealer + 1) % n;
        if (!this.scores.length) this.scores = Array(n === 4 ? 2 : n).fill(0);
        if (!this.bags.length) this.bags = Array(n === 4 ? 2 : n).fill(0);
        break;
      case "CardDrawn":
        this.hand_sizes[event.seat] += 1;
        this.stock = Math.max(0, this.stock - 2);
        this.turn = (event.seat + 1) % n;
        if (this.stock === 0) {
          this.phase = "bid";
          this.turn = (this.dealer + 1) % n;
        }
        break;
      case "BlindNilDeclined":
        if (event.seat === this.seat) this.hand_hidden = false;
        this.turn = event.seat;
        break;
      case "BlindNilDeclared":
        if (event.seat === this.seat) this.hand_hidden = false;
        this.bid(event.seat, 0, true);
        break;
      case "BidPlaced":
        this.bid(event.seat, event.tricks, event.blind, event.moe);
        break;
      case "CardsPassed": {
        this.hand_sizes[event.seat] -= event.count;
        this.hand_sizes[event.to_seat] += event.count;
        const i = this.exchange.findIndex(([g, r]) => g === event.seat && r === event.to_seat);
        if (i >= 0) this.exchange.splice(i, 1);
        if (this.exchange.length) this.turn = this.exchange[0][0];
        else if (this.bids.some((b) => b < 0)) {
          // the nil card exchange came in the middle of the bidding: it goes on
          this.phase = "bid";
          this.turn = this.nextBidder();
        } else this.startPlay();
        if (event.to_seat === this.seat && event.cards && event.cards.length) {
          notes.push(`${this.nameOf(event.seat)} passed you ${event.cards.length} card(s).`);
        }
        break;
      }
      case "CardPlayed":
        if (this.phase !== "play") this.phase = "play";
        if (!this.trick.length) this.leader = event.seat;
        this.trick.push(event.card);
        this.trickSeats.push(event.seat);
        if (this.hand_sizes[event.seat] > 0) this.hand_sizes[event.seat] -= 1;
        if (this.face_up[event.seat]) this.face_up[event.seat] = this.face_up[event.seat].filter((c) => c !== event.card);
        this.turn = (event.seat + 1) % n;
        break;
      case "TrickWon":
        this.lastTrick = { cards: [...event.cards], seats: [...this.trickSeats], winner: event.seat };
        this.taken[event.seat] = (this.taken[event.seat] || 0) + 1;
        this.trick = [];
        this.trickSeats = [];
        this.leader = event.seat;
        this.turn = event.seat;
        break;
      case "HandScored":
        this.result = this.handResult(event);
        this.scorecard = this.scorecard.filter((row) => row.hand !== event.hand)
          .concat([this.scorecardRow(event)]).sort((a, b) => a.hand - b.hand);
        this.scores = [...event.scores];
        this.bags = [...event.bags];
        this.taken = [...event.tricks];
        this.phase = "dealing";
        this.turn = -1;
        break;
      case "GameFinished":
        this.phase = "over";
        this.turn = -1;
        this.winner = event.winner;
        this.reason = event.reason;
        this.scores = [...event.scores];
        this.over = this.finishedFrom(event.winner, event.reason, event.scores, event);
        break;
      case "TurnTimedOut":
        notes.push(
          event.seat === this.seat
            ? "Your time ran out: the bot played for you."
            : `${this.nameOf(event.seat)}'s time ran out: the bot played.`,
        );
        break;
      case "TurnClockRestarted":
        notes.push(
          event.seat === this.seat
            ? "The table was unavailable for a moment: your turn starts again."
            : `The table was unavailable for a moment: ${this.nameOf(event.seat)}'s turn starts again.`,
        );
        break;
      case "SeatAbandoned":
        if (event.left) {
          notes.push(
            event.seat === this.seat
              ? "You left: a bot plays your seat for the rest of the game."
              : `${this.nameOf(event.seat)} left the table: a bot plays that seat now.`,
          );
          break;
        }
        notes.push(
          event.seat === this.seat
            ? "You timed out too often: a bot plays your seat for the rest of the game."
            : `${this.nameOf(event.seat)} timed out too often: a bot plays that seat now.`,
        );
        break;
    }
    return notes;
  }

  /** Return the seats in their bidding order this hand (RULES: clockwise, or partners). */
  biddingOrder() {
    const left = (this.dealer + 1) % this.n;
    if ((this.rules || {}).bidding_order === "partners") {
      return [left, (left + 2) % 4, (this.dealer + 2) % 4, this.dealer];
    }
    return Array.from({ length: this.n }, (_, i) => (left + i) % this.n);
  }

  nextBidder() {
    const next = this.biddingOrder().find((s) => this.bids[s] < 0);
    return next === undefined ? -1 : next;
  }

  bid(seat, tricks, blind, moe) {
    const r = this.rules || {};
    const partner = (seat + 2) % 4;
    const before = this.n === 4 ? this.bids[partner] : -1;
    this.bids[seat] = tricks;
    this.blind[seat] = !!blind;
    this.moe[seat] = !!moe;
    if (r.suicide_forcing && before >= 0 && before === tricks && this.forced !== seat) {
      // suicide, forcing: a copied bid sends the first partner to the opposite
      this.bids[partner] = tricks === 0 ? -1 : 0;
      this.forced = tricks === 0 ? partner : -1;
    } else if (this.forced === seat) {
      this.forced = -1;
    }
    this.turn = this.nextBidder();
    if (r.nil_exchange && tricks === 0 && !blind && this.n === 4 && before < 0 && this.forced !== partner) {
      // the nil card exchange (the server's your_turn says whether it really applies)
      const deficit = r.nil_exchange_deficit || 0;
      const side = seat % 2;
      const behind = (this.scores[1 - side] || 0) - (this.scores[side] || 0);
      if (!deficit || behind >= deficit) {
        this.exchange = r.nil_exchange_peek === false ? [[partner, seat], [seat, partner]] : [[seat, partner], [partner, seat]];
        this.phase = "pass";
        this.turn = this.exchange[0][0];
        return;
      }
    }
    if (this.bids.every((b) => b >= 0)) this.afterBidding();
  }

  afterBidding() {
    const r = this.rules || {};
    const give = r.blind_nil_exchange ?? 2;
    this.exchange = [];
    if (this.n === 4 && give > 0) {
      for (const s of this.biddingOrder()) {
        if (this.blind[s] && this.bids[s] === 0) this.exchange.push([s, (s + 2) % 4], [(s + 2) % 4, s]);
      }
    }
    if (this.exchange.length) {
      this.phase = "pass";
      this.turn = this.exchange[0][0];
    } else {
      this.startPlay();
    }
  }

  startPlay() {
    this.phase = "play";
    const r = this.rules || {};
    if (r.first_lead === "two_of_clubs") {
      this.turn = this.hand.includes("2C") ? this.seat : -1; // the holder of 2♣: unknown to others
    } else {
      this.turn = (this.dealer + 1) % this.n;
    }
    this.leader = this.turn;
  }

  /** The server's turn clock: `seat` is on turn after event `seq` until `deadline`. */
  applyClock(message) {
    if (message.seq < this.seq) return false;
    this.turn = message.seat;
    const local = Date.now() / 1000;
    // deadline null: an untimed table (no clock to count down)
    const deadline = message.deadline === null || message.deadline === undefined ? null : local + (message.deadline - message.now);
    this.clock = { seat: message.seat, deadline, bot: !!message.bot };
    return true;
  }

  /** Return the seconds left to the seat on turn, or null when no timer runs for it. */
  secondsLeft(seat) {
    const now = Date.now() / 1000;
    if (this.clock && this.clock.seat === seat) return this.clock.bot || this.clock.deadline === null ? null : this.clock.deadline - now;
    if (seat === this.seat && this.legal && this.deadline) return this.deadline - now;
    return null;
  }

  /** The seat is on turn: what it may send until `deadline` (unix seconds). */
  yourTurn(message) {
    if (message.seq < this.seq) return false; // a later event already moved the game on
    this.legal = message.legal;
    this.suggestion = message.suggestion || null; // the bot's advice, at a practice table only
    this.deadline = message.deadline;
    this.turn = this.seat;
    return true;
  }

  nameOf(seat) {
    return playerName(this.players[seat]) + (this.n === 4 ? ` (${seatName(seat, this.n)})` : "");
  }

  /** Return a side's contract in play: its members' bids ("4 + Nil"), their sum (nil and Moe
   *  aside) and the tricks they took so far; null before anyone of it bid. */
  sideBid(team) {
    const r = this.rules || {};
    const nilAllowed = r.nil_allowed !== false;
    const members = membersOf(team, this.n);
    const bid = members.filter((s) => this.bids[s] >= 0);
    if (!bid.length) return null;
    const words = bid.map((s) => (this.moe[s] ? (this.bids[s] === 8 ? "Big Moe" : "Little Moe")
      : this.bids[s] === 0 && nilAllowed ? (this.blind[s] ? "Blind nil" : "Nil") : `${this.blind[s] ? "B" : ""}${this.bids[s]}`));
    const total = bid.filter((s) => !(this.bids[s] === 0 && nilAllowed)).reduce((a, s) => a + this.bids[s], 0);
    const took = members.reduce((a, s) => a + (this.taken[s] || 0), 0);
    return { words: words.join(" + "), total, took, complete: bid.length === members.length };
  }

  /** Return one scorecard row of a scored hand: per side its bids, tricks, points, total. */
  scorecardRow(scored) {
    const sides = [];
    for (let t = 0; t < scored.points.length; t++) {
      const members = membersOf(t, this.n);
      const contract = this.sideBid(t);
      sides.push({
        name: teamName(t, this.n, this.players),
        bid: contract ? contract.words : "–",
        took: members.reduce((a, s) => a + (scored.tricks[s] || 0), 0),
        points: scored.points[t],
        score: scored.scores[t],
        bags: scored.bags[t],
      });
    }
    return { hand: scored.hand, sides };
  }

  /** Return the summary of a scored hand: per side, the contract, nils, bags and penalty. */
  handResult(scored) {
    const r = this.rules || {};
    const n = this.n;
    const nilAllowed = r.nil_allowed !== false;
    const sides = [];
    for (let t = 0; t < scored.points.length; t++) {
      const members = membersOf(t, n);
      const nils = members.filter((s) => nilAllowed && this.bids[s] === 0);
      const biders = members.filter((s) => !nils.includes(s));
      if (members.some((s) => this.moe[s])) {
        // a Moe: the side's contract is a run of tricks in a row; no bags
        const need = Math.max(...members.map((s) => this.bids[s]));
        const made = scored.points[t] > 0;
        sides.push({
          team: t,
          name: teamName(t, n, this.players),
          made,
          points: scored.points[t],
          score: scored.scores[t],
          bags: scored.bags[t],
          penalty: false,
          lines: [`${need === 8 ? "Big" : "Little"} Moe (${need} tricks in a row): ${made ? "made" : "set"} ${signed(scored.points[t])}`],
        });
        continue;
      }
      const contract = biders.reduce((a, s) => a + Math.max(0, this.bids[s]), 0);
      const took = biders.reduce((a, s) => a + scored.tricks[s], 0);
      const nilTricks = nils.reduce((a, s) => a + scored.tricks[s], 0);
      const made = took >= contract;
      const lines = [];
      if (biders.length) {
        lines.push(
          `Bid ${contract}, took ${took}: ${made ? "contract made" : "set"}` +
            (made && took > contract ? ` with ${took - contract} overtrick${took - contract === 1 ? "" : "s"}` : ""),
        );
      }
      for (const s of nils) {
        const value = (r.nil_value ?? 100) * (this.blind[s] ? 2 : 1);
        const ok = scored.tricks[s] === 0;
        lines.push(
          `${this.blind[s] ? "Blind nil" : "Nil"} by ${this.nameOf(s)}: ${ok ? "made" : `failed (${scored.tricks[s]} trick${scored.tricks[s] === 1 ? "" : "s"})`} ${signed(ok ? value : -value)}`,
        );
      }
      const before = this.bags[t] || 0;
      const after = scored.bags[t];
      const gained = r.bags === false ? 0 : (made && biders.length ? took - contract : 0) + nilTricks;
      const limit = r.bag_limit || 10;
      const penalties = r.bags === false ? 0 : Math.max(0, Math.round((before + gained - after) / limit));
      if (gained > 0 && r.bags !== false) lines.push(`${gained} bag${gained === 1 ? "" : "s"} this hand, ${after} carried`);
      if (penalties > 0) {
        lines.push(`Bag penalty ${signed(-(r.bag_penalty ?? 100) * penalties)} (${limit} bags reached)`);
      }
      sides.push({
        team: t,
        name: teamName(t, n, this.players),
        made: biders.length ? made : null,
        points: scored.points[t],
        score: scored.scores[t],
        bags: after,
        penalty: penalties > 0,
        lines,
      });
    }
    return { hand: scored.hand, sides };
  }

  finishedFrom(winner, reason, scores, event = {}) {
    const n = this.n;
    const sides = scores.map((score, t) => ({ name: teamName(t, n, this.players), score }));
    let headline;
    if (winner < 0) headline = "The game is a draw.";
    else {
      const mine = this.seat >= 0 && teamOf(this.seat, n) === winner;
      headline = `${teamName(winner, n, this.players)} ${n === 4 ? "win" : "wins"}` +
        (this.seat >= 0 ? (mine ? " — you won!" : " — you lost.") : ".");
    }
    return {
      winner,
      headline,
      reason: REASONS[reason] || reason,
      sides,
      rated: !!event.rated,
      ladder: event.ladder || "",
      abandoned: event.abandoned || [],
    };
  }
}
