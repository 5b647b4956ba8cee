// The "Compare with…" picker and the diff view: data in (the /diff document, docs/diff.md), elements out.
// Reads the same sections in the same order as the CLI's `tb-gpu-advisor diff` (diff_render.py).
// Profile text only ever becomes Text nodes (dom.js).

import { DEFAULT_WIDTH } from "./charts.js";
import { h, s, units } from "./dom.js";
import { chartFigure, select } from "./views.js";

// Every number on this view comes written from the server: the document's `display` (report/diff_render.display),
// the CLI's own texts.  Nothing here formats a number (JavaScript's toFixed rounds a tie up where Python rounds it to
// even: "0.125" read "0.13" here beside the CLI's "0.12"); the bars' lengths are the only numbers read.

/** Every run/session except the current one, as picker options ("run / session"); "" = no comparison. */
export function compareOptions(runs, sel) {
  const out = [{ value: "", label: "— none —" }];
  for (const r of runs || []) {
    for (const x of r.sessions) {
      if (r.run === sel.run && x.session === sel.session) continue;
      out.push({ value: JSON.stringify([r.run, x.session]), label: r.sessions.length > 1 ? `${r.run} / ${x.session}` : r.run });
    }
  }
  return out;
}

/**
 * What decides whether a diff on screen must be redrawn: the document without `generated_at`, which the server
 * sets on every /diff answer (a TensorBoard reload must not redraw, nor scroll, an unchanged diff).
 */
export function diffIdentity(d) {
  return JSON.stringify({ ...d, generated_at: null });
}

/** The "Compare with…" picker: `onCompare({run, session})`, or `onCompare(null)` for none. */
export function comparePicker(runs, sel, cmp, onCompare) {
  const value = cmp && cmp.run ? JSON.stringify([cmp.run, cmp.session]) : "";
  return select("Compare with…", compareOptions(runs, sel), value, (v) => {
    if (!v) return onCompare(null);
    const [run, session] = JSON.parse(v);
    onCompare({ run, session });
  });
}

const shown = (d) => d.display || {};

/** The verdict line: step time base -> new, the change and whether it is beyond the noise (the CLI's words). */
export function verdictText(d) {
  return units(shown(d).verdict || "");
}

/** Predicted vs realised of the fixed findings (time; `memory` true: bytes): [line, note], or null. */
export function calibrationText(d, memory = false) {
  const lines = shown(d)[memory ? "memory_calibration" : "calibration"] || [];
  return lines.length ? lines.map(units) : null;
}

/**
 * Side-by-side bars per breakdown group, base above new, one scale for both (ms/step): every group the diff
 * compares (its order), named by the server's legend (`groups`: rules/savings.py GROUPS, report/legend.py), each
 * value written by the server (`labels`: the document's display.bars).
 */
export function breakdownBars(changes, { width = DEFAULT_WIDTH, groups = [], labels = {} } = {}) {
  const isNum = (v) => typeof v === "number" && Number.isFinite(v);
  const label = (key) => groups.find((g) => g.id === key)?.label || key.replace(/_/g, " ");
  const rows = changes.map((c) => [label(c.key), c]).filter(([, c]) => (c.base || 0) > 0 || (c.new || 0) > 0);
  const W = Math.max(320, Math.round(width));
  const labelW = 96, valueW = 80, plotW = Math.max(60, W - labelW - valueW - 8), rowH = 18, gap = 10;
  const max = Math.max(1e-9, ...rows.flatMap(([, c]) => [c.base || 0, c.new || 0]));
  const height = rows.length * (2 * rowH + gap) + 4;
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, width: W, height, class: "chart diff-bars", role: "img", "aria-label": "Step breakdown, base and new" },
    s("title", {}, "Step breakdown per category: base (upper bar) and new (lower bar), ms per step"));
  rows.forEach(([name, c], i) => {
    const y = i * (2 * rowH + gap);
    const g = s("g", { class: "group", "data-group": c.key }, s("text", { x: 0, y: y + rowH + 4, class: "chart-label" }, name));
    [["base", c.base], ["new", c.new]].forEach(([side, v], j) => {
      const w = isNum(v) ? (v / max) * plotW : 0;
      const yy = y + j * rowH;
      const text = units((labels[c.key] || {})[side] || "–");
      g.append(s("rect", { x: labelW, y: yy + 2, height: rowH - 4, width: Math.max(w, isNum(v) && v > 0 ? 1 : 0), class: `bar diff-${side}`, "data-side": side, "data-value": isNum(v) ? v : "" },
        s("title", {}, `${name}, ${side}: ${text}/step`)),
      s("text", { x: labelW + w + 4, y: yy + rowH - 5, class: "axis value" }, `${side} ${text}`));
    });
    svg.append(g);
  });
  return svg;
}

