// The wizard's schema step: the format, where the columns come from (listed by hand, a
// JSON Schema, Avro or Protobuf document, the schema registry, or inferred from sample
// messages), metadata columns from the connector's keys, and the watermark; with a
// preview of the resulting columns, expanded by the server.

import * as api from "./api.js";
import { banner, dataTable, errorBanner, h, replace, uid } from "./dom.js";

const FORMATS = [
  ["json", "JSON"],
  ["avro", "Avro"],
  ["protobuf", "Protobuf"],
  ["debezium_json", "Debezium JSON (changes)"],
  ["raw_string", "Raw text (one TEXT column)"],
  ["raw_bytes", "Raw bytes (one BYTEA column)"],
];

const SOURCES = {
  columns: "List the columns",
  json_schema: "JSON Schema",
  avro_schema: "Avro schema",
  protobuf_schema: "Protobuf schema",
  registry: "Schema registry",
  infer: "Infer from sample messages",
};

/** Column types offered when listing columns by hand: label, and the field type. */
const TYPES = [
  ["TEXT", { type: "string" }],
  ["BIGINT", { type: "int64" }],
  ["INT", { type: "int32" }],
  ["DOUBLE", { type: "float64" }],
  ["FLOAT", { type: "float32" }],
  ["BOOLEAN", { type: "bool" }],
  ["TIMESTAMP", { type: "timestamp" }],
  ["DATE", { type: "date" }],
  ["JSON", { type: "json" }],
  ["BYTEA", { type: "bytes" }],
];

