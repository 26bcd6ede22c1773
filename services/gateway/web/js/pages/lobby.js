// The lobby (#/lobby): ladders and the ranked queue, practice games with bots, your games.

import { api, get, session } from "../api.js";
import { RULE_OPTIONS, teamName, teamOf } from "../cards.js";
import { GameSocket } from "../socket.js";
import { followedPanel } from "./following.js";
import { clock, fill, h, num, playerName, ratingChangeLine, showError, uuid, when } from "../ui.js";

const QUEUED_POLL = 1000;
const IDLE_POLL = 5000;

/** Mount the lobby; return its cleanup. */
export function mountLobby(root) {
  const me = session();
  const invites = h("div", { "data-testid": "invitations", "aria-live": "polite" });
  const queueBox = h("section", { class: "panel", "aria-labelledby": "ranked-title", "data-testid": "ranked" });
  const practiceBox = h("section", { class: "panel", "aria-labelledby": "practice-title" });
  const gamesBox = h("section", { class: "panel", "aria-labelledby": "games-title" });
  const watchBox = h("section", { class: "panel", "aria-labelledby": "watch-title" });
  const friends = followedPanel();
  fill(root, h("div", { class: "lobby" },
    h("h1", { class: "wide" }, `Welcome, ${me.name || me.player_id}`),
    h("section", { class: "panel wide", "data-testid": "friends-entry" },
      h("h2", {}, "Play with friends"),
      h("p", {}, "Open an unrated table with any rules, share its link or code, fill the empty seats with bots. ",
        h("a", { class: "btn primary", href: "#/friends", "data-testid": "play-with-friends" }, "Play with friends")),
      invites),
    queueBox, practiceBox, gamesBox, friends.node, watchBox));

  let status = null; // the last GET /api/queue answer
  let playban = null; // a 403 playban refusal: {message, ends_at} (the queues refuse until then)
  let ladderInfo = []; // GET /api/ladders: every ranked ladder, public
  let laddersLoaded = null; // the practice form's hook: a table size chosen before they came
  let wasQueued = false;
  let timer = null;
  let stopped = false;
  let busy = false;

  async function poll() {
    clearTimeout(timer);
    if (stopped) return;
    try {
      status = await get("/api/queue", { auth: true });
      if (status.code === "queued") wasQueued = true;
      if (status.game_id && status.code === "in_game" && wasQueued) {
        location.hash = `#/table/${status.game_id}`; // match found: to the table
        return;
      }
    } catch (error) {
      showError(error, "Could not read the queue");
    }
    renderQueue();
    if (!stopped) timer = setTimeout(poll, status && status.code === "queued" ? QUEUED_POLL : IDLE_POLL);
  }

  async function join(ladder) {
    busy = true;
    wasQueued = true; // a match_found may come before the answer
    renderQueue();
    try {
      status = await api("POST", "/api/queue", { ladder }, { auth: true });
    } catch (error) {
      wasQueued = false;
      if (error.code === "playban" && error.body) playban = { message: error.message, ends_at: error.body.ends_at };
      else showError(error, `Could not join the ${ladder} queue`);
    }
    busy = false;
    poll();
  }

  async function leave() {
    busy = true;
    try {
      await api("DELETE", "/api/queue", undefined, { auth: true });
      wasQueued = false;
    } catch (error) {
      showError(error, "Could not leave the queue");
    }
    busy = false;
    poll();
  }

  async function loadLadders() {
    try {
      ladderInfo = await get("/api/ladders");
    } catch (error) {
      showError(error, "Could not list the ladders");
    }
    if (laddersLoaded) laddersLoaded();
    renderQueue();
  }

  function renderQueue() {
    const sizes = {};
    for (const info of ladderInfo) if (info.queue_size !== null) sizes[info.ladder] = info.queue_size;
    Object.assign(sizes, (status && status.queue_sizes) || {});
    const seats = Object.fromEntries(ladderInfo.map((info) => [info.ladder, info.players]));
    const ladders = [...new Set([...ladderInfo.map((info) => info.ladder), ...Object.keys(sizes)])].sort();
    const queued = status && status.code === "queued";
    if (playban && playban.ends_at * 1000 <= Date.now()) playban = null;
    const rows = ladders.map((ladder) =>
      h("tr", {},
        h("th", { scope: "row" }, h("a", { href: `#/ladder/${encodeURIComponent(ladder)}` }, ladder),
          seats[ladder] ? h("span", { class: "muted" }, ` · ${seats[ladder]} players`) : null),
        h("td", { "data-testid": `queue-size-${ladder}` }, ladder in sizes ? `${sizes[ladder]} waiting` : "queue unknown"),
        h("td", {}, h("button", {
          class: "btn primary", "data-testid": `join-${ladder}`, disabled: busy || queued || !!playban || (status && status.code === "in_game"),
          onclick: () => join(ladder),
        }, "Join queue"))));
    let state = null;
    if (queued) {
      const waiting = (status.queue_sizes || {})[status.ladder];
      const seats = Object.fromEntries(ladderInfo.map((info) => [info.ladder, info.players]))[status.ladder] || 4;
      const others = waiting ? waiting - 1 : 0;
      const linked = status.linked_waiting || 0;
      const days = status.fairplay_days;
      let fair = null;
      if (linked > 0) {
        fair = h("p", { class: "fairplay-hold", "data-testid": "fairplay-hold" },
          h("strong", {}, "Fair play is holding your match back: "),
          `${linked} of the ${others} other${others === 1 ? "" : "s"} waiting ${linked === 1 ? "was" : "were"} seen at your address or device`,
          days ? ` in the last ${num(days)} day${days === 1 ? "" : "s"}` : "",
          ", and accounts seen together never sit at one ranked table. You will be matched with other players.");
      } else if (days === 0) {
        fair = h("p", { class: "muted", "data-testid": "fairplay-off" }, "Fair-play separation is off on this server (SPADES_FAIRPLAY_DAYS=0): accounts of one machine can meet.");
      }
      state = h("div", { class: "queued", "data-testid": "queue-status", role: "status" },
        h("p", {}, h("strong", {}, `Waiting in the ${status.ladder} queue: ${clock(status.waited || 0)}`)),
        waiting !== undefined
          ? h("p", { "data-testid": "queue-waiting" }, `${waiting} waiting (you and ${others} other${others === 1 ? "" : "s"}); a table needs ${seats}.`)
          : null,
        h("p", {}, `Rating window ±${Math.round((status.window || 0) * 40)} — it widens the longer you wait, so a match gets easier to find.`),
        fair,
        h("button", { class: "btn", onclick: leave, disabled: busy }, "Leave the queue"));
    } else if (status && status.code === "in_game" && status.game_id) {
      state = h("div", { class: "queued", "data-testid": "queue-status" },
        h("p", {}, "You have a seat in a ranked game."),
        h("a", { class: "btn primary", href: `#/table/${status.game_id}` }, "Go to your table"));
    }
    fill(queueBox,
      h("h2", { id: "ranked-title" }, "Ranked ladders"),
      playban ? h("p", { class: "form-error", role: "alert", "data-testid": "playban" },
        h("strong", {}, `You may not queue until ${when(playban.ends_at)}.`), ` ${playban.message}`) : null,
      status || ladderInfo.length ? null : h("p", { class: "muted" }, "Loading the queues…"),
      ladders.length ? h("table", { class: "list" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Ladder"), h("th", { scope: "col" }, "Queue"), h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Action")))),
        h("tbody", {}, rows)) : null,
      state);
  }

  // -- practice -------------------------------------------------------------------------------

  const inputs = {};
  const fields = RULE_OPTIONS.map((option) => {
    const id = `rule-${option.name}`;
    let input;
    if (option.kind === "bool") {
      input = h("input", { id, type: "checkbox", name: option.name });
      input.checked = option.value;
      inputs[option.name] = input;
      return h("div", { class: "field check" }, input, h("label", { for: id }, option.label));
    }
    if (option.kind === "select") {
      input = h("select", { id, name: option.name },
        option.choices.map(([value, text]) => h("option", { value: String(value), selected: value === option.value }, text)));
    } else {
      input = h("input", { id, type: "number", name: option.name, value: option.value, min: option.min, max: option.max, step: 1, inputmode: "numeric" });
    }
    inputs[option.name] = input;
    return h("div", { class: "field" }, h("label", { for: id }, option.label), input);
  });

  function chosenRules() {
    const rules = {};
    for (const option of RULE_OPTIONS) {
      const input = inputs[option.name];
      let value;
      if (option.kind === "bool") value = input.checked;
      else if (typeof option.value === "number") value = Number(input.value);
      else value = input.value;
      if (value !== option.value) rules[option.name] = value;
    }
    return rules;
  }

  // the server's rule book: bounds of the numbers, named variants; every change is checked
  // by the server as the table would (a dependency such as Little Willie's is named there)
  const presetSelect = h("select", { id: "rule-preset", name: "preset", "data-testid": "rule-preset" },
    h("option", { value: "" }, "Choose a variant…"));
  const presetNote = h("p", { class: "muted", "data-testid": "preset-note" });
  const rulesProblem = h("p", { class: "form-error", role: "alert", "data-testid": "rules-problem" });
  const bots = h("select", { id: "practice-bots", name: "bots", "data-testid": "practice-bots" },
    h("option", { value: "baseline" }, "Baseline: quick and sound"),
    h("option", { value: "strong" }, "Strong: searches every card"));
  bots.value = localStorage.getItem("spades.bots") === "strong" ? "strong" : "baseline";
  bots.addEventListener("change", () => localStorage.setItem("spades.bots", bots.value));
  let presets = [];
  let checkTimer = null;
  let checking = 0;
  let rulesValid = true;

  async function loadRuleBook() {
    try {
      const book = await get("/api/practice/rules", { auth: true });
      for (const option of RULE_OPTIONS) {
        if (option.kind !== "number") continue;
        const [low, high] = book.bounds[option.name] || book.other_bound;
        inputs[option.name].min = String(Math.max(low, option.min ?? low));
        inputs[option.name].max = String(Math.min(high, option.max ?? high));
      }
      presets = book.presets;
      for (const preset of presets) presetSelect.append(h("option", { value: preset.name }, preset.label));
    } catch (error) {
      showError(error, "Could not load the rule book");
    }
  }

  function applyPreset() {
    const preset = presets.find((p) => p.name === presetSelect.value);
    if (!preset) return;
    resetRules();
    for (const [name, value] of Object.entries(preset.rules)) {
      const input = inputs[name];
      if (!input) continue;
      if (input.type === "checkbox") input.checked = value;
      else input.value = String(value);
    }
    presetNote.textContent = preset.description;
    checkRules();
  }
  presetSelect.addEventListener("change", applyPreset);

  /** Ask the server whether the chosen options make a table; show why not, and where. */
  function checkRules() {
    clearTimeout(checkTimer);
    checkTimer = setTimeout(async () => {
      const mine = ++checking;
      let problem = "";
      try {
        await api("POST", "/api/practice/rules/check", { rules: chosenRules() }, { auth: true });
      } catch (error) {
        if (error.code !== "invalid_ruleset") return;
        problem = error.message;
      }
      if (mine !== checking) return; // a later change is being checked
      rulesValid = !problem;
      rulesProblem.textContent = problem ? `These rules make no table: ${problem}` : "";
      for (const option of RULE_OPTIONS) {
        const named = problem && new RegExp(`\\b${option.name}\\b`).test(problem);
        inputs[option.name].setAttribute("aria-invalid", named ? "true" : "false");
        inputs[option.name].closest(".field").classList.toggle("invalid", Boolean(named));
      }
      startButton.disabled = !rulesValid;
    }, 150);
  }

  const practiceError = h("p", { class: "form-error", role: "alert", "data-testid": "practice-error" });
  const startButton = h("button", { class: "btn primary big", type: "submit", "data-testid": "start-practice" }, "Shuffle and play");
  // untimed practice (the choice is remembered): no turn clock, the bots wait for you
  const untimed = h("input", { id: "practice-untimed", type: "checkbox", name: "untimed", "data-testid": "practice-untimed",
    onchange: () => localStorage.setItem("spades.untimed", untimed.checked ? "1" : "0") });
  untimed.checked = localStorage.getItem("spades.untimed") !== "0";
  const form = h("form", { class: "practice" },
    h("p", {}, "You and bots in the other seats (three at the ladder's four-seat table), unrated. It starts with the ladder's rules: open Rules to change any of them, five players included."),
    h("div", { class: "field" }, h("label", { for: "rule-preset" }, "Variant"), presetSelect, presetNote),
    h("details", {},
      h("summary", {}, "Rules (every option of the rule book)"),
      h("div", { class: "fields" }, fields),
      h("button", { class: "btn", type: "button", onclick: () => { resetRules(); presetSelect.value = ""; presetNote.textContent = ""; checkRules(); } }, "Back to the ladder's rules")),
    rulesProblem,
    h("div", { class: "field" }, h("label", { for: "practice-bots" }, "Bots"), bots),
    h("div", { class: "field check" }, untimed, h("label", { for: "practice-untimed" }, "Untimed: no turn clock, take as long as you like")),
    practiceError,
    startButton);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    practiceError.textContent = "";
    startButton.disabled = true;
    try {
      const opened = await api("POST", "/api/practice", { rules: chosenRules(), command_id: uuid(), untimed: untimed.checked, bots: bots.value }, { auth: true });
      location.hash = `#/table/${opened.game_id}`;
    } catch (error) {
      practiceError.textContent = `Could not open the table: ${error.words || error.message}`;
      startButton.disabled = false;
    }
  });
  function resetRules() {
    for (const option of RULE_OPTIONS) {
      const input = inputs[option.name];
      if (option.kind === "bool") input.checked = option.value;
      else input.value = String(option.value);
    }
  }
  // a table size with a ladder of its own starts from that ladder's rules (heads-up: no blind nil)
  // (chosen before the ladders have come: applied when they come, a slow server or not)
  let sizePending = false;
  function applyTableSize() {
    if (!ladderInfo.length) { sizePending = true; return; }
    sizePending = false;
    const ladder = ladderInfo.find((info) => String(info.players) === inputs.players.value);
    if (!ladder) return;
    for (const option of RULE_OPTIONS) {
      if (option.name === "players" || !(option.name in ladder.rules)) continue;
      const input = inputs[option.name];
      if (option.kind === "bool") input.checked = ladder.rules[option.name];
      else input.value = String(ladder.rules[option.name]);
    }
    checkRules();
  }
  inputs.players.addEventListener("change", applyTableSize);
  laddersLoaded = () => { if (sizePending) applyTableSize(); };
  form.addEventListener("change", (event) => { if (event.target !== presetSelect && event.target !== bots && event.target !== untimed) checkRules(); });
  form.addEventListener("input", (event) => { if (event.target.type === "number") checkRules(); });
  loadRuleBook();
  fill(practiceBox, h("h2", { id: "practice-title" }, "Practice against the computer"), form);

  // -- your games and watching ----------------------------------------------------------------

  async function loadGames() {
    fill(gamesBox, h("h2", { id: "games-title" }, "Your games"), h("p", { class: "muted" }, "Loading…"));
    try {
      const games = await get(`/api/players/${encodeURIComponent(me.player_id)}/games?limit=10`);
      fill(gamesBox, h("h2", { id: "games-title" }, "Your games"),
        games.length ? h("ul", { class: "games" }, games.map((game) => gameItem(game, me.player_id, refreshAfterLeave))) : h("p", { class: "muted" }, "No games yet."));
    } catch (error) {
      fill(gamesBox, h("h2", { id: "games-title" }, "Your games"), h("p", { class: "form-error" }, `Could not load your games: ${error.words || error.message}`));
    }
  }

  function refreshAfterLeave() {
    loadGames(); // the left table: finished (closed) or still played by the bots
    loadLive(); // a closed table leaves the live list
  }

  const watchInput = h("input", { id: "watch-id", placeholder: "game id", autocomplete: "off" });
  const watchForm = h("form", { class: "row" }, h("label", { for: "watch-id", class: "sr-only" }, "Game id"), watchInput,
    h("button", { class: "btn", type: "submit" }, "Watch"));
  watchForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const id = watchInput.value.trim();
    if (id) location.hash = `#/watch/${id}`;
  });
  const liveList = h("div", { "data-testid": "live-games" }, h("p", { class: "muted" }, "Loading the live games…"));
  fill(watchBox, h("h2", { id: "watch-title" }, "Watch a live game"), liveList,
    h("p", {}, "Or paste a game's id:"), watchForm);

  let liveTimer = null;
  async function loadLive() {
    clearTimeout(liveTimer);
    if (stopped) return;
    try {
      const games = await get("/api/games?limit=10");
      fill(liveList, games.length
        ? h("ul", { class: "games" }, games.map((game) => gameItem(game)))
        : h("p", { class: "muted" }, "No game is being played right now."));
    } catch (error) {
      fill(liveList, h("p", { class: "form-error" }, `Could not list the live games: ${error.words || error.message}`));
    }
    if (!stopped) liveTimer = setTimeout(loadLive, 2 * IDLE_POLL);
  }

  /** The friends' tables a seat is kept for you at (pushed as friends_table when made). */
  async function loadInvites() {
    try {
      const { mine } = await get("/api/friends", { auth: true });
      const waiting = mine.filter((t) => t.status === "waiting" && t.host !== me.player_id
        && t.seats.some((s) => s.player_id === me.player_id && !s.seated));
      fill(invites, waiting.map((t) => h("p", { "data-testid": `invitation-${t.code}` },
        `${playerName(t.host)} keeps a seat for you at a ${t.seats.length}-player table. `,
        h("a", { class: "btn", href: `#/join/${t.code}` }, "Join"))));
    } catch (error) {
      showError(error, "Could not read your invitations");
    }
  }

  // the server pushes match_found over a WebSocket; polling GET /api/queue stays as the fallback
  const listener = new GameSocket(null, {
    onMessage: (message) => {
      if (message.type === "friends_table") loadInvites();
      else if (message.type === "match_found" && wasQueued) location.hash = `#/table/${message.game_id}`;
      else if (message.type === "error") showError(new Error(`${message.message} (${message.code})`), "Match notices");
    },
  }).start();

  poll();
  loadInvites();
  loadLadders();
  loadGames();
  loadLive();
  return () => {
    stopped = true;
    friends.stop();
    clearTimeout(timer);
    clearTimeout(liveTimer);
    listener.stop();
  };
}

