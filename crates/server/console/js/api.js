// The REST API, as the console calls it: every call goes through the public endpoints
// under /api/v1 with the session's bearer token, so anything the console does a script
// can do too.

const BASE = "/api/v1";
const TOKEN_KEY = "tributary.token";

/** An error answer: its HTTP status and Tributary's error fields. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error || `the server answered ${status}`);
    this.status = status;
    this.code = body?.code || null;
    this.hint = body?.hint || null;
    this.path = body?.path || null;
    this.diagnostics = body?.diagnostics || [];
  }
}

/** The token kept for this browser session (not across sessions). */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** Called with no argument when the server asks for a (new) token. */
let onUnauthorized = () => {};
export function whenUnauthorized(fn) {
  onUnauthorized = fn;
}

function headers(extra = {}) {
  const h = { ...extra };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

async function failure(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const error = new ApiError(response.status, body);
  if (response.status === 401) onUnauthorized();
  return error;
}

/** `method path` with an optional JSON body; the JSON answer (null when empty). */
export async function call(method, path, body, options = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  if (options.signal) init.signal = options.signal;
  const response = await fetch(BASE + path, init);
  if (!response.ok) throw await failure(response);
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

export const get = (path, options) => call("GET", path, undefined, options);
export const post = (path, body, options) => call("POST", path, body, options);
export const patch = (path, body) => call("PATCH", path, body);
export const del = (path) => call("DELETE", path);

/**
 * POST `body` to `path` and hand each event of the streamed answer to `onEvent` as it
 * arrives: server-sent events (`data:` lines) or newline-delimited JSON, by `accept`.
 * Resolves when the answer ends; `signal` stops it.
 */
export async function stream(path, body, accept, onEvent, signal) {
  const response = await fetch(BASE + path, {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", Accept: accept }),
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await failure(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (!line || line.startsWith(":")) continue;
      const json = line.startsWith("data:") ? line.slice(5).trim() : line.startsWith("event:") ? null : line;
      if (json) onEvent(JSON.parse(json));
    }
  }
  const rest = buffer.trim();
  if (rest && !rest.startsWith(":")) onEvent(JSON.parse(rest.startsWith("data:") ? rest.slice(5) : rest));
}

/** Every table, page by page (up to `max`). */
export async function allTables(max = 5000) {
  const tables = [];
  let after = null;
  while (tables.length < max) {
    const page = await get(`/connection_tables?limit=1000${after ? `&starting_after=${encodeURIComponent(after)}` : ""}`);
    tables.push(...page.data);
    if (!page.hasMore || !page.data.length) break;
    after = page.data[page.data.length - 1].id;
  }
  return tables;
}

/** The connectors, fetched once per page load. */
let connectorList = null;
export async function connectors() {
  if (!connectorList) connectorList = (await get("/connectors")).data;
  return connectorList;
}

/** A connector's parsed JSON Schemas. */
export function schemas(connector) {
  return {
    table: JSON.parse(connector.table_config),
    profile: connector.connection_config ? JSON.parse(connector.connection_config) : null,
  };
}

/** Run SQL through `POST /sql`, gathered (check and explain). */
export function sql(text, mode = "run") {
  return post("/sql", { sql: text, mode });
}
