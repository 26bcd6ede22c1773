// Friends' tables: #/friends (open one, open seats to join, your tables, join by code),
// #/friends/CODE (the waiting room: the link and code to share, seats, swap, start) and
// #/join/CODE (an invitation link: take a seat, then the waiting room).

import { api, get, session } from "../api.js";
import { RULE_OPTIONS } from "../cards.js";
import { GameSocket } from "../socket.js";
import { fill, h, keepFocus, notify, playerName, showError, uuid } from "../ui.js";

const ROOM_POLL = 3000;

const SEAT_KINDS = [
  ["host", "You"],
  ["open", "Open: whoever has the link or code"],
  ["player", "Kept for a player"],
  ["bot", "A bot"],
];

/** Mount #/friends: the "Play with friends" form, open seats, your tables, join by code;
 * `?invite=NAME` (the lobby's "Invite" beside a followed player) keeps him a seat: the
 * partner's at four seats, else the next one. */
export function mountFriends(root, query) {
  const me = session();
  const openBox = h("section", { class: "panel", "aria-labelledby": "friends-open-title" });
  const listBox = h("section", { class: "panel", "aria-labelledby": "friends-list-title", "data-testid": "friends-lobby" });
  const codeInput = h("input", { id: "join-code", placeholder: "K7QF3MZA", autocomplete: "off", autocapitalize: "characters", "data-testid": "join-code" });
  const codeForm = h("form", { class: "row" },
    h("label", { for: "join-code" }, "Have a code? "), codeInput,
    h("button", { class: "btn", type: "submit", "data-testid": "join-code-go" }, "Join"));
  codeForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const code = codeInput.value.replace(/[\s-]/g, "").toUpperCase();
    if (code) location.hash = `#/join/${encodeURIComponent(code)}`;
  });
  fill(root, h("div", { class: "lobby" },
    h("h1", { class: "wide" }, "Play with friends"),
    h("section", { class: "panel wide" }, codeForm),
    openBox, listBox));

  // -- the form ----------------------------------------------------------------------------
  const inputs = {};
  const fields = RULE_OPTIONS.map((option) => {
    const id = `friends-rule-${option.name}`;
    let input;
    if (option.kind === "bool") {
      input = h("input", { id, type: "checkbox", name: option.name });
      input.checked = option.value;
      inputs[option.name] = input;
      return h("div", { class: "field check" }, input, h("label", { for: id }, option.label));
    }
    if (option.kind === "select") {
      input = h("select", { id, name: option.name, "data-testid": `friends-rule-${option.name}` },
        option.choices.map(([value, text]) => h("option", { value: String(value), selected: value === option.value }, text)));
    } else {
      input = h("input", { id, type: "number", name: option.name, value: option.value, min: option.min, max: option.max, step: 1, inputmode: "numeric", "data-testid": `friends-rule-${option.name}` });
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
  const presetSelect = h("select", { id: "friends-preset", "data-testid": "friends-preset" }, h("option", { value: "" }, "The ladder's rules"));
  let presets = [];
  get("/api/practice/rules", { auth: true }).then((book) => {
    presets = book.presets;
    for (const preset of presets) presetSelect.append(h("option", { value: preset.name }, preset.label));
  }).catch((error) => showError(error, "Could not load the rule book"));
  presetSelect.addEventListener("change", () => {
    for (const option of RULE_OPTIONS) {
      const input = inputs[option.name];
      if (option.kind === "bool") input.checked = option.value;
      else input.value = String(option.value);
    }
    const preset = presets.find((p) => p.name === presetSelect.value);
    for (const [name, value] of Object.entries(preset ? preset.rules : {})) {
      const input = inputs[name];
      if (!input) continue;
      if (input.type === "checkbox") input.checked = value;
      else input.value = String(value);
    }
    renderSeats();
  });

  const seatsBox = h("fieldset", { class: "seats-choice", "data-testid": "seat-choices" });
  const seatState = []; // [{kind, player_id}] per seat
  function renderSeats() {
    const count = Number(inputs.players.value) || 4;
    while (seatState.length < count) seatState.push({ kind: seatState.length === 0 ? "host" : "open", player_id: "" });
    seatState.length = count;
    if (!seatState.some((s) => s.kind === "host")) seatState[0].kind = "host";
    fill(seatsBox, h("legend", {}, "Seats"), seatState.map((seat, i) => {
      const select = h("select", { id: `seat-kind-${i}`, "data-testid": `seat-kind-${i}` },
        SEAT_KINDS.map(([value, text]) => h("option", { value, selected: seat.kind === value }, text)));
      select.addEventListener("change", () => {
        if (select.value === "host") for (const other of seatState) if (other.kind === "host") other.kind = "open";
        seat.kind = select.value;
        renderSeats();
        document.getElementById(`seat-kind-${i}`)?.focus();
      });
      const name = seat.kind === "player"
        ? h("input", { id: `seat-player-${i}`, value: seat.player_id, placeholder: "their name", autocomplete: "off", "aria-label": `Player for seat ${i + 1}`, "data-testid": `seat-player-${i}`,
          oninput: (event) => { seat.player_id = event.target.value; } })
        : null;
      return h("div", { class: "field seat-choice" }, h("label", { for: `seat-kind-${i}` }, `Seat ${i + 1}`), h("div", { class: "row" }, select, name));
    }));
  }
  inputs.players.addEventListener("change", renderSeats);
  renderSeats();
  const invited = query && query.get("invite");
  if (invited) {
    seatState[seatState.length === 4 ? 2 : 1] = { kind: "player", player_id: invited };
    renderSeats();
  }

  const level = h("select", { id: "friends-bots", "data-testid": "friends-bots" },
    h("option", { value: "baseline" }, "Baseline: quick and sound"),
    h("option", { value: "strong" }, "Strong: searches every card"));
  const unlisted = h("input", { id: "friends-unlisted", type: "checkbox", "data-testid": "friends-unlisted" });
  const problem = h("p", { class: "form-error", role: "alert", "data-testid": "friends-error" });
  const submit = h("button", { class: "btn primary big", type: "submit", "data-testid": "open-friends-table" }, "Open the table");
  const form = h("form", { class: "practice" },
    h("p", {}, "Unrated. Choose the rules and who sits where; you get a link and a code to share."),
    h("div", { class: "field" }, h("label", { for: "friends-preset" }, "Variant"), presetSelect),
    h("details", {}, h("summary", {}, "Rules (every option of the rule book)"), h("div", { class: "fields" }, fields)),
    seatsBox,
    h("div", { class: "field" }, h("label", { for: "friends-bots" }, "Bots"), level),
    h("div", { class: "field check" }, unlisted, h("label", { for: "friends-unlisted" }, "Unlisted: not in the lobby or the live games until it is over")),
    problem, submit);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    submit.disabled = true;
    const seats = seatState.map((s) => (s.kind === "player" ? { kind: "player", player_id: s.player_id.trim() } : { kind: s.kind }));
    try {
      const table = await api("POST", "/api/friends",
        { rules: chosenRules(), seats, bot_level: level.value, unlisted: unlisted.checked, command_id: uuid() }, { auth: true });
      location.hash = `#/friends/${table.code}`;
    } catch (error) {
      problem.textContent = `Could not open the table: ${error.words || error.message}`;
      submit.disabled = false;
    }
  });
  fill(openBox, h("h2", { id: "friends-open-title" }, "Open a table"), form);

  // -- open seats and your tables ----------------------------------------------------------
  let stopped = false;
  let timer = null;
  async function loadList() {
    clearTimeout(timer);
    try {
      const lobby = await get("/api/friends", { auth: true });
      fill(listBox,
        h("h2", { id: "friends-list-title" }, "Your friends' tables"),
        lobby.mine.length ? h("ul", { class: "games" }, lobby.mine.map((t) => tableItem(t, me))) : h("p", { class: "muted" }, "None yet."),
        h("h2", {}, "Open seats"),
        lobby.open.length
          ? h("ul", { class: "games", "data-testid": "open-seats" }, lobby.open.map((t) => tableItem(t, me)))
          : h("p", { class: "muted" }, "No public table has a seat open right now."));
    } catch (error) {
      fill(listBox, h("p", { class: "form-error" }, `Could not list the tables: ${error.words || error.message}`));
    }
    if (!stopped) timer = setTimeout(loadList, 10000);
  }
  loadList();
  return () => { stopped = true; clearTimeout(timer); };
}

