// Connection profiles: the list, one profile (test again, edit, delete), and the editor
// that creates one, shared with the connection wizard.

import * as api from "./api.js";
import { codeBlock, confirmDialog, dataTable, errorBanner, h, replace, time, toast, uid } from "./dom.js";
import { createForm } from "./form.js";
import { lastTest, optionsTable } from "./connections.js";
import { runTest } from "./testing.js";

/** The list of profiles. */
export async function profilesPage() {
  const [profiles, connectors] = await Promise.all([api.get("/connection_profiles"), api.connectors()]);
  const withProfiles = connectors.filter((c) => c.connection_config && !c.hidden);
  const picker = h(
    "select",
    { "aria-label": "Connector of the new profile" },
    withProfiles.map((c) => h("option", { value: c.id }, c.name)),
  );
  return {
    title: "Profiles",
    element: h(
      "section",
      {},
      h(
        "div",
        { class: "page-head" },
        h("div", {}, h("h1", {}, "Connection profiles"), h("p", { class: "sub" }, "Servers and credentials, shared by the tables that use them.")),
        h(
          "div",
          { class: "toolbar" },
          picker,
          h("button", { type: "button", class: "primary", onclick: () => { location.hash = `#/profiles/new?connector=${picker.value}`; } }, "New profile"),
        ),
      ),
      dataTable(
        [
          { label: "Name", render: (p) => h("a", { href: `#/profiles/${encodeURIComponent(p.name)}` }, p.name) },
          { label: "Connector", render: (p) => p.connector },
          { label: "Description", render: (p) => p.description },
          { label: "Tables", render: (p) => (p.tables.length ? p.tables.join(", ") : h("span", { class: "null" }, "none")) },
          { label: "Last test", render: (p) => lastTest(p.last_test) },
          { label: "Created", render: (p) => time(p.created_at) },
        ],
        profiles.data,
        "No profiles yet. A profile holds the servers and credentials of a system, for many tables.",
      ),
    ),
  };
}

/** One profile, or (`new`) the form for a new one. */
export async function profilePage(key) {
  if (key.startsWith("new")) {
    const connectorId = new URLSearchParams(key.split("?")[1] || location.hash.split("?")[1] || "").get("connector");
    const connector = (await api.connectors()).find((c) => c.id === connectorId);
    if (!connector) throw new api.ApiError(404, { error: `unknown connector '${connectorId}'` });
    const editor = profileEditor(connector, {
      onStored: (p) => {
        toast(`Profile ${p.name} was created`);
        location.hash = `#/profiles/${encodeURIComponent(p.name)}`;
      },
    });
    return {
      title: "New profile",
      element: h("section", {}, h("p", { class: "sub" }, h("a", { href: "#/profiles" }, "Profiles"), " / "), h("h1", {}, `New ${connector.name} profile`), editor.element),
      leave: editor.leave,
    };
  }
  const p = await api.get(`/connection_profiles/${encodeURIComponent(key)}`);
  const connector = (await api.connectors()).find((c) => c.id === p.connector);
  const messages = h("div");
  const body = h("div");
  let stop = null;

  const testAgain = async () => {
    // The stored profile (its secrets included) is tested by the server: TEST CONNECTION PROFILE.
    replace(messages, h("p", { class: "status-line" }, h("span", { class: "spinner" }), " Testing…"));
    try {
      const answer = await api.sql(`TEST CONNECTION PROFILE ${quoteIdent(p.name)}`);
      const result = answer.results[0];
      const rows = result.rows.map((r) => Object.fromEntries(result.columns.map((c, i) => [c.name, r[i]])));
      const failed = result.error;
      replace(
        messages,
        failed
          ? errorBanner({ message: result.diagnostics[0]?.message || "The test failed", hint: result.diagnostics[0]?.hint }, "The test failed")
          : h("div", { class: "banner success", role: "status" }, h("strong", {}, "The test passed")),
        rows.length ? dataTable(result.columns.map((c) => ({ key: c.name, label: c.name })), rows) : null,
      );
      const fresh = await api.get(`/connection_profiles/${encodeURIComponent(p.name)}`);
      replace(lastTestCell, lastTest(fresh.last_test));
    } catch (e) {
      replace(messages, errorBanner(e, "The test could not run"));
    }
  };
  const edit = () => {
    const editor = profileEditor(connector, {
      existing: p,
      onStored: (changed) => {
        toast(`Profile ${changed.name} was changed`);
        location.hash = `#/profiles/${encodeURIComponent(changed.name)}`;
        window.dispatchEvent(new HashChangeEvent("hashchange"));
      },
    });
    stop = editor.leave;
    replace(body, h("h2", {}, "Edit"), editor.element);
  };
  const remove = async () => {
    if (!(await confirmDialog(`Delete ${p.name}?`, `Profile '${p.name}' is removed from the catalog.`))) return;
    try {
      await api.del(`/connection_profiles/${encodeURIComponent(p.id)}`);
      toast(`Profile ${p.name} was deleted`);
      location.hash = "#/profiles";
    } catch (e) {
      replace(messages, errorBanner(e, "The profile was not deleted"));
    }
  };
  const lastTestCell = h("dd", {}, lastTest(p.last_test));
  replace(
    body,
    h("h2", {}, "Settings"),
    optionsTable(p.config),
    h("h2", {}, "As SQL"),
    codeBlock(p.create_sql),
  );
  return {
    title: p.name,
    leave: () => stop?.(),
    element: h(
      "section",
      {},
      h(
        "div",
        { class: "page-head" },
        h("div", {}, h("p", { class: "sub" }, h("a", { href: "#/profiles" }, "Profiles"), " / "), h("h1", {}, p.name), h("p", { class: "sub" }, p.description)),
        h(
          "div",
          { class: "toolbar" },
          h("button", { type: "button", onclick: testAgain }, "Test again"),
          h("button", { type: "button", onclick: edit }, "Edit"),
          h("button", { type: "button", class: "danger", onclick: remove }, "Delete"),
        ),
      ),
      messages,
      h(
        "div",
        { class: "panel" },
        h(
          "dl",
          { class: "facts" },
          h("dt", {}, "Connector"), h("dd", {}, p.connector),
          h("dt", {}, "Tables"), h("dd", {}, p.tables.length ? p.tables.map((t, i) => [i ? ", " : "", h("a", { href: `#/connections/${encodeURIComponent(t)}` }, t)]) : "none"),
          h("dt", {}, "Last test"), lastTestCell,
          h("dt", {}, "Created"), h("dd", {}, time(p.created_at)),
          h("dt", {}, "Id"), h("dd", {}, h("code", {}, p.id)),
        ),
      ),
      body,
    ),
  };
}

