// A player's statistics per ladder (GET /api/players/ID/stats), a panel of the player page.

import { ApiError, get } from "../api.js";
import { fill, h, num } from "../ui.js";

const pct = (part, whole) => (whole ? `${Math.round((100 * part) / whole)}%` : "–");

/** Return the rows of one ladder's statistics: [label, value, note]. */
export function statRows(st) {
  const over = Object.entries(st.over_by).map(([n, c]) => (n === "0" ? `exact ×${c}` : `+${n} ×${c}`)).join(", ");
  return [
    ["Games", `${st.games}`, `${st.wins} won (${pct(st.wins, st.games)})`],
    ["Hands", `${st.hands}`, ""],
    ["Contracts", `${st.made} made, ${st.set} set`, st.bids ? `${pct(st.made, st.bids)} of ${st.bids} bids made${over ? `; made: ${over}` : ""}` : "no bids"],
    ["Nil", `${st.nil_made} of ${st.nil}`, pct(st.nil_made, st.nil)],
    ["Blind nil", `${st.blind_nil_made} of ${st.blind_nil}`, pct(st.blind_nil_made, st.blind_nil)],
    ["Bags", `${st.bags_per_hand.toFixed(2)} a hand`, `${st.bags} in all, ${st.bag_penalties} penalt${st.bag_penalties === 1 ? "y" : "ies"}`],
    ["Points", `${st.points_per_hand.toFixed(1)} a hand`, `${num(st.points)} in all`],
  ];
}

function met(list, what) {
  return list.length
    ? list.map((m, i) => [i ? ", " : "", h("a", { href: `#/player/${encodeURIComponent(m.player_id)}` }, m.player_id), ` (${m.games})`])
    : h("span", { class: "muted" }, `no ${what} yet`);
}

/** Return the statistics panel of `playerId`, filled once the answer comes. */
export function statsPanel(playerId) {
  const box = h("section", { class: "panel", "aria-labelledby": "stats-title", "data-testid": "player-stats" },
    h("h2", { id: "stats-title" }, "Statistics"), h("p", { class: "muted" }, "Loading…"));
  get(`/api/players/${encodeURIComponent(playerId)}/stats`)
    .then((answer) => fill(box, h("h2", { id: "stats-title" }, "Statistics"),
      answer.ladders.map((st) => h("div", { class: "stats", "data-testid": `stats-${st.ladder}` },
        h("h3", {}, h("a", { href: `#/ladder/${encodeURIComponent(st.ladder)}` }, st.ladder)),
        h("table", { class: "list" }, h("tbody", {}, statRows(st).map(([label, value, note]) =>
          h("tr", {}, h("th", { scope: "row" }, label), h("td", { class: "num" }, value), h("td", { class: "muted" }, note))))),
        h("p", {}, "Partners most met: ", met(st.partners, "partners")),
        h("p", {}, "Opponents most met: ", met(st.opponents, "opponents"))))))
    .catch((error) => fill(box, h("h2", { id: "stats-title" }, "Statistics"),
      h("p", { class: "muted" }, error instanceof ApiError && error.status === 404
        ? "Statistics appear after the first finished ladder game."
        : `Could not load the statistics: ${error.words || error.message}`)));
  return box;
}
