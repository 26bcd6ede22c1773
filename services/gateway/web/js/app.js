// The client's entry: hash routes to pages, the navigation bar, the session.
//
// Routes: #/login, #/signup, #/lobby, #/table/GAME, #/watch/GAME, #/replay/GAME?at=N,
// #/ladder/LADDER, #/player/ID, #/friends, #/friends/CODE (a waiting room), #/join/CODE (an
// invitation link), #/events, #/events/ID (a duplicate event). A page is
// `mount(root, params, query) -> cleanup`; a page may also return {cleanup, update(query)} to
// follow query changes without mounting again.

import { logout, onSession, resumeSession, session } from "./api.js";
import { mountEvent, mountEvents } from "./pages/events.js";
import { mountFriends, mountJoin, mountWaitingRoom } from "./pages/friends.js";
import { mountLadder } from "./pages/ladder.js";
import { mountLobby } from "./pages/lobby.js";
import { mountLogin } from "./pages/login.js";
import { mountPlayer } from "./pages/player.js";
import { mountReplay } from "./pages/replay.js";
import { mountTable } from "./pages/table.js";
import { fill, h, notify } from "./ui.js";

const ROUTES = [
  { pattern: /^\/login$/, mount: (root) => mountLogin(root, "login") },
  { pattern: /^\/signup$/, mount: (root) => mountLogin(root, "signup") },
  { pattern: /^\/lobby$/, mount: (root) => mountLobby(root), auth: true },
  { pattern: /^\/friends$/, mount: (root, _, query) => mountFriends(root, query), auth: true },
  { pattern: /^\/friends\/([A-Za-z0-9]+)$/, mount: (root, [code]) => mountWaitingRoom(root, code), auth: true },
  { pattern: /^\/join\/([A-Za-z0-9 -]+)$/, mount: (root, [code]) => mountJoin(root, code), auth: true },
  { pattern: /^\/events$/, mount: (root) => mountEvents(root), auth: true },
  { pattern: /^\/events\/([0-9a-f-]+)$/i, mount: (root, [id]) => mountEvent(root, id) },
  { pattern: /^\/table\/([0-9a-f-]+)$/i, mount: (root, [id]) => mountTable(root, id), auth: true },
  { pattern: /^\/watch\/([0-9a-f-]+)$/i, mount: (root, [id]) => mountTable(root, id, { watching: true }) },
  { pattern: /^\/replay\/([0-9a-f-]+)$/i, mount: (root, [id], query) => mountReplay(root, id, query) },
  { pattern: /^\/ladder\/([^/]+)$/, mount: (root, [ladder], query) => mountLadder(root, ladder, query) },
  { pattern: /^\/ladder$/, mount: (root, _, query) => mountLadder(root, "standard", query) },
  { pattern: /^\/player\/(.+)$/, mount: (root, [id]) => mountPlayer(root, id) },
];

let current = null; // {path, cleanup, update}

function parse() {
  const raw = decodeURIComponent(location.hash.replace(/^#/, "")) || "/";
  const [path, search = ""] = raw.split("?");
  return { path, query: new URLSearchParams(search) };
}

function route() {
  const { path, query } = parse();
  if (current && current.path === path && current.update) {
    current.update(query);
    return;
  }
  const found = ROUTES.map((r) => [r, path.match(r.pattern)]).find(([, m]) => m);
  if (!found) {
    location.replace(session() ? "#/lobby" : "#/login");
    return;
  }
  const [routeDef, match] = found;
  if (routeDef.auth && !session()) {
    sessionStorage.setItem("spades.after-login", location.hash);
    location.replace("#/login");
    return;
  }
  if (current && current.cleanup) current.cleanup();
  const root = document.getElementById("main");
  fill(root);
  const mounted = routeDef.mount(root, match.slice(1).map(decodeURIComponent), query);
  current = { path, auth: routeDef.auth, ...(typeof mounted === "function" ? { cleanup: mounted } : mounted || {}) };
  renderNav();
  window.scrollTo(0, 0);
}

function renderNav() {
  const nav = document.getElementById("nav");
  const me = session();
  const here = parse().path;
  const item = (href, text) => h("a", { href, "aria-current": here === href.slice(1) ? "page" : false }, text);
  if (me) {
    fill(nav,
      item("#/lobby", "Lobby"),
      item("#/friends", "Friends"),
      item("#/events", "Events"),
      item("#/ladder/standard", "Ladder"),
      item(`#/player/${encodeURIComponent(me.player_id)}`, me.name || me.player_id),
      h("button", { class: "linkish", onclick: () => { logout(); location.hash = "#/login"; } }, "Log out"));
  } else {
    fill(nav, item("#/login", "Log in"), item("#/signup", "Sign up"), item("#/ladder/standard", "Ladder"));
  }
}

function start() {
  // a stored session whose access token ran out is renewed with its refresh token
  if (session() && !resumeSession()) notify("Your session expired: log in again.", "info");
  onSession((value) => {
    renderNav();
    // logged out (in another tab too): a page for members goes to the login page
    if (!value && current && current.auth) location.hash = "#/login";
  });
  window.addEventListener("hashchange", route);
  window.addEventListener("unhandledrejection", (event) => {
    const error = event.reason;
    notify(`Something went wrong: ${error && error.words ? error.words : error && error.message ? error.message : error}`);
  });
  document.querySelector("[data-skip]").addEventListener("click", (event) => {
    event.preventDefault();
    document.getElementById("main").focus();
  });
  route();
}

start();
