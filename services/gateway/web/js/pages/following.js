// The players you follow, in the lobby: who is online, and the table each sits at (a link to
// watch it). GET /api/social/following; follow from a player's menu at a table or by name here.

import { api, get } from "../api.js";
import { fill, h, playerName, showError } from "../ui.js";

const POLL = 30000;

/** Return the lobby's "Friends" panel: {node, stop}. */
export function followedPanel() {
  const list = h("ul", { class: "followed", "data-testid": "followed", "aria-live": "polite" });
  const name = h("input", { type: "text", "aria-label": "Player to follow", placeholder: "player name", maxlength: 24 });
  const form = h("form", { class: "talk-form", onsubmit: async (e) => {
    e.preventDefault();
    const who = name.value.trim().toLowerCase();
    if (!who) return;
    try {
      await api("PUT", `/api/social/following/${encodeURIComponent(who)}`, undefined, { auth: true });
      name.value = "";
      load();
    } catch (error) {
      showError(error, `Could not follow ${who}`);
    }
  } }, name, h("button", { type: "submit" }, "Follow"));
  const node = h("section", { class: "panel", "aria-labelledby": "friends-title" },
    h("h2", { id: "friends-title" }, "Friends"), list, form);
  let timer = null;
  let stopped = false;

  async function unfollow(id) {
    try {
      await api("DELETE", `/api/social/following/${encodeURIComponent(id)}`, undefined, { auth: true });
    } catch (error) {
      showError(error, `Could not stop following ${id}`);
    }
    load();
  }

  async function load() {
    clearTimeout(timer);
    if (stopped) return;
    try {
      const found = await get("/api/social/following", { auth: true });
      fill(list, found.players.length
        ? found.players.map((p) => h("li", { "data-testid": `followed-${p.player_id}` },
            h("a", { href: `#/player/${encodeURIComponent(p.player_id)}` }, playerName(p.name)),
            " · ",
            p.online
              ? h("span", { class: "online" }, "online", p.game_id ? [" at ", h("a", { href: `#/watch/${p.game_id}` }, "a table")] : null)
              : h("span", { class: "muted" }, "offline"),
            " ",
            h("a", { class: "btn", href: `#/friends?invite=${encodeURIComponent(p.player_id)}`, "data-testid": `invite-${p.player_id}`,
              "aria-label": `Invite ${p.name} to a friends' table` }, "Invite"),
            " ",
            h("button", { class: "link-button", "aria-label": `Stop following ${p.name}`, onclick: () => unfollow(p.player_id) }, "×")))
        : h("li", { class: "muted" }, "You follow nobody yet: follow a player by name, or from his menu (⋯) at a table."));
    } catch (error) {
      showError(error, "Could not read whom you follow");
    }
    if (!stopped) timer = setTimeout(load, POLL);
  }

  load();
  return { node, stop: () => { stopped = true; clearTimeout(timer); } };
}
