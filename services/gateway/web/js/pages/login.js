// Sign up and log in (#/signup, #/login).

import { get, login, signUp } from "../api.js";
import { fill, h } from "../ui.js";
import { gameItem } from "./lobby.js";

/** Mount the login (`mode` "login") or sign-up ("signup") form. */
export function mountLogin(root, mode) {
  const signup = mode === "signup";
  const error = h("p", { class: "form-error", role: "alert", "data-testid": "form-error" });
  const name = h("input", { id: "name", name: "name", autocomplete: "username", required: true, maxlength: 64 });
  const password = h("input", {
    id: "password", name: "password", type: "password", required: true,
    autocomplete: signup ? "new-password" : "current-password", minlength: signup ? 8 : 1, maxlength: 128,
  });
  const button = h("button", { class: "btn primary", type: "submit" }, signup ? "Sign up" : "Log in");
  const form = h("form", { class: "card-form", "aria-labelledby": "form-title" },
    h("h1", { id: "form-title" }, signup ? "Create an account" : "Log in"),
    h("label", { for: "name" }, "Name", signup ? h("small", {}, " (3–24 letters, digits, - or _; a letter first)") : null), name,
    h("label", { for: "password" }, "Password", signup ? h("small", {}, " (at least 8 characters)") : null), password,
    error, button,
    h("p", {}, signup
      ? ["Have an account? ", h("a", { href: "#/login" }, "Log in")]
      : ["New here? ", h("a", { href: "#/signup" }, "Create an account")]));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    button.disabled = true;
    try {
      if (signup) await signUp(name.value.trim(), password.value);
      else await login(name.value.trim(), password.value);
      const after = sessionStorage.getItem("spades.after-login");
      sessionStorage.removeItem("spades.after-login");
      location.hash = after || "#/lobby";
    } catch (failure) {
      error.textContent = failure.words || failure.message;
      button.disabled = false;
    }
  });
  // anyone may watch a live game, account or not (as a spectator: one trick behind, no hands)
  const live = h("section", { class: "panel", "aria-labelledby": "live-title", "data-testid": "live-games" });
  get("/api/games?limit=10")
    .then((games) => fill(live, h("h2", { id: "live-title" }, "Watch a live game"),
      games.length
        ? [h("p", { class: "muted" }, "No account needed: spectators see each trick once it is complete."),
            h("ul", { class: "games" }, games.map((game) => gameItem(game)))]
        : h("p", { class: "muted" }, "No game is being played right now.")))
    .catch(() => { live.hidden = true; });
  fill(root, h("div", { class: "narrow" },
    h("p", { class: "intro" }, "Ranked online Spades: queue for a ladder game with a partner, or shuffle up a practice game against three bots."),
    form, live));
  name.focus();
}
