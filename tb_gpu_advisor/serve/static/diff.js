// The "Compare with…" picker and the diff view: data in (the /diff document, docs/diff.md), elements out.
// Reads the same sections in the same order as the CLI's `tb-gpu-advisor diff` (diff_render.py).
// Profile text only ever becomes Text nodes (dom.js).

import { DEFAULT_WIDTH } from "./charts.js";
import { h, s } from "./dom.js";
import { isNum, ms, num, pct } from "./format.js";
import { chartFigure, select } from "./views.js";

const STATUS = { fixed: "fixed", new: "new", improved: "improved", worse: "worse", still: "still present" };
const CHANGE = { changed: "", added: "added", removed: "removed", entered_top: "entered top 25", left_top: "left top 25" };

/** "+1.2 ms" / "−850 µs": a signed duration (ms). */
export function signedMs(v) {
  if (!isNum(v)) return "–";
  if (v === 0) return "0";
  return `${v > 0 ? "+" : "−"}${ms(Math.abs(v))}`;
}

/** "−58.8%": a signed share with one decimal, as the CLI's diff writes it (diff_render._signed_pct: common/fmt.pct). */
function signedPct(v) {
  return isNum(v) ? `${v > 0 ? "+" : v < 0 ? "−" : ""}${(Math.abs(v) * 100).toFixed(1)}%` : "–";
}

function us(v) {
  return isNum(v) ? num(v) : "–";
}

function signedUs(v) {
  return isNum(v) ? `${v > 0 ? "+" : v < 0 ? "−" : ""}${num(Math.abs(v))}` : "–";
}

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

/** The verdict line: step time base -> new, the change and whether it is beyond the noise. */
export function verdictText(d) {
  const st = d.step;
  if (st.verdict === "unknown") {
    const why = [d.base.error, d.new.error].filter(Boolean).join("; ") || "no step time";
    return `Step time ${ms(st.base_ms)} → ${ms(st.new_ms)}: cannot compare (${why})`;
  }
  const word = { faster: "faster", slower: "slower", unchanged: "no change beyond the noise" }[st.verdict];
  const noise = isNum(st.noise_ms) ? `noise ±${ms(st.noise_ms)}` : "noise unknown (fewer than 2 steps)";
  return `Step time ${ms(st.base_ms)} → ${ms(st.new_ms)} (${signedMs(st.delta_ms)}, ${signedPct(st.delta_share)}): ${word} (${noise})`;
}

/** "Fixed input_bound: predicted 14.9 ms/step, realised 15.5 ms/step (104% of predicted, within ±25%)". */
export function calibrationText(c, findings = []) {
  if (!c) return null;
  const titles = new Map(findings.filter((f) => f.status === "fixed").map((f) => [f.rule, f.title]));
  const tol = Math.round(c.tolerance * 100);
  const ratio = isNum(c.ratio) ? `${Math.round(c.ratio * 100)}% of predicted` : "n/a";
  const ok = c.within === null || c.within === undefined ? "" : c.within ? `, within ±${tol}%` : `, off by more than ±${tol}%`;
  return `Fixed ${c.findings.map((r) => `'${titles.get(r) || r}'`).join("; ")}: predicted saving ${ms(c.predicted_ms)}/step, realised ${ms(c.realised_ms)}/step (${ratio}${ok})`;
}

/**
 * Side-by-side bars per breakdown group, base above new, one scale for both (ms/step): every group the diff
 * compares (its order), named by the server's legend (`groups`: rules/savings.py GROUPS, report/legend.py).
 */
export function breakdownBars(changes, { width = DEFAULT_WIDTH, groups = [] } = {}) {
  const label = (key) => groups.find((g) => g.id === key)?.label || key.replace(/_/g, " ");
  const rows = changes.map((c) => [label(c.key), c]).filter(([, c]) => (c.base || 0) > 0 || (c.new || 0) > 0);
  const W = Math.max(320, Math.round(width));
  const labelW = 96, valueW = 80, plotW = Math.max(60, W - labelW - valueW - 8), rowH = 18, gap = 10;
  const max = Math.max(1e-9, ...rows.flatMap(([, c]) => [c.base || 0, c.new || 0]));
  const height = rows.length * (2 * rowH + gap) + 4;
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, width: W, height, class: "chart diff-bars", role: "img", "aria-label": "Step breakdown, base and new" },
    s("title", {}, "Step breakdown per category: base (upper bar) and new (lower bar), ms per step"));
  rows.forEach(([label, c], i) => {
    const y = i * (2 * rowH + gap);
    const g = s("g", { class: "group", "data-group": c.key }, s("text", { x: 0, y: y + rowH + 4, class: "chart-label" }, label));
    [["base", c.base], ["new", c.new]].forEach(([side, v], j) => {
      const w = isNum(v) ? (v / max) * plotW : 0;
      const yy = y + j * rowH;
      g.append(s("rect", { x: labelW, y: yy + 2, height: rowH - 4, width: Math.max(w, isNum(v) && v > 0 ? 1 : 0), class: `bar diff-${side}`, "data-side": side, "data-value": isNum(v) ? v : "" },
        s("title", {}, `${label}, ${side}: ${ms(v)}/step`)),
      s("text", { x: labelW + w + 4, y: yy + rowH - 5, class: "axis value" }, `${side} ${ms(v)}`));
    });
    svg.append(g);
  });
  return svg;
}