/** One game of a list: who played, and a link to play, watch or replay it; at a live game
 *  of your own, Leave (practice, casual) or Resign (ranked). `onLeft` runs once you left. */
export function gameItem(game, who = null, onLeft = null) {
  const me = session();
  const seated = me && game.players.includes(me.player_id);
  const action = game.finished
    ? h("a", { href: `#/replay/${game.game_id}` }, "Replay")
    : h("a", { href: `#/${seated ? "table" : "watch"}/${game.game_id}` }, seated ? "Back to the table" : "Watch");
  const leave = seated && !game.finished && who === me.player_id ? leaveControl(game.game_id, game.rated, onLeft) : null;
  return h("li", { "data-testid": `game-${game.game_id}` },
    h("span", { class: "pill" }, game.rated ? game.ladder : "practice"),
    " ", game.players.map(playerName).join(", "),
    " · ", h("time", { datetime: game.started_at }, when(game.started_at)),
    " · ", game.finished ? gameResult(game, who) : h("strong", {}, "live"),
    " · ", action,
    leave ? " · " : null, leave);
}

/** A "Leave" (unrated) or "Resign" (ranked) button that asks once more before it acts:
 *  POST /api/games/GAME/leave; `onLeft(answer)` runs once the seat is left. */
export function leaveControl(gameId, rated, onLeft = null) {
  const word = rated ? "Resign" : "Leave";
  const box = h("span", { class: "leave", "data-testid": `leave-${gameId}` });
  const warning = rated
    ? "Resign? A bot plays your seat out and the game counts as a loss for you."
    : "Leave? A bot takes your seat; a table with nobody left closes.";
  const ask = () => fill(box,
    h("span", { role: "alert" }, warning, " "),
    h("button", { class: "btn danger", type: "button", "data-testid": "leave-confirm", onclick: go }, `Yes, ${word.toLowerCase()}`),
    " ",
    h("button", { class: "btn", type: "button", onclick: idle }, "No, stay"));
  const idle = () => fill(box, h("button", { class: "btn", type: "button", "data-testid": "leave", onclick: ask }, word));
  async function go() {
    try {
      const answer = await api("POST", `/api/games/${encodeURIComponent(gameId)}/leave`, { command_id: uuid() }, { auth: true });
      fill(box, h("span", { class: "muted", role: "status" }, answer.message));
      if (onLeft) onLeft(answer);
    } catch (error) {
      showError(error, `Could not ${word.toLowerCase()}`);
      idle();
    }
  }
  idle();
  return box;
}

