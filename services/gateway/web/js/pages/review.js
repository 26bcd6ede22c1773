// The review of a finished game beside its replay (GET /api/games/GAME/analysis): each seat's
// accuracy, the verdict on the decision the current step shows, and every flagged decision
// (an inaccuracy, mistake or blunder, or a named error) as a link to its own step. A rated
// game's review also has each hand's par (strong bots in every seat) and the game's margin
// split into what the cards were worth and what the play made of them.
//
// While the bot tier works, the progress is shown ("3 of 14 steps"); the review appears
// without a reload: a signed-in reader hears `analysis_ready` over the WebSocket, and the
// panel asks again every few seconds as a fallback.

import { api, get, session } from "../api.js";
import { GameSocket } from "../socket.js";
import { h, fill } from "../ui.js";

const RANKS = "23456789TJQKA";
const SUITS = "CDHS";
/** An engine card number as the wire names it ("QS", "LJ", "BJ"). */
const cardName = (c) => (c === 52 ? "LJ" : c === 53 ? "BJ" : RANKS[c % 13] + SUITS[Math.floor(c / 13)]);

/** Return {box, render(step), stop()}: the review panel of `gameId`; `who(seat)` names a seat. */
export function reviewPanel(gameId, who) {
  const box = h("section", { class: "review", "aria-label": "Review", "data-testid": "review" });
  let review = null;
  let status = "loading";
  let progress = { done: 0, of: 0 };
  let failure = { message: "", retryAt: 0 };
  let step = 0;
  let timer = null;
  let stopped = false;
  let listener = null;

  function listen() {
    if (listener || !session()) return;
    listener = new GameSocket(null, {
      onMessage: (message) => {
        if (message.type === "analysis_ready" && message.game_id === gameId && status !== "ready") {
          clearTimeout(timer);
          load();
        }
      },
      onState: () => {},
    }).start();
  }

  function quiet() {
    if (listener) listener.stop();
    listener = null;
  }

  /** GET the review; `again`: POST, asking for a failed one anew. */
  function load(again = false) {
    const path = `/api/games/${encodeURIComponent(gameId)}/analysis`;
    (again ? api("POST", path, undefined, { auth: Boolean(session()) }) : get(path))
      .then((answer) => {
        if (stopped) return;
        status = answer.status;
        progress = { done: answer.done || 0, of: answer.of || 0 };
        if (status === "ready") review = answer.analysis;
        failure = { message: answer.message || "", retryAt: answer.retry_at || 0 };
        if (status === "pending") {
          listen();
          timer = setTimeout(load, listener ? 5000 : 2000);
        } else {
          quiet();
        }
        render(step);
      })
      .catch((error) => {
        if (again && (error.code === "retry_later" || error.code === "retries_spent")) {
          failure = { message: error.message, retryAt: 0 };
        }
        status = error.code === "game_not_finished" ? "live" : "failed";
        render(step);
      });
  }

  /** Asking for a failed review again queues it anew, from its `retry_at` on (earlier, the
   * answer says when). */
  function retry() {
    const wait = failure.retryAt * 1000 - Date.now();
    const at = new Date(failure.retryAt * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    return h("button", {
      type: "button", "data-testid": "review-retry",
      onclick: () => { status = "loading"; load(true); },
    }, wait > 0 ? `Try again from ${at}` : "Try again");
  }

  /** The double-dummy cost of a card decision, when its trick was solved. */
  function ddCost(d) {
    const hand = review.hands.find((x) => x.hand === d.hand);
    if (!hand || !hand.dd) return null;
    const found = hand.dd.cards.find((c) => c.seat === d.seat && cardName(c.card) === d.chosen);
    return found ? found.before - found.after : null;
  }

  function words(d) {
    const verdict = d.grade ? `${d.grade}, ${d.loss} points lost` : "fine";
    const best = d.best !== d.chosen ? `; best was ${d.best}` : "";
    const named = d.errors.length ? ` — ${d.errors.join("; ")}` : "";
    return `${who(d.seat)}: ${d.chosen} (${verdict}${best})${named}`;
  }

  function render(now) {
    step = now;
    if (status === "live") { fill(box); return; }
    if (status !== "ready") {
      const working = progress.of ? `The bot tier is reviewing the game: ${progress.done} of ${progress.of} steps done…` : "The review is queued for the bot tier…";
      const said = status === "failed" ? `The review could not be made${failure.message ? ` (${failure.message})` : ""}.` : working;
      fill(box, h("h2", {}, "Review"),
        h("p", { class: "muted", "aria-live": "polite", "data-testid": "review-progress" }, said),
        status === "failed" && failure.retryAt ? retry() : null);
      return;
    }
    const current = review.decisions.find((d) => d.at + 1 === step);
    const cost = current && current.kind === "card" ? ddCost(current) : null;
    const flagged = review.decisions.filter((d) => d.grade || d.errors.length);
    fill(box,
      h("h2", {}, "Review"),
      h("p", { class: "accuracy" }, "Accuracy: ",
        review.accuracy.map((a, seat) => `${who(seat)} ${a === null ? "–" : `${a}%`}`).join(" · ")),
      h("p", { class: "verdict", "data-testid": "verdict", "aria-live": "polite" },
        current ? `This step: ${words(current)}${cost === null ? "" : cost > 0 ? `; with all cards seen it cost ${cost} trick${cost > 1 ? "s" : ""}` : "; best with all cards seen"}` : ""),
      h("p", { class: "muted" }, "Graded against the strong search on deals consistent with what the seat saw: inaccuracy 10, mistake 25, blunder 60 points."),
      flagged.length
        ? h("ol", { class: "flagged", "aria-label": "Flagged decisions" },
          flagged.map((d) => h("li", {}, h("a", { href: `#/replay/${gameId}?at=${d.at + 1}`, "data-testid": "flagged", "data-at": String(d.at + 1) }, `Hand ${d.hand}: ${words(d)}`))))
        : h("p", {}, "No decision was flagged."),
      ...luckBlock());
  }

  const signed = (x) => `${x > 0 ? "+" : x < 0 ? "−" : ""}${Math.abs(Math.round(x))}`;

  /** A rated game's par per hand and the cards/play split of each side's margin. */
  function luckBlock() {
    if (!review.par || !review.luck) return [];
    const sides = review.luck.length;
    const side = (s) => (sides === 2 ? (s === 0 ? `${who(0)} & ${who(2)}` : `${who(1)} & ${who(3)}`) : who(s));
    return [
      h("h3", {}, "The cards or the play"),
      h("ul", { class: "luck", "data-testid": "luck" }, review.luck.map((l) => h("li", {},
        `${side(l.side)}: ${l.result >= 0 ? "won" : "lost"} by ${Math.abs(Math.round(l.result))}; the cards were worth ${signed(l.cards)}, the play ${signed(l.play)}`))),
      h("table", { class: "par", "data-testid": "par" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Hand"), h("th", { scope: "col" }, "Scored"), h("th", { scope: "col" }, "Par"), h("th", { scope: "col" }, "Play"))),
        h("tbody", {}, review.par.map((p) => h("tr", {},
          h("td", {}, String(p.hand)),
          h("td", {}, p.scored.join(" / ")),
          h("td", {}, p.par.map((x) => String(Math.round(x))).join(" / ")),
          h("td", {}, p.play.map(signed).join(" / ")))))),
      h("p", { class: "muted" }, "Par: what strong bots in every seat scored with the same cards (several seeded runs, averaged). Shown, never used to rate."),
    ];
  }

  load();
  return { box, render, stop: () => { stopped = true; clearTimeout(timer); quiet(); } };
}
