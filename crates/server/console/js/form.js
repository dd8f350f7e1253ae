// The console's JSON Schema form renderer, driven by the same schemas as DESCRIBE
// CONNECTOR and validation. Two layers: `model` reads a schema into a tree of field
// descriptions (pure, testable without a page), and `createForm` builds labelled,
// keyboard-usable inputs from that tree, reads their values back as the JSON the schema
// describes, and shows errors beside the field they are about (by JSON pointer).
//
// Constructs: objects with properties, `required`, `oneOf` of objects (a choice of
// variants), string enums (selects), strings with `format` (`var-str`: may be a
// `{{ VAR }}` reference; `autocomplete`: live names), `pattern`, `minLength`/`maxLength`,
// integers and numbers with `minimum`/`maximum`, booleans, arrays, free string maps
// (`additionalProperties` without properties), `sensitive` (password inputs), `default`,
// `examples` (placeholders), `title` and `description`, `dependentRequired`. Anything
// else is edited as JSON text, so no schema ever fails to render.

import { h, uid } from "./dom.js";

/** The deepest a schema is followed; deeper parts are edited as JSON. */
const MAX_DEPTH = 16;

/** A field tree for `schema` at `pointer`. */
export function model(schema, pointer = "", key = null, options = {}, depth = 0) {
  const { required = false, sensitive = false } = options;
  const base = {
    pointer,
    key,
    title: schema.title || (key ? humanise(key) : ""),
    help: schema.description || "",
    required,
  };
  if (depth > MAX_DEPTH) return { ...base, kind: "json", default: schema.default };
  if (Array.isArray(schema.oneOf) && schema.oneOf.length) {
    const variants = schema.oneOf.map((v, i) => ({
      title: v.title || `Option ${i + 1}`,
      node: model({ type: "object", ...v, title: v.title }, pointer, key, {}, depth + 1),
    }));
    return { ...base, kind: "choice", variants };
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "object" || (!type && schema.properties)) {
    const props = schema.properties || {};
    const needed = new Set(schema.required || []);
    const secret = new Set(schema.sensitive || []);
    const fields = Object.entries(props).map(([k, s]) =>
      model(s, `${pointer}/${escape(k)}`, k, { required: needed.has(k), sensitive: secret.has(k) }, depth + 1),
    );
    if (!fields.length && schema.additionalProperties && typeof schema.additionalProperties === "object") {
      return { ...base, kind: "map", default: schema.default };
    }
    return { ...base, kind: "object", fields, dependentRequired: schema.dependentRequired || {} };
  }
  if (type === "string" && Array.isArray(schema.enum)) {
    return { ...base, kind: "select", options: schema.enum.map(String), default: schema.default };
  }
  if (type === "string") {
    return {
      ...base,
      kind: "text",
      secret: sensitive,
      format: schema.format || null,
      pattern: schema.pattern || null,
      minLength: schema.minLength ?? null,
      maxLength: schema.maxLength ?? null,
      example: Array.isArray(schema.examples) && schema.examples.length ? String(schema.examples[0]) : null,
      default: schema.default,
    };
  }
  if (type === "integer" || type === "number") {
    return {
      ...base,
      kind: "number",
      integer: type === "integer",
      minimum: schema.minimum ?? null,
      maximum: schema.maximum ?? null,
      example: Array.isArray(schema.examples) && schema.examples.length ? String(schema.examples[0]) : null,
      default: schema.default,
    };
  }
  if (type === "boolean") return { ...base, kind: "boolean", default: schema.default };
  if (type === "array") {
    const items = schema.items && typeof schema.items === "object" ? schema.items : {};
    return {
      ...base,
      kind: "list",
      item: model(items, `${pointer}/0`, null, {}, depth + 1),
      minItems: schema.minItems ?? 0,
      default: schema.default,
    };
  }
  return { ...base, kind: "json", default: schema.default };
}