/** The breakdown bars in a chartFigure: redrawn to the figure's width when the page is resized (views.fitChart). */
export function breakdownFigure(changes, width = DEFAULT_WIDTH, groups = []) {
  const fig = chartFigure("Step breakdown, ms per step: base (upper bar) and new (lower bar)", (w) => breakdownBars(changes, { width: w, groups }), width);
  fig.classList.add("diff-figure");
  return fig;
}

function table(caption, columns, rows, rowClass = () => null) {
  if (!rows.length) return null;
  return h("div", { class: "table-wrap" },
    h("table", { class: "diff-table" },
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows.map((r, i) => h("tr", { class: rowClass(i) }, r.map((v) => h("td", { class: typeof v === "number" ? "num" : null }, v)))))));
}

function savingPair(f) {
  const one = (v) => (isNum(v) ? ms(v) : "–");
  return `${one(f.base_saving_ms)} → ${one(f.new_saving_ms)}`;
}

/** The findings diff: status, severity before -> after, saving before -> after, title (never a rule id). */
export function findingsTable(findings) {
  return table("Findings", ["status", "severity", "saving/step", "finding"],
    findings.map((f) => [STATUS[f.status] || f.status, `${f.base_severity || "–"} → ${f.new_severity || "–"}`,
      savingPair(f), f.gpu === null || f.gpu === undefined ? f.title : `${f.title} (GPU${f.gpu})`]),
    (i) => `finding-${findings[i].status}`);
}

/** Table rows of changes; a "changed" row whose change is under 0.05 µs/step (the CLI's "+0.0") is no change: left out. */
function changeRows(changes, fmt, signed) {
  return changes.filter((c) => !(c.status === "changed" && (!isNum(c.delta) || Math.abs(c.delta) < 0.05)))
    .map((c) => [c.label, fmt(c.base), fmt(c.new), signed(c.delta), CHANGE[c.status] ?? c.status]);
}

/** A table of changes, or one line saying that nothing in it changed (every row read "+0.0"). */
function changesTable(caption, what, changes) {
  const rows = changeRows(changes || [], us, signedUs);
  if (rows.length || !(changes || []).length) return table(caption, [what, "base", "new", "change", "status"], rows);
  return h("p", { class: "muted small no-change" }, `${caption}: no change of 0.05 µs/step or more.`);
}

function headlineRows(headline) {
  const word = (b) => (b === true ? "better" : b === false ? "worse" : "");
  return headline.map((m) => [m.label, `${m.base_display} (${m.base_status})`, `${m.new_display} (${m.new_status})`, word(m.better)]);
}

function gpuRows(gpus) {
  const pair = (a, b, f) => `${f(a)} → ${f(b)}`;
  const count = (v) => (isNum(v) ? String(v) : "–");
  return gpus.map((g) => [`GPU ${g.gpu}`, g.name || "–", pair(g.base_step_ms, g.new_step_ms, ms), pair(g.base_busy_share, g.new_busy_share, pct),
    pair(g.base_kernel_count, g.new_kernel_count, count)]);
}

/** The whole diff view below the toolbar. */
export function diffView(d, { width = DEFAULT_WIDTH, onClose = null, legend = {} } = {}) {
  const cal = calibrationText(d.calibration, d.findings);
  return h("div", { class: "diff", "data-verdict": d.step.verdict },
    h("div", { class: "diff-head" },
      h("h2", {}, "Compare: ", h("span", { class: "side-label" }, d.base.label), " → ", h("span", { class: "side-label" }, d.new.label)),
      onClose ? h("button", { type: "button", class: "close-diff", onClick: onClose }, "Back to the report") : null),
    (d.incomparable || []).length ? h("p", { class: "incomparable", role: "alert" },
      `Not comparable: the two captures do different work (${d.incomparable.join("; ")}): the step-time change is not the code's alone.`,
      d.per_tflop && d.per_tflop.base_ms_per_tflop !== undefined
        ? ` Per TFLOP of work: ${d.per_tflop.base_ms_per_tflop.toPrecision(3)} → ${d.per_tflop.new_ms_per_tflop.toPrecision(3)} ms.` : "") : null,
    h("p", { class: `verdict diff-verdict verdict-${d.step.verdict}` }, verdictText(d)),
    cal ? h("p", { class: "calibration" }, cal, h("br"), h("span", { class: "muted small" }, d.calibration.note)) : null,
    (d.notes || []).length ? h("ul", { class: "notes" }, d.notes.map((n) => h("li", {}, n))) : null,
    findingsTable(d.findings) || h("p", { class: "muted" }, "No warning or critical finding on either side."),
    breakdownFigure(d.breakdown, width, legend.groups || []),
    table("Headline", ["metric", "base", "new", "better or worse"], headlineRows(d.headline)),
    changesTable("Kernel time by class (µs/step)", "class", d.kernel_classes),
    changesTable("Largest kernel changes (µs/step)", "kernel", d.kernels),
    changesTable("Largest op changes (kernel µs/step)", "op", d.ops),
    table("GPUs", ["GPU", "name", "step", "active (any GPU work)", "kernels"], gpuRows(d.gpus)),
    h("p", { class: "muted small" }, `Diff ${d.diff_version} · analyzer ${d.analyzer_version} · generated ${d.generated_at}`));
}