/** `name` as an SQL identifier. */
export function quoteIdent(name) {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/**
 * The form that creates (or, with `existing`, changes) a profile of `connector`: its
 * name, the settings form from the connector's profile schema, Test (each stage as it
 * ends) and Create (tested first unless the user says otherwise). `onStored(profile)`
 * is called once it is stored.
 */
export function profileEditor(connector, { existing = null, onStored }) {
  const schema = api.schemas(connector).profile;
  const form = createForm(schema, { value: existing?.config, editing: Boolean(existing) });
  const nameId = uid("name");
  const name = h("input", { id: nameId, type: "text", required: true, value: existing?.name || "", disabled: Boolean(existing), autocomplete: "off", spellcheck: "false", "aria-describedby": `${nameId}-error` });
  const nameError = h("div", { class: "field-error", id: `${nameId}-error`, "aria-live": "polite" });
  const untested = h("input", { type: "checkbox", id: uid("untested") });
  const results = h("div", { class: "test-results" });
  const messages = h("div");
  let controller = null;

  const body = () => ({ name: name.value.trim(), connector: connector.id, config: form.value() });
  const showError = (e, title) => {
    const unplaced = [];
    const fieldErrors = [];
    for (const d of e.diagnostics || []) {
      if (d.path === "/name") nameError.textContent = d.message;
      else if (d.path?.startsWith("/config")) fieldErrors.push({ pointer: d.path.slice("/config".length), message: d.message + (d.hint ? `. ${d.hint}` : "") });
      else unplaced.push(d);
    }
    if (e.path?.startsWith("/config") && !fieldErrors.length) fieldErrors.push({ pointer: e.path.slice(7), message: e.message });
    const rest = form.setErrors(fieldErrors);
    replace(messages, errorBanner({ ...e, diagnostics: [...unplaced, ...rest.map((r) => ({ message: r.message }))] }, title));
  };
  const check = () => {
    nameError.textContent = "";
    replace(messages);
    const errors = form.validate();
    if (!existing && !name.value.trim()) nameError.textContent = "Give the profile a name.";
    return !errors.length && (existing || name.value.trim());
  };
  const test = async () => {
    if (!check()) return;
    controller?.abort();
    controller = new AbortController();
    try {
      await runTest(results, "/connection_profiles/test", body(), controller.signal);
    } catch (e) {
      if (e.name !== "AbortError" && e.diagnostics?.length) showError(e, "The profile is not valid");
    }
  };
  const store = async () => {
    if (!check()) return;
    try {
      let stored;
      if (existing) {
        const config = form.value();
        stored = await api.patch(`/connection_profiles/${encodeURIComponent(existing.id)}`, { config, validate: !untested.checked });
      } else {
        stored = await api.post("/connection_profiles", { ...body(), validate: !untested.checked });
      }
      onStored(stored);
    } catch (e) {
      showError(e, existing ? "The profile was not changed" : "The profile was not created");
    }
  };
  const element = h(
    "form",
    { class: "panel profile-editor", novalidate: true, onsubmit: (ev) => { ev.preventDefault(); store(); } },
    h("div", { class: "field" }, h("label", { for: nameId }, "Profile name", h("span", { class: "req" }, " *")), name, nameError),
    h("h3", {}, `${connector.name} settings`),
    form.element,
    h(
      "div",
      { class: "form-actions" },
      h("button", { type: "button", onclick: test }, "Test connection"),
      h("button", { type: "submit", class: "primary" }, existing ? "Save changes" : "Create profile"),
      h("label", { class: "check-line" }, untested, " Store without testing"),
    ),
    messages,
    results,
  );
  return { element, leave: () => controller?.abort() };
}
