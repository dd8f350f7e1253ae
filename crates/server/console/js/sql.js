// The SQL tab: an editor with line numbers, Check (diagnostics underlined where they
// are), Explain (the statement at the cursor), and Run, whose rows stream into a table
// as they arrive, with Stop.

import * as api from "./api.js";
import { cell, errorBanner, h, replace } from "./dom.js";

const KEY = "tributary.sql";

export async function sqlPage() {
  const text = h("textarea", {
    spellcheck: "false",
    "aria-label": "SQL",
    autocapitalize: "off",
    autocomplete: "off",
  });
  text.value = sessionStorage.getItem(KEY) || "SHOW TABLES;\n";
  const gutter = h("div", { class: "gutter", "aria-hidden": "true" });
  const marks = h("div", { class: "marks", "aria-hidden": "true" });
  const diagnostics = h("ul", { class: "diagnostics", "aria-live": "polite" });
  const output = h("div", { class: "output" });
  let controller = null;
  let found = []; // diagnostics shown: {severity, line, column, end_line, end_column}

  const runButton = h("button", { type: "button", class: "primary", onclick: () => run() }, "Run");
  const stopButton = h("button", { type: "button", disabled: true, onclick: () => controller?.abort() }, "Stop");

  const sync = () => {
    const lines = text.value.split("\n").length;
    // Errors and warnings mark their lines; a note is not a fault.
    const bad = new Set(found.filter((d) => d.line && d.severity !== "note").map((d) => d.line));
    replace(gutter, Array.from({ length: lines }, (_, i) => [i ? "\n" : "", bad.has(i + 1) ? h("span", { class: "bad" }, String(i + 1)) : String(i + 1)]));
    drawMarks();
    marks.scrollTop = text.scrollTop;
    marks.scrollLeft = text.scrollLeft;
    gutter.scrollTop = text.scrollTop;
    sessionStorage.setItem(KEY, text.value);
  };
  const drawMarks = () => {
    const source = text.value;
    const starts = [0];
    for (let i = 0; i < source.length; i++) if (source[i] === "\n") starts.push(i + 1);
    const offset = (line, column) => {
      const start = starts[line - 1];
      if (start === undefined) return source.length;
      const end = line < starts.length ? starts[line] - 1 : source.length;
      return Math.min(start + [...source.slice(start, end)].slice(0, column - 1).join("").length, end);
    };
    const ranges = found
      .filter((d) => d.line && d.severity !== "note")
      .map((d) => {
        const a = offset(d.line, d.column);
        let b = d.end_line ? offset(d.end_line, d.end_column) : a;
        if (b <= a) b = Math.min(source.length, a + 1);
        return [a, b, d.severity];
      })
      .sort((x, y) => x[0] - y[0]);
    const parts = [];
    let at = 0;
    for (const [a, b, severity] of ranges) {
      if (a < at) continue;
      parts.push(source.slice(at, a), h("mark", { class: severity }, source.slice(a, b) || " "));
      at = b;
    }
    parts.push(source.slice(at), "\n");
    replace(marks, parts);
  };
  text.addEventListener("input", () => {
    found = [];
    replace(diagnostics);
    sync();
  });
  text.addEventListener("scroll", sync);
  text.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      e.preventDefault();
      run();
    } else if (e.key === "Tab" && !e.shiftKey) {
      // Tab indents; Escape then Tab leaves the editor.
      e.preventDefault();
      const { selectionStart: s, selectionEnd: end } = text;
      text.setRangeText("    ", s, end, "end");
      sync();
    }
  });

  const showDiagnostics = (results) => {
    found = [];
    const items = [];
    for (const r of results) {
      for (const d of r.diagnostics || []) {
        found.push(d);
        items.push(
          h(
            "li",
            { class: d.severity },
            d.line ? h("span", { class: "where" }, `${d.line}:${d.column}`) : null,
            h("strong", {}, `${d.severity}: `),
            d.message,
            d.code ? h("span", { class: "codename" }, d.code) : null,
            d.hint ? h("div", { class: "hint" }, d.hint) : null,
            (d.notes || []).map((n) => h("div", { class: "hint" }, n)),
          ),
        );
      }
    }
    replace(diagnostics, items);
    sync();
  };

  const check = async () => {
    replace(output, h("p", { class: "status-line" }, h("span", { class: "spinner" }), " Checking…"));
    try {
      const answer = await api.sql(text.value, "check");
      showDiagnostics(answer.results);
      const n = answer.results.length;
      replace(
        output,
        h(
          "p",
          { class: answer.failed ? "status-line result-failed" : "status-line result-passed" },
          answer.failed ? `${answer.failed} of ${n} statement(s) invalid` : `${n} statement(s) valid`,
        ),
      );
      return answer;
    } catch (e) {
      replace(output, errorBanner(e, "The script could not be checked"));
      return null;
    }
  };

  const explain = async () => {
    const answer = await api.sql(text.value, "check").catch((e) => {
      replace(output, errorBanner(e));
      return null;
    });
    if (!answer) return;
    // The statement holding the cursor, by the spans the server found.
    const before = text.value.slice(0, text.selectionStart).split("\n");
    const line = before.length;
    const column = before[before.length - 1].length + 1;
    const inside = (r) =>
      (line > r.line || (line === r.line && column >= r.column)) && (line < r.end_line || (line === r.end_line && column <= r.end_column + 1));
    const target = answer.results.find(inside) || answer.results[answer.results.length - 1];
    if (!target) return;
    const lines = text.value.split("\n").slice(target.line - 1, target.end_line);
    lines[lines.length - 1] = lines[lines.length - 1].slice(0, target.end_column - 1);
    lines[0] = lines[0].slice(target.column - 1);
    const statement = lines.join("\n").replace(/;\s*$/, "");
    try {
      const plan = await api.sql(`EXPLAIN ${statement}`);
      const r = plan.results[0];
      if (r.error) {
        showDiagnostics([{ diagnostics: r.diagnostics.map((d) => ({ ...d, line: null })) }]);
        replace(output, errorBanner({ message: r.diagnostics[0]?.message || "The statement cannot be explained" }));
        return;
      }
      replace(output, h("div", { class: "code" }, h("pre", {}, r.rows.map((row) => row.join("\n")).join("\n\n"))));
    } catch (e) {
      replace(output, errorBanner(e));
    }
  };

  const run = async () => {
    controller?.abort();
    controller = new AbortController();
    runButton.disabled = true;
    stopButton.disabled = false;
    found = [];
    replace(diagnostics);
    sync();
    const blocks = h("div");
    const status = h("p", { class: "status-line" }, h("span", { class: "spinner" }), " Running…");
    replace(output, status, blocks);
    let current = null; // {body, count, countLine}
    const results = [];
    try {
      await api.stream(
        "/sql",
        { sql: text.value, mode: "run" },
        "application/x-ndjson",
        (ev) => {
          if (ev.event === "columns") {
            const body = h("tbody");
            const countLine = h("p", { class: "status-line" }, "0 rows");
            current = { body, count: 0, countLine };
            blocks.append(
              h("div", { class: "results" }, h("table", { class: "data" }, h("thead", {}, h("tr", {}, ev.columns.map((c) => h("th", { scope: "col", title: c.type }, c.name)))), body)),
              countLine,
            );
          } else if (ev.event === "rows" && current) {
            const fragment = document.createDocumentFragment();
            for (const row of ev.rows) fragment.append(h("tr", {}, row.map((v) => h("td", {}, cell(v)))));
            current.body.append(fragment);
            current.count += ev.rows.length;
            current.countLine.textContent = `${current.count} row${current.count === 1 ? "" : "s"}…`;
          } else if (ev.event === "result") {
            results.push(ev);
            if (current && ev.row_count !== undefined && ev.row_count !== null) {
              current.countLine.textContent = `${ev.row_count} row${ev.row_count === 1 ? "" : "s"}`;
            } else if (ev.error) {
              blocks.append(h("p", { class: "status-line result-failed" }, `Statement at line ${ev.line} failed`));
            } else if (ev.tag !== "SELECT") {
              blocks.append(h("p", { class: "status-line" }, ev.tag));
            }
            if (ev.rows?.length && !current) {
              // A gathered result (SHOW, DESCRIBE): its rows came with it.
              blocks.append(h("div", { class: "results" }, h("table", { class: "data" }, h("thead", {}, h("tr", {}, ev.columns.map((c) => h("th", { scope: "col" }, c.name)))), h("tbody", {}, ev.rows.map((row) => h("tr", {}, row.map((v) => h("td", {}, cell(v)))))))));
            }
            current = null;
          } else if (ev.event === "summary") {
            status.replaceChildren(ev.failed ? "Stopped at the first failure" : "Done");
          }
        },
        controller.signal,
      );
    } catch (e) {
      if (e.name === "AbortError") status.replaceChildren("Stopped");
      else replace(output, errorBanner(e, "The script could not run"));
    } finally {
      runButton.disabled = false;
      stopButton.disabled = true;
      showDiagnostics(results);
    }
  };

  sync();
  return {
    title: "SQL",
    leave: () => controller?.abort(),
    element: h(
      "section",
      {},
      h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "SQL"), h("p", { class: "sub" }, "Check, explain and run statements against the catalog. Ctrl+Enter runs."))),
      h("div", { class: "editor" }, gutter, h("div", { class: "area" }, marks, text)),
      h(
        "div",
        { class: "toolbar" },
        h("button", { type: "button", onclick: () => check() }, "Check"),
        h("button", { type: "button", onclick: () => explain() }, "Explain"),
        runButton,
        stopButton,
      ),
      diagnostics,
      output,
    ),
  };
}
