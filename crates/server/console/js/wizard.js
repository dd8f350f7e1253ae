// The connection wizard: connector, profile, table options, schema, test, name and
// create, one step per screen, every step through the public REST API.

import * as api from "./api.js";
import { banner, codeBlock, dataTable, errorBanner, h, replace, toast, uid } from "./dom.js";
import { createForm } from "./form.js";
import { profileEditor } from "./profiles.js";
import { schemaStep } from "./schema_step.js";
import { runTest } from "./testing.js";

const STEPS = {
  connector: "Connector",
  profile: "Profile",
  options: "Table",
  schema: "Schema",
  test: "Test",
  create: "Create",
};

/** The wizard page; `query` may name the connector (`?connector=kafka`). */
export async function wizardPage(query) {
  const connectors = (await api.connectors()).filter((c) => !c.hidden);
  const state = {
    connector: null,
    profile: null, // {id, name}
    config: {},
    schema: null,
    name: "",
  };
  const root = h("section", {});
  const indicator = h("ol", { class: "steps", "aria-label": "Steps" });
  const screen = h("div", { class: "step" });
  const nav = h("div", { class: "wizard-nav" });
  replace(root, h("h1", {}, "New connection"), indicator, screen, nav);
  let index = 0;
  let steps = ["connector"];
  let leaving = null;

  const plan = () => {
    const c = state.connector;
    steps = ["connector"];
    if (c?.connection_config) steps.push("profile");
    steps.push("options");
    if (c?.custom_schemas) steps.push("schema");
    steps.push("test", "create");
  };
  const drawIndicator = () => {
    replace(
      indicator,
      steps.map((s, i) =>
        h("li", { class: i < index ? "done" : "", "aria-current": i === index ? "step" : null }, STEPS[s]),
      ),
    );
  };
  const go = async (to) => {
    const began = performance.now();
    leaving?.();
    leaving = null;
    index = to;
    plan();
    drawIndicator();
    const step = RENDER[steps[index]];
    const { element, next, nextLabel, leave } = await step(state, connectors, () => go(index + 1));
    leaving = leave || null;
    replace(screen, element);
    // How long the step took to appear, for anyone measuring the console.
    performance.measure("wizard-step", { start: began, detail: steps[index] });
    replace(
      nav,
      index > 0 ? h("button", { type: "button", onclick: () => go(index - 1) }, "Back") : h("span"),
      next
        ? h("button", {
            type: "button",
            class: "primary next",
            onclick: async (ev) => {
              const button = ev.currentTarget;
              button.disabled = true;
              try {
                if (await next()) go(index + 1);
              } finally {
                button.disabled = false;
              }
            },
          }, nextLabel || "Next")
        : h("span"),
    );
    screen.querySelector("input, select, textarea, button.card")?.focus();
  };
  const preset = query?.get("connector");
  if (preset) {
    state.connector = connectors.find((c) => c.id === preset) || null;
    plan();
  }
  await go(state.connector ? 1 : 0);
  return { title: "New connection", element: root, leave: () => leaving?.() };
}

