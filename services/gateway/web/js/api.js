// The public HTTP API (/api, described at /schema) and the session's access token.
//
// The token lives in localStorage. The password never does: it is kept in this module's
// memory only, so an open tab can log in again by itself when the short-lived token runs
// out; after a reload an expired token sends the person back to the login page.

import { notify } from "./ui.js";

const KEY = "spades.session";
const RENEW_MARGIN = 60; // seconds before expiry when a tab renews by logging in again

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

let remembered = null; // {name, password} of this tab's login, for renewing the token
let renewTimer = null;
const listeners = new Set();

/** Return the stored session {token, player_id, name, expires_at}, or null. */
export function session() {
  try {
    return JSON.parse(localStorage.getItem(KEY)) || null;
  } catch {
    return null;
  }
}

/** Call `fn(session)` whenever the session changes (login, renewal, logout). */
export function onSession(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function store(value) {
  if (value) localStorage.setItem(KEY, JSON.stringify(value));
  else localStorage.removeItem(KEY);
  for (const fn of listeners) fn(value);
}

async function call(method, path, body, token) {
  const headers = { Accept: "application/json" };
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
    throw new ApiError(response.status, code, message);
  }
  return data;
}

/** Log in with a name and password; store and return the session. */
export async function login(name, password) {
  const got = await call("POST", "/api/tokens", { name, password });
  remembered = { name, password };
  const value = {
    token: got.access_token,
    player_id: got.player_id,
    name,
    bot: got.bot,
    expires_at: Date.now() / 1000 + got.expires_in,
  };
  store(value);
  scheduleRenewal(value);
  return value;
}

/** Register an account, then log in with it. */
export async function signUp(name, password) {
  await call("POST", "/api/accounts", { name, password });
  return login(name, password);
}

/** Forget the session. */
export function logout() {
  remembered = null;
  clearTimeout(renewTimer);
  store(null);
}

function scheduleRenewal(value) {
  clearTimeout(renewTimer);
  const wait = Math.max(5, value.expires_at - Date.now() / 1000 - RENEW_MARGIN);
  renewTimer = setTimeout(() => {
    renew().catch((error) => notify(`Could not renew the session: ${error.words || error.message}`));
  }, wait * 1000);
}

async function renew() {
  if (!remembered) throw new ApiError(401, "token_expired", "your session expired: log in again");
  const value = await login(remembered.name, remembered.password);
  notify("Session renewed: logged in again.", "info");
  return value;
}

/** Return a valid access token, renewing it by logging in again when it ran out. */
export async function token() {
  const value = session();
  if (!value) throw new ApiError(401, "unauthenticated", "log in first");
  if (value.expires_at - Date.now() / 1000 > 5) return value.token;
  const renewed = await renew();
  return renewed.token;
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
      if (error instanceof ApiError && error.code === "token_expired" && remembered) {
        return await call(method, path, body, await renewNow());
      }
      throw error;
    }
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) expired(error);
    throw error;
  }
}

/** The session is over and this tab cannot renew it: to the login page, then back here. */
function expired(error) {
  if (!session()) return;
  notify(`Your session ended (${error.code}): log in again to continue.`);
  sessionStorage.setItem("spades.after-login", location.hash);
  logout();
  location.hash = "#/login";
}

export const get = (path, options) => api("GET", path, undefined, options);

/** Renewal needs the password, which a reload forgets: say so before the token runs out. */
export function resumeSession() {
  const value = session();
  if (value && value.expires_at <= Date.now() / 1000) {
    logout();
    return null;
  }
  return value;
}
