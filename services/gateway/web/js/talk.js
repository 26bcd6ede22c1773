// Table talk (PROTOCOL.md "Table talk"): the preset buttons of the bidding and of the play,
// free text where the table allows it, what was said, and a player's menu (follow, mute,
// block, report). Everything said is shown as text (h() makes text nodes), never as HTML.

import { api, session } from "./api.js";
import { seatName } from "./cards.js";
import { h, fill, notify, playerName, showError } from "./ui.js";

export const BID_PRESETS = {
  sure: "I can take {n}",
  maybe: "Maybe {n}",
  half: "And a half, maybe",
  nil: "I might go nil",
  no_help: "No help here",
  how_many: "How many can you take?",
};
export const TABLE_PRESETS = {
  hello: "Hello!",
  nice: "Nice!",
  sorry: "Sorry",
  thanks: "Thanks",
  well_played: "Well played",
  good_game: "Good game",
};
const COUNTED = new Set(["sure", "maybe"]);

/** What each refusal of a Say means, for the table's notices. */
export const TALK_REFUSALS = {
  talk_not_seated: "Only the seated players talk",
  talk_unknown_preset: "Not something one may say",
  talk_wrong_phase: "Not now: bidding talk belongs to the bidding, courtesies to the play",
  talk_no_partner: "No partner at this table",
  talk_unavailable: "Not available",
  talk_free_text_off: "This table allows the presets only",
  talk_too_long: "Too long",
  talk_flood: "Too much talk: wait a moment",
};
const MAX_TEXT = 200;

/** Return the words of a Talked event ("I can take 4"; free text as written). */
export function phrase(event) {
  if (event.text) return event.text;
  const template = BID_PRESETS[event.preset] || TABLE_PRESETS[event.preset] || event.preset;
  return template.replace("{n}", String(event.n));
}

/** Return one line of what was said: who, to whom, the words (`report`: a flag button). */
export function talkLine(event, players, seq, report = null) {
  const n = players.length;
  const who = playerName(players[event.seat]);
  const to = event.to === "partner" ? " to partner" : "";
  return h("li", { class: `talk-line talk-${event.to}`, "data-seq": seq },
    h("span", { class: "talk-who" }, `${who} (${seatName(event.seat, n)})${to}: `),
    h("span", { class: "talk-said" }, phrase(event)),
    report ? h("button", { class: "talk-report", title: "Report this message", "aria-label": `Report what ${who} said`, onclick: report }, "⚑") : null);
}

/** Report message ``seq`` of a game (reason "abuse"). */
async function reportMessage(gameId, playerId, seq) {
  try {
    await api("POST", "/api/social/reports", { player_id: playerId, reason: "abuse", game_id: gameId, seq }, { auth: true });
    notify("Report sent: an operator will read it with the talk around it", "info");
  } catch (error) {
    showError(error, "Report");
  }
}

/**
 * The talk box of a table: `heard(event, seq, game)` for every Talked/TalkWithheld event,
 * `render(game, role)` with the page. `send(command)` sends a seat command (a Say).
 */
export class TalkBox {
  constructor(gameId, send) {
    this.gameId = gameId;
    this.send = send;
    this.lines = []; // [seq, event]
    this.count = 3;
    this.muted = new Set();
    this.menus = new Map(); // player -> his menu (playerMenu)
    this.freeText = false;
    this.refresh = () => {}; // redraws the page (set by the table)
    this.node = h("section", { class: "talk", "aria-label": "Table talk" });
    this.log = h("ol", { class: "talk-log", "aria-live": "polite", "data-testid": "talk-log" });
    this.controls = h("div", { class: "talk-controls" });
    fill(this.node, h("h3", {}, "Table talk"), this.log, this.controls);
    this.loadMutes();
  }

  async loadMutes() {
    if (!session()) return;
    try {
      const found = await api("GET", `/api/social/mutes/${this.gameId}`, undefined, { auth: true });
      this.muted = new Set(found.players);
      this.menus.clear(); // their "Mute here" / "Unmute" follow the list
      this.refresh();
    } catch {
      // talk works without the list; muted players' words are filtered by the server anyway
    }
  }

  heard(event, seq, game) {
    if (event.type !== "Talked") return; // withheld: not for us (now)
    this.lines.push([seq, event]);
    if (event.seat !== game.seat) {
      const who = playerName(game.players[event.seat]);
      if (!this.muted.has(game.players[event.seat])) notify(`${who}: ${phrase(event)}`, "info");
    }
  }

  say(command) {
    this.send({ type: "Say", ...command });
  }

