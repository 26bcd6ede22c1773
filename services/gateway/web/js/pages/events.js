// Events: #/events (your events and the public ones; create a private one) and #/events/ID
// (its boards' commitments, pairs, enter with a partner or a bot, start, your board to play,
// the standings and every board's arithmetic; an arena's time left, its games, pause and
// come back). The standings come over the WebSocket (`event_standings`); a poll every few
// seconds is the fallback.

import { api, get, session } from "../api.js";
import { GameSocket } from "../socket.js";
import { fill, h, keepFocus, link, notify, playerName, showError, signed, uuid, when } from "../ui.js";

const POLL = 3000;
const FORMAT_WORDS = { duplicate: "Duplicate", swiss: "Swiss", arena: "Arena" };

/** Return the time left until ``endsAt`` (unix seconds) in words. */
function timeLeft(endsAt) {
  const left = Math.max(0, Math.round(endsAt - Date.now() / 1000));
  if (left === 0) return "time is up: the games in play finish";
  const minutes = Math.floor(left / 60);
  return `${minutes ? `${minutes} min ` : ""}${left % 60} s left`;
}
const STATUS_WORDS = { open: "sign-up open", running: "under way", finished: "finished", cancelled: "cancelled" };

/** Mount #/events: the events you are in, the public ones, and the form for a private one. */
export function mountEvents(root) {
  const listBox = h("section", { class: "panel", "aria-labelledby": "events-list-title", "data-testid": "events-list" });
  const name = h("input", { id: "event-name", value: "Pairs evening", maxlength: 80, "data-testid": "event-name" });
  const perRound = h("input", { id: "event-boards", type: "number", min: 1, max: 12, value: 2, "data-testid": "event-boards" });
  const rounds = h("input", { id: "event-rounds", type: "number", min: 1, max: 15, value: 1, "data-testid": "event-rounds" });
  const format = h("select", { id: "event-format", "data-testid": "event-format" },
    h("option", { value: "duplicate" }, "Duplicate (a fixed movement)"),
    h("option", { value: "swiss" }, "Swiss (each round paired by the standings)"),
    h("option", { value: "arena" }, "Arena (for a fixed time, whoever is free meets)"));
  const minutes = h("input", { id: "event-minutes", type: "number", min: 1, max: 600, value: 30, "data-testid": "event-minutes" });
  const length = h("select", { id: "event-length", "data-testid": "event-length" },
    h("option", { value: "hand_cap=1" }, "one hand"),
    h("option", { value: "hand_cap=2" }, "two hands"),
    h("option", { value: "target=200", selected: true }, "to 200 points"),
    h("option", { value: "target=300" }, "to 300 points"));
  const arenaFields = h("div", { hidden: true },
    h("div", { class: "field" }, h("label", { for: "event-minutes" }, "Minutes (arena)"), minutes),
    h("div", { class: "field" }, h("label", { for: "event-length" }, "Each game (arena)"), length));
  const roundFields = h("div", {},
    h("div", { class: "field" }, h("label", { for: "event-boards" }, "Boards per round"), perRound),
    h("div", { class: "field" }, h("label", { for: "event-rounds" }, "Rounds"), rounds));
  format.addEventListener("change", () => {
    arenaFields.hidden = format.value !== "arena";
    roundFields.hidden = format.value === "arena";
  });
  const maxPairs = h("input", { id: "event-pairs", type: "number", min: 2, max: 32, value: 8, "data-testid": "event-pairs" });
  const form = h("form", { class: "panel", "aria-labelledby": "events-new-title" },
    h("h2", { id: "events-new-title" }, "A private event"),
    h("p", { class: "muted" }, "Every table plays the same boards; a pair is scored against the pairs that held the same cards. The boards' deals are committed now and shown when it ends. Bots may fill seats. Swiss pairs each round pairs with the nearest totals who have not met yet. An arena pairs any two free pairs for a fixed time: a win 2, a draw 1, double after two wins in a row."),
    h("div", { class: "field" }, h("label", { for: "event-name" }, "Name"), name),
    h("div", { class: "field" }, h("label", { for: "event-format" }, "Format"), format),
    roundFields, arenaFields,
    h("div", { class: "field" }, h("label", { for: "event-pairs" }, "Most pairs"), maxPairs),
    h("button", { class: "btn primary", type: "submit", "data-testid": "create-event" }, "Create the event"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const body = {
        name: name.value.trim(),
        format: format.value,
        max_pairs: Number(maxPairs.value),
        command_id: uuid(),
      };
      if (format.value === "arena") {
        body.minutes = Number(minutes.value);
        const [key, value] = length.value.split("=");
        body.rules = { [key]: Number(value) };
      } else {
        body.boards_per_round = Number(perRound.value);
        body.rounds = Number(rounds.value);
      }
      const made = await api("POST", "/api/events", body, { auth: true });
      location.hash = `#/events/${made.event.event_id}`;
    } catch (error) {
      showError(error, "Could not create the event");
    }
  });
  fill(root, h("div", { class: "lobby" }, h("h1", { class: "wide" }, "Events"), form, listBox));
  get("/api/events", { auth: true }).then((events) => {
    fill(listBox, h("h2", { id: "events-list-title" }, "Your events and public ones"),
      events.length
        ? h("ul", {}, events.map((e) => h("li", {},
          link(`/events/${e.event_id}`, e.name),
          ` · ${FORMAT_WORDS[e.format] || e.format} · ${e.private ? "private" : "public"} · ${STATUS_WORDS[e.status] || e.status}${e.status === "running" ? (e.format === "arena" ? ` (${timeLeft(e.ends_at)})` : ` (round ${e.round} of ${e.rounds})`) : ""} · ${e.pairs}/${e.max_pairs} pairs · starts ${when(e.starts_at)}`)))
        : h("p", { class: "muted" }, "No events yet."));
  }).catch((error) => showError(error, "Could not load the events"));
}

