// Small DOM helpers shared by the pages: building elements, notices, formatting.

/**
 * Build an element: h("button", {class: "card", onclick: f, "aria-label": "x"}, "text", child).
 * Attributes set to false/null/undefined are left out; `true` sets an empty attribute.
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      node.className = value;
    } else if (key === "dataset") {
      Object.assign(node.dataset, value);
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace the children of `node` (keeping the focused element's key for `refocus`). */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/**
 * Run `render()`, then give the focus back to the element with the same `data-key` as the one
 * focused before (re-rendering must not throw a keyboard user out of the hand).
 */
export function keepFocus(render) {
  const active = document.activeElement;
  const key = active && active.dataset ? active.dataset.key : undefined;
  render();
  if (key && document.activeElement !== active) {
    const again = document.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again && !again.disabled) again.focus({ preventScroll: true });
  }
}

/** Show a notice: `error` (default, stays until dismissed) or `info` (fades). */
export function notify(text, kind = "error") {
  const box = document.getElementById("toasts");
  if (!box) return;
  const close = h("button", { class: "toast-close", "aria-label": "Dismiss" }, "×");
  const toast = h("div", { class: `toast toast-${kind}` }, h("span", {}, text), close);
  close.addEventListener("click", () => toast.remove());
  box.append(toast);
  if (kind !== "error") setTimeout(() => toast.remove(), 6000);
  while (box.children.length > 4) box.firstChild.remove();
}

/** Show an error (an ApiError or any Error) in words. */
export function showError(error, context = "") {
  const words = error && error.words ? error.words : String(error && error.message ? error.message : error);
  notify(context ? `${context}: ${words}` : words);
}

/** Set the connection status line ("" hides it). */
export function status(text) {
  const line = document.getElementById("status");
  if (!line) return;
  line.textContent = text;
  line.hidden = !text;
}

/** Return "m:ss" for a number of seconds. */
export function clock(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** Return a player id as people read it ("bot:2" -> "Bot 2"). */
export function playerName(id) {
  if (!id) return "?";
  if (id.startsWith("bot:")) return `Bot ${id.slice(4)}`;
  return id;
}

/** Return a signed number: +52, −100, 0. */
export function signed(n) {
  if (n > 0) return `+${n}`;
  if (n < 0) return `−${-n}`;
  return "0";
}

/** Return a UUID (crypto.randomUUID needs a secure context; a phone on the LAN has none). */
export function uuid() {
  if (crypto.randomUUID && window.isSecureContext) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((v) => v.toString(16).padStart(2, "0")).join("");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Return a date as a short local string. */
export function when(value) {
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A link to a route: h("a", {href: "#/..."}). */
export function link(route, ...children) {
  return h("a", { href: `#${route}` }, ...children);
}

/** Return a whole number with a true minus sign (U+2212), as every score and rating is shown. */
export function num(n) {
  return n < 0 ? `−${-n}` : String(n);
}

/** Return a shown rating: "1532", or "1532?" while provisional (fewer than 10 rated games). */
export function ratingText(display, provisional) {
  return `${num(display)}${provisional ? "?" : ""}`;
}

/** Return one line explaining how a rated game moved a rating (an entry of the history or a
 *  game list's `rating`), e.g. "+18 (1500? → 1518?): a win against a side rated about even". */
export function ratingChangeLine(move, { won = null, abandoned = false } = {}) {
  const delta = move.display_after - move.display_before;
  const provisional = move.provisional ?? move.games < 10;
  const wasProvisional = move.provisional_before ?? (move.games !== undefined ? move.games - 1 < 10 : provisional);
  const head = `${signed(delta)} (${ratingText(move.display_before, wasProvisional)} → ${ratingText(move.display_after, provisional)})`;
  const why = [];
  if (abandoned) why.push("a seat left to the bot counts as a loss");
  else if (won === true) why.push("for the win");
  else if (won === false) why.push("for the loss");
  if (provisional) why.push("a provisional rating (under 10 rated games) moves faster");
  else if (won !== null && Math.abs(delta) < 8) why.push("a result the ratings expected moves them little");
  return why.length ? `${head}: ${why.join("; ")}` : head;
}
