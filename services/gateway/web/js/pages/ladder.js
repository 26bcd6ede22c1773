// A ladder's ranking (#/ladder/LADDER?season=N&offset=M): the running season's live, an
// ended season's frozen as it stood at its end; the ladder's rules in words above it.

import { get, session } from "../api.js";
import { fill, h, playerName, ratingText, when } from "../ui.js";

const PAGE = 50;

/** Mount the ladder page; return {cleanup, update} (paging changes only the query). */
export function mountLadder(root, ladder, query) {
  const title = h("h1", {}, `Ladder: ${ladder}`);
  const others = h("nav", { class: "row", "aria-label": "Ladders" });
  const about = h("div", { class: "muted", "data-testid": "ladder-rules" });
  const seasonBox = h("nav", { class: "row", "aria-label": "Seasons", "data-testid": "ladder-seasons" });
  const body = h("div", { "data-testid": "ladder" }, h("p", { class: "muted" }, "Loading…"));
  fill(root, h("div", { class: "ladder" }, title, others, about, seasonBox, body));
  let request = 0;
  let season = 0;
  const href = (params) => `#/ladder/${encodeURIComponent(ladder)}?${new URLSearchParams(params)}`;

  // every ladder of the operator's file, public (GET /api/ladders)
  get("/api/ladders")
    .then((ladders) => {
      fill(others, ladders.map((info) => info.ladder === ladder
        ? h("span", { class: "pill", "aria-current": "page" }, info.title || info.ladder)
        : h("a", { href: `#/ladder/${encodeURIComponent(info.ladder)}` }, info.title || info.ladder)));
      const mine = ladders.find((info) => info.ladder === ladder);
      if (!mine) return;
      fill(title, `Ladder: ${mine.title || ladder}`);
      fill(about, h("p", {}, `${mine.description ? `${mine.description} ` : ""}${mine.rated ? "Rated" : "Unrated"}, ${mine.turn_seconds} s a turn.`),
        h("ul", {}, mine.rules_in_words.map((line) => h("li", {}, line))));
    })
    .catch(() => fill(others));

  async function update(params) {
    const offset = Math.max(0, Number(params.get("offset")) || 0);
    season = Math.max(0, Number(params.get("season")) || 0);
    const mine = ++request;
    try {
      const page = await get(`/api/ladders/${encodeURIComponent(ladder)}/leaderboard?season=${season}&offset=${offset}&limit=${PAGE}`);
      if (mine !== request) return;
      seasons(page);
      render(page);
    } catch (error) {
      if (error.code === "season_closing" && mine === request) {
        // the season just ended: its leaderboard is frozen within seconds
        fill(body, h("p", { class: "muted" }, "This season has just ended: its leaderboard is being frozen…"));
        setTimeout(() => { if (mine === request) update(params); }, 2000);
        return;
      }
      fill(body, h("p", { class: "form-error" }, `Could not load the ladder: ${error.words || error.message}`));
    }
  }

  function seasons(page) {
    const ends = page.ends_at ? ` ${page.frozen ? "ended" : "ends"} ${when(page.ends_at)}` : "";
    const links = [];
    for (let n = 1; n <= page.current; n++) {
      const label = n === page.current ? `Season ${n} (running)` : `Season ${n}`;
      links.push(n === page.season
        ? h("span", { class: "pill", "aria-current": "page" }, label)
        : h("a", { href: href(n === page.current ? {} : { season: n }) }, label));
    }
    fill(seasonBox, page.ends_at || page.current > 1 ? links : null,
      h("span", { class: "muted", "data-testid": "season-state" },
        page.frozen ? `Season ${page.season}${ends}: its leaderboard is kept as it stood then.`
          : page.ends_at ? `Season ${page.season}${ends}.` : ""));
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
        page.offset > 0 ? h("a", { class: "btn", href: href({ ...(season ? { season } : {}), offset: Math.max(0, page.offset - PAGE) }) }, "◀ Better") : null,
        last < page.total ? h("a", { class: "btn", href: href({ ...(season ? { season } : {}), offset: last }) }, "Next ▶") : null));
  }

  update(query);
  return { update };
}
