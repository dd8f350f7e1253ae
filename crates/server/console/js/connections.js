// Connections: the tables, searchable and paged, and one table's columns, options and
// CREATE TABLE statement.

import * as api from "./api.js";
import { banner, cell, codeBlock, confirmDialog, dataTable, errorBanner, h, replace, time, toast } from "./dom.js";

const PAGE = 25;

/** The list of tables. */
export async function connectionsPage() {
  const tables = await api.allTables();
  let query = "";
  let page = 0;
  const list = h("div");
  const search = h("input", {
    type: "search",
    placeholder: "Search by name, connector, profile or format",
    "aria-label": "Search connections",
    oninput: () => {
      query = search.value.trim().toLowerCase();
      page = 0;
      draw();
    },
  });
  function matches(t) {
    if (!query) return true;
    const text = [t.name, t.connector, t.table_type, t.connection_profile?.name, formatOf(t), t.description].join(" ").toLowerCase();
    return text.includes(query);
  }
  function draw() {
    const found = tables.filter(matches);
    const pages = Math.max(1, Math.ceil(found.length / PAGE));
    page = Math.min(page, pages - 1);
    const shown = found.slice(page * PAGE, page * PAGE + PAGE);
    replace(
      list,
      dataTable(
        [
          { label: "Name", render: (t) => h("a", { href: `#/connections/${encodeURIComponent(t.name)}` }, t.name) },
          { label: "Connector", render: (t) => t.connector },
          { label: "Role", render: (t) => h("span", { class: `badge ${t.table_type}` }, t.table_type) },
          { label: "Profile", render: (t) => t.connection_profile?.name ?? h("span", { class: "null" }, "—") },
          { label: "Format", render: (t) => formatOf(t) },
          { label: "Created", render: (t) => time(t.created_at) },
          { label: "Last test", render: (t) => lastTest(t.last_test) },
        ],
        shown,
        tables.length ? "No connection matches the search." : "No connections yet. Create one with New connection.",
      ),
      found.length > PAGE
        ? h(
            "div",
            { class: "pager" },
            `${page * PAGE + 1}–${Math.min(found.length, (page + 1) * PAGE)} of ${found.length}`,
            h("button", { type: "button", class: "small", disabled: page === 0, onclick: () => { page -= 1; draw(); } }, "Previous"),
            h("button", { type: "button", class: "small", disabled: page >= pages - 1, onclick: () => { page += 1; draw(); } }, "Next"),
          )
        : null,
    );
  }
  draw();
  return {
    title: "Connections",
    element: h(
      "section",
      {},
      h(
        "div",
        { class: "page-head" },
        h("div", {}, h("h1", {}, "Connections"), h("p", { class: "sub" }, "Connection tables: sources, sinks and lookup tables over connectors.")),
      ),
      h("div", { class: "toolbar" }, search, h("span", { class: "spacer" }), h("span", { class: "status-line" }, `${tables.length} connection${tables.length === 1 ? "" : "s"}`)),
      list,
    ),
  };
}

/** A table's format, as the list shows it. */
export function formatOf(t) {
  const f = t.schema?.format;
  if (!f) return "built-in";
  return f.type || Object.keys(f)[0] || "—";
}

/** A last test as "passed · 12 ms · date", coloured by result. */
export function lastTest(test) {
  if (!test) return h("span", { class: "result-never" }, "never tested");
  return h(
    "span",
    {},
    h("span", { class: `result-${test.result}` }, test.result, test.code ? ` (${test.code})` : ""),
    h("span", { class: "when" }, [test.latency_ms !== undefined ? ` · ${test.latency_ms} ms` : "", ` · ${time(test.at)}`]),
  );
}

/** The line under a table's columns that says what its event time is and where it comes from. */
export function eventTime(time) {
  if (!time) return h("p", { class: "null" }, "No event time: only sources have one.");
  const origin = time.origin === "declared"
    ? ", declared with WATERMARK FOR"
    : `, hidden from SELECT *: ${time.source}`;
  return h("p", { class: "event-time" },
    "Event time: ", h("code", {}, time.column), `${origin}. Watermark: `, h("code", {}, time.watermark), ".");
}

