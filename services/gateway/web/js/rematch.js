// The rematch at a finished game: "Rematch" (unrated: everyone who played accepts, then the
// same seats play again, the deal passed on) or "Play again" (ranked: a new queue entry).

import { api, get, session } from "./api.js";
import { fill, h, playerName, showError } from "./ui.js";

/** Return {node, told(message)}: the control of `gameId`'s rematch; `told` takes a `rematch`
 *  WebSocket message. Everyone accepted: the page goes to the new game. */
export function rematchControl(gameId, { rated, ladder }) {
  const me = session();
  const node = h("div", { class: "rematch", "data-testid": "rematch", "aria-live": "polite" });
  const path = `/api/games/${encodeURIComponent(gameId)}/rematch`;
  let state = null; // the GET/POST answer, or {refused: message}
  let busy = false;

  if (rated) {
    const again = async () => {
      busy = true;
      render();
      try {
        await api("POST", "/api/queue", { ladder }, { auth: true });
        location.hash = "#/lobby";
      } catch (error) {
        showError(error, "Could not queue again");
      }
      busy = false;
      render();
    };
    const render = () => fill(node,
      h("button", { class: "btn primary", type: "button", disabled: busy, "data-testid": "play-again", onclick: again }, `Play again (${ladder} queue)`),
      h("span", { class: "muted" }, " A ranked game has no rematch: the queue finds your next table."));
    render();
    return { node, told: () => {} };
  }

  async function answer(accept) {
    busy = true;
    render();
    try {
      state = await api("POST", path, { accept }, { auth: true });
    } catch (error) {
      showError(error, "Rematch");
    }
    busy = false;
    render();
  }

  function render() {
    if (!state) return fill(node);
    if (state.refused) return fill(node, h("p", { class: "muted", "data-testid": "rematch-refused" }, `No rematch: ${state.refused}`));
    if (state.new_game_id) {
      location.hash = `#/table/${state.new_game_id}`;
      return fill(node, h("p", {}, "Rematch! To the new game…"));
    }
    if (state.declined) return fill(node, h("p", { class: "muted", "data-testid": "rematch-declined" }, `${playerName(state.declined)} declined the rematch.`));
    const accepted = state.accepted || [];
    const waiting = state.players.filter((p) => !accepted.includes(p));
    if (accepted.includes(me.player_id)) {
      return fill(node, h("p", { "data-testid": "rematch-waiting" }, `Rematch asked: waiting for ${waiting.map(playerName).join(", ")}.`));
    }
    const asked = accepted.length ? h("p", { "data-testid": "rematch-offer" }, `${accepted.map(playerName).join(", ")} want${accepted.length === 1 ? "s" : ""} a rematch.`) : null;
    return fill(node, asked, h("p", { class: "row" },
      h("button", { class: "btn primary", type: "button", disabled: busy, "data-testid": "rematch-accept", onclick: () => answer(true) }, accepted.length ? "Accept the rematch" : "Rematch"),
      accepted.length ? h("button", { class: "btn", type: "button", disabled: busy, "data-testid": "rematch-decline", onclick: () => answer(false) }, "No, thanks") : null));
  }

  get(path, { auth: true })
    .then((found) => { state = found; })
    .catch((error) => { state = { refused: error.words || error.message }; })
    .then(render);
  return {
    node,
    told(message) {
      if (message.game_id !== gameId) return;
      state = { ...message };
      render();
    },
  };
}
