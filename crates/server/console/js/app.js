// The console's shell: hash routes to pages, the navigation, and token sign-in.

import * as api from "./api.js";
import { errorBanner, h, replace } from "./dom.js";
import { connectionsPage, tablePage } from "./connections.js";
import { profilesPage, profilePage } from "./profiles.js";
import { wizardPage } from "./wizard.js";
import { sqlPage } from "./sql.js";
import { planPage } from "./plan.js";

const view = document.getElementById("view");
const login = document.getElementById("login");
const signOut = document.querySelector(".signout");

/** Routes: a pattern over the hash path, the section it belongs to, and the page. */
const ROUTES = [
  [/^\/connections\/(.+)$/, "connections", (m) => tablePage(decodeURIComponent(m[1]))],
  [/^\/connections$/, "connections", () => connectionsPage()],
  [/^\/profiles\/(.+)$/, "profiles", (m) => profilePage(decodeURIComponent(m[1]))],
  [/^\/profiles$/, "profiles", () => profilesPage()],
  [/^\/new$/, "new", (m, query) => wizardPage(query)],
  [/^\/sql$/, "sql", () => sqlPage()],
  [/^\/plan$/, "plan", () => planPage()],
];

let current = null;

async function route() {
  const hash = location.hash.replace(/^#/, "") || "/connections";
  const [path, search] = hash.split("?");
  const query = new URLSearchParams(search || "");
  const match = ROUTES.map(([re, section, page]) => [path.match(re), section, page]).find(([m]) => m);
  if (!match) {
    location.hash = "#/connections";
    return;
  }
  const [m, section, load] = match;
  for (const a of document.querySelectorAll("header nav a")) {
    if (a.dataset.section === section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  // A page that is left may stop what it runs (a query, a test stream).
  current?.leave?.();
  current = null;
  replace(view, h("p", { class: "status-line" }, h("span", { class: "spinner" }), " Loading…"));
  try {
    const page = await load(m, query);
    current = page;
    replace(view, page.element);
    document.title = page.title ? `${page.title} · Tributary` : "Tributary";
    page.shown?.();
  } catch (e) {
    if (e.status === 401) return; // the sign-in dialog is up
    replace(view, errorBanner(e, "The page could not be loaded"));
  }
}

function askForToken(message) {
  const error = document.getElementById("login-error");
  error.textContent = message || "";
  if (!login.open) login.showModal();
  document.getElementById("login-token").focus();
}

login.addEventListener("submit", async (event) => {
  const input = document.getElementById("login-token");
  const token = input.value.trim();
  api.setToken(token);
  event.preventDefault();
  try {
    await api.get("/ping");
    login.close();
    input.value = "";
    signOut.hidden = false;
    route();
  } catch (e) {
    api.setToken(null);
    document.getElementById("login-error").textContent =
      e.status === 401 ? "The server did not accept this token." : e.message;
  }
});
login.addEventListener("cancel", (event) => event.preventDefault());

signOut.addEventListener("click", () => {
  api.setToken(null);
  signOut.hidden = true;
  askForToken();
});

api.whenUnauthorized(() => askForToken(api.token() ? "The token is no longer accepted; sign in again." : ""));

window.addEventListener("hashchange", route);
signOut.hidden = !api.token();
// A page that needs a token meets a 401, which asks for one; signing in routes again.
route();
