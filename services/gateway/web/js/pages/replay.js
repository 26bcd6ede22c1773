// The replay (#/replay/GAME?at=N): any game step by step, every hand face up once it is
// finished. Each step has its own URL, so a step can be shared. `from=SEAT` turns the table so
// that seat sits at the bottom (default: your own seat if you played, else South), as at the
// table itself: the compass names of the seats never change, only where they are drawn.

import { get, session } from "../api.js";
import { bidText, cardText, cardView, compass, ruleChanges, seatName, sortHand, teamName } from "../cards.js";
import { Game } from "../game.js";
import { fill, h, num, playerName, showError, signed, when } from "../ui.js";
import { reviewPanel } from "./review.js";
import { resultCard } from "./table.js";
import { phrase, talkLine } from "../talk.js";

/** Mount the replay of `gameId` at the step in `query` (`at`); return {cleanup, update}. */
export function mountReplay(root, gameId, query) {
  let summary = null;
  let events = [];
  let at = 0;
  let from = -1; // the seat drawn at the bottom
  let fromAsked = false; // chosen in the address (kept there while stepping), not the default
  let loaded = false;
  const states = new Map(); // at -> StateAt
  let request = 0;

  const caption = h("p", { class: "step-caption", "data-testid": "step-caption", "aria-live": "polite" });
  const board = h("div", { class: "replay-board" });
  const controls = h("div", { class: "replay-controls" });
  const jumps = h("div", { class: "jumps" });
  const head = h("div", { class: "table-head" }, h("h1", {}, "Replay ", h("small", {}, gameId.slice(0, 8))));
  const review = reviewPanel(gameId, (seat) => who(seat));
  fill(root, h("div", { class: "replay", "aria-label": "Replay" }, head, controls, caption, board, jumps, review.box));

  const onKey = (event) => {
    if (event.target.closest("input, select, textarea")) return;
    const moves = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: events.length };
    if (event.key in moves && !event.altKey && !event.ctrlKey && !event.metaKey) {
      go(moves[event.key]);
      event.preventDefault();
    }
  };
  document.addEventListener("keydown", onKey);

  Promise.all([get(`/api/games/${encodeURIComponent(gameId)}`), get(`/api/games/${encodeURIComponent(gameId)}/events`)])
    .then(([found, list]) => {
      summary = found;
      events = list;
      loaded = true;
      renderHead();
      update(query);
    })
    .catch((error) => {
      showError(error, "Could not load the replay");
      fill(board, h("p", { class: "form-error" }, `Could not load the replay: ${error.words || error.message}`));
    });

  function go(step, seat = fromAsked ? from : -1) {
    const target = Math.max(0, Math.min(events.length, step));
    location.hash = `#/replay/${gameId}?at=${target}${seat >= 0 ? `&from=${seat}` : ""}`;
  }

  /** The seat drawn at the bottom: `from` in the address, else your own seat, else South. */
  function bottomSeat(params) {
    const count = n();
    const asked = Number(params.get("from"));
    if (params.get("from") !== null && Number.isInteger(asked) && asked >= 0 && asked < count) return asked;
    const me = session();
    const mine = me ? players().indexOf(me.player_id) : -1;
    if (mine >= 0) return mine;
    return count === 4 ? 2 : 0;
  }

  function update(params) {
    if (!loaded) return;
    const raw = params.get("at");
    const wanted = raw === null ? 0 : Number(raw);
    if (raw === null || !Number.isInteger(wanted) || wanted < 0 || wanted > events.length) {
      location.replace(`#/replay/${gameId}?at=${Math.max(0, Math.min(events.length, Number.isInteger(wanted) ? wanted : 0))}`);
      return;
    }
    at = wanted;
    from = bottomSeat(params);
    fromAsked = params.get("from") !== null && String(from) === params.get("from");
    renderControls();
    review.render(at);
    show(at);
  }

  async function show(step) {
    const mine = ++request;
    let state = states.get(step);
    if (!state) {
      try {
        state = await get(`/api/games/${encodeURIComponent(gameId)}/state?at=${step}`);
      } catch (error) {
        showError(error, `Could not load step ${step}`);
        return;
      }
      states.set(step, state);
    }
    if (mine !== request) return; // a later step was asked for meanwhile
    renderBoard(state, step);
  }

  // -- what happened, in words ----------------------------------------------------------------

  const players = () => (summary ? summary.players : []);
  const n = () => players().length || 4;
  const who = (seat) => `${playerName(players()[seat])}${n() === 4 ? ` (${seatName(seat, 4)})` : ""}`;

  /** Return the hand number, the trick number within it and the trick's plays at a step,
   *  the seats whose bid this hand was blind, and whether the game is over. */
  function context(step) {
    let hand = 0;
    let tricks = 0;
    let plays = [];
    let last = null;
    let blind = [];
    let over = false;
    for (const item of events.slice(0, step)) {
      const e = item.event;
      if (item.type === "HandDealt") {
        hand = e.hand;
        tricks = 0;
        plays = [];
        last = null;
        blind = [];
      } else if (item.type === "BlindNilDeclared" || (item.type === "BidPlaced" && e.blind)) {
        blind[e.seat] = true;
      } else if (item.type === "GameFinished") {
        over = true;
      } else if (item.type === "CardPlayed") {
        plays.push([e.card, e.seat]);
      } else if (item.type === "TrickWon") {
        tricks += 1;
        last = { plays, winner: e.seat, number: tricks };
        plays = [];
      }
    }
    return { hand, tricks, plays, last, blind, over };
  }

  function describe(item, ctx) {
    if (!item) return "Before the first event.";
    const e = item.event;
    switch (item.type) {
      case "TableOpened": return `Table opened: ${e.players.map(playerName).join(", ")}${e.rated ? ` (ranked, ${e.ladder})` : " (unrated)"}.`;
      case "GameStarted": return e.commitment
        ? `Game started; ${who(e.dealer)} deals first. Deals committed: SHA-256 of the server seed is ${e.commitment}.`
        : `Game started; ${who(e.dealer)} deals first.`;
      case "SeedContributed": return `${who(e.seat)} added a random contribution to the deals.`;
      case "SeedRevealed": return `Game over: the server seed ${e.server_seed} is revealed, so anyone can check every deal.`;
      case "HandDealt": return `Hand ${e.hand} dealt by ${who(e.dealer)}.`;
      case "BidPlaced": return `${who(e.seat)} bid ${bidText(e.tricks, e.blind, summary && summary.rules, e.moe)}.`;
      case "BlindNilDeclared": return `${who(e.seat)} bid blind nil.`;
      case "BlindNilDeclined": return `${who(e.seat)} declined blind nil and looked at the hand.`;
      case "CardsPassed": return `${who(e.seat)} passed ${e.cards ? e.cards.map(cardText).join(" ") : `${e.count} cards`} to ${who(e.to_seat)}.`;
      case "CardDrawn": return `${who(e.seat)} drew${e.kept ? `: kept ${cardText(e.kept)}, discarded ${cardText(e.discarded)}` : ""}.`;
      case "CardPlayed": return `${who(e.seat)} played ${cardText(e.card)}.`;
      case "TrickWon": return `${who(e.seat)} won trick ${ctx.tricks}.`;
      case "HandScored": return `Hand ${e.hand} scored: ${e.points.map((p, t) => `${teamName(t, n(), players())} ${signed(p)}`).join(", ")}.`;
      case "GameFinished": return e.reason === "abandoned" ? "The table closed: nobody was left to play at it." : e.winner < 0 ? "Game over: a draw." : `Game over: ${teamName(e.winner, n(), players())} won (${e.reason}).`;
      case "TurnTimedOut": return `${who(e.seat)}'s time ran out; the bot played.`;
      case "Talked": return `${who(e.seat)} said${e.to === "partner" ? " to partner" : ""}: “${phrase(e)}”`;
      case "TalkWithheld": return "Something was said that only the table heard (shown once the game is over).";
      case "TurnClockRestarted": return `${who(e.seat)}'s turn started again after an outage (+${e.seconds} s).`;
      case "SeatAbandoned": return e.left ? `${who(e.seat)} left the table; a bot plays the seat.` : `${who(e.seat)} timed out too often; a bot plays the seat.`;
      default: return item.type;
    }
  }

  // -- rendering ------------------------------------------------------------------------------

  function renderHead() {
    const changes = ruleChanges(summary.rules);
    fill(head,
      h("h1", {}, "Replay ", h("small", {}, gameId.slice(0, 8))),
      h("span", { class: "pill" }, summary.rated ? `Ranked · ${summary.ladder}` : "Unrated"),
      summary.finished ? h("span", { class: "muted" }, "finished: every hand face up") : h("span", { class: "muted" }, "in progress: public part only, up to the last complete trick"),
      changes.length ? h("span", { class: "rules" }, `House rules: ${changes.join("; ")}`) : null,
      events.length ? h("span", { class: "muted" }, `started ${when(events[0].recorded_at)}`) : null);
  }

  function renderControls() {
    const last = events.length;
    const slider = h("input", { type: "range", min: 0, max: last, value: at, "aria-label": "Step", onchange: (e) => go(Number(e.target.value)) });
    fill(controls,
      h("button", { class: "btn", "aria-label": "First step", "data-key": "first", disabled: at === 0, onclick: () => go(0) }, "« First"),
      h("button", { class: "btn", "aria-label": "Previous step", "data-key": "prev", disabled: at === 0, onclick: () => go(at - 1) }, "◀ Prev"),
      h("button", { class: "btn primary", "aria-label": "Next step", "data-key": "next", disabled: at >= last, onclick: () => go(at + 1) }, "Next ▶"),
      h("button", { class: "btn", "aria-label": "Last step", "data-key": "last", disabled: at >= last, onclick: () => go(last) }, "Last »"),
      slider,
      h("span", { class: "muted" }, `${at} / ${last}`),
      h("span", { class: "turn-table", role: "group", "aria-label": "Seen from" }, "Seen from: ",
        players().map((id, seat) => h("button", {
          class: `bid-btn${seat === from ? " primary" : ""}`, "data-key": `from-${seat}`, "aria-pressed": String(seat === from),
          title: `Turn the table so ${playerName(id)} sits at the bottom`, onclick: () => go(at, seat),
        }, n() === 4 ? seatName(seat, 4) : playerName(id)))));
    // keep the keyboard where it was: the button pressed is rebuilt
    const key = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    if (key) {
      const again = controls.querySelector(`[data-key="${key}"]`);
      if (again && !again.disabled) again.focus();
    }

    const handStarts = events.filter((e) => e.type === "HandDealt").map((e) => [e.event.hand, e.seq]);
    const ctx = context(at);
    const current = ctx.hand || (handStarts[0] ? handStarts[0][0] : 0);
    const trickEnds = [];
    let inHand = 0;
    let count = 0;
    for (const item of events) {
      if (item.type === "HandDealt") { inHand = item.event.hand; count = 0; }
      if (item.type === "TrickWon" && inHand === current) trickEnds.push([++count, item.seq]);
    }
    fill(jumps,
      h("h2", {}, "Jump to"),
      h("div", { class: "jump", role: "group", "aria-label": "Hands" },
        handStarts.map(([hand, seq]) => h("button", { class: `btn${hand === current ? " primary" : ""}`, "aria-label": `Hand ${hand}`, onclick: () => go(seq) }, `Hand ${hand}`))),
      trickEnds.length ? h("div", { class: "jump", role: "group", "aria-label": `Tricks of hand ${current}` },
        h("span", { class: "muted" }, `Hand ${current}, trick:`),
        trickEnds.map(([k, seq]) => h("button", { class: "bid-btn", "aria-label": `Hand ${current}, trick ${k}`, onclick: () => go(seq) }, String(k)))) : null);
  }

  function renderBoard(state, step) {
    const ctx = context(step);
    const item = step > 0 ? events[step - 1] : null;
    caption.textContent = `Step ${step}${ctx.hand ? ` · hand ${ctx.hand}` : ""}: ${describe(item, ctx)}`;
    const count = n();
    const spots = count === 4 ? ["bottom", "left", "top", "right"]
      : count === 5 ? ["bottom", "left", "topleft", "topright", "right"]
      : count === 3 ? ["bottom", "left", "right"] : ["bottom", "top"];
    const spotOf = (seat) => spots[(seat - Math.max(0, from) + count) % count];
    const seats = players().map((id, seat) => {
      const cards = state.face_up && state.hands[seat] ? sortHand(state.hands[seat], summary.rules) : null;
      return h("div", { class: `seat seat-${spotOf(seat)}${state.turn === seat && state.phase !== "over" ? " on-turn" : ""}` },
        h("div", { class: "seat-name" }, h("a", { href: `#/player/${encodeURIComponent(id)}` }, playerName(id)),
          state.dealer === seat && state.hand_number ? h("span", { class: "dealer", "aria-label": "dealer" }, "D") : null),
        h("div", { class: "seat-meta" }, count === 4 ? seatName(seat, count) : `Seat ${seat + 1}`),
        h("div", { class: "bidtricks", "data-testid": `bidtricks-${seat}` },
          state.bids[seat] === undefined || state.bids[seat] < 0
            ? h("span", { class: "bid" }, state.phase === "bid" ? "no bid yet" : "")
            : [h("span", { class: "bid" }, `bid ${bidText(state.bids[seat], Boolean(ctx.blind[seat]), summary.rules, (state.moe || [])[seat])}`), " · ",
                h("span", { class: "took" }, `took ${state.taken[seat] ?? 0}`)]),
        !cards && state.power_checks && (state.power_checks[seat] || []).length
          ? h("div", { class: "face-up", "aria-label": "Face up" }, state.power_checks[seat].map((c) => cardView(c, "small")))
          : null,
        cards
          ? h("div", { class: "open-hand", "aria-label": `${playerName(id)}'s hand` }, cards.map((c) => cardView(c)))
          : h("div", { class: "seat-foot" }, `${state.hand_sizes[seat] ?? 0} cards`));
    });
    let shown = ctx.plays;
    let faded = false;
    let trickCaption = "";
    if (!shown.length && ctx.last && item && item.type === "TrickWon") {
      shown = ctx.last.plays;
      faded = true;
      trickCaption = `${who(ctx.last.winner)} won trick ${ctx.last.number}`;
    }
    const center = h("div", { class: "trick", role: "group", "aria-label": "Trick" },
      shown.map(([card, seat]) => h("div", { class: `played at-${spotOf(seat)}${faded ? " faded" : ""}` }, cardView(card), h("span", { class: "by" }, playerName(players()[seat])))),
      h("div", { class: "trick-caption", "data-testid": "replay-phase" },
        trickCaption || (ctx.over || state.phase === "over" ? "Game over" : state.hand_number ? `Hand ${state.hand_number} · ${state.phase}` : state.phase)));
    const felt = h("div", { class: `felt${count === 5 ? " seats-5" : ""}` }, ...seats, center, compass(count, spotOf));
    const sides = state.scores.length;
    const scores = h("table", { class: "scores" },
      h("caption", {}, "Scores"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Side"), h("th", { scope: "col" }, "Score"), h("th", { scope: "col" }, "Bags"))),
      h("tbody", {}, Array.from({ length: sides }, (_, t) =>
        h("tr", {}, h("th", { scope: "row" }, teamName(t, count, players())), h("td", {}, num(state.scores[t])), h("td", {}, String(state.bags[t]))))));
    const last = ctx.last && !faded
      ? h("div", { class: "last-trick" }, h("h2", {}, `Last trick (${ctx.last.number})`),
          h("div", { class: "mini-trick" }, ctx.last.plays.map(([card, seat]) => h("span", { class: "mini" }, cardView(card, "small"), h("small", {}, playerName(players()[seat]))))),
          h("p", {}, `won by ${who(ctx.last.winner)}`))
      : null;
    // a scored hand: the same card as at the table, and the scorecard so far
    const folded = new Game(-1, players());
    folded.rules = summary.rules;
    try {
      for (const past of events.slice(0, step)) folded.applyEvent(past.event, past.seq);
    } catch (error) {
      folded.result = null; // the card and scorecard are extras: the board stands without them
      folded.scorecard = [];
    }
    const card = item && item.type === "HandScored" && folded.result
      ? resultCard(folded.result, folded.scorecard.find((r) => r.hand === folded.result.hand))
      : null;
    const scorecard = folded.scorecard.length
      ? h("details", { class: "scorecard", "data-testid": "scorecard", open: true }, h("summary", {}, "Scorecard"),
          h("table", { class: "scores" },
            h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Hand"), folded.scorecard[0].sides.map((s) => h("th", { scope: "col" }, s.name)))),
            h("tbody", {}, folded.scorecard.map((r) => h("tr", { "data-testid": `scorecard-hand-${r.hand}` }, h("th", { scope: "row" }, String(r.hand)),
              r.sides.map((s) => h("td", {}, `${s.bid}/${s.took} · ${signed(s.points)} → ${num(s.score)}`)))))))
      : null;
    // what was said up to this step (all of it once the game is over: the replay is public)
    const said = events.slice(0, step).filter((i) => i.event.type === "Talked");
    const talk = said.length
      ? h("details", { class: "talk", "data-testid": "replay-talk", open: true }, h("summary", {}, "Table talk"),
          h("ol", { class: "talk-log" }, said.slice(-30).map((i) => talkLine(i.event, players(), i.seq))))
      : null;
    fill(board, card, h("div", { class: "table-main" }, felt, h("aside", { class: "side" }, scores, last, scorecard, talk)));
  }

  return {
    cleanup: () => {
      document.removeEventListener("keydown", onKey);
      review.stop();
    },
    update,
  };
}
