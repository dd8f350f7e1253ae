// The Plan tab: paste the SQL that describes the catalog (a `catalog dump`, the files
// kept in git), and see what would make the server's catalog match it (POST /plan),
// object by object and option by option. Secrets show only as "(secret)".

import * as api from "./api.js";
import { banner, dataTable, errorBanner, h, replace, uid } from "./dom.js";

const KEY = "tributary.plan";

const ACTIONS = {
  create: ["Create", "success"],
  change: ["Change", "info"],
  replace: ["Replace", "warning"],
  drop: ["Drop", "error"],
  keep: ["Keep", "info"],
};

export async function planPage() {
  const textId = uid("plan-sql");
  const text = h("textarea", { id: textId, rows: 16, class: "mono", spellcheck: "false", autocapitalize: "off", autocomplete: "off", placeholder: "CREATE CONNECTION PROFILE ...;\nCREATE TABLE ...;" });
  text.value = sessionStorage.getItem(KEY) || "";
  text.addEventListener("input", () => sessionStorage.setItem(KEY, text.value));
  const pruneId = uid("prune");
  const prune = h("input", { type: "checkbox", id: pruneId });
  const output = h("div", { "aria-live": "polite" });
  const planButton = h("button", { type: "button", class: "primary", onclick: () => plan() }, "Plan");

  const plan = async () => {
    planButton.disabled = true;
    replace(output, h("p", { class: "status-line" }, h("span", { class: "spinner" }), " Comparing with the catalog…"));
    try {
      const answer = await api.post("/plan", { files: [{ name: "pasted.sql", sql: text.value }], prune: prune.checked });
      replace(output, ...show(answer));
    } catch (e) {
      replace(output, errorBanner(e, "The SQL does not describe a valid catalog"), diagnosticLines(e));
    } finally {
      planButton.disabled = false;
    }
  };

  return {
    title: "Plan",
    element: h(
      "section",
      {},
      h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Plan"), h("p", { class: "sub" }, "Paste the SQL that describes the whole catalog (a catalog dump, the files kept in git) and see what would make this catalog match it. Nothing is changed."))),
      h(
        "div",
        { class: "panel" },
        h("div", { class: "field" }, h("label", { for: textId }, "The catalog as SQL"), text),
        h("div", { class: "plan-actions" }, planButton, h("label", { class: "check-line", for: pruneId }, prune, " List objects that are not in the SQL as dropped")),
      ),
      output,
    ),
  };
}

/** Where each error is, by line. */
function diagnosticLines(error) {
  const located = (error.diagnostics || []).filter((d) => d.line);
  if (!located.length) return null;
  return h("ul", { class: "diagnostics" }, located.map((d) => h("li", {}, `line ${d.line}, column ${d.column}: ${d.message}`)));
}

/** The plan: a summary, then each object with what differs in it. */
function show(answer) {
  const s = answer.summary;
  const changing = s.create + s.change + s.replace + s.drop;
  const summary = changing === 0
    ? banner("success", "No changes: the catalog matches the SQL.")
    : banner("info", `${s.create} to create, ${s.change} to change, ${s.replace} to replace, ${s.drop} to drop`, s.keep ? `${s.keep} kept: in the catalog, not in the SQL.` : null);
  const objects = answer.changes.filter((c) => c.action !== "keep");
  return [
    summary,
    ...objects.map((c) => {
      const [word, kind] = ACTIONS[c.action] || [c.action, "info"];
      return h(
        "div",
        { class: "panel plan-change" },
        h("h2", {}, h("span", { class: `badge ${kind}` }, word), " ", `${c.kind} `, h("code", {}, c.name)),
        c.details.length
          ? dataTable(
              [
                { key: "what", label: "What" },
                { key: "before", label: "In the catalog", render: (d) => d.before ?? "(none)" },
                { key: "after", label: "In the SQL", render: (d) => d.after ?? "(none)" },
              ],
              c.details,
            )
          : null,
      );
    }),
  ];
}