/** One table. */
export async function tablePage(key) {
  const t = await api.get(`/connection_tables/${encodeURIComponent(key)}`);
  const messages = h("div");
  const fields = t.schema?.fields || [];
  const columns = fields.map((f) => ({
    name: f.name,
    type: f.sql_name,
    arrow: f.arrow_type || "",
    nullable: f.required ? "no" : "yes",
    kind: f.metadata_key ? `metadata '${f.metadata_key}'` : "",
  }));
  for (const v of t.virtual_columns || []) {
    columns.push({ name: v.name, type: v.sql_name, arrow: "", nullable: "", kind: `generated: ${v.expression}` });
  }
  const body = h("div");
  const tabs = [
    ["Columns", () => [
      dataTable(
        [
          { label: "Column", render: (c) => h("code", {}, c.name) },
          { label: "Type", render: (c) => c.type },
          { label: "Arrow type", render: (c) => h("code", {}, c.arrow) },
          { label: "Nullable", render: (c) => c.nullable },
          { label: "Kind", render: (c) => c.kind },
        ],
        columns,
        t.schema?.inferred ? "The columns are taken from the first INSERT INTO." : "No columns.",
      ),
      eventTime(t.event_time),
    ]],
    ["Options", () => optionsTable(t.config)],
    ["CREATE TABLE", () => codeBlock(t.create_sql)],
  ];
  const tabBar = h("div", { class: "tabs", role: "tablist" });
  tabs.forEach(([name, render], i) => {
    const b = h("button", {
      type: "button",
      role: "tab",
      "aria-selected": i === 0 ? "true" : "false",
      onclick: () => {
        tabBar.querySelectorAll("button").forEach((x) => x.setAttribute("aria-selected", "false"));
        b.setAttribute("aria-selected", "true");
        replace(body, render());
      },
    }, name);
    tabBar.append(b);
  });
  replace(body, tabs[0][1]());
  const remove = async () => {
    if (!(await confirmDialog(`Delete ${t.name}?`, `Table '${t.name}' is removed from the catalog. Its data stays where it is.`))) return;
    try {
      await api.del(`/connection_tables/${encodeURIComponent(t.id)}`);
      toast(`Connection ${t.name} was deleted`);
      location.hash = "#/connections";
    } catch (e) {
      replace(messages, errorBanner(e, "The table was not deleted"));
    }
  };
  return {
    title: t.name,
    element: h(
      "section",
      {},
      h(
        "div",
        { class: "page-head" },
        h(
          "div",
          {},
          h("p", { class: "sub" }, h("a", { href: "#/connections" }, "Connections"), " / "),
          h("h1", {}, t.name, " ", h("span", { class: `badge ${t.table_type}` }, t.table_type)),
          h("p", { class: "sub" }, t.description),
        ),
        h("button", { type: "button", class: "danger", onclick: remove }, "Delete"),
      ),
      messages,
      (t.warnings || []).map((w) => banner("warning", w.message, w.hint)),
      h(
        "div",
        { class: "panel" },
        h(
          "dl",
          { class: "facts" },
          h("dt", {}, "Connector"), h("dd", {}, t.connector),
          h("dt", {}, "Profile"), h("dd", {}, t.connection_profile ? h("a", { href: `#/profiles/${encodeURIComponent(t.connection_profile.name)}` }, t.connection_profile.name) : "none"),
          h("dt", {}, "Format"), h("dd", {}, formatOf(t)),
          h("dt", {}, "Created"), h("dd", {}, time(t.created_at)),
          h("dt", {}, "Last test"), h("dd", {}, lastTest(t.last_test)),
          h("dt", {}, "Id"), h("dd", {}, h("code", {}, t.id)),
        ),
      ),
      tabBar,
      body,
    ),
  };
}

/** A config object as option rows (nested objects flattened to dotted paths). */
export function optionsTable(config) {
  const rows = [];
  const visit = (value, path) => {
    if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length) {
      for (const [k, v] of Object.entries(value)) visit(v, path ? `${path}.${k}` : k);
    } else {
      rows.push({ option: path, value });
    }
  };
  visit(config || {}, "");
  return dataTable(
    [
      { label: "Setting", render: (r) => h("code", {}, r.option) },
      { label: "Value", render: (r) => cell(r.value) },
    ],
    rows,
    "No settings.",
  );
}
