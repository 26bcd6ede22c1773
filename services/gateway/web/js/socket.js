// One WebSocket to /ws watching one game: auth, subscribe, commands, reconnect and resume.
//
// The socket keeps the highest `seq` it was sent; after a dropped connection it connects again
// (backing off), authenticates and subscribes with `last_seq`, so the game continues with no
// event missed or repeated, and sends again every command not yet answered (same command_id:
// the table applies it once).

import { onSession, renewNow, session, token } from "./api.js";
import { uuid } from "./ui.js";

const BACKOFF = [250, 500, 1000, 2000, 4000, 5000];

export class GameSocket {
  /**
   * `gameId` null: only authenticate and listen (the lobby hears `match_found` this way).
   * `onMessage(message)` gets every server message about the game (and errors);
   * `onState(text)` gets "connecting", "live", "reconnecting in 2 s", "closed".
   */
  constructor(gameId, { onMessage, onState, hints = false, anonymous = false }) {
    this.gameId = gameId;
    // `anonymous`: with nobody logged in, watch as a spectator without an account
    this.anonymous = anonymous;
    this.onMessage = onMessage;
    this.onState = onState || (() => {});
    this.hints = hints;
    this.lastSeq = null;
    this.pending = new Map(); // command_id -> command, until acked or refused
    this.attempt = 0;
    this.stopped = false;
    this.ws = null;
    this.ready = false;
    this.resumes = 0;
    this.tries = new Map();
    // a renewed token goes to the server at once, so the connection's session never lapses
    this.unlisten = onSession((value) => {
      if (value && this.ws && this.ws.readyState === WebSocket.OPEN) this.raw({ type: "auth", token: value.token });
    });
  }

  start() {
    this.connect();
    return this;
  }

  connect() {
    if (this.stopped) return;
    this.ready = false;
    this.onState(this.attempt ? "reconnecting" : "connecting");
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    // batch=1: each frame is an array of the messages ready at once (a move's event, turn
    // and clock arrive together, in one frame)
    const ws = new WebSocket(`${scheme}://${location.host}/ws?batch=1`);
    this.ws = ws;
    ws.addEventListener("open", () => this.authenticate());
    ws.addEventListener("message", (frame) => this.receive(frame.data));
    ws.addEventListener("close", (closed) => {
      if (this.ws !== ws) return;
      this.ready = false;
      if (this.stopped) return;
      const delay = BACKOFF[Math.min(this.attempt, BACKOFF.length - 1)];
      this.attempt += 1;
      const why = closed.reason ? `: ${closed.reason}` : "";
      this.onState(`reconnecting in ${(delay / 1000).toFixed(1)} s (connection lost${why})`);
      this.retry = setTimeout(() => this.connect(), delay);
    });
  }

  // The token comes from api.js: token() renews the session's tokens when the stored access
  // token ran out (a reconnect after a long drop), renewNow() when the server said so.
  async authenticate(fresh = false) {
    const ws = this.ws;
    if (this.anonymous && this.gameId !== null && !session()) {
      this.subscribe(); // a spectator needs no token (spectator rules: one trick behind, no hands)
      return;
    }
    try {
      const value = fresh ? await renewNow() : await token();
      this.raw({ type: "auth", token: value });
    } catch (error) {
      if (error.status !== 401 && ws === this.ws && !this.stopped) {
        // the server could not renew the session just now: try again on the next connection
        ws.close(4001, "could not renew the session");
        return;
      }
      this.onMessage({ type: "error", code: error.code || "unauthenticated", message: error.message });
      this.stop();
    }
  }

  raw(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(message));
      return true;
    }
    return false;
  }

  receive(data) {
    let parsed;
    try {
      parsed = JSON.parse(data);
    } catch {
      this.onMessage({ type: "error", code: "malformed", message: "the server sent something that is not JSON" });
      return;
    }
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) this.handle(message);
  }

  handle(message) {
    switch (message.type) {
      case "welcome":
        if (this.gameId === null) {
          // no game: the connection only listens (for match_found)
          this.ready = true;
          this.attempt = 0;
          this.onState("live");
        } else if (!this.ready) {
          this.subscribe();
        } else {
          // authenticated again (a renewed token): send what the expired one could not
          for (const [id, command] of this.pending) this.sendCommand(id, command);
        }
        return;
      case "subscribed":
        this.ready = true;
        this.attempt = 0;
        this.onState("live");
        for (const [id, command] of this.pending) this.sendCommand(id, command);
        break;
      case "view":
      case "event":
        this.lastSeq = Math.max(this.lastSeq ?? 0, message.seq);
        break;
      case "ack":
        this.pending.delete(message.command_id);
        break;
      case "pong":
        return;
      case "error":
        if (message.code === "token_expired") {
          this.authenticate(true);
          return;
        }
        if (message.code === "unavailable" && this.pending.has(message.command_id)) {
          // the table did not answer: the same command_id again is safe (applied once)
          const command = this.pending.get(message.command_id);
          const tries = (this.tries.get(message.command_id) || 0) + 1;
          this.tries.set(message.command_id, tries);
          if (tries < 4) {
            setTimeout(() => this.ready && this.sendCommand(message.command_id, command), 300 * tries);
            return;
          }
        }
        if (message.command_id) this.pending.delete(message.command_id);
        break;
    }
    this.onMessage(message);
  }

  subscribe() {
    // From the first event (last_seq 0) rather than a snapshot: the client then knows the
    // rules (GameStarted) and the tricks so far as well as the seat's hand.
    if (this.lastSeq !== null) this.resumes += 1;
    this.raw({ type: "subscribe", game_id: this.gameId, hints: this.hints, last_seq: this.lastSeq ?? 0 });
  }

  sendCommand(id, command) {
    this.raw({ type: "command", game_id: this.gameId, command_id: id, command });
  }

  /** Send a seat command; return its command_id. It is sent again after a reconnect. */
  command(command) {
    const id = uuid();
    this.pending.set(id, command);
    if (this.ready) this.sendCommand(id, command);
    return id;
  }

  /** Ask for a fresh snapshot of the game. */
  refresh() {
    this.raw({ type: "view", game_id: this.gameId });
  }

  /** Close the connection as a network failure would (the socket reconnects by itself). */
  drop() {
    if (this.ws) this.ws.close(4000, "dropped by the client");
  }

  stop() {
    this.stopped = true;
    this.unlisten();
    clearTimeout(this.retry);
    if (this.ws) this.ws.close(1000, "left the page");
    this.onState("closed");
  }
}
