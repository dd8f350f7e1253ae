// Connection tests as the console shows them: each stage as it ends, with its code and
// hint, then the verdict (and, for sources, the sampled rows).

import * as api from "./api.js";
import { banner, dataTable, errorBanner, h, replace } from "./dom.js";

/** One event of a test as a list item. */
export function stageItem(ev) {
  const skipped = !ev.error && ev.code && !ev.done;
  const state = ev.error ? "failed" : skipped ? "skipped" : "ok";
  const mark = ev.error ? "✗" : skipped ? "–" : "✓";
  const text = ev.stage && ev.message.startsWith(`${ev.stage}: `) ? ev.message.slice(ev.stage.length + 2) : ev.message;
  return h(
    "li",
    { class: state, dataset: { stage: ev.stage || "" } },
    h("span", { class: "mark", "aria-label": state }, mark),
    h("span", { class: "stage" }, ev.stage || (ev.done ? "result" : "note")),
    h("span", {}, text, ev.code && (ev.error || skipped) ? h("span", { class: "code-tag" }, ev.code) : null),
    ev.hint ? h("span", { class: "hint" }, ev.hint) : null,
  );
}

/**
 * Run a streamed test (`path` with `body`) into `holder`: stages as they end, then the
 * verdict banner and any sampled rows. Resolves with the last event (or throws the
 * answer's error, shown in `holder`). `signal` stops it.
 */
export async function runTest(holder, path, body, signal) {
  const stages = h("ol", { class: "stages", "aria-live": "polite" });
  const status = h("p", { class: "status-line" }, h("span", { class: "spinner" }), " Testing…");
  replace(holder, status, stages);
  let last = null;
  try {
    await api.stream(
      path,
      body,
      "text/event-stream",
      (ev) => {
        last = ev;
        if (ev.done) return;
        stages.append(stageItem(ev));
      },
      signal,
    );
  } catch (e) {
    status.remove();
    if (e.name === "AbortError") throw e;
    holder.append(errorBanner(e, "The test could not start"));
    throw e;
  }
  status.remove();
  if (!last) {
    holder.append(banner("error", "The test ended without a result"));
    return null;
  }
  if (last.error) {
    const failedStage = last.stage || [...stages.querySelectorAll("li.failed")].map((li) => li.dataset.stage).pop();
    holder.append(
      banner(
        "error",
        failedStage ? `The test failed at stage '${failedStage}'` : "The test failed",
        [h("div", {}, last.message), last.code ? h("div", {}, "Code: ", h("code", {}, last.code)) : null, last.hint ? h("div", { class: "hint" }, last.hint) : null],
      ),
    );
  } else {
    holder.append(banner("success", "The test passed", last.message));
  }
  if (Array.isArray(last.rows) && last.rows.length) {
    const columns = Object.keys(last.rows[0]).map((k) => ({ key: k, label: k }));
    holder.append(h("h3", {}, `Sampled rows (${last.rows.length})`), h("div", { class: "results" }, dataTable(columns, last.rows)));
  }
  return last;
}