  render(game, role) {
    const players = game.players;
    fill(this.log, this.lines
      .filter(([, e]) => !this.muted.has(players[e.seat]))
      .slice(-30)
      .map(([seq, e]) => talkLine(e, players, seq,
        e.seat !== game.seat && session() ? () => reportMessage(this.gameId, players[e.seat], seq) : null)));
    if (!this.lines.length) this.log.append(h("li", { class: "muted" }, "Nothing said yet."));
    const seated = role === "seat" && game.seat >= 0 && game.phase !== "over";
    if (!seated) {
      fill(this.controls, role === "seat" ? null : h("p", { class: "muted" }, "Spectators watch; they do not talk."));
      return;
    }
    const bidding = game.phase === "bid";
    const buttons = [];
    if (bidding && game.n === 4) {
      const picker = h("select", { class: "talk-n", "aria-label": "Tricks", "data-key": "talk-n" },
        Array.from({ length: 13 }, (_, i) => h("option", { value: i + 1, selected: i + 1 === this.count }, String(i + 1))));
      picker.addEventListener("change", () => { this.count = Number(picker.value); });
      buttons.push(h("span", { class: "talk-hint muted" }, "To partner:"), picker);
      for (const [preset, words] of Object.entries(BID_PRESETS)) {
        const counted = COUNTED.has(preset);
        buttons.push(h("button", {
          class: "talk-preset", "data-key": `talk-${preset}`, "data-testid": `talk-${preset}`,
          onclick: () => this.say(counted ? { preset, n: this.count } : { preset }),
        }, counted ? words.replace("{n}", "N") : words));
      }
    } else if (!bidding) {
      for (const [preset, words] of Object.entries(TABLE_PRESETS)) {
        buttons.push(h("button", {
          class: "talk-preset", "data-key": `talk-${preset}`, "data-testid": `talk-${preset}`,
          onclick: () => this.say({ preset }),
        }, words));
      }
    }
    let form = null;
    if (this.freeText) {
      const input = h("input", {
        type: "text", maxlength: MAX_TEXT, "aria-label": "Say to the table", placeholder: "Say to the table…",
        "data-key": "talk-text",
      });
      form = h("form", { class: "talk-form", onsubmit: (e) => {
        e.preventDefault();
        const text = input.value.trim();
        if (text) this.say({ text });
        input.value = "";
      } }, input, h("button", { type: "submit" }, "Say"));
    }
    fill(this.controls, h("div", { class: "talk-buttons", role: "group", "aria-label": "Say" }, buttons), form);
  }
}

/**
 * Return the menu of another player at a table: follow, mute here, block, report. Made once per
 * player and reused, so a menu left open stays open while the table redraws.
 */
export function playerMenu(playerId, gameId, talk) {
  if (talk.menus.has(playerId)) return talk.menus.get(playerId);
  const act = async (label, method, path, body) => {
    try {
      await api(method, path, body, { auth: true });
      notify(label, "info");
      return true;
    } catch (error) {
      showError(error, label);
      return false;
    }
  };
  const enc = encodeURIComponent(playerId);
  const muteButton = h("button", {}, talk.muted.has(playerId) ? "Unmute" : "Mute here");
  muteButton.addEventListener("click", async () => {
    const muted = talk.muted.has(playerId);
    const done = await act(muted ? `${playerId} unmuted` : `${playerId} muted at this table`,
      muted ? "DELETE" : "PUT", `/api/social/mutes/${gameId}/${enc}`);
    if (!done) return;
    if (muted) talk.muted.delete(playerId); else talk.muted.add(playerId);
    muteButton.textContent = muted ? "Mute here" : "Unmute";
    talk.refresh();
  });
  const reason = h("select", { "aria-label": "Reason" },
    ["abuse", "cheating", "spam", "other"].map((r) => h("option", { value: r }, r)));
  const menu = h("details", { class: "player-menu", "data-testid": `menu-${playerId}` },
    h("summary", { "aria-label": `Menu of ${playerName(playerId)}`, title: "Follow, mute, block, report" }, "⋯"),
    h("div", { class: "player-menu-body" },
      h("button", { onclick: () => act(`Following ${playerId}`, "PUT", `/api/social/following/${enc}`) }, "Follow"),
      muteButton,
      h("button", { onclick: () => act(`${playerId} blocked`, "PUT", `/api/social/blocks/${enc}`) }, "Block"),
      h("span", { class: "report" }, reason,
        h("button", {
          onclick: () => act(`Report of ${playerId} sent`, "POST", "/api/social/reports",
            { player_id: playerId, reason: reason.value, game_id: gameId }),
        }, "Report"))));
  talk.menus.set(playerId, menu);
  return menu;
}