/** A finished game's result, from `who`'s side when he played: "won 512–310 · +18 (…)";
 *  the scores are the sides' points, `who`'s side (or the winner's) first. */
export function gameResult(game, who = null) {
  const n = game.players.length;
  const seat = typeof who === "string" ? game.players.indexOf(who) : -1;
  const score = (first) => [game.scores[first], ...game.scores.filter((_, t) => t !== first)].map(num).join("–");
  if (game.winner === null || game.winner === undefined || !game.scores.length) return "finished";
  if (game.reason === "abandoned") return h("span", { class: "muted" }, `closed, nobody left at it (${game.scores.map(num).join("–")})`);
  if (game.winner < 0) return h("span", { class: "result-draw" }, `draw ${game.scores.map(num).join("–")}`);
  const bits = [];
  if (seat >= 0) {
    const side = teamOf(seat, n);
    const won = side === game.winner;
    bits.push(h("strong", { class: won ? "result-won" : "result-lost" }, `${won ? "won" : "lost"} ${score(side)}`));
    const abandoned = (game.abandoned || []).includes(seat);
    if (game.rating) bits.push(" · ", h("span", { class: "rating-move" }, ratingChangeLine(game.rating, { won, abandoned })));
    else if (game.rated) bits.push(" · ", h("span", { class: "muted" }, "rating not updated yet"));
  } else {
    bits.push(`${teamName(game.winner, n, game.players)} won ${score(game.winner)}`);
  }
  return h("span", { class: "game-result" }, ...bits);
}