/** The breakdown bars in a chartFigure: redrawn to the figure's width when the page is resized (views.fitChart). */
export function breakdownFigure(changes, width = DEFAULT_WIDTH, groups = [], labels = {}) {
  const fig = chartFigure("Step breakdown, ms per step: base (upper bar) and new (lower bar)", (w) => breakdownBars(changes, { width: w, groups, labels }), width);
  fig.classList.add("diff-figure");
  return fig;
}

/** One of the server's tables (display.tables: id, title, columns, rows of text), or its one line where no row
 * changed at its precision; null where it has no row. */
export function displayTable(t) {
  if (!t) return null;
  if (!t.rows.length) return t.unchanged ? h("p", { class: "muted small no-change", "data-table": t.id }, units(t.unchanged)) : null;
  const rowClass = (i) => (t.row_status ? `finding-${t.row_status[i]}` : null);
  return h("div", { class: "table-wrap" },
    h("table", { class: `diff-table diff-${t.id.replace(/_/g, "-")}`, "data-table": t.id },
      h("caption", {}, units(t.title)),
      h("thead", {}, h("tr", {}, t.columns.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, t.rows.map((r, i) => h("tr", { class: rowClass(i) }, r.map((v, j) => h("td", { class: j ? "num" : null }, units(v))))))));
}

/** The whole diff view below the toolbar: the CLI's sections in its order, each text as the server wrote it. */
export function diffView(d, { width = DEFAULT_WIDTH, onClose = null, legend = {} } = {}) {
  const dp = shown(d);
  const tables = dp.tables || [];
  const byId = (id) => tables.filter((t) => t.id === id);
  const cal = calibrationText(d), mcal = calibrationText(d, true);
  const calibration = (c, cls) => (c ? h("p", { class: cls }, c[0], h("br"), h("span", { class: "muted small" }, c[1])) : null);
  const notes = [...(dp.memory_notes || []), ...(d.notes || [])];
  const timed = (d.breakdown || []).length > 0;
  return h("div", { class: "diff", "data-verdict": d.step.verdict },
    h("div", { class: "diff-head" },
      h("h2", {}, "Compare: ", h("span", { class: "side-label" }, d.base.label), " → ", h("span", { class: "side-label" }, d.new.label)),
      onClose ? h("button", { type: "button", class: "close-diff", onClick: onClose }, "Back to the report") : null),
    (dp.comparable || []).length ? h("p", { class: "incomparable", role: "alert" }, dp.comparable.map(units).join(" ")) : null,
    h("p", { class: `verdict diff-verdict verdict-${d.step.verdict}` }, verdictText(d)),
    dp.spread ? h("p", { class: "muted small spread" }, units(dp.spread)) : null,
    calibration(cal, "calibration"),
    calibration(mcal, "calibration memory-calibration"),
    notes.length ? h("ul", { class: "notes" }, notes.map((n) => h("li", {}, units(n)))) : null,
    displayTable(byId("findings")[0]) || (timed || (d.memory || []).length
      ? h("p", { class: "muted" }, "No warning or critical finding on either side.") : null),
    ...tables.filter((t) => t.id === "memory" || t.id === "memory_sites").map(displayTable),
    timed ? breakdownFigure(d.breakdown, width, legend.groups || [], dp.bars || {}) : null,
    ...["headline", "kernel_classes", "kernels", "ops", "gpus"].map((id) => displayTable(byId(id)[0])),
    h("p", { class: "muted small" }, `Diff ${d.diff_version} · analyzer ${d.analyzer_version} · generated ${d.generated_at}`));
}