/** A JSON pointer segment. */
function escape(key) {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** `group_id_prefix` as "Group id prefix". */
export function humanise(key) {
  const words = key.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[_.]/g, " ").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Every field of a tree, depth first (choices' variants included). */
export function walk(node, visit) {
  visit(node);
  if (node.kind === "object") node.fields.forEach((f) => walk(f, visit));
  if (node.kind === "choice") node.variants.forEach((v) => walk(v.node, visit));
  if (node.kind === "list") walk(node.item, visit);
}

/** The variant of a choice that `value` (an object) matches best. */
export function pickVariant(node, value) {
  if (!value || typeof value !== "object") return 0;
  const keys = Object.keys(value);
  let best = 0;
  let score = -1;
  node.variants.forEach((v, i) => {
    const fields = v.node.kind === "object" ? v.node.fields : [];
    const names = new Set(fields.map((f) => f.key));
    const hits = keys.filter((k) => names.has(k)).length;
    const misses = keys.length - hits;
    const s = hits * 2 - misses;
    if (s > score) {
      score = s;
      best = i;
    }
  });
  return best;
}

/**
 * A form for `schema`. Options: `value` (initial JSON), `autocomplete` ({field: names}),
 * `editing` (secrets left empty keep their stored value). Returns
 * `{element, value(), validate(), setErrors(errors), clearErrors(), setAutocomplete(values)}`.
 */
export function createForm(schema, options = {}) {
  const tree = model(schema);
  const fields = new Map(); // pointer -> {node, wrapper, error}
  const lists = new Map(); // field key -> datalist element
  const form = {
    element: null,
    read: null,
  };
  const built = build(tree, options.value, options, fields, lists, true);
  form.element = h("div", { class: "schema-form" }, built.element);
  form.read = built.read;
  return {
    element: form.element,
    tree,
    value: () => form.read(),
    validate: () => validate(tree, form.read(), fields, Boolean(options.editing)),
    setErrors: (errors) => showErrors(errors, fields),
    clearErrors: () => fields.forEach((f) => setError(f, null)),
    setAutocomplete: (values) => {
      for (const [key, names] of Object.entries(values || {})) {
        const list = lists.get(key);
        if (list) list.replaceChildren(...names.map((n) => h("option", { value: n })));
      }
    },
  };
}

function build(node, value, options, fields, lists, top = false) {
  switch (node.kind) {
    case "object":
      return buildObject(node, value, options, fields, lists, top);
    case "choice":
      return buildChoice(node, value, options, fields, lists);
    case "map":
      return buildMap(node, value, fields);
    case "list":
      return buildList(node, value, options, fields, lists);
    default:
      return buildScalar(node, value, options, fields, lists);
  }
}

function buildObject(node, value, options, fields, lists, top) {
  const parts = node.fields.map((f) => ({ f, built: build(f, value?.[f.key], options, fields, lists) }));
  const body = parts.map((p) => p.built.element);
  const element = top
    ? h("div", { class: "fields" }, body)
    : h(
        "fieldset",
        { class: "group" },
        h("legend", {}, node.title, node.required ? requiredMark() : null),
        node.help ? h("p", { class: "help" }, node.help) : null,
        body,
      );
  const error = h("div", { class: "field-error", "aria-live": "polite" });
  if (!top) element.append(error);
  fields.set(node.pointer, { node, wrapper: element, error, input: null });
  return {
    element,
    read: () => {
      const out = {};
      for (const p of parts) {
        const v = p.built.read();
        if (v !== undefined) out[p.f.key] = v;
      }
      return Object.keys(out).length || node.required || top ? out : undefined;
    },
  };
}

function buildChoice(node, value, options, fields, lists) {
  const id = uid("choice");
  let chosen = pickVariant(node, value);
  const variants = node.variants.map((v, i) => build(v.node, i === chosen ? value : undefined, options, fields, lists, true));
  const holder = h("div", { class: "variant" }, variants[chosen].element);
  const select = h(
    "select",
    {
      id,
      onchange: () => {
        chosen = Number(select.value);
        holder.replaceChildren(variants[chosen].element);
      },
    },
    node.variants.map((v, i) => h("option", { value: String(i), selected: i === chosen }, v.title)),
  );
  const help = node.help ? h("small", { class: "help", id: `${id}-help` }, node.help) : null;
  if (help) select.setAttribute("aria-describedby", `${id}-help`);
  const error = h("div", { class: "field-error", "aria-live": "polite" });
  const element = h(
    "fieldset",
    { class: "group choice" },
    h("legend", {}, h("label", { for: id }, node.title), node.required ? requiredMark() : null),
    select,
    help,
    holder,
    error,
  );
  fields.set(node.pointer, { node, wrapper: element, error, input: select });
  return { element, read: () => variants[chosen].read() ?? {} };
}

function buildMap(node, value, fields) {
  const rows = h("div", { class: "map-rows" });
  const addRow = (k = "", v = "") => {
    const row = h(
      "div",
      { class: "map-row" },
      h("input", { type: "text", value: k, "aria-label": `${node.title}: name`, placeholder: "name", class: "map-key" }),
      h("input", { type: "text", value: v, "aria-label": `${node.title}: value`, placeholder: "value", class: "map-value" }),
      h("button", { type: "button", class: "small", "aria-label": "Remove", onclick: () => row.remove() }, "Remove"),
    );
    rows.append(row);
  };
  for (const [k, v] of Object.entries(value || node.default || {})) addRow(k, String(v));
  const error = h("div", { class: "field-error", "aria-live": "polite" });
  const element = h(
    "fieldset",
    { class: "group map" },
    h("legend", {}, node.title, node.required ? requiredMark() : null),
    node.help ? h("p", { class: "help" }, node.help) : null,
    rows,
    h("button", { type: "button", class: "small", onclick: () => addRow() }, "Add an entry"),
    error,
  );
  fields.set(node.pointer, { node, wrapper: element, error, input: null });
  return {
    element,
    read: () => {
      const out = {};
      for (const row of rows.children) {
        const k = row.querySelector(".map-key").value.trim();
        if (k) out[k] = row.querySelector(".map-value").value;
      }
      return Object.keys(out).length ? out : undefined;
    },
  };
}

function buildList(node, value, options, fields, lists) {
  const items = h("div", { class: "list-items" });
  const readers = [];
  const addItem = (v) => {
    const built = build({ ...node.item, title: `${node.title} item`, required: false }, v, options, new Map(), lists);
    const entry = { read: built.read };
    const row = h(
      "div",
      { class: "list-item" },
      built.element,
      h("button", {
        type: "button",
        class: "small",
        onclick: () => {
          row.remove();
          readers.splice(readers.indexOf(entry), 1);
        },
      }, "Remove"),
    );
    readers.push(entry);
    items.append(row);
  };
  for (const v of value || node.default || []) addItem(v);
  const error = h("div", { class: "field-error", "aria-live": "polite" });
  const element = h(
    "fieldset",
    { class: "group list" },
    h("legend", {}, node.title, node.required ? requiredMark() : null),
    node.help ? h("p", { class: "help" }, node.help) : null,
    items,
    h("button", { type: "button", class: "small", onclick: () => addItem(undefined) }, "Add an item"),
    error,
  );
  fields.set(node.pointer, { node, wrapper: element, error, input: null });
  return {
    element,
    read: () => {
      const out = readers.map((r) => r.read()).filter((v) => v !== undefined && v !== "");
      return out.length ? out : undefined;
    },
  };
}

function buildScalar(node, value, options, fields, lists) {
  const id = uid("field");
  const helpId = `${id}-help`;
  const errorId = `${id}-error`;
  const given = value === undefined ? node.default : value;
  let input;
  switch (node.kind) {
    case "select":
      input = h(
        "select",
        { id },
        node.required && node.default !== undefined ? null : h("option", { value: "" }, node.required ? "Choose…" : "(not set)"),
        node.options.map((o) => h("option", { value: o, selected: given === o }, o)),
      );
      break;
    case "boolean":
      input = h("input", { id, type: "checkbox", checked: given === true });
      break;
    case "number":
      input = h("input", {
        id,
        type: "number",
        step: node.integer ? "1" : "any",
        min: node.minimum ?? null,
        max: node.maximum ?? null,
        value: given ?? "",
        placeholder: node.example ?? (node.default !== undefined ? String(node.default) : null),
      });
      break;
    case "json":
      input = h("textarea", { id, rows: 3, class: "mono", placeholder: "JSON" }, given === undefined ? "" : JSON.stringify(given, null, 2));
      break;
    default: {
      const redacted = given === "********";
      input = h("input", {
        id,
        type: node.secret ? "password" : "text",
        autocomplete: node.secret ? "new-password" : "off",
        spellcheck: "false",
        value: redacted ? "" : (given ?? ""),
        pattern: node.pattern && !node.secret ? node.pattern : null,
        minlength: node.minLength ?? null,
        maxlength: node.maxLength ?? null,
        placeholder: redacted || (node.secret && options.editing)
          ? "unchanged (stored secret)"
          : node.secret
            ? "the secret, or {{ VAR }} to read it from the server's environment"
            : node.example,
      });
      if (node.format === "autocomplete" && node.key) {
        const listId = `${id}-names`;
        const list = h("datalist", { id: listId });
        lists.set(node.key, list);
        input.setAttribute("list", listId);
        input.dataset.autocomplete = node.key;
        input._datalist = list;
      }
    }
  }
  if (node.required) input.setAttribute("aria-required", "true");
  const described = [node.help ? helpId : null, errorId].filter(Boolean).join(" ");
  input.setAttribute("aria-describedby", described);
  input.dataset.pointer = node.pointer;
  const label = h("label", { for: id }, node.title, node.required ? requiredMark() : null);
  const hints = [];
  if (node.help) hints.push(h("small", { class: "help", id: helpId }, node.help));
  if (node.kind === "text" && node.secret) {
    hints.push(h("small", { class: "help secret-hint" }, "Stored as written and never shown again; write {{ VAR }} to keep it in the server's environment instead."));
  } else if (node.kind === "text" && node.format === "var-str") {
    hints.push(h("small", { class: "help" }, "May be a {{ VAR }} reference to an environment variable."));
  }
  const error = h("div", { class: "field-error", id: errorId, "aria-live": "polite" });
  const element =
    node.kind === "boolean"
      ? h("div", { class: "field check" }, h("div", { class: "check-line" }, input, label), hints, error)
      : h("div", { class: "field" }, label, input, input._datalist || null, hints, error);
  fields.set(node.pointer, { node, wrapper: element, error, input });
  return { element, read: () => readScalar(node, input) };
}

function readScalar(node, input) {
  switch (node.kind) {
    case "boolean": {
      const v = input.checked;
      const dflt = node.default === true;
      return v === dflt && !node.required ? undefined : v;
    }
    case "number": {
      if (input.value === "") return undefined;
      const n = Number(input.value);
      return Number.isNaN(n) ? input.value : n;
    }
    case "json": {
      const text = input.value.trim();
      if (!text) return undefined;
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    }
    default:
      return input.value === "" ? undefined : input.value;
  }
}

function requiredMark() {
  return h("span", { class: "req", title: "required" }, " *");
}

/** Client-side checks of `value` against the tree: the errors, each shown by its field. */
function validate(tree, value, fields, editing) {
  const errors = [];
  check(tree, value, errors, editing);
  showErrors(errors, fields);
  return errors;
}

function check(node, value, errors, editing) {
  const missing = value === undefined || value === "";
  if (missing) {
    // A stored secret left empty while editing keeps its value.
    const keptSecret = node.kind === "text" && node.secret && editing;
    if (node.required && node.kind !== "boolean" && !keptSecret) {
      errors.push({ pointer: node.pointer, message: `${node.title} is required` });
    }
    return;
  }
  switch (node.kind) {
    case "object":
      for (const f of node.fields) check(f, value[f.key], errors, editing);
      for (const [k, needs] of Object.entries(node.dependentRequired || {})) {
        if (value[k] === undefined) continue;
        for (const n of needs) {
          if (value[n] === undefined) {
            const field = node.fields.find((f) => f.key === n);
            errors.push({ pointer: `${node.pointer}/${escape(n)}`, message: `${field?.title || n} is required when ${humanise(k)} is set` });
          }
        }
      }
      break;
    case "choice": {
      const variant = node.variants[pickVariant(node, value)];
      check(variant.node, value, errors, editing);
      break;
    }
    case "text":
      if (node.minLength !== null && value.length < node.minLength) {
        errors.push({ pointer: node.pointer, message: `${node.title} must have at least ${node.minLength} character(s)` });
      } else if (node.maxLength !== null && value.length > node.maxLength) {
        errors.push({ pointer: node.pointer, message: `${node.title} must have at most ${node.maxLength} characters` });
      } else if (node.pattern && !/\{\{.*\}\}/.test(value)) {
        let re = null;
        try {
          re = new RegExp(node.pattern, "u");
        } catch {
          re = null;
        }
        if (re && !re.test(value)) {
          errors.push({ pointer: node.pointer, message: `${node.title} does not have the expected form${node.example ? ` (for example ${node.example})` : ""}` });
        }
      }
      break;
    case "number":
      if (typeof value !== "number") {
        errors.push({ pointer: node.pointer, message: `${node.title} must be a number` });
      } else if (node.integer && !Number.isInteger(value)) {
        errors.push({ pointer: node.pointer, message: `${node.title} must be a whole number` });
      } else if (node.minimum !== null && value < node.minimum) {
        errors.push({ pointer: node.pointer, message: `${node.title} must be at least ${node.minimum}` });
      } else if (node.maximum !== null && value > node.maximum) {
        errors.push({ pointer: node.pointer, message: `${node.title} must be at most ${node.maximum}` });
      }
      break;
    default:
      break;
  }
}

/** Show each error beside the field its pointer names (or its nearest enclosing one);
 * the errors no field took. */
function showErrors(errors, fields) {
  fields.forEach((f) => setError(f, null));
  const rest = [];
  const byField = new Map();
  for (const e of errors) {
    let pointer = e.pointer ?? "";
    while (!fields.has(pointer) && pointer) pointer = pointer.slice(0, pointer.lastIndexOf("/"));
    const f = fields.get(pointer);
    if (!f || (pointer === "" && !f.input)) {
      rest.push(e);
      continue;
    }
    const list = byField.get(f) || [];
    list.push(e.message);
    byField.set(f, list);
  }
  byField.forEach((messages, f) => setError(f, messages.join("; ")));
  const first = [...byField.keys()][0];
  first?.input?.focus?.();
  return rest;
}

function setError(f, message) {
  f.error.textContent = message || "";
  f.wrapper.classList.toggle("invalid", Boolean(message));
  if (f.input) {
    if (message) f.input.setAttribute("aria-invalid", "true");
    else f.input.removeAttribute("aria-invalid");
  }
}