function pairName(pair) {
  if (!pair) return "?";
  const who = (id) => (id.startsWith("bot:") ? "a bot" : playerName(id));
  return `${who(pair.player)} & ${who(pair.partner)}`;
}

/** Mount #/events/ID: the event's page. */
export function mountEvent(root, eventId) {
  const myId = session() ? session().player_id : null; // the page is public; entering is not
  let shown = null;
  let stopped = false;
  let timer = null;
  let busy = false;
  const box = h("section", { class: "panel event-page", "data-testid": "event-page" });
  fill(root, box);

  async function call(path, body) {
    if (busy) return;
    busy = true;
    try {
      shown = await api("POST", `/api/events/${eventId}${path}`, body, { auth: true });
    } catch (error) {
      showError(error, "Refused");
    }
    busy = false;
    render();
  }
  async function load() {
    clearTimeout(timer);
    try {
      shown = await get(`/api/events/${eventId}`);
    } catch (error) {
      fill(box, h("p", { class: "form-error" }, error.words || error.message));
      return;
    }
    render();
    if (!stopped && ["open", "running"].includes(shown.event.status)) timer = setTimeout(load, POLL);
  }
  function render() {
    if (shown && !stopped) keepFocus(draw);
  }

  function draw() {
    const e = shown.event;
    const pairs = new Map(shown.pairs.map((p) => [p.pair, p]));
    const mine = shown.pairs.find((p) => p.player === myId || p.partner === myId);
    const host = myId !== null && e.host === myId;
    const isArena = e.format === "arena" && shown.arena;
    const arenaOn = isArena && e.status === "running" && e.ends_at > Date.now() / 1000;
    let actions = null;
    if ((e.status === "open" || arenaOn) && !mine && myId) {
      const partner = h("input", { id: "event-partner", placeholder: "your partner's name", autocomplete: "off", "data-testid": "event-partner" });
      const withBot = h("input", { id: "event-bot", type: "checkbox", "data-testid": "event-bot" });
      const form = h("form", { class: "row" },
        h("label", { for: "event-partner" }, "Partner "), partner,
        e.private ? [h("input", { type: "hidden" }), withBot, h("label", { for: "event-bot" }, " a bot")] : null,
        h("button", { class: "btn primary", type: "submit", "data-testid": "join-event" }, "Enter"));
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const chosen = withBot.checked ? "bot" : partner.value.trim();
        if (!chosen) { notify("Name a partner (or choose a bot)"); return; }
        call("/join", { partner: chosen });
      });
      actions = form;
    } else if (e.status === "open" && mine) {
      actions = h("p", { class: "row" }, h("span", {}, `You play as pair ${mine.pair}. `),
        h("button", { class: "btn", type: "button", "data-key": "withdraw", onclick: () => call("/leave") }, "Withdraw"));
    } else if (arenaOn && mine) {
      const paused = shown.arena.paused.includes(mine.pair);
      actions = h("p", { class: "row" }, h("span", {}, `You play as pair ${mine.pair}${paused ? " (paused: no new game)" : ""}. `),
        paused
          ? h("button", { class: "btn primary", type: "button", "data-key": "resume", "data-testid": "resume-arena", onclick: () => call("/resume") }, "Come back")
          : h("button", { class: "btn", type: "button", "data-key": "pause", "data-testid": "pause-arena", onclick: () => call("/leave") }, "Pause"));
    }
    const starter = e.status === "open" && host
      ? h("p", { class: "row" },
        h("button", { class: "btn primary", type: "button", "data-testid": "start-event", "data-key": "start", onclick: () => call("/start", { fill_with_bots: true }) },
          shown.pairs.length % 2 ? "Add a bot pair and start" : "Start now"))
      : null;
    const myGame = mine && shown.games.find((g) => g.game_id && g.ns_points === null && (g.ns_pair === mine.pair || g.ew_pair === mine.pair));
    const myArenaGame = mine && isArena && shown.arena.games.find((g) => g.winner === null && (g.ns_pair === mine.pair || g.ew_pair === mine.pair));
    const playing = myGame
      ? h("p", { class: "notice" }, `Board ${myGame.board} is on at table ${myGame.table}. `,
        h("a", { class: "btn primary", href: `#/table/${myGame.game_id}`, "data-testid": "play-board" }, "Play it"))
      : myArenaGame
        ? h("p", { class: "notice" }, `Your game ${myArenaGame.number} is on, against pair ${myArenaGame.ns_pair === mine.pair ? myArenaGame.ew_pair : myArenaGame.ns_pair}. `,
          h("a", { class: "btn primary", href: `#/table/${myArenaGame.game_id}`, "data-testid": "play-board" }, "Play it"))
        : null;
    if (isArena) {
      drawArena(e, pairs, actions, starter, playing);
      return;
    }
    const standings = h("table", { class: "standings", "data-testid": "event-standings" },
      h("caption", {}, "Standings: matchpoints (2 for each pair beaten on the same cards, 1 a tie) and cross-IMPs"),
      h("thead", {}, h("tr", {}, ["#", "Pair", "Matchpoints", "%", "IMPs", "Boards"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, shown.standings.map((s) => h("tr", { "data-testid": `standing-${s.pair}` },
        h("td", {}, String(s.rank)), h("td", {}, `${s.pair}: ${pairName(pairs.get(s.pair))}`),
        h("td", {}, `${s.matchpoints} / ${s.top}`), h("td", {}, s.top ? `${s.percent}%` : "–"),
        h("td", {}, signed(s.imps)), h("td", { "data-testid": `boards-${s.pair}` }, String(s.boards))))));
    const arithmetic = shown.scores.length
      ? h("table", { class: "board-scores", "data-testid": "board-scores" },
        h("caption", {}, "Every board: each pair's net score against the pairs that held the same cards"),
        h("thead", {}, h("tr", {}, ["Board", "Pair", "Sat", "Points", "Net", "Against", "Matchpoints", "IMPs"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, shown.scores.map((s) => h("tr", {},
          h("td", {}, String(s.board)), h("td", {}, String(s.pair)), h("td", {}, s.direction === "BYE" ? "bye" : s.direction),
          h("td", {}, s.direction === "BYE" ? "—" : `${s.points} to ${s.against}`), h("td", {}, s.direction === "BYE" ? "—" : signed(s.net)),
          h("td", {}, s.direction === "BYE" ? "sat out: an average" : s.versus.length ? s.versus.map((v) => `pair ${v.pair} (${signed(v.net)}): ${v.matchpoints} MP, ${signed(v.imps)} IMP`).join("; ") : "nobody yet"),
          h("td", {}, `${s.matchpoints} / ${s.top}`), h("td", {}, signed(s.imps))))))
      : null;
    const boards = h("table", { class: "boards", "data-testid": "event-boards" },
      h("caption", {}, "Boards: each deal's seed is committed (its SHA-256) before the first card and revealed at the end"),
      h("thead", {}, h("tr", {}, ["Board", "Round", "Commitment (SHA-256)", "Seed", "Games"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, shown.boards.map((b) => h("tr", {},
        h("td", {}, String(b.board)), h("td", {}, String(b.round)),
        h("td", {}, h("code", { class: "hash", "data-testid": `commitment-${b.board}` }, b.commitment)),
        h("td", {}, b.seed ? h("code", { class: "hash" }, b.seed) : h("span", { class: "muted" }, "secret until the end")),
        h("td", {}, shown.games.filter((g) => g.board === b.board && g.game_id).map((g) => [
          e.status === "finished" ? link(`/replay/${g.game_id}`, `table ${g.table}`) : `table ${g.table}`,
          g.ns_points !== null ? ` (${g.ns_points}:${g.ew_points}) ` : " "]))))));
    fill(box,
      h("h1", {}, e.name),
      h("p", { "data-testid": "event-status" }, `${FORMAT_WORDS[e.format] || e.format} · ${e.private ? "private" : "public"} · ${STATUS_WORDS[e.status] || e.status}`
        + (e.status === "running" ? ` · round ${e.round} of ${e.rounds}` : "")
        + ` · ${e.boards_per_round} board${e.boards_per_round === 1 ? "" : "s"} a round · ${shown.pairs.length}/${e.max_pairs} pairs`
        + (e.host ? ` · hosted by ${playerName(e.host)}` : "")),
      e.status === "open" ? h("p", { class: "muted" }, `Starts ${when(e.starts_at)}${e.private ? " (or when the host starts it)" : ""}.`) : null,
      actions, starter, playing,
      h("h2", {}, "Pairs"),
      shown.pairs.length ? h("ul", { "data-testid": "event-pairs" }, shown.pairs.map((p) => h("li", {}, `${p.pair}: ${pairName(p)}`))) : h("p", { class: "muted" }, "Nobody has entered yet."),
      standings, arithmetic, boards);
  }

  function drawArena(e, pairs, actions, starter, playing) {
    const a = shown.arena;
    const standings = h("table", { class: "standings", "data-testid": "event-standings" },
      h("caption", {}, `Standings: ${a.scoring}`),
      h("thead", {}, h("tr", {}, ["#", "Pair", "Points", "Games", "Won", "Drawn", "Lost", "Streak"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, a.standings.map((s) => h("tr", { "data-testid": `standing-${s.pair}` },
        h("td", {}, String(s.rank)), h("td", {}, `${s.pair}: ${pairName(pairs.get(s.pair))}${a.paused.includes(s.pair) ? " (paused)" : ""}`),
        h("td", { "data-testid": `points-${s.pair}` }, String(s.points)), h("td", { "data-testid": `games-${s.pair}` }, String(s.games)),
        h("td", {}, String(s.wins)), h("td", {}, String(s.draws)), h("td", {}, String(s.losses)),
        h("td", {}, s.on_fire ? `${s.streak} wins: on fire` : String(s.streak))))));
    const result = (g) => {
      if (g.winner === null) return "being played";
      if (g.winner === -1) return "closed unplayed: no result, no points";
      const who = g.winner === 0 ? "a draw" : `pair ${g.winner} won`;
      return `${g.ns_score} to ${g.ew_score}: ${who} (${g.ns_points} and ${g.ew_points} points)`;
    };
    const games = a.games.length
      ? h("table", { class: "board-scores", "data-testid": "arena-games" },
        h("caption", {}, "Games, in the order they opened"),
        h("thead", {}, h("tr", {}, ["Game", "North-South", "East-West", "Result"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, a.games.map((g) => h("tr", {},
          h("td", {}, e.status === "finished" || g.winner !== null ? link(`/replay/${g.game_id}`, String(g.number)) : String(g.number)),
          h("td", {}, `${g.ns_pair}: ${pairName(pairs.get(g.ns_pair))}`), h("td", {}, `${g.ew_pair}: ${pairName(pairs.get(g.ew_pair))}`),
          h("td", {}, result(g))))))
      : null;
    const clock = e.status === "running" ? timeLeft(e.ends_at) : `${a.minutes} minutes`;
    fill(box,
      h("h1", {}, e.name),
      h("p", { "data-testid": "event-status" }, `${FORMAT_WORDS[e.format]} · ${e.private ? "private" : "public"} · ${STATUS_WORDS[e.status] || e.status}`
        + ` · ${clock} · ${shown.pairs.length}/${e.max_pairs} pairs` + (e.host ? ` · hosted by ${playerName(e.host)}` : "")),
      e.status === "open" ? h("p", { class: "muted" }, `Starts ${when(e.starts_at)}${e.private ? " (or when the host starts it)" : ""}; runs ${a.minutes} minutes: any two free pairs meet, no new game after the end, the games in play then finish and count.`) : null,
      actions, starter, playing,
      h("h2", {}, "Pairs"),
      shown.pairs.length ? h("ul", { "data-testid": "event-pairs" }, shown.pairs.map((p) => h("li", {}, `${p.pair}: ${pairName(p)}`))) : h("p", { class: "muted" }, "Nobody has entered yet."),
      standings, games);
  }

  const listener = myId && new GameSocket(null, {
    onMessage: (message) => {
      if (message.type === "event_standings" && message.event_id === eventId) load();
    },
    onState: () => {},
  }).start();
  load();
  return () => { stopped = true; clearTimeout(timer); if (listener) listener.stop(); };
}
