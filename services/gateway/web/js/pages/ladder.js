// A ladder's ranking (#/ladder/LADDER?offset=N).

import { get, session } from "../api.js";
import { fill, h, playerName, ratingText, showError } from "../ui.js";

const PAGE = 50;

/** Mount the ladder page; return {cleanup, update} (paging changes only the query). */
export function mountLadder(root, ladder, query) {
  const title = h("h1", {}, `Ladder: ${ladder}`);
  const others = h("nav", { class: "row", "aria-label": "Ladders" });
  const body = h("div", { "data-testid": "ladder" }, h("p", { class: "muted" }, "Loading…"));
  fill(root, h("div", { class: "ladder" }, title, others, body));
  let request = 0;

  if (session()) {
    // the ladders are the queues' names (GET /api/queue lists every ladder's queue)
    get("/api/queue", { auth: true })
      .then((status) => {
        const names = Object.keys(status.queue_sizes || {}).sort();
        fill(others, names.map((name) => name === ladder
          ? h("span", { class: "pill", "aria-current": "page" }, name)
          : h("a", { href: `#/ladder/${encodeURIComponent(name)}` }, name)));
      })
      .catch((error) => showError(error, "Could not list the ladders"));
  }

  async function update(params) {
    const offset = Math.max(0, Number(params.get("offset")) || 0);
    const mine = ++request;
    try {
      const page = await get(`/api/ladders/${encodeURIComponent(ladder)}?offset=${offset}&limit=${PAGE}`);
      if (mine !== request) return;
      render(page);
    } catch (error) {
      fill(body, h("p", { class: "form-error" }, `Could not load the ladder: ${error.words || error.message}`));
    }
  }

  function render(page) {
    const me = session();
    const rows = page.players.map((p) =>
      h("tr", { class: me && me.player_id === p.player_id ? "mine" : "" },
        h("td", { class: "num" }, String(p.rank)),
        h("th", { scope: "row" }, h("a", { href: `#/player/${encodeURIComponent(p.player_id)}` }, playerName(p.player_id)),
          null),
        h("td", { class: "num", "data-testid": "ladder-rating", title: `model: μ ${p.mu.toFixed(2)}, σ ${p.sigma.toFixed(2)}` },
          ratingText(p.display, p.provisional)),
        h("td", { class: "num" }, String(p.games))));
    const first = page.offset + 1;
    const last = page.offset + page.players.length;
    fill(body,
      page.total
        ? h("p", { class: "muted" }, `Players ${first}–${last} of ${page.total}. Ratings start at 1500; “?” marks a provisional rating (fewer than 10 ranked games). `
            + "The order counts how sure the rating is, so a few lucky games can't top the ladder.")
        : h("p", { class: "muted" }, "Nobody is ranked on this ladder yet: ratings appear after the first ranked game."),
      page.players.length ? h("table", { class: "list" },
        h("thead", {}, h("tr", {},
          h("th", { scope: "col", class: "num" }, "#"), h("th", { scope: "col" }, "Player"),
          h("th", { scope: "col", class: "num" }, "Rating"), h("th", { scope: "col", class: "num" }, "Games"))),
        h("tbody", {}, rows)) : null,
      h("p", { class: "row" },
        page.offset > 0 ? h("a", { class: "btn", href: `#/ladder/${encodeURIComponent(ladder)}?offset=${Math.max(0, page.offset - PAGE)}` }, "◀ Better") : null,
        last < page.total ? h("a", { class: "btn", href: `#/ladder/${encodeURIComponent(ladder)}?offset=${last}` }, "Next ▶") : null));
  }

  update(query);
  return { update };
}