function tableItem(table, me) {
  const people = table.seats.map((s) => (s.kind === "bot" ? "bot" : s.player_id ? playerName(s.player_id) : "open")).join(", ");
  const go = table.status === "started" && table.game_id
    ? h("a", { href: `#/table/${table.game_id}` }, "To the game")
    : h("a", { href: `#/${table.seats.some((s) => s.player_id === me.player_id && s.seated) ? "friends" : "join"}/${table.code}` },
      table.host === me.player_id ? "Waiting room" : "Join");
  return h("li", { "data-testid": `friends-table-${table.code}` },
    h("span", { class: "pill" }, `${table.seats.length} players`), " ",
    `${playerName(table.host)}'s table: ${people}`,
    table.open_seats ? ` · ${table.open_seats} open` : "", " · ", go);
}

/** Mount #/join/CODE: take a seat (yours if one is kept for you), then the waiting room. */
export function mountJoin(root, code) {
  fill(root, h("p", { class: "muted" }, "Joining the table…"));
  let gone = false;
  api("POST", `/api/friends/${encodeURIComponent(code)}/join`, {}, { auth: true })
    .catch((error) => {
      if (error.code === "unknown_code") {
        if (!gone) fill(root, h("p", { class: "form-error", "data-testid": "join-error" }, error.words || error.message), h("a", { href: "#/friends" }, "Play with friends"));
        return "stay";
      }
      notify(`Could not take a seat: ${error.words || error.message}`);
      return null;
    })
    .then((outcome) => { if (!gone && outcome !== "stay") location.replace(`#/friends/${encodeURIComponent(code)}`); });
  return () => { gone = true; };
}

