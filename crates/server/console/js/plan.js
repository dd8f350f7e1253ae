// The Plan tab: paste the SQL that describes the catalog (a `catalog dump`, the files
// kept in git), and see what would make the server's catalog match it (POST /plan),
// object by object and option by option. Secrets show only as "(secret)". A plan with
// changes can then be applied (POST /apply) exactly as shown: the SQL, the prune choice
// and the catalog's fingerprint are those of the plan, so a catalog changed meanwhile
// is refused rather than changed in ways nobody reviewed.

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
    const planned = { files: [{ name: "pasted.sql", sql: text.value }], prune: prune.checked };
    try {
      const answer = await api.post("/plan", planned);
      replace(output, ...show(answer), applyPanel(answer, planned, output));
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
      h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Plan"), h("p", { class: "sub" }, "Paste the SQL that describes the whole catalog (a catalog dump, the files kept in git) and see what would make this catalog match it. Nothing changes until you apply the plan."))),
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

/** Apply the plan just shown, as it was made; nothing when it changes nothing. */
function applyPanel(answer, planned, output) {
  const s = answer.summary;
  if (s.create + s.change + s.replace + s.drop === 0) return null;
  const replaceId = uid("allow-replace");
  const allowReplace = h("input", { type: "checkbox", id: replaceId });
  const applyButton = h("button", { type: "button", class: "danger", onclick: () => apply() }, "Apply these changes");
  const result = h("div", { "aria-live": "polite" });
  const apply = async () => {
    applyButton.disabled = true;
    replace(result, h("p", { class: "status-line" }, h("span", { class: "spinner" }), " Applying…"));
    try {
      const done = await api.post("/apply", { ...planned, allow_replace: allowReplace.checked, fingerprint: answer.fingerprint });
      const d = done.summary;
      replace(output, banner("success", `Applied: ${d.create} created, ${d.change} changed, ${d.replace} replaced, ${d.drop} dropped.`, "The catalog now matches the SQL."), ...show(done).slice(1));
    } catch (e) {
      // The server's hint names its API; here, the button is the way.
      if (e.code === "catalog_changed") e.hint = "Press Plan again to see what would change now, then apply that.";
      replace(result, errorBanner(e, "Nothing was applied"), diagnosticLines(e));
      applyButton.disabled = false;
    }
  };
  return h(
    "div",
    { class: "panel plan-apply" },
    h("p", {}, "Applying makes all of these changes in one step, or none of them if any fails."),
    h(
      "div",
      { class: "plan-actions" },
      applyButton,
      s.replace ? h("label", { class: "check-line", for: replaceId }, allowReplace, ` Allow ${s.replace} replacement(s): dropped and created again, with new ids`) : null,
    ),
    result,
  );
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
