// A player's profile (#/player/ID): ratings per ladder, a rating history chart, statistics
// per ladder (pages/stats.js), recent games.

import { ApiError, get } from "../api.js";
import { fill, h, num, playerName, ratingText, showError, when } from "../ui.js";
import { gameItem } from "./lobby.js";
import { statsPanel } from "./stats.js";

const SVG = "http://www.w3.org/2000/svg";

function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

/** An SVG line chart of the shown rating after each game, oldest first. */
export function ratingChart(history, ladder) {
  const points = history.filter((e) => e.ladder === ladder).slice().reverse();
  const width = 640;
  const height = 240;
  const pad = { left: 44, right: 14, top: 14, bottom: 30 };
  const values = points.flatMap((p, i) => (i === 0 ? [p.display_before, p.display_after] : [p.display_after]));
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 20) { lo -= 10; hi += 10; }
  const count = values.length;
  const x = (i) => pad.left + (count <= 1 ? 0 : (i * (width - pad.left - pad.right)) / (count - 1));
  const y = (v) => pad.top + ((hi - v) * (height - pad.top - pad.bottom)) / (hi - lo);
  const path = values.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const dots = values.map((v, i) => s("circle", { class: "dot", cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 3.5 },
    s("title", {}, i === 0 ? `start: ${num(v)}` : `after game ${i} (${when(points[i - 1].rated_at)}): ${num(v)}`)));
  const first = points[0];
  const last = points[points.length - 1];
  const summary = `Rating on ${ladder} over ${points.length} game${points.length === 1 ? "" : "s"}: from ${num(first.display_before)} to ${num(last.display_after)}.`;
  return s("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": summary, "data-testid": "rating-chart" },
    s("title", {}, summary),
    s("line", { class: "axis", x1: pad.left, y1: pad.top, x2: pad.left, y2: height - pad.bottom }),
    s("line", { class: "axis", x1: pad.left, y1: height - pad.bottom, x2: width - pad.right, y2: height - pad.bottom }),
    s("text", { x: pad.left - 6, y: y(hi) + 4, "text-anchor": "end" }, num(Math.round(hi))),
    s("text", { x: pad.left - 6, y: y(lo) + 4, "text-anchor": "end" }, num(Math.round(lo))),
    s("text", { x: pad.left, y: height - 8 }, "start"),
    s("text", { x: width - pad.right, y: height - 8, "text-anchor": "end" }, `game ${points.length}`),
    s("path", { class: "line", d: path }),
    ...dots);
}

/** Mount the profile of `playerId`. */
export function mountPlayer(root, playerId) {
  const head = h("h1", {}, playerName(playerId));
  const ratingsBox = h("section", { class: "panel", "aria-labelledby": "ratings-title" });
  const chartBox = h("section", { class: "panel", "aria-labelledby": "chart-title" });
  const gamesBox = h("section", { class: "panel", "aria-labelledby": "recent-title" });
  const luckLine = h("p", { class: "muted", "data-testid": "luck-figure" });
  fill(root, h("div", { class: "profile" }, head, ratingsBox, luckLine, chartBox, statsPanel(playerId), gamesBox));

  // the luck-adjusted figure beside the rating: shown, never used to rate
  const signed = (x) => `${x > 0 ? "+" : x < 0 ? "−" : ""}${Math.abs(x)}`;
  get(`/api/players/${encodeURIComponent(playerId)}/luck`)
    .then((luck) => {
      if (!luck.games) return;
      fill(luckLine, `Over ${luck.games} analysed ranked game${luck.games === 1 ? "" : "s"}: a margin of ${signed(luck.result)} points a game; the cards were worth ${signed(luck.cards)}, the play ${signed(luck.play)} (luck-adjusted; not used to rate).`);
    })
    .catch(() => {});

  get(`/api/players/${encodeURIComponent(playerId)}?history=200`)
    .then((profile) => {
      fill(head, profile.name || playerName(playerId), profile.bot ? h("span", { class: "pill" }, " bot") : null);
      const ladders = Object.keys(profile.ratings).sort();
      fill(ratingsBox, h("h2", { id: "ratings-title" }, "Ratings"),
        ladders.length
          ? h("table", { class: "list" },
              h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Ladder"), h("th", { scope: "col", class: "num" }, "Rating"),
                h("th", { scope: "col", class: "num" }, "Games"))),
              h("tbody", {}, ladders.map((ladder) => {
                const r = profile.ratings[ladder];
                return h("tr", {}, h("th", { scope: "row" }, h("a", { href: `#/ladder/${encodeURIComponent(ladder)}` }, ladder)),
                  h("td", { class: "num", "data-testid": `rating-${ladder}`, title: `model: μ ${r.mu.toFixed(2)}, σ ${r.sigma.toFixed(2)}` },
                    ratingText(r.display, r.provisional), r.provisional ? h("small", { class: "muted" }, " provisional") : null),
                  h("td", { class: "num" }, String(r.games)));
              })))
          : h("p", { class: "muted" }, "No ranked games yet."));
      const rated = [...new Set(profile.history.map((e) => e.ladder))];
      if (!rated.length) {
        fill(chartBox, h("h2", { id: "chart-title" }, "Rating history"), h("p", { class: "muted" }, "The chart appears after the first ranked game."));
        return;
      }
      const chart = h("div", {});
      const pick = (ladder) => fill(chart, ratingChart(profile.history, ladder));
      fill(chartBox, h("h2", { id: "chart-title" }, "Rating history"),
        rated.length > 1 ? h("div", { class: "row" }, rated.map((ladder) => h("button", { class: "btn", onclick: () => pick(ladder) }, ladder))) : null,
        chart);
      pick(rated[0]);
    })
    .catch((error) => {
      const words = error instanceof ApiError && error.status === 404 ? `There is no player “${playerId}”.` : `Could not load the profile: ${error.words || error.message}`;
      fill(ratingsBox, h("p", { class: "form-error" }, words));
      if (!(error instanceof ApiError && error.status === 404)) showError(error, "Profile");
    });

  get(`/api/players/${encodeURIComponent(playerId)}/games?limit=20`)
    .then((games) => fill(gamesBox, h("h2", { id: "recent-title" }, "Recent games"),
      games.length ? h("ul", { class: "games" }, games.map((game) => gameItem(game, playerId))) : h("p", { class: "muted" }, "No games yet.")))
    .catch((error) => fill(gamesBox, h("h2", { id: "recent-title" }, "Recent games"),
      h("p", { class: "form-error" }, `Could not load the games: ${error.words || error.message}`)));
}
