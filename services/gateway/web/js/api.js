// The public HTTP API (/api, described at /schema) and the session's tokens.
//
// A login answers a short-lived access token and the refresh token of a session on the
// server; both live in localStorage. The password is kept nowhere: the form hands it to
// login() once. The tab trades the refresh token at POST /api/tokens/refresh for a new access
// token and the session's next refresh token a minute before the access token runs out, when
// the server answers `token_expired`, and on page load when the stored one has run out, so a
// reload stays logged in as long as the session lasts (SPADES_SESSION_DAYS without use).
// Logging out ends the session on the server.
//
// A refresh token works once, and the server ends the session when one is presented twice (a
// stolen copy), bar a short grace for the token the last renewal replaced (a tab whose
// localStorage has not yet seen its sibling's renewal: Chromium carries it across a moment
// late). The tabs of a browser share the stored session, so two of them should not trade the
// same token: renewals are serialised across tabs by a Web Lock, and inside it a tab
// first re-reads localStorage and takes the tokens another tab stored meanwhile instead of
// trading again; a tab that sees another's renewal (the storage event) reschedules its own.
// After a refusal the tab looks again, and gives up only when the refused token is still the
// one stored. (Without Web Locks, on a plain-http page off localhost, renewal times are spread
// by a few random seconds, which makes two tabs trading at once unlikely, not impossible.)

import { notify, uuid } from "./ui.js";

const KEY = "spades.session";
const LOCK = "spades.session.renewal";
const RENEW_MARGIN = 60; // seconds before expiry when a tab renews the access token
const SPREAD = 10; // up to this many seconds earlier, at random: tabs seldom renew at once
const FRESH = 5; // an access token with less left than this is renewed before it is sent
const RETRY = 15; // seconds before trying again when the server could not be reached

/** An error answer of the API: `code` for programs, `message` for people. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
  /** The error in words, as shown to people. */
  get words() {
    return `${this.message} (${this.code})`;
  }
}

let renewTimer = null;
let renewing = null; // this tab's renewal in flight: every caller waits for the same one
const listeners = new Set();

/** Return the stored session {token, refresh_token, player_id, name, bot, expires_at,
 * refresh_expires_at}, or null. */
export function session() {
  try {
    return JSON.parse(localStorage.getItem(KEY)) || null;
  } catch {
    return null;
  }
}

