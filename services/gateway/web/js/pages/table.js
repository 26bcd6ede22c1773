// The table: play a game at your seat (/#/table/GAME) or watch one (/#/watch/GAME).

import { ApiError, endSession, get, session } from "../api.js";
import {
  bidText, cardClass, cardFace, cardLabel, cardView, compass, ruleChanges, seatName, sortHand, teamName,
  tricksPerHand,
  teamOf,
} from "../cards.js";
import { makeContribution, verifyDeals } from "../fairness.js";
import { Game } from "../game.js";
import { rematchControl } from "../rematch.js";
import { GameSocket } from "../socket.js";
import { leaveControl } from "./lobby.js";
import { TALK_REFUSALS, TalkBox, playerMenu } from "../talk.js";
import {
  clock, fill, h, keepFocus, notify, num, playerName, ratingChangeLine, ratingText, showError, signed, status,
} from "../ui.js";

const PHASES = {
  new: "Waiting for the game to start",
  dealing: "Dealing",
  draw: "Drawing from the stock",
  bid: "Bidding",
  pass: "Blind nil card exchange",
  play: "Playing",
  over: "Game over",
};

function pace() {
  const stored = Number(localStorage.getItem("spades.pace"));
  return Number.isFinite(stored) && localStorage.getItem("spades.pace") !== null ? stored : 350;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Return the bid the keyboard starts on: a plain count of likely tricks (aces, guarded kings,
 *  high and long spades), moved to the nearest legal non-nil bid; nil only when it is the only
 *  legal bid. Enter then bids something sensible instead of the riskiest bid, nil. */
export function likelyBid(hand, bids) {
  const suits = {};
  for (const card of hand || []) (suits[card === "BJ" || card === "LJ" ? "S" : card[1]] ||= []).push(card[0]);
  let tricks = 0;
  for (const [suit, ranks] of Object.entries(suits)) {
    if (suit === "S") {
      tricks += ranks.filter((r) => r === "A" || r === "K" || r === "B" || r === "L").length;
      if (ranks.includes("Q") && ranks.length >= 3) tricks += 1;
      tricks += Math.max(0, ranks.length - 3);
    } else {
      if (ranks.includes("A")) tricks += 1;
      if (ranks.includes("K") && ranks.length >= 2 && ranks.length <= 5) tricks += 1;
    }
  }
  const legal = [...bids.keys()].filter((t) => t > 0);
  if (!legal.length) return bids.has(0) ? 0 : -1;
  return legal.reduce((best, t) => (Math.abs(t - tricks) < Math.abs(best - tricks) ? t : best), legal[0]);
}

/** Return the rating a seat shows at a game (`game`: its summary) from the player's profile:
 *  at a ranked table his rating on its ladder, and for a newcomer the 1500 everyone starts
 *  at, provisional ("1500?"); elsewhere his rating on a ladder if he has one. */
export function seatRating(profile, game) {
  const on = profile.ratings[game.ladder];
  if (on) return on;
  if (game.rated) return { display: 1500, provisional: true };
  const any = Object.values(profile.ratings)[0];
  return any || { none: true };
}

/** The card of a scored hand (`Game.handResult`, with its scorecard `row`): per side its bid
 *  and tricks, points, total and bags, nil outcomes and penalties; then `button` if any. */
export function resultCard(result, row, button = null) {
  return h("section", { class: "hand-card", "data-testid": "hand-card", role: "dialog", "aria-label": `Hand ${result.hand} is over` },
    h("h2", {}, `Hand ${result.hand} is over`),
    h("div", { class: "hand-card-sides" }, result.sides.map((side, t) =>
      h("div", { class: `result-side ${side.made === false ? "set" : "made"}`, "data-testid": `hand-card-side-${t}` },
        h("h3", {}, side.name),
        row ? h("p", {}, `Bid ${row.sides[t].bid}, took ${row.sides[t].took}`) : null,
        h("p", { class: "points" }, `${signed(side.points)} → ${num(side.score)} · ${side.bags} bag${side.bags === 1 ? "" : "s"}`),
        h("ul", {}, side.lines.map((line) => h("li", {}, line)))))),
    button);
}

/** Mount the table page for `gameId`; `watching` only watches. Return the cleanup. */
export function mountTable(root, gameId, { watching = false } = {}) {
  const me = session();
  let game = new Game(-1, []);
  let role = watching ? "spectator" : "seat";
  let summary = null;
  let ratings = {};
  let connection = "connecting";
  let selected = new Set(); // cards chosen for the blind-nil exchange
  let sending = false;
  let backup = null;
  let rating = null; // the rating change shown at game over
  let fairness = null; // the deal check at game over: {ok, hands} or {ok: false, reason}
  let rematch = null; // the rematch (or ranked "play again") control, made at game over
  let leaveBox = null; // Leave (unrated) or Resign (ranked): made once, it keeps its "sure?" step
  let hintShown = -1; // the seq whose suggestion the player asked to see
  let handCard = null; // the result of the hand just scored, shown until dismissed
  let openedAt = null; // the game's seq when this page opened: hands scored before get no card
  let pendingCard = null; // a hand scored while that seq was not known yet
  let pastScorecard = []; // the scorecard of the hands before this page was opened (public log)
  const contributionKey = `spades.contribution.${gameId}`;
  const queue = [];
  let pumping = false;

  const parts = {
    head: h("div", { class: "table-head" }),
    seats: {},
    center: h("div", { class: "trick", "aria-label": "Current trick", role: "group" }),
    side: h("aside", { class: "side", "aria-label": "Scores" }),
    action: h("section", { class: "action", "aria-label": "Your move", "aria-live": "polite" }),
    hand: h("div", { class: "hand", role: "group", "aria-label": "Your hand" }),
    compass: h("div", { class: "compass-box" }),
  };
  const talk = new TalkBox(gameId, (command) => socket.command(command));
  talk.refresh = () => render();
  for (const spot of ["bottom", "left", "top", "right", "topleft", "topright"]) {
    parts.seats[spot] = h("div", { class: `seat seat-${spot}` });
  }
  const felt = h(
    "div",
    { class: "felt" },
    parts.seats.top,
    parts.seats.topleft,
    parts.seats.topright,
    parts.seats.left,
    parts.center,
    parts.seats.right,
    parts.seats.bottom,
    parts.compass,
  );
  fill(
    root,
    h("div", { class: "table-page" }, parts.head, h("div", { class: "table-main" }, felt, parts.side), parts.action, parts.hand, talk.node),
  );
  parts.hand.addEventListener("keydown", arrowKeys);
  parts.action.addEventListener("keydown", arrowKeys);

  const socket = new GameSocket(gameId, {
    anonymous: watching,
    hints: !watching, // the server adds the bot's suggestion to your_turn at practice tables only
    onMessage: (message) => {
      if (message.type === "rematch") return rematch && rematch.told(message);
      queue.push(message);
      if (!pumping) pump();
    },
    onState: (text) => {
      connection = text;
      status(text === "live" || text === "closed" ? "" : `Connection: ${text}`);
      renderHead();
    },
  });
  window.__spades = { socket, game: () => game };

  let opening = 0; // retries while a just-matched game is not open yet
  let closed = false;

  async function loadSummary() {
    // a match is announced as soon as it is found: the table opens its game a moment later
    for (let attempt = 0; !closed; attempt++) {
      try {
        summary = await get(`/api/games/${encodeURIComponent(gameId)}`);
        game.rules = game.rules || summary.rules;
        talk.freeText = Boolean(summary.free_text_chat);
        loadRatings(summary);
        loadScorecard(summary);
        render();
        return;
      } catch (error) {
        const unknown = error instanceof ApiError && error.code === "unknown_game";
        if (unknown && (watching || attempt >= 60)) {
          // a watch link to no game (a just-matched seat waits for its table to open, above)
          noSuchGame();
          return;
        }
        if (!unknown) {
          showError(error, "Could not load the game");
          return;
        }
        await sleep(500);
      }
    }
  }
  function showCard(result) {
    handCard = result;
    setTimeout(() => { const next = parts.action.querySelector('[data-testid="hand-card-continue"]'); if (next) next.focus(); }, 0);
  }

  /** The hands scored before this page opened, from the public log (a spectator's fold). */
  async function loadScorecard(about) {
    try {
      const events = await get(`/api/games/${encodeURIComponent(gameId)}/events`);
      const past = new Game(-1, about.players);
      for (const item of events) past.applyEvent(item.event, item.seq);
      pastScorecard = past.scorecard;
      render();
    } catch (error) {
      // the scorecard then starts with the hands scored from now on
    }
  }

  /** There is no such game: say so, stop connecting (no spinner, no toasts). */
  function noSuchGame() {
    closed = true;
    socket.stop();
    clearInterval(ticker);
    fill(root, h("section", { class: "panel", "data-testid": "no-such-game" },
      h("h1", {}, "No such game"),
      h("p", {}, `There is no game ${gameId}: the link may be mistyped, or the game never started.`),
      h("a", { class: "btn", href: session() ? "#/lobby" : "#/login" }, "See the live games")));
  }

  /** Where the log stood when this page opened (the seat's own view, never a trick behind):
   *  the log a fresh page is sent first replays hands already seen, which get no card. */
  async function loadOpenedAt() {
    if (watching) return; // spectators see each hand's result in the side panel
    for (let attempt = 0; openedAt === null && !closed; attempt++) {
      try {
        openedAt = (await get(`/api/games/${encodeURIComponent(gameId)}/view`, { auth: true })).version;
      } catch (error) {
        // a just-matched game opens a moment later; past that, no card rather than a stale one
        if (attempt >= 20) openedAt = Infinity;
        else await sleep(500);
      }
    }
    if (pendingCard && pendingCard.seq > openedAt) showCard(pendingCard.result);
    pendingCard = null;
    render();
  }

  loadSummary();
  loadOpenedAt();
  socket.start();
  const ticker = setInterval(tick, 250);

  async function pump() {
    pumping = true;
    while (queue.length) {
      const message = queue.shift();
      let pause = 0;
      try {
        pause = handle(message);
      } catch (error) {
        showError(error, "The client could not follow the game");
      }
      if (!queue.length || pause) render();
      const wait = pace();
      if (pause && wait > 0 && queue.length < 12) await sleep(pause * wait);
    }
    pumping = false;
  }

  /** Fold one server message; return how long (in paces) to let people see it. */
  function handle(message) {
    switch (message.type) {
      case "subscribed": {
        role = message.role;
        if (game.seat !== message.seat || !game.players.length) {
          const rules = game.rules;
          game = new Game(message.seat, message.players);
          game.rules = rules || (summary && summary.rules);
        }
        return 0;
      }
      case "view":
        if (message.seq >= game.seq) {
          game.applyView(message.view, message.seq);
          if (!game.rules && summary) game.rules = summary.rules;
          contribute();
          if (game.phase === "over" && !fairness) {
            fairness = { ok: false, reason: "checking…", pending: true };
            checkDeals();
          }
        }
        return 0;
      case "event": {
        if (message.seq <= game.seq) return 0;
        const event = message.event;
        if (event.type === "Talked" || event.type === "TalkWithheld") {
          game.seq = message.seq; // talk moves no card: the turn and its legal moves stay
          talk.heard(event, message.seq, game);
          return 0;
        }
        for (const note of game.applyEvent(event, message.seq, message.hand)) notify(note, "info");
        sending = false;

        if (event.type === "HandDealt") selected = new Set();
        if (event.type === "HandScored" && game.result) {
          // the next bidding waits behind the card until dismissed; a hand scored before the
          // page opened (the log a fresh page is sent first) gets no card
          if (openedAt === null) pendingCard = { result: game.result, seq: message.seq };
          else if (message.seq > openedAt) showCard(game.result);
        }
        if (event.type === "GameFinished") {
          fetchRating(event);
          checkDeals();
        }
        if (event.type === "GameStarted") contribute();
        if (event.type === "CardPlayed" && event.seat !== game.seat) return 1;
        if (event.type === "TrickWon") return 2;
        return 0;
      }
      case "your_turn":
        // the draw's offered card is in the seat's view, not in your_turn: ask for it
        if (message.legal.some((c) => c.type === "DrawCard") && !game.drawn) socket.refresh();
        if (game.yourTurn(message)) {
          sending = false;
          backup = null;
          setTimeout(focusMove, 0);
        }
        return 0;
      case "clock":
        game.applyClock(message);
        return 0;
      case "match_found":
        if (message.game_id !== gameId) notify(`A ranked game is ready for you: #/table/${message.game_id}`, "info");
        return 0;
      case "ack":
        return 0;
      case "error":
        if (message.command_id && backup) {
          game.legal = backup;
          backup = null;
          sending = false;
        }
        if (["unauthenticated", "token_invalid", "token_expired", "refresh_invalid", "refresh_expired"].includes(message.code)) {
          // the session ended and cannot be renewed: log in, come back to this table
          endSession(message.code);
          return 0;
        }
        if (message.code === "unknown_game" && !message.command_id && opening < 60) {
          opening += 1;
          fill(parts.action, h("p", { class: "muted" }, "Waiting for the table to open the game…"));
          setTimeout(() => !closed && socket.subscribe(), 500);
          return 0;
        }
        notify(`${describe(message.code)}: ${message.message} (${message.code})`);
        if (message.code === "unknown_game") {
          fill(parts.action, h("p", { class: "form-error" }, `There is no game ${gameId}.`));
        }
        return 0;
      default:
        return 0;
    }
  }

  // -- committed deals (docs/FAIRNESS.md) ------------------------------------------------------

  /** Add this seat's random contribution to the deals, once, before hand 1. */
  function contribute() {
    if (watching || !game.owesContribution()) return;
    let value = sessionStorage.getItem(contributionKey);
    if (!value) {
      value = makeContribution();
      sessionStorage.setItem(contributionKey, value);
    }
    game.contributions[game.seat] = value; // sent: not again, whatever answers first
    socket.command({ type: "Contribute", value });
  }

  /** At the end: recompute every deal from the revealed seed and show the verdict. */
  async function checkDeals() {
    try {
      const events = (await get(`/api/games/${gameId}/events`)).map((e) => e.event);
      if (!events.some((e) => e.type === "GameStarted" && e.commitment)) return;
      fairness = await verifyDeals(events, watching ? "" : sessionStorage.getItem(contributionKey));
    } catch (error) {
      fairness = { ok: false, reason: `could not read the game's events (${error.message || error})` };
    }
    render();
  }

  function describe(code) {
    return {
      not_your_seat: "You have no seat here",
      out_of_turn: "Not your turn",
      must_follow_suit: "You must follow suit",
      spades_not_broken: "Spades are not broken",
      unknown_game: "No such game",
      unavailable: "The table did not answer",
      rate_limited: "Too fast",
      ...TALK_REFUSALS,
    }[code] || "The server refused";
  }

  function send(command) {
    if (sending || !game.legal) return;
    backup = game.legal;
    game.legal = null;
    sending = true;
    socket.command(command);
    render();
  }

  // -- ratings and game over ------------------------------------------------------------------

  async function loadRatings(found) {
    for (const id of found.players) {
      if (id.startsWith("bot:") || ratings[id]) continue;
      try {
        const profile = await get(`/api/players/${encodeURIComponent(id)}?history=1`);
        ratings[id] = seatRating(profile, found);
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 404)) showError(error, `Rating of ${id}`);
        ratings[id] = seatRating({ ratings: {} }, found);
      }
    }
    renderSeats();
  }

  async function fetchRating(finished) {
    if (!me || game.seat < 0 || !finished.rated) return;
    rating = { waiting: true };
    for (let i = 0; i < 60 && rating.waiting; i++) {
      try {
        const profile = await get(`/api/players/${encodeURIComponent(me.player_id)}?history=20`);
        const found = profile.history.find((entry) => entry.game_id === gameId);
        if (found) {
          rating = found;
          break;
        }
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 404)) {
          showError(error, "Could not read your new rating");
          rating = null;
          break;
        }
      }
      await sleep(1000);
    }
    if (rating && rating.waiting) rating = { missing: true };
    render();
  }

  // -- rendering ------------------------------------------------------------------------------

  function spotOf(seat) {
    const n = game.n;
    const base = game.seat >= 0 ? game.seat : n === 4 ? 2 : 0;
    const r = (seat - base + n) % n;
    if (n === 4) return ["bottom", "left", "top", "right"][r];
    if (n === 5) return ["bottom", "left", "topleft", "topright", "right"][r];
    if (n === 3) return ["bottom", "left", "right"][r];
    return ["bottom", "top"][r];
  }

  function render() {
    keepFocus(() => {
      renderHead();
      renderSeats();
      renderCenter();
      renderSide();
      renderAction();
      renderHand();
      talk.render(game, role);
    });
  }

  function renderHead() {
    const bits = [];
    if (summary && role === "seat" && !game.over && game.seat >= 0) {
      leaveBox = leaveBox || leaveControl(gameId, summary.rated, () => { location.hash = "#/lobby"; });
    } else {
      leaveBox = null;
    }
    if (summary) {
      bits.push(h("span", { class: "pill" }, summary.rated ? `Ranked · ${summary.ladder}` : summary.ladder === "practice" ? "Unrated practice" : "Unrated"));
      const changes = game.rules ? ruleChanges(game.rules) : [];
      if (changes.length) bits.push(h("span", { class: "rules", title: changes.join("\n") }, `House rules: ${changes.join("; ")}`));
    }
    fill(
      parts.head,
      h("h1", {}, role === "spectator" ? "Watching " : "Table ", h("small", {}, gameId.slice(0, 8))),
      ...bits,
      game.over
        ? h("span", { class: "conn conn-over", "data-testid": "connection" }, "■ game over")
        : h("span", { class: `conn conn-${connection === "live" ? "live" : "down"}`, "data-testid": "connection" },
            connection === "live" ? "● live" : `○ ${connection}`),
      role === "spectator" ? h("span", { class: "muted" }, "Spectators see each trick once it is complete (bids with the first trick).") : null,
      role === "spectator" && !session() ? h("a", { href: "#/login", "data-testid": "login-to-play" }, "Log in to play") : null,
      leaveBox,
      scoreStrip(),
    );
  }

  /** The scores in one line for the head, shown on narrow screens (where the scores panel sits
   *  below the hand): the score stays in sight while you play on a phone. */
  function scoreStrip() {
    const n = game.n;
    if (!game.players.length) return null;
    const sides = game.scores.length ? game.scores.length : n === 4 ? 2 : n;
    return h("span", { class: "score-strip", "data-testid": "score-strip", "aria-label": "Scores" },
      Array.from({ length: sides }, (_, t) => h("span", { class: game.seat >= 0 && teamOf(game.seat, n) === t ? "mine" : "" },
        `${teamName(t, n, game.players)} ${num(game.scores[t] ?? 0)}`,
        h("small", {}, ` (${game.bags[t] ?? 0} bag${(game.bags[t] ?? 0) === 1 ? "" : "s"})`))));
  }

  function renderSeats() {
    felt.classList.toggle("seats-5", game.n === 5);
    for (const spot of Object.keys(parts.seats)) fill(parts.seats[spot]).hidden = true;
    const n = game.n;
    fill(parts.compass, game.players.length ? compass(n, spotOf) : null);
    for (let seat = 0; seat < game.players.length; seat++) {
      const id = game.players[seat];
      const spot = parts.seats[spotOf(seat)];
      spot.hidden = false;
      const r = ratings[id];
      const onTurn = game.turn === seat && game.phase !== "over" && game.phase !== "dealing";
      const bid = game.bids[seat];
      const bidShown = bidText(bid, game.blind[seat], game.rules, game.moe[seat]);
      const faceUp = game.face_up[seat] || [];
      const taken = game.taken[seat] || 0;
      spot.className = `seat seat-${spotOf(seat)}${onTurn ? " on-turn" : ""}${seat === game.seat ? " mine" : ""}`;
      spot.dataset.seat = seat;
      fill(
        spot,
        h("div", { class: "seat-name" },
          h("a", { href: `#/player/${encodeURIComponent(id)}`, target: "_blank", rel: "noopener" }, playerName(id)),
          seat === game.seat ? h("span", { class: "you" }, "you") : null,
          me && !watching && seat !== game.seat && !id.startsWith("bot:") ? playerMenu(id, gameId, talk) : null,
          game.dealer === seat && game.hand_number ? h("span", { class: "dealer", title: "Dealer", "aria-label": "dealer" }, "D") : null),
        h("div", { class: "seat-meta" },
          n === 4 ? seatName(seat, n) : `Seat ${seat + 1}`,
          " · ",
          id.startsWith("bot:") ? "bot" : r && !r.none ? `rating ${ratingText(r.display, r.provisional)}` : "unrated"),
        h("div", { class: "bidtricks", "data-testid": `bidtricks-${seat}` },
          bid === undefined || bid < 0
            ? h("span", { class: "bid" }, game.phase === "bid" ? "no bid yet" : "")
            : [h("span", { class: "bid" }, `bid ${bidShown}`), " · ", h("span", { class: "took" }, `took ${taken}`)]),
        h("div", { class: "seat-foot" },
          game.hand_sizes.length ? `${game.hand_sizes[seat]} card${game.hand_sizes[seat] === 1 ? "" : "s"}` : "",
          onTurn ? h("span", { class: "turn", "data-timer": `seat-${seat}`, "data-label": seat === game.seat ? "your turn" : "to play" }, seat === game.seat ? " · your turn" : " · to play") : null),
        faceUp.length
          ? h("div", { class: "face-up", "data-testid": `face-up-${seat}`, "aria-label": `Face up: ${faceUp.map(cardLabel).join(", ")}` },
              faceUp.map((card) => cardView(card, "small")))
          : null,
      );
    }
    tick();
  }

  function renderCenter() {
    const cards = [];
    let caption = "";
    let shown = game.trick.map((card, i) => [card, game.trickSeats[i]]);
    let faded = false;
    if (!shown.length && game.lastTrick && game.phase === "play") {
      shown = game.lastTrick.cards.map((card, i) => [card, game.lastTrick.seats[i]]);
      caption = `${game.nameOf(game.lastTrick.winner)} won the trick`;
      faded = true;
    }
    for (const [card, seat] of shown) {
      cards.push(h("div", { class: `played at-${spotOf(seat)}${faded ? " faded" : ""}` },
        cardView(card), h("span", { class: "by" }, playerName(game.players[seat]))));
    }
    const phase = PHASES[game.phase] || game.phase;
    fill(
      parts.center,
      ...cards,
      h("div", { class: "trick-caption", "data-testid": "phase" },
        caption || (game.hand_number ? `Hand ${game.hand_number} · ${phase}` : phase)),
    );
  }

  function renderSide() {
    const n = game.n;
    const sides = game.scores.length ? game.scores.length : n === 4 ? 2 : n;
    const rows = [];
    for (let t = 0; t < sides; t++) {
      const mine = game.seat >= 0 && teamOf(game.seat, n) === t;
      const contract = game.phase === "bid" || game.phase === "play" || game.phase === "pass" ? game.sideBid(t) : null;
      rows.push(h("tr", { class: mine ? "mine" : "" },
        h("th", { scope: "row" }, teamName(t, n, game.players)),
        h("td", { "data-testid": `score-${t}` }, num(game.scores[t] ?? 0)),
        h("td", {}, String(game.bags[t] ?? 0)),
        h("td", { "data-testid": `side-bid-${t}` }, contract ? `${contract.words}${contract.words.includes("+") ? ` = ${contract.total}` : ""} · took ${contract.took}` : "–")));
    }
    const last = game.lastTrick
      ? h("div", { class: "last-trick", "data-testid": "last-trick" },
          h("h2", {}, "Last trick"),
          h("div", { class: "mini-trick" }, game.lastTrick.cards.map((card, i) =>
            h("span", { class: "mini" }, cardView(card, "small"), h("small", {}, playerName(game.players[game.lastTrick.seats[i]]))))),
          h("p", {}, `won by ${game.nameOf(game.lastTrick.winner)}`))
      : null;
    fill(
      parts.side,
      h("table", { class: "scores" },
        h("caption", {}, game.rules ? `Scores (to ${game.rules.target})` : "Scores"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Side"), h("th", { scope: "col" }, "Score"), h("th", { scope: "col" }, "Bags"),
          h("th", { scope: "col" }, "Bid in play"))),
        h("tbody", {}, rows)),
      last,
      game.result ? resultView(game.result) : null,
      scorecardView(),
    );
  }

  /** The card between two hands: per side its bid and tricks, points, bags, penalties and
   *  nil outcomes; the next bidding is shown once it is dismissed. */
  function handCardView(result) {
    const row = game.scorecard.find((r) => r.hand === result.hand);
    return resultCard(result, row, h("button", {
      class: "btn primary", type: "button", "data-testid": "hand-card-continue", "data-key": "hand-card-continue",
      onclick: () => { handCard = null; render(); setTimeout(focusMove, 0); },
    }, "Next hand"));
  }

  /** Every scored hand: per side bid/took, points and the running total. */
  function scorecardView() {
    const rows = new Map(pastScorecard.map((r) => [r.hand, r]));
    for (const r of game.scorecard) rows.set(r.hand, r);
    const hands = [...rows.values()].sort((a, b) => a.hand - b.hand);
    if (!hands.length) return null;
    const names = hands[hands.length - 1].sides.map((s) => s.name);
    return h("details", { class: "scorecard", "data-testid": "scorecard", open: true },
      h("summary", {}, "Scorecard"),
      h("table", { class: "scores" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Hand"), names.map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, hands.map((r) => h("tr", { "data-testid": `scorecard-hand-${r.hand}` },
          h("th", { scope: "row" }, String(r.hand)),
          r.sides.map((s) => h("td", { title: `${s.bags} bags` }, `${s.bid}/${s.took} · ${signed(s.points)} → ${num(s.score)}`)))))));
  }

  function resultView(result) {
    return h("section", { class: "result", "data-testid": "hand-result", "aria-label": `Hand ${result.hand} result` },
      h("h2", {}, `Hand ${result.hand} result`),
      result.sides.map((side) =>
        h("div", { class: `result-side ${side.made === false ? "set" : "made"}` },
          h("h3", {}, `${side.name}: ${signed(side.points)} → ${num(side.score)}`),
          h("ul", {}, side.lines.map((line) => h("li", {}, line))))));
  }

  function renderAction() {
    const legal = game.legal || [];
    const kinds = new Set(legal.map((c) => c.type));
    const panel = [];
    if (game.over) {
      panel.push(gameOver());
    } else if (handCard) {
      panel.push(handCardView(handCard));
    } else if (role === "spectator") {
      const shown = game.phase === "new" && game.turn >= 0 ? "The hand is under way" : PHASES[game.phase] || game.phase;
      panel.push(h("p", { class: "muted" }, `${shown}. ${game.turn >= 0 ? `${game.nameOf(game.turn)} to act.` : ""}`));
    } else if (kinds.has("DeclareBlindNil") || kinds.has("DeclineBlindNil") || (game.hand_hidden && game.phase === "bid")) {
      panel.push(blindOffer(legal));
    } else if (kinds.has("PassCards")) {
      panel.push(passPanel(legal));
    } else if (kinds.has("DrawCard")) {
      panel.push(h("div", { class: "prompt" },
        h("p", {}, "Draw: keep the top card of the stock (and discard the next), or discard it and keep the next."),
        game.drawn
          ? h("div", { class: "row", "data-testid": "drawn" }, "The top card: ", cardView(game.drawn))
          : h("p", { class: "muted" }, "Turning the top card…"),
        h("div", { class: "row" },
          h("button", { class: "btn", "data-key": "draw-keep", onclick: () => send({ type: "DrawCard", keep: true }) }, "Keep it"),
          h("button", { class: "btn", "data-key": "draw-discard", onclick: () => send({ type: "DrawCard", keep: false }) }, "Discard it"))));
    } else if (kinds.has("PlaceBid") || (game.phase === "bid" && game.seat >= 0)) {
      panel.push(bidRow(legal));
    } else if (kinds.has("PlayCard")) {
      panel.push(h("p", { class: "prompt" }, "Your turn: play a card."));
    } else if (sending) {
      panel.push(h("p", { class: "muted" }, "Sending…"));
    } else if (game.turn >= 0 && game.phase !== "dealing") {
      panel.push(h("p", { class: "muted" }, `${PHASES[game.phase] || ""}: waiting for ${game.nameOf(game.turn)}.`));
    }
    if (game.legal && game.suggestion && !game.over && role === "seat") panel.push(hintBox());
    if (game.legal && game.deadline) {
      panel.push(h("p", { class: "timer", "data-timer": "mine", "aria-live": "off" }, ""));
    }
    fill(parts.action, ...panel);
    tick();
  }

  /** The practice table's "Hint": what the searching bot would do here, shown on request. */
  function hintBox() {
    const advice = game.suggestion;
    if (hintShown !== game.seq) {
      return h("p", { class: "hint" }, h("button", {
        class: "btn", type: "button", "data-testid": "hint", "data-key": "hint",
        onclick: () => { hintShown = game.seq; render(); },
      }, "Hint"));
    }
    return h("p", { class: "hint", "data-testid": "hint-text", role: "status" }, `The bot would ${adviceText(advice)}.`);
  }

  function adviceText(advice) {
    switch (advice.type) {
      case "PlaceBid": return advice.moe ? `bid ${advice.tricks === 8 ? "Big Moe" : "Little Moe"}`
        : `bid ${bidText(advice.tricks, advice.blind, game.rules)}`;
      case "PlayCard": return `play the ${cardLabel(advice.card)}`;
      case "DeclareBlindNil": return "bid blind nil";
      case "DeclineBlindNil": return "look at the hand (no blind nil)";
      case "PassCards": return `pass ${advice.cards.map(cardLabel).join(" and ")}`;
      case "DrawCard": return advice.keep ? "keep the top card" : "discard the top card";
      default: return advice.type;
    }
  }

  function bidRow(legal) {
    const bids = new Map();
    const moes = legal.filter((c) => c.type === "PlaceBid" && c.moe);
    for (const c of legal) if (c.type === "PlaceBid" && !c.blind && !c.moe) bids.set(c.tricks, c);
    const most = tricksPerHand(game.rules, game.n);
    const nilAllowed = !game.rules || game.rules.nil_allowed !== false;
    const likely = likelyBid(game.hand, bids);
    const buttons = [];
    for (let t = 0; t <= most; t++) {
      const label = t === 0 && nilAllowed ? "Nil" : String(t);
      const command = bids.get(t);
      buttons.push(h("button", {
        class: `bid-btn${t === 0 ? " nil" : ""}${t === likely ? " likely" : ""}`,
        title: t === likely ? "A fair estimate of the tricks in your hand" : undefined,
        "data-key": `bid-${t}`,
        "aria-label": t === 0 && nilAllowed ? "Bid nil" : `Bid ${t}`,
        disabled: !command || sending,
        onclick: () => send(command),
      }, label));
    }
    const mine = game.bids[game.seat];
    const partner = (game.seat + 2) % 4;
    let prompt = bids.size || moes.length
      ? "Your bid: how many tricks will you take?"
      : mine >= 0 ? `You bid ${bidText(mine, game.blind[game.seat], game.rules, game.moe[game.seat])}.` : "Waiting for your turn to bid.";
    if (!bids.size && moes.length === 1 && game.moe[partner]) {
      prompt = `${game.nameOf(partner)} bid ${bidText(game.bids[partner], false, game.rules, true)}: second it, your side's whole contract.`;
    }
    const moeRow = moes.length
      ? h("div", { class: "bid-row", role: "group", "aria-label": "Moe" },
          moes.map((c) => h("button", {
            class: "bid-btn moe", "data-key": `moe-${c.tricks}`, disabled: sending,
            "aria-label": `Bid ${c.tricks === 8 ? "Big" : "Little"} Moe: ${c.tricks} tricks in a row`,
            onclick: () => send(c),
          }, `${c.tricks === 8 ? "Big" : "Little"} Moe (${c.tricks} in a row)`)))
      : null;
    return h("div", { class: "bidding" }, h("p", { class: "prompt" }, prompt),
      h("div", { class: "bid-row", role: "group", "aria-label": "Bid" }, buttons), moeRow);
  }

  function blindOffer(legal) {
    const blindBids = legal.filter((c) => c.type === "PlaceBid" && c.blind);
    const can = (type) => legal.some((c) => c.type === type);
    return h("div", { class: "prompt blind-offer", "data-testid": "blind-offer" },
      h("h2", {}, "Blind nil?"),
      h("p", {}, legal.length
        ? "Your side is far enough behind to bid blind nil before you see your cards (it scores double). Decide first: your hand stays face down until you do."
        : "Your hand stays face down until you choose."),
      h("div", { class: "row" },
        h("button", { class: "btn danger", "data-key": "blind-nil", disabled: !can("DeclareBlindNil") || sending,
          onclick: () => send({ type: "DeclareBlindNil" }) }, "Bid blind nil"),
        h("button", { class: "btn", "data-key": "blind-decline", disabled: !can("DeclineBlindNil") || sending,
          onclick: () => send({ type: "DeclineBlindNil" }) }, "Show my cards")),
      blindBids.length
        ? h("div", { class: "bid-row", role: "group", "aria-label": "Blind bid" },
            blindBids.map((c) => h("button", { class: "bid-btn", "data-key": `blind-${c.tricks}`, "aria-label": `Blind bid ${c.tricks}`,
              onclick: () => send(c) }, `B${c.tricks}`)))
        : null);
  }

  function passPanel(legal) {
    const options = legal.filter((c) => c.type === "PassCards");
    const count = options[0].cards.length;
    const key = [...selected].sort().join(",");
    const match = options.find((c) => [...c.cards].sort().join(",") === key);
    const partner = game.nameOf((game.seat + 2) % game.n);
    return h("div", { class: "prompt", "data-testid": "exchange" },
      h("p", {}, `${game.bids.some((b) => b < 0) ? "Nil card exchange" : "Blind nil exchange"}: choose ${count} card${count === 1 ? "" : "s"} to give ${partner} (${selected.size} chosen).`),
      h("button", { class: "btn", "data-key": "pass", disabled: !match || sending,
        onclick: () => { const cards = match.cards; selected = new Set(); send({ type: "PassCards", cards }); } },
        `Pass ${count} card${count === 1 ? "" : "s"}`));
  }

  function gameOver() {
    const over = game.over;
    const rated = summary ? summary.rated : over.rated;
    let change = null;
    if (rated && game.seat >= 0) {
      if (!rating || rating.waiting) change = h("p", { class: "muted" }, "Waiting for the rating service…");
      else if (rating.missing) change = h("p", {}, "Your rating change has not arrived yet: see your profile later.");
      else {
        const won = over.winner >= 0 ? teamOf(game.seat, game.n) === over.winner : null;
        change = h("p", { class: "rating-change", "data-testid": "rating-change" },
          `Your rating: ${ratingChangeLine(rating, { won, abandoned: over.abandoned.includes(game.seat) })}`);
      }
    } else if (!rated) {
      const practice = !summary || summary.ladder === "practice";
      change = h("p", { class: "muted" }, `${practice ? "Practice" : "Unrated"} game: no rating change.`);
    }
    return h("section", { class: "game-over", "data-testid": "game-over" },
      h("h2", {}, "Game over"),
      h("p", { class: "headline" }, over.headline, over.reason ? ` (${over.reason})` : ""),
      h("p", {}, over.sides.map((s) => `${s.name} ${num(s.score)}`).join(" · ")),
      change,
      fairness && !fairness.pending && h("p", { class: fairness.ok ? "fair" : "form-error", "data-testid": "deals-verified" },
        fairness.ok
          ? `Deals verified: all ${fairness.hands} hands are the ones the revealed seed and the players' contributions deal.`
          : `Deals NOT verified: ${fairness.reason}.`),
      role === "seat" && game.seat >= 0 && !watching
        ? (rematch = rematch || rematchControl(gameId, { rated, ladder: summary ? summary.ladder : "standard" })).node
        : null,
      h("p", { class: "row" },
        h("a", { class: "btn", href: `#/replay/${gameId}` }, "Replay this game"),
        h("a", { class: "btn", href: "#/lobby" }, "Back to the lobby")));
  }

  function renderHand() {
    const legal = game.legal || [];
    const playable = new Set(legal.filter((c) => c.type === "PlayCard").map((c) => c.card));
    const passable = new Set(legal.filter((c) => c.type === "PassCards").flatMap((c) => c.cards));
    if (role === "spectator" || game.seat < 0) {
      parts.hand.hidden = true;
      return;
    }
    parts.hand.hidden = false;
    if (game.hand_hidden) {
      const size = game.hand_sizes[game.seat] || 13;
      fill(parts.hand, h("p", { class: "muted" }, `Your ${size} cards are face down until you choose.`),
        h("div", { class: "cards" }, Array.from({ length: size }, () => h("span", { class: "card back", "aria-hidden": "true" }))));
      parts.hand.dataset.count = "0";
      return;
    }
    const cards = sortHand(game.hand, game.rules).map((card) => {
      const choosing = passable.size > 0;
      const chosen = selected.has(card);
      const enabled = !sending && (choosing ? passable.has(card) : playable.has(card));
      const hinted = hintShown === game.seq && game.suggestion && game.suggestion.type === "PlayCard" && game.suggestion.card === card;
      return h("button", {
        class: `${cardClass(card)}${chosen ? " chosen" : ""}${enabled ? " legal" : ""}${hinted ? " hinted" : ""}`,
        "data-key": `card-${card}`,
        "data-card": card,
        "aria-label": cardLabel(card),
        "aria-pressed": choosing ? String(chosen) : false,
        disabled: !enabled,
        onclick: () => {
          if (choosing) {
            if (chosen) selected.delete(card);
            else selected.add(card);
            render();
          } else {
            send({ type: "PlayCard", card });
          }
        },
      }, cardFace(card));
    });
    parts.hand.dataset.count = String(game.hand.length);
    fill(parts.hand, h("div", { class: "cards", "data-testid": "hand" }, cards));
  }

  function tick() {
    for (const node of root.querySelectorAll("[data-timer]")) {
      const which = node.dataset.timer;
      const seat = which === "mine" ? game.seat : Number(which.slice(5));
      const left = game.secondsLeft(seat);
      if (which === "mine") {
        node.textContent = left === null ? "" : `Time left: ${clock(left)}`;
      } else {
        node.textContent = ` · ${node.dataset.label}${left === null ? "" : ` ${clock(left)}`}`;
      }
      node.classList.toggle("hurry", left !== null && left < 8);
    }
  }

  /** Put the focus on the first thing to do when it becomes your turn (keyboard play). */
  function focusMove() {
    const active = document.activeElement;
    if (active && active !== document.body && !root.contains(active)) return;
    if (active && active.tagName === "A") return;
    const target = root.querySelector('[data-testid="hand-card-continue"]')
      || root.querySelector(".bid-row button.likely:not([disabled])")
      || root.querySelector('.hand button.legal, .bid-row button:not([disabled]), .action .btn:not([disabled]):not([data-key="hint"])');
    if (target && (!active || active === document.body || active.disabled || !active.isConnected || parts.hand.contains(active) || parts.action.contains(active))) {
      target.focus({ preventScroll: true });
    }
  }

  function arrowKeys(event) {
    if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key)) return;
    const group = event.currentTarget.contains(document.activeElement) ? document.activeElement.closest('[role="group"]') : null;
    if (!group) return;
    const buttons = [...group.querySelectorAll("button:not([disabled])")];
    if (!buttons.length) return;
    const at = buttons.indexOf(document.activeElement);
    let next = 0;
    if (event.key === "ArrowRight") next = at < 0 ? 0 : (at + 1) % buttons.length;
    if (event.key === "ArrowLeft") next = at < 0 ? buttons.length - 1 : (at - 1 + buttons.length) % buttons.length;
    if (event.key === "End") next = buttons.length - 1;
    buttons[next].focus();
    event.preventDefault();
  }

  return () => {
    closed = true;
    clearInterval(ticker);
    socket.stop();
    status("");
    if (window.__spades && window.__spades.socket === socket) delete window.__spades;
  };
}