const RENDER = {
  /** 1. Choose a connector. */
  async connector(state, connectors, advance) {
    const cards = h("div", { class: "cards", role: "list" });
    const search = h("input", {
      type: "search",
      placeholder: "Search connectors",
      "aria-label": "Search connectors",
      oninput: () => draw(),
    });
    function draw() {
      const q = search.value.trim().toLowerCase();
      replace(
        cards,
        connectors
          .filter((c) => !q || `${c.name} ${c.id} ${c.description}`.toLowerCase().includes(q))
          .map((c) =>
            h(
              "button",
              {
                type: "button",
                class: "card",
                role: "listitem",
                "aria-pressed": state.connector?.id === c.id ? "true" : "false",
                dataset: { connector: c.id },
                onclick: () => {
                  if (state.connector?.id !== c.id) {
                    state.profile = null;
                    state.config = {};
                    state.schema = null;
                  }
                  state.connector = c;
                  advance();
                },
              },
              h("img", { src: `data:image/svg+xml;utf8,${encodeURIComponent(c.icon)}`, alt: "" }),
              h("span", { class: "name" }, c.name),
              h("span", { class: "desc" }, c.description),
              h(
                "span",
                {},
                c.source ? h("span", { class: "badge source" }, "source") : null,
                c.sink ? h("span", { class: "badge sink" }, "sink") : null,
                c.lookup ? h("span", { class: "badge lookup" }, "lookup") : null,
              ),
            ),
          ),
      );
    }
    draw();
    return {
      element: h("div", {}, h("p", { class: "sub" }, "Where does the data live?"), h("div", { class: "toolbar" }, search), cards),
    };
  },

  /** 2. Pick a profile, or create one (tested before it is stored). */
  async profile(state) {
    const c = state.connector;
    const all = (await api.get("/connection_profiles")).data.filter((p) => p.connector === c.id);
    const group = uid("profile");
    const holder = h("div");
    const error = h("div");
    let choice = state.profile?.id || all[0]?.id || "new";
    let editor = null;
    const draw = () => {
      editor?.leave();
      editor = null;
      if (choice === "new") {
        editor = profileEditor(c, {
          onStored: (p) => {
            all.unshift(p);
            choice = p.id;
            state.profile = { id: p.id, name: p.name };
            toast(`Profile ${p.name} was created`);
            redraw();
          },
        });
        replace(holder, editor.element);
      } else {
        replace(holder);
      }
    };
    const list = h("div", { class: "choices", role: "radiogroup", "aria-label": "Connection profile" });
    const redraw = () => {
      replace(
        list,
        all.map((p) => radio(group, p.id, choice === p.id, `${p.name}`, p.description, () => { choice = p.id; draw(); })),
        radio(group, "new", choice === "new", "Create a new profile", "", () => { choice = "new"; draw(); }),
      );
      draw();
    };
    redraw();
    return {
      element: h("div", {}, h("p", { class: "sub" }, `A profile holds how to reach ${c.name}: servers and credentials.`), list, error, holder),
      next: async () => {
        if (choice === "new") {
          replace(error, banner("warning", "Create the profile first, or choose a stored one."));
          return false;
        }
        const p = all.find((x) => x.id === choice);
        state.profile = { id: p.id, name: p.name };
        return true;
      },
      leave: () => editor?.leave(),
    };
  },

  /** 3. The table's options, from the connector's table schema. */
  async options(state) {
    const c = state.connector;
    const form = createForm(api.schemas(c).table, { value: state.config });
    const messages = h("div");
    if (state.profile) {
      // Live names (topics, streams) fill the field that takes them, in the background.
      api
        .get(`/connection_profiles/${encodeURIComponent(state.profile.id)}/autocomplete`)
        .then((answer) => form.setAutocomplete(answer.values))
        .catch((e) => messages.append(banner("warning", "The profile's names could not be listed", e.message)));
    }
    return {
      element: h("div", {}, h("p", { class: "sub" }, `What to read or write in ${c.name}.`), messages, h("form", { class: "panel", novalidate: true, onsubmit: (e) => e.preventDefault() }, form.element)),
      next: async () => {
        replace(messages);
        if (form.validate().length) return false;
        state.config = form.value();
        state.configForm = form;
        // The server checks the options as CREATE TABLE would; its errors about them go
        // beside their fields (the schema is the next step's business).
        try {
          await api.post("/connection_tables/sql", tableBody(state, state.name || "new_table"));
        } catch (e) {
          const errors = (e.diagnostics || [])
            .filter((d) => d.path?.startsWith("/config/"))
            .map((d) => ({ pointer: d.path.slice(7), message: d.message + (d.hint ? `. ${d.hint}` : "") }));
          const profileProblem = (e.diagnostics || []).find((d) => d.path === "/connection_profile_id");
          const unplaced = form.setErrors(errors);
          if (unplaced.length < errors.length || profileProblem) {
            replace(messages, errorBanner({ message: "Some options need attention", diagnostics: [...unplaced, ...(profileProblem ? [profileProblem] : [])] }));
            return false;
          }
          if (e.status !== 400) {
            replace(messages, errorBanner(e));
            return false;
          }
        }
        return true;
      },
    };
  },

  /** 4. Format and columns. */
  async schema(state) {
    return schemaStep(state);
  },

  /** 5. Test with sample messages, streamed live. */
  async test(state) {
    const holder = h("div");
    const controller = new AbortController();
    // Not named yet: the server speaks of "the new table".
    const body = tableBody(state, state.name || "");
    const start = () =>
      runTest(holder, "/connection_tables/test", body, controller.signal)
        .then((last) => {
          // A table that passed its test is created with a connection check, which
          // records the test's result with it.
          state.tested = Boolean(last && !last.error);
        })
        .catch((e) => {
          state.tested = false;
          if (e.name !== "AbortError") showFieldErrors(state, e);
        });
    start();
    return {
      element: h("div", {}, h("p", { class: "sub" }, "The table is tested as it will be created: connecting, reading a few messages and decoding them."), h("div", { class: "toolbar" }, h("button", { type: "button", onclick: () => start() }, "Test again")), holder),
      next: async () => true,
      leave: () => controller.abort(),
    };
  },

  /** 6. Name, the equivalent statement, create. */
  async create(state) {
    const id = uid("table-name");
    const name = h("input", { id, type: "text", required: true, value: state.name, autocomplete: "off", spellcheck: "false", "aria-describedby": `${id}-error` });
    const nameError = h("div", { class: "field-error", id: `${id}-error`, "aria-live": "polite" });
    const statement = h("div");
    const messages = h("div");
    let timer = null;
    const preview = async () => {
      state.name = name.value.trim();
      if (!state.name) {
        replace(statement, h("p", { class: "null" }, "Name the table to see its statement."));
        return;
      }
      try {
        const answer = await api.post("/connection_tables/sql", tableBody(state, state.name, true));
        replace(statement, codeBlock(answer.sql));
      } catch (e) {
        replace(statement, errorBanner(e));
      }
    };
    name.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(preview, 250);
    });
    preview();
    return {
      element: h(
        "div",
        {},
        h("div", { class: "panel" }, h("div", { class: "field" }, h("label", { for: id }, "Table name", h("span", { class: "req" }, " *")), name, nameError)),
        h("h3", {}, "The equivalent statement"),
        h("p", { class: "sub" }, "Keep it in a script to create the same table with tributary run."),
        statement,
        messages,
      ),
      nextLabel: "Create connection",
      next: async () => {
        nameError.textContent = "";
        state.name = name.value.trim();
        if (!state.name) {
          nameError.textContent = "Give the table a name.";
          name.focus();
          return false;
        }
        try {
          const created = await api.post("/connection_tables", tableBody(state, state.name, true));
          toast(`Connection ${created.name} was created`);
          location.hash = `#/connections/${encodeURIComponent(created.name)}`;
          return false;
        } catch (e) {
          const nameProblem = (e.diagnostics || []).find((d) => d.path === "/name") || (e.code === "already_exists" ? e : null);
          if (nameProblem) nameError.textContent = nameProblem.message;
          replace(messages, errorBanner(e, "The connection was not created"));
          return false;
        }
      },
    };
  },
};

/** A radio choice with its label and a detail. */
function radio(group, value, checked, label, detail, onchange) {
  const id = uid("choice");
  return h(
    "div",
    { class: "choice-row" },
    h("input", { type: "radio", name: group, id, value, checked, onchange }),
    h("label", { for: id }, label),
    detail ? h("span", { class: "meta" }, detail) : null,
  );
}

/** The table body the wizard has built so far. */
export function tableBody(state, name, final = false) {
  return {
    name,
    connector: state.connector.id,
    connection_profile_id: state.profile?.id ?? null,
    config: state.config || {},
    ...(state.schema ? { schema: state.schema } : {}),
    ...(final && state.tested ? { validate: "connect" } : {}),
  };
}

/** Field errors of a refused body, beside the options' fields where they belong. */
function showFieldErrors(state, e) {
  const errors = (e.diagnostics || [])
    .filter((d) => d.path?.startsWith("/config"))
    .map((d) => ({ pointer: d.path.slice(7), message: d.message }));
  if (errors.length && state.configForm) state.configForm.setErrors(errors);
}

export { dataTable };