/** Mount #/friends/CODE: the waiting room. */
export function mountWaitingRoom(root, code) {
  const me = session();
  let table = null;
  let stopped = false;
  let timer = null;
  let busy = false;
  const box = h("section", { class: "panel waiting-room", "data-testid": "waiting-room", "aria-live": "polite" });
  fill(root, h("h1", {}, "Friends' table"), box);

  async function call(path, body) {
    if (busy) return; // one change at a time (the buttons stay focusable meanwhile)
    busy = true;
    try {
      table = await api("POST", `/api/friends/${encodeURIComponent(code)}${path}`, body, { auth: true });
    } catch (error) {
      showError(error, "Refused");
    }
    busy = false;
    render();
  }
  async function load() {
    clearTimeout(timer);
    try {
      table = await get(`/api/friends/${encodeURIComponent(code)}`, { auth: true });
    } catch (error) {
      fill(box, h("p", { class: "form-error", "data-testid": "join-error" }, error.words || error.message));
      return;
    }
    render();
    if (!stopped && table.status === "waiting") timer = setTimeout(load, ROOM_POLL);
  }

  function render() {
    if (!table || stopped) return;
    keepFocus(draw);
  }

  function draw() {
    const mine = table.seats.find((s) => s.player_id === me.player_id && s.seated);
    if (table.status === "started" && table.game_id && mine) {
      location.hash = `#/table/${table.game_id}`;
      return;
    }
    const host = table.host === me.player_id;
    const url = `${location.origin}${table.link}`;
    const linkInput = h("input", { value: url, readonly: true, "aria-label": "Invitation link", "data-testid": "invite-link", size: 36 });
    const copy = h("button", { class: "btn", type: "button", onclick: async () => {
      try { await navigator.clipboard.writeText(url); notify("Link copied", "info"); } catch { linkInput.select(); }
    } }, "Copy link");
    const n = table.seats.length;
    const empty = table.seats.filter((s) => s.kind !== "bot" && !s.seated).length;
    const seatRows = table.seats.map((seat) => {
      let who;
      if (seat.kind === "bot") who = "Bot";
      else if (seat.seated) who = seat.player_id === me.player_id ? `${playerName(seat.player_id)} (you)` : playerName(seat.player_id);
      else if (seat.kind === "reserved") who = `Kept for ${playerName(seat.player_id)} (not here yet)`;
      else who = "Open";
      const canTake = table.status === "waiting" && !mine && !seat.seated && seat.kind !== "bot"
        && (seat.kind === "open" || seat.player_id === me.player_id);
      return h("li", { "data-testid": `room-seat-${seat.seat}` },
        h("strong", {}, `Seat ${seat.seat + 1}: `), who,
        canTake ? [" ", h("button", { class: "btn", type: "button", "data-testid": `take-seat-${seat.seat}`, "data-key": `take-${seat.seat}`, onclick: () => call("/join", { seat: seat.seat }) }, "Take this seat")] : null,
        host && table.status === "waiting" && n > 1
          ? [" ", h("button", { class: "btn", type: "button", "data-testid": `swap-seat-${seat.seat}`, "data-key": `swap-${seat.seat}`, "aria-label": `Swap seat ${seat.seat + 1} with seat ${(seat.seat + 1) % n + 1}`,
            onclick: () => call("/swap", { seats: [seat.seat, (seat.seat + 1) % n] }) }, `⇅ with seat ${(seat.seat + 1) % n + 1}`)]
          : null);
    });
    let actions = null;
    if (table.status === "waiting" && host) {
      actions = h("p", { class: "row" },
        h("button", { class: "btn primary", type: "button", disabled: empty > 0, "data-testid": "start-friends", "data-key": "start", onclick: () => call("/start", {}) }, "Start"),
        empty > 0 ? h("button", { class: "btn", type: "button", "data-testid": "fill-start-friends", "data-key": "fill", onclick: () => call("/start", { fill_with_bots: true }) }, `Fill ${empty} seat${empty === 1 ? "" : "s"} with bots and start`) : null,
        h("button", { class: "btn danger", type: "button", "data-key": "close", onclick: () => call("/leave") }, "Close the table"));
    } else if (table.status === "waiting" && mine) {
      actions = h("p", { class: "row" }, h("span", { class: "muted" }, "Waiting for the host to start. "),
        h("button", { class: "btn", type: "button", "data-key": "get-up", onclick: () => call("/leave") }, "Get up"));
    } else if (table.status === "started" && table.game_id) {
      actions = h("p", {}, "The game has started. ", h("a", { href: `#/watch/${table.game_id}` }, "Watch it"));
    } else if (table.status === "closed") {
      actions = h("p", { class: "muted" }, "The host closed this table.");
    }
    fill(box,
      h("p", {}, `${playerName(table.host)}'s table · ${n} players · unrated · ${table.unlisted ? "unlisted" : "public"}`),
      h("p", {}, "Code: ", h("strong", { class: "table-code", "data-testid": "table-code" }, table.code)),
      h("div", { class: "row" }, linkInput, copy),
      h("ul", { class: "room-seats" }, seatRows),
      actions);
  }

  // changes come over the WebSocket (friends_table); the poll above is the fallback
  const listener = new GameSocket(null, {
    onMessage: (message) => {
      if (message.type === "friends_table" && message.table.code === code.toUpperCase()) {
        table = message.table;
        render();
      }
    },
    onState: () => {},
  }).start();
  load();
  return () => { stopped = true; clearTimeout(timer); listener.stop(); };
}