/** Call `fn(session)` whenever the session changes (login, renewal, logout; other tabs too). */
export function onSession(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function tell(value) {
  for (const fn of listeners) fn(value);
}

function store(value) {
  if (value) localStorage.setItem(KEY, JSON.stringify(value));
  else localStorage.removeItem(KEY);
  tell(value);
}

// Another tab logged in, renewed or logged out: follow it (and leave the renewal to it).
window.addEventListener("storage", (event) => {
  if (event.key !== KEY && event.key !== null) return;
  const value = session();
  if (value) scheduleRenewal(value);
  else clearTimeout(renewTimer);
  tell(value);
});

// A random token this browser keeps for good (logging out leaves it): the gateway records it
// with the address at login and on joining a queue, so accounts played from one device are
// never seated at one ranked table (deploy/README.md, "Fair play").
const DEVICE_KEY = "spades.device";

function device() {
  let value = localStorage.getItem(DEVICE_KEY);
  if (!value) {
    value = uuid();
    localStorage.setItem(DEVICE_KEY, value);
  }
  return value;
}

async function call(method, path, body, token) {
  const headers = { Accept: "application/json", "X-Spades-Device": device() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError(0, "network", `the server could not be reached: ${error.message}`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!response.ok) {
    const code = (data && data.code) || `http_${response.status}`;
    const message = (data && data.message) || text || response.statusText;
    const error = new ApiError(response.status, code, message);
    error.body = data; // the refusal's details (a playban's `ends_at`)
    throw error;
  }
  return data;
}

/** Store the tokens of a login or renewal (the answer of /api/tokens or /api/tokens/refresh). */
function adopt(got, name) {
  const now = Date.now() / 1000;
  const value = {
    token: got.access_token,
    refresh_token: got.refresh_token,
    player_id: got.player_id,
    name,
    bot: got.bot,
    expires_at: now + got.expires_in,
    refresh_expires_at: now + got.refresh_expires_in,
  };
  store(value);
  scheduleRenewal(value);
  return value;
}

/** End a session on the server; never fails (an unreachable server lets it expire). */
async function revoke(refreshToken) {
  try {
    await call("DELETE", "/api/tokens", { refresh_token: refreshToken });
  } catch {
    // the session ends by itself after SPADES_SESSION_DAYS unused
  }
}

/** Log in with a name and password; store and return the session. */
export async function login(name, password) {
  const before = session();
  const value = adopt(await call("POST", "/api/tokens", { name, password }), name);
  if (before && before.refresh_token) revoke(before.refresh_token); // a login replaces it
  return value;
}

/** Register an account, then log in with it. */
export async function signUp(name, password) {
  await call("POST", "/api/accounts", { name, password });
  return login(name, password);
}

/** Forget the session here and end it on the server (every tab of it is logged out). */
export async function logout() {
  const value = session();
  clearTimeout(renewTimer);
  store(null);
  if (value && value.refresh_token) await revoke(value.refresh_token);
}

/** The session is over and cannot be renewed: to the login page, then back here. */
export function endSession(code) {
  if (!session()) return;
  notify(`Your session ended (${code}): log in again to continue.`);
  sessionStorage.setItem("spades.after-login", location.hash);
  logout();
  location.hash = "#/login";
}

const left = (value) => value.expires_at - Date.now() / 1000;
const ended = (error) => error instanceof ApiError && error.status === 401;

function scheduleRenewal(value) {
  clearTimeout(renewTimer);
  if (!value.refresh_token) return; // stored by an older client: it ends with its token
  const wait = Math.max(FRESH, left(value) - RENEW_MARGIN - Math.random() * SPREAD);
  renewTimer = setTimeout(renewInBackground, wait * 1000);
}

// Silent when it works (a notice every quarter of an hour would only distract a player);
// a failure is shown, and tried again.
async function renewInBackground() {
  try {
    await renew();
  } catch (error) {
    if (ended(error)) return; // endSession went to the login page
    notify(`Could not renew the session: ${error.words || error.message}; trying again.`);
    clearTimeout(renewTimer);
    renewTimer = setTimeout(renewInBackground, RETRY * 1000);
  }
}

/** Renew the session's tokens: one renewal at a time in this tab, one at a time across tabs.
 * Return the renewed session; a refusal ends the session (to the login page) and is thrown. */
function renew() {
  if (!renewing) {
    const seen = session();
    renewing = renewShared(seen).finally(() => {
      renewing = null;
    });
  }
  return renewing;
}

async function renewShared(seen) {
  try {
    if (!seen || !seen.refresh_token) {
      throw new ApiError(401, "unauthenticated", "your session ended: log in again");
    }
    if (navigator.locks) return await navigator.locks.request(LOCK, () => renewOnce(seen, 0));
    return await renewOnce(seen, 0);
  } catch (error) {
    if (ended(error)) endSession(error.code);
    throw error;
  }
}

/** Trade the stored refresh token, unless another tab renewed since `seen` was read. */
async function renewOnce(seen, again) {
  const current = session();
  if (!current || !current.refresh_token) {
    throw new ApiError(401, "unauthenticated", "your session ended: log in again");
  }
  if (current.token !== seen.token && left(current) > FRESH) {
    scheduleRenewal(current);
    return current; // another tab renewed while this one waited: use its tokens
  }
  let got;
  try {
    got = await call("POST", "/api/tokens/refresh", { refresh_token: current.refresh_token });
  } catch (error) {
    const stored = session();
    if (ended(error) && stored && stored.refresh_token !== current.refresh_token && again < 2) {
      return renewOnce(current, again + 1); // another tab stored newer tokens meanwhile
    }
    throw error;
  }
  if (!session()) throw new ApiError(401, "unauthenticated", "logged out meanwhile");
  return adopt(got, current.name);
}

/** Return a valid access token, renewing the session's tokens when it ran out. */
export async function token() {
  const value = session();
  if (!value) throw new ApiError(401, "unauthenticated", "log in first");
  if (left(value) > FRESH) return value.token;
  return (await renew()).token;
}

/** Renew the token now (after the server said it expired); return the new one. */
export async function renewNow() {
  return (await renew()).token;
}

/** Call the API; `auth` sends the access token (and renews it once if it had expired). */
export async function api(method, path, body, { auth = false } = {}) {
  if (!auth) return call(method, path, body);
  try {
    try {
      return await call(method, path, body, await token());
    } catch (error) {
      if (error instanceof ApiError && error.code === "token_expired") {
        return await call(method, path, body, await renewNow());
      }
      throw error;
    }
  } catch (error) {
    if (ended(error)) endSession(error.code);
    throw error;
  }
}

export const get = (path, options) => api("GET", path, undefined, options);

/** On page load: keep the stored session, renewing it now if its access token ran out (or
 * soon will), else when it is due. Return it, or null when there is none to keep. */
export function resumeSession() {
  const value = session();
  if (!value) return null;
  if (!value.refresh_token) {
    // stored by an older client: usable until its access token runs out, never renewed
    if (left(value) > FRESH) return value;
    store(null);
    return null;
  }
  if (left(value) > RENEW_MARGIN) scheduleRenewal(value);
  else renewInBackground();
  return value;
}
