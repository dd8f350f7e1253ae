// Small DOM helpers: element building, messages, and text copying.

let ids = 0;

/** A unique id for label/input pairs. */
export function uid(prefix = "f") {
  ids += 1;
  return `${prefix}-${ids}`;
}

/**
 * An element: h("button", {class: "primary", onclick: fn}, "Save").
 * Attributes starting with "on" become listeners; `null`/`false` attributes are left out;
 * children may be strings, nodes, arrays or null.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key in el && typeof value !== "string") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : value);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Replace `el`'s children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A banner: kind is "error", "warning", "success" or "info". */
export function banner(kind, title, detail) {
  return h(
    "div",
    { class: `banner ${kind}`, role: kind === "error" ? "alert" : "status" },
    h("strong", {}, title),
    detail ? h("div", { class: "detail" }, detail) : null,
  );
}

/** An API error as a banner: its message, hint and diagnostics. */
export function errorBanner(error, title) {
  const lines = [];
  if (error.hint) lines.push(h("div", { class: "hint" }, error.hint));
  for (const d of error.diagnostics || []) {
    if (d.message === error.message) continue;
    lines.push(h("div", { class: "diag" }, d.message, d.hint ? h("div", { class: "hint" }, d.hint) : null));
  }
  return banner("error", title ? `${title}: ${error.message}` : error.message, lines.length ? lines : null);
}

/** A short-lived message at the bottom of the window. */
export function toast(text) {
  const t = h("div", { class: "toast", role: "status" }, text);
  document.body.append(t);
  setTimeout(() => t.remove(), 3000);
}

/** Copy `text`, with a toast saying so. */
export async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast("Copied to the clipboard");
  } catch {
    // Without clipboard access (plain http on another host), select the text instead.
    toast("Select the text and copy it (the clipboard is not available here)");
  }
}

/** A block of code with a Copy button. */
export function codeBlock(text, label = "Copy") {
  return h(
    "div",
    { class: "code" },
    h("button", { class: "small copy", type: "button", onclick: () => copy(text) }, label),
    h("pre", {}, h("code", {}, text)),
  );
}

/** Microseconds since the epoch as local date and time. */
export function time(micros) {
  if (!micros) return "";
  const d = new Date(Number(micros) / 1000);
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A confirmation dialog; resolves true when confirmed. */
export function confirmDialog(title, text, action = "Delete") {
  return new Promise((resolve) => {
    const dialog = h(
      "dialog",
      { class: "confirm", "aria-labelledby": "confirm-title" },
      h("h2", { id: "confirm-title" }, title),
      h("p", {}, text),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", onclick: () => done(false) }, "Cancel"),
        h("button", { type: "button", class: "danger", onclick: () => done(true) }, action),
      ),
    );
    function done(ok) {
      dialog.close();
      dialog.remove();
      resolve(ok);
    }
    dialog.addEventListener("cancel", () => done(false));
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** A table of `rows` (objects) under `columns` ([{key, label, render?}]). */
export function dataTable(columns, rows, empty = "Nothing here yet.") {
  if (!rows.length) return h("p", { class: "empty" }, empty);
  return h(
    "table",
    { class: "data" },
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c.label)))),
    h(
      "tbody",
      {},
      rows.map((row) =>
        h("tr", {}, columns.map((c) => h("td", {}, c.render ? c.render(row) : cell(row[c.key])))),
      ),
    ),
  );
}

/** A value as table text: JSON for objects, "NULL" for null. */
export function cell(value) {
  if (value === null || value === undefined) return h("span", { class: "null" }, "NULL");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