export function schemaStep(state) {
  const c = state.connector;
  const saved = state.schemaUi || {};
  const formatId = uid("format");
  const format = h("select", { id: formatId }, FORMATS.map(([v, l]) => h("option", { value: v, selected: (saved.format || "json") === v }, l)));
  const sourceGroup = uid("source");
  let source = saved.source || "columns";
  const sourceList = h("div", { class: "choices", role: "radiogroup", "aria-label": "Where the columns come from" });
  const detail = h("div");
  const preview = h("div");
  const messages = h("div");
  const columns = saved.columns || [{ name: "", type: "TEXT", required: false }];
  const docId = uid("document");
  const doc = h("textarea", { id: docId, rows: 12, class: "mono", spellcheck: "false", placeholder: "Paste the schema here" }, saved.document || "");
  const messageId = uid("message");
  const messageName = h("input", { id: messageId, type: "text", value: saved.message || "", placeholder: "orders.Order", spellcheck: "false" });
  const inferred = { fields: saved.inferred || null };
  const metadata = new Map((saved.metadata || []).map((m) => [m.key, m.name]));
  const watermarkId = uid("watermark");
  const watermarkColumn = h("select", { id: watermarkId }, h("option", { value: "" }, "(none)"));
  const latenessId = uid("lateness");
  const lateness = h("input", { id: latenessId, type: "number", min: "0", step: "1", value: saved.lateness ?? "5", "aria-describedby": `${latenessId}-help` });
  let previewed = [];

  const rawFormat = () => format.value === "raw_string" || format.value === "raw_bytes";
  const sources = () => {
    if (rawFormat()) return [];
    const out = ["columns"];
    if (format.value === "json" || format.value === "debezium_json") out.push("json_schema");
    if (format.value === "avro") out.push("avro_schema");
    if (format.value === "protobuf") out.push("protobuf_schema");
    if ((c.id === "kafka" || c.id === "confluent") && ["json", "avro", "protobuf"].includes(format.value)) out.push("registry");
    if (format.value === "json" && c.source) out.push("infer");
    return out;
  };
  const drawSources = () => {
    const offered = sources();
    if (!offered.includes(source)) source = offered[0] || "columns";
    replace(
      sourceList,
      offered.map((s) => {
        const id = uid("src");
        return h(
          "div",
          { class: "choice-row" },
          h("input", { type: "radio", name: sourceGroup, id, value: s, checked: s === source, onchange: () => { source = s; drawDetail(); } }),
          h("label", { for: id }, SOURCES[s]),
        );
      }),
    );
    drawDetail();
  };
  const columnEditor = () => {
    const rows = h("div");
    const draw = () =>
      replace(
        rows,
        columns.map((col, i) =>
          h(
            "div",
            { class: "map-row" },
            h("input", { type: "text", value: col.name, placeholder: "column name", "aria-label": `Column ${i + 1} name`, spellcheck: "false", oninput: (e) => { col.name = e.target.value; } }),
            h("select", { "aria-label": `Column ${i + 1} type`, onchange: (e) => { col.type = e.target.value; } }, TYPES.map(([t]) => h("option", { value: t, selected: col.type === t }, t))),
            h("label", { class: "check-line" }, h("input", { type: "checkbox", checked: col.required, onchange: (e) => { col.required = e.target.checked; } }), " NOT NULL"),
            h("button", { type: "button", class: "small", onclick: () => { columns.splice(i, 1); draw(); } }, "Remove"),
          ),
        ),
      );
    draw();
    return h("div", {}, rows, h("button", { type: "button", class: "small", onclick: () => { columns.push({ name: "", type: "TEXT", required: false }); draw(); } }, "Add a column"));
  };
  const drawDetail = () => {
    replace(messages);
    switch (source) {
      case "columns":
        replace(detail, columnEditor());
        break;
      case "json_schema":
      case "avro_schema":
        replace(detail, h("div", { class: "field" }, h("label", { for: docId }, source === "json_schema" ? "JSON Schema document" : "Avro schema document"), doc));
        break;
      case "protobuf_schema":
        replace(detail, h("div", { class: "field" }, h("label", { for: docId }, "The .proto file"), doc), h("div", { class: "field" }, h("label", { for: messageId }, "Message"), messageName));
        break;
      case "registry":
        replace(detail, banner("info", "The columns come from the schema registry", "The profile's registry is asked for the topic's value schema (subject '<topic>-value', or the table's Value Subject) when the table is created."));
        break;
      case "infer": {
        const run = h("button", { type: "button", onclick: () => infer() }, "Read sample messages");
        replace(detail, h("p", {}, "A few messages are read with the table's settings and the columns are inferred from their JSON."), run, inferred.fields ? fieldsTable(inferred.fields) : null);
        break;
      }
      default:
        replace(detail);
    }
  };
  const infer = async () => {
    replace(preview, h("p", { class: "status-line" }, h("span", { class: "spinner" }), " Reading messages…"));
    try {
      const answer = await api.post("/connection_tables/schemas/infer", { table: { name: "inferring", connector: c.id, connection_profile_id: state.profile?.id ?? null, config: state.config, schema: { format: formatBody() } }, limit: 20 });
      inferred.fields = answer.schema.fields;
      replace(preview, banner("success", `Inferred ${answer.schema.fields.length} columns from ${answer.messages} message(s)`));
      drawDetail();
    } catch (e) {
      replace(preview, errorBanner(e, "The columns could not be inferred"));
    }
  };
  const formatBody = () => {
    const f = format.value;
    const registry = source === "registry";
    if (f === "debezium_json") return { type: "json", debezium: true };
    if (f === "json") return registry ? { type: "json", confluent_schema_registry: true } : { type: "json" };
    if (f === "avro") return registry ? { type: "avro", confluent_schema_registry: true } : { type: "avro" };
    if (f === "protobuf") {
      const p = { type: "protobuf" };
      if (registry) p.confluent_schema_registry = true;
      else if (messageName.value.trim()) p.message_name = messageName.value.trim();
      return p;
    }
    return { type: f };
  };
  const metadataFields = () =>
    c.metadata
      .filter((m) => metadata.has(m.key))
      .map((m) => ({ name: metadata.get(m.key) || m.key, ...fieldType(m.sql_name), required: false, metadata_key: m.key }));
  /** The schema body as chosen. */
  const schemaBody = () => {
    const body = { format: formatBody(), fields: [] };
    if (rawFormat()) {
      body.fields = [{ name: "value", type: format.value === "raw_string" ? "string" : "bytes", required: true }];
    } else if (source === "columns") {
      body.fields = columns.filter((col) => col.name.trim()).map((col) => ({ name: col.name.trim(), ...TYPES.find(([t]) => t === col.type)[1], required: col.required }));
    } else if (source === "json_schema" || source === "avro_schema") {
      body.definition = { type: source, schema: doc.value };
    } else if (source === "protobuf_schema") {
      body.definition = { type: "protobuf_schema", schema: doc.value };
    } else if (source === "infer") {
      body.fields = (inferred.fields || []).map(stripView);
    }
    body.fields.push(...metadataFields());
    if (watermarkColumn.value) {
      const secs = Number(lateness.value || 0);
      body.watermark = {
        column: watermarkColumn.value,
        expression: secs > 0 ? `"${watermarkColumn.value.replace(/"/g, '""')}" - INTERVAL '${secs}' SECOND` : null,
      };
    }
    return body;
  };
  const check = async () => {
    replace(messages);
    if (source === "registry") {
      previewed = [];
      replace(preview, banner("info", "The registry gives the columns when the table is created."));
      return true;
    }
    if (source === "infer" && !inferred.fields) {
      replace(messages, banner("warning", "Read sample messages first, or choose another way to define the columns."));
      return false;
    }
    const body = schemaBody();
    try {
      const expanded = await api.post("/connection_tables/schemas/test", { ...body, watermark: undefined });
      previewed = expanded.fields || [];
      replace(preview, h("h3", {}, "Resulting columns"), fieldsTable(previewed));
      drawWatermark();
      return true;
    } catch (e) {
      replace(preview, errorBanner(e, "The schema is not valid"));
      return false;
    }
  };
  const drawWatermark = () => {
    const chosen = watermarkColumn.value || saved.watermark || "";
    const times = previewed.filter((f) => (f.sql_name || "").startsWith("TIMESTAMP"));
    replace(watermarkColumn, h("option", { value: "" }, "(none)"), times.map((f) => h("option", { value: f.name, selected: f.name === chosen }, f.name)));
  };
  const metadataList = h(
    "div",
    { class: "choices" },
    (c.metadata || []).map((m) => {
      const id = uid("meta");
      const nameInput = h("input", { type: "text", value: metadata.get(m.key) || m.key, "aria-label": `Column name for metadata ${m.key}`, spellcheck: "false", oninput: () => { if (metadata.has(m.key)) metadata.set(m.key, nameInput.value.trim() || m.key); } });
      return h(
        "div",
        { class: "meta-row" },
        h("input", { type: "checkbox", id, checked: metadata.has(m.key), onchange: (e) => { if (e.target.checked) metadata.set(m.key, nameInput.value.trim() || m.key); else metadata.delete(m.key); } }),
        h("label", { for: id }, h("code", {}, m.key)),
        h("span", {}, m.sql_name),
        h("span", { class: "meta" }, m.description),
        nameInput,
      );
    }),
  );
  format.addEventListener("change", () => drawSources());
  drawSources();
  const element = h(
    "div",
    {},
    h("p", { class: "sub" }, "How messages are encoded, and the columns they become."),
    h("div", { class: "panel" }, h("div", { class: "field" }, h("label", { for: formatId }, "Format"), format), h("h3", {}, "Columns"), sourceList, detail),
    c.metadata?.length ? h("div", { class: "panel" }, h("h3", {}, "Metadata columns"), h("p", { class: "help" }, `Columns filled from each message's ${c.name} metadata.`), metadataList) : null,
    h(
      "div",
      { class: "panel" },
      h("h3", {}, "Event time and watermark"),
      h("div", { class: "two" }, h("div", { class: "field" }, h("label", { for: watermarkId }, "Event-time column"), watermarkColumn), h("div", { class: "field" }, h("label", { for: latenessId }, "Allowed lateness (seconds)"), lateness, h("small", { class: "help", id: `${latenessId}-help` }, "Rows later than this behind the newest event time are dropped."))),
      h("button", { type: "button", class: "small", onclick: () => check() }, "Preview columns"),
    ),
    messages,
    preview,
  );
  if (saved.previewed) {
    previewed = saved.previewed;
    replace(preview, h("h3", {}, "Resulting columns"), fieldsTable(previewed));
    drawWatermark();
  }
  return {
    element,
    next: async () => {
      if (!(await check())) return false;
      // The whole table, checked by the server as CREATE TABLE would check it: rules
      // between the columns and the rest (the watermark's column, keys) show here.
      const body = { name: state.name || "new_table", connector: c.id, connection_profile_id: state.profile?.id ?? null, config: state.config || {}, schema: schemaBody() };
      try {
        await api.post("/connection_tables/sql", body);
      } catch (e) {
        if (e.status === 400 && !(e.diagnostics || []).every((d) => d.path === "/name")) {
          replace(messages, errorBanner(e, "The table is not valid with these columns"));
          return false;
        }
      }
      state.schema = schemaBody();
      state.schemaUi = { format: format.value, source, columns, document: doc.value, message: messageName.value, inferred: inferred.fields, metadata: [...metadata].map(([key, name]) => ({ key, name })), watermark: watermarkColumn.value, lateness: lateness.value, previewed };
      return true;
    },
  };
}

/** A field type from an SQL type name of a metadata key. */
function fieldType(sql) {
  const found = TYPES.find(([t]) => t === sql);
  return found ? found[1] : { type: "string" };
}

/** A field from a view (with its `sql_name`) as a body field. */
function stripView(f) {
  const { sql_name: _ignored, ...rest } = f;
  return rest;
}

function fieldsTable(fields) {
  return dataTable(
    [
      { label: "Column", render: (f) => h("code", {}, f.name) },
      { label: "Type", render: (f) => f.sql_name || f.type },
      { label: "Nullable", render: (f) => (f.required ? "no" : "yes") },
      { label: "Metadata", render: (f) => f.metadata_key || "" },
    ],
    fields,
    "No columns.",
  );
}
