// The review of a finished game beside its replay (GET /api/games/GAME/analysis): each seat's
// accuracy, the verdict on the decision the current step shows, and every flagged decision
// (an inaccuracy, mistake or blunder, or a named error) as a link to its own step.

import { get } from "../api.js";
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
  let step = 0;
  let timer = null;
  let stopped = false;

  function load() {
    get(`/api/games/${encodeURIComponent(gameId)}/analysis`)
      .then((answer) => {
        if (stopped) return;
        status = answer.status;
        if (status === "ready") review = answer.analysis;
        if (status === "pending") timer = setTimeout(load, 2000);
        render(step);
      })
      .catch((error) => {
        status = error.code === "game_not_finished" ? "live" : "failed";
        render(step);
      });
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
      fill(box, h("h2", {}, "Review"),
        h("p", { class: "muted", "aria-live": "polite" }, status === "failed" ? "The review could not be made: reload to try again." : "The bot tier is reviewing the game…"));
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
        : h("p", {}, "No decision was flagged."));
  }

  load();
  return { box, render, stop: () => { stopped = true; clearTimeout(timer); } };
}
