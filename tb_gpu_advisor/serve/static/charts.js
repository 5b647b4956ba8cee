// Charts as plain SVG (no library: CSP forbids CDNs and the shapes are simple).
// Every label is a Text node; hover details are <title> children.
//
// Each chart is drawn for a given pixel width (`width`, the width of the box it
// is shown in; the caller redraws it when that changes), so its viewBox is its
// size on screen: text keeps its CSS size (12 px) at any width instead of
// being scaled with the picture.
//
// Every value a chart prints (a label, a hover) is the server's text (`labels`/`cells`: the report's display,
// report/view.py, the CLI's digits); a chart computes only positions and its axes' ticks.

import { s, units } from "./dom.js";

/** Width used when the caller does not know the box's width (tests, detached DOM). */
export const DEFAULT_WIDTH = 640;
/** Average advance of a chart label character at the CSS font size (for layout only). */
const CHAR_W = 6.6;
const textWidth = (text) => String(text).length * CHAR_W;

/** Rounded axis ticks for [0, max]. */
export function ticks(max, count = 4) {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((x) => x >= raw);
  const out = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) out.push(Number(v.toPrecision(6)));
  return out;
}

/** Legend items flowed into rows of at most `maxW` px; returns {items, rows}. */
function legend(items, maxW) {
  let x = 0, row = 0;
  const out = items.map(([key, label]) => {
    const w = 14 + textWidth(label) + 16;
    if (x > 0 && x + w > maxW) {
      x = 0;
      row++;
    }
    const g = s("g", { class: "legend-item", transform: `translate(${x},${row * 16})` },
      s("rect", { width: 10, height: 10, class: `cat-${key}` }),
      s("text", { x: 14, y: 9.5 }, label));
    x += w;
    return g;
  });
  return { items: out, rows: items.length ? row + 1 : 0 };
}

/** At most this many bars per panel; longer captures are averaged over consecutive steps. */
export const MAX_STEP_BARS = 120;

const hasGpu = (r) => r.gpu !== null && r.gpu !== undefined;

/**
 * The tab's own words for a host's devices, NVIDIA's as written; the server sends a host's in its vendor's words
 * (the host display's `device_words`, report/view.DEVICE_LABELS): "NPU 0" and "NPU active" for an Ascend NPU's
 * snapshot, "device 0" where the snapshot names no build -- the text report's tables already said so (h37-snap58).
 */
export const DEVICE_WORDS = { device: "GPU", devices: "GPUs", active: "GPU active: kernels, copies, collectives",
  skew: "Launch skew vs. first GPU", comparison: "Per-GPU comparison" };
export const deviceWords = (words) => ({ ...DEVICE_WORDS, ...(words || {}) });
/** `text` with its first letter a capital ("device 0" begins a sentence as "Device 0"). */
export const capital = (text) => String(text).charAt(0).toUpperCase() + String(text).slice(1);

/**
 * Shapes step rows (one per step, or one per step AND GPU on multi-GPU hosts)
 * for the chart: one series per GPU (sorted; a single `gpu: null` series when
 * the rows carry no GPU), all on the same step axis. With more than `maxBars`
 * distinct steps, consecutive steps are averaged in groups of `groupSize`.
 *
 * The analyzer adds a host-wide row per step (`gpu: null`, the mean over the
 * GPUs) to the per-GPU rows; that series comes first, except on a host with
 * one GPU, where it would repeat that GPU's panel and is left out.
 *
 * Returns {buckets: [{first, last}], groupSize, series: [{gpu, bars: [bar|null]}]}
 * where bar = {first, last, count, step_ms, breakdown} (means over `count` rows; `row`: the index in `stepRows` of
 * a bar of one row, whose texts the report's display holds).
 */
export function stepSeries(stepRows, maxBars = MAX_STEP_BARS) {
  const rows = stepRows || [];
  const steps = [...new Set(rows.map((r) => r.step))].sort((a, b) => a - b);
  const groupSize = Math.max(1, Math.ceil(steps.length / Math.max(1, maxBars)));
  const bucketOf = new Map(steps.map((st, i) => [st, Math.floor(i / groupSize)]));
  const buckets = [];
  for (let i = 0; i < steps.length; i += groupSize) buckets.push({ first: steps[i], last: steps[Math.min(i + groupSize, steps.length) - 1] });
  const byGpu = new Map();
  rows.forEach((r, index) => {
    const gpu = hasGpu(r) ? r.gpu : null;
    if (!byGpu.has(gpu)) byGpu.set(gpu, buckets.map(() => []));
    byGpu.get(gpu)[bucketOf.get(r.step)].push({ ...r, index });
  });
  const gpus = [...byGpu.keys()].sort((a, b) => (a === null ? -1 : b === null ? 1 : a - b));
  if (gpus.length === 2 && gpus[0] === null) gpus.shift(); // one GPU: its mean is itself
  const series = gpus.map((gpu) => {
    const bars = byGpu.get(gpu).map((group, i) => {
      if (!group.length) return null;
      const breakdown = {};
      for (const r of group) for (const [k, v] of Object.entries(r.breakdown || {})) breakdown[k] = (breakdown[k] || 0) + (v || 0) / group.length;
      const stepMs = group.reduce((a, r) => a + (r.step_ms || 0), 0) / group.length;
      return { ...buckets[i], count: group.length, step_ms: stepMs, breakdown, row: group.length === 1 ? group[0].index : null };
    });
    return { gpu, bars };
  });
  return { buckets, groupSize, series };
}

/**
 * A panel's heading: which GPU, and how much of its step it computes (the number that differs between GPUs), as the
 * report's ledger holds it (`panels`: the host's display, by GPU, "" the host's mean: report/view._panels).
 */
function panelLabel(sr, panels, words = DEVICE_WORDS) {
  const who = sr.gpu === null ? `All ${words.devices} (mean)` : capital(`${words.device} ${sr.gpu}`);
  const said = (panels || {})[sr.gpu === null ? "" : String(sr.gpu)];
  return said ? `${who} · ${units(said)}` : who;
}

/**
 * The breakdown's categories as [key, label], in the server's order (its legend, report/legend.py: the bottom of a
 * stacked bar first), then any key the rows carry that the legend does not name, under its own name.
 */
export function breakdownKeys(categories = [], rows = []) {
  const out = categories.map((c) => [c.id, c.label]);
  const known = new Set(out.map(([key]) => key));
  for (const r of rows) for (const key of Object.keys(r.breakdown || {})) if (!known.has(key)) { known.add(key); out.push([key, key.replace(/_/g, " ")]); }
  return out;
}

// a bar of one step is named as the server names it (`said.name`: "the pass" where the capture marks no step; a report
// served before it gave none: "step N"); a mean of several steps, by their ids
const stepLabel = (b, said) => (b.first === b.last ? said?.name || `step ${b.first}` : `steps ${b.first}–${b.last}`);

/**
 * The step axis's tick under a bar: the step's id on an axis of steps the capture numbers; on a host whose one step is
 * the pass an unmarked capture was read as (`labels.one_pass`), the server's name of it ("the pass",
 * `display.hosts[].steps[].name`) -- the id 0 there numbers no step the capture marks (h37-words23). A report served
 * before the names, or a bar of several steps, keeps the id.
 */
function tickLabel(b, rows, labels) {
  if (!labels.one_pass || b.first !== b.last) return String(b.first);
  const i = rows.findIndex((r) => r.step === b.first);
  return (labels.steps || [])[i]?.name || String(b.first);
}

/**
 * Per-step stacked bars of the non-overlapping breakdown (device compute at
 * the bottom, so the idle categories stack visibly on top of it). Multi-GPU
 * hosts get one small panel per GPU, stacked, on the same time scale and
 * step axis, so a slow or oversubscribed GPU stands out; long captures are
 * averaged over consecutive steps (see stepSeries).
 */
export function stepChart(stepRows, { title = "Step time breakdown", maxBars = MAX_STEP_BARS, width = DEFAULT_WIDTH, categories = [], labels = {} } = {}) {
  const W = Math.max(320, Math.round(width));
  const { buckets, groupSize, series } = stepSeries(stepRows, maxBars);
  const rows = series.flatMap((sr) => sr.bars.filter(Boolean));
  const used = breakdownKeys(categories, rows).filter(([key]) => rows.some((r) => (r.breakdown?.[key] || 0) > 0));
  const maxMs = Math.max(0, ...rows.map((r) => r.step_ms || 0));
  const multi = series.length > 1;
  const left = 48, top = 8, plotW = W - left - 8;
  const headerH = multi ? 16 : 0, gap = multi ? 6 : 0;
  const plotH = multi ? Math.max(34, Math.min(80, Math.floor(300 / series.length))) : 160;
  const panelH = headerH + plotH + gap;
  const axisY = top + series.length * panelH - gap;
  const leg = legend(used, plotW);
  const note = groupSize > 1 ? `each bar: mean of ${groupSize} consecutive steps` : "";
  const height = axisY + 26 + leg.rows * 16 + (note ? 16 : 0) + 4;
  const band = buckets.length ? plotW / buckets.length : plotW;
  const barW = Math.max(1, Math.min(band * 0.8, 48));
  const fullTitle = multi ? `${title}, one panel per ${deviceWords(labels.device_words).device} (same scale)` : title;
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, width: W, height, class: `chart step-chart${multi ? " multi-gpu" : ""}`, role: "img", "aria-label": fullTitle },
    s("title", {}, fullTitle));
  series.forEach((sr, p) => {
    const y0 = top + p * panelH + headerH;
    const y = (v) => y0 + plotH - (maxMs ? (v / maxMs) * plotH : 0);
    const panel = s("g", { class: "gpu-panel", "data-gpu": sr.gpu === null ? "" : String(sr.gpu) });
    if (multi) {
      panel.append(s("text", { x: left, y: y0 - 4, class: "chart-label panel-label" }, panelLabel(sr, labels.panels, deviceWords(labels.device_words))));
    }
    for (const t of ticks(maxMs, multi ? 2 : 4)) {
      panel.append(s("line", { x1: left, x2: W - 8, y1: y(t), y2: y(t), class: "grid" }),
        s("text", { x: left - 4, y: y(t) + 4, class: "axis", "text-anchor": "end" }, String(t)));
    }
    sr.bars.forEach((bar, i) => {
      if (!bar) return;
      let acc = 0;
      const x = left + i * band + (band - barW) / 2;
      // one step's bar says its times as the report writes them; a mean of several steps, its steps (the axis reads it)
      const said = bar.row === null ? null : (labels.steps || [])[bar.row];
      const dw = deviceWords(labels.device_words);
      const what = `${sr.gpu === null ? (multi ? `all ${dw.devices} (mean), ` : "") : capital(`${dw.device} ${sr.gpu}, `)}${stepLabel(bar, said)}${bar.count > 1 ? ` (mean of ${bar.count})` : ""}`;
      const g = s("g", { class: "step-bar", "data-first": String(bar.first), "data-last": String(bar.last) });
      for (const [key, label] of used) {
        const v = bar.breakdown?.[key] || 0;
        if (v <= 0) continue;
        g.append(s("rect", { x, width: barW, y: y(acc + v), height: Math.max(0.5, y(acc) - y(acc + v)), class: `cat-${key}` },
          s("title", {}, said?.step ? units(`${what}: ${label} ${said.breakdown[key] ?? ""} of ${said.step}`) : `${what}: ${label}`)));
        acc += v;
      }
      panel.append(g);
    });
    svg.append(panel);
  });
  svg.append(s("text", { x: 0, y: top + headerH + 4, class: "axis" }, "ms"));
  // step labels once, under the last panel (all panels share the step axis)
  const every = Math.max(1, Math.ceil(buckets.length / Math.max(4, Math.floor(plotW / 48))));
  buckets.forEach((b, i) => {
    if (i % every) return;
    svg.append(s("text", { x: left + i * band + band / 2, y: axisY + 14, class: "axis step-tick", "text-anchor": "middle" }, tickLabel(b, stepRows || [], labels)));
  });
  svg.append(s("g", { class: "legend", transform: `translate(${left},${axisY + 24})` }, leg.items));
  if (note) svg.append(s("text", { x: left, y: height - 4, class: "axis step-note" }, `step (${note})`));
  return svg;
}

/**
 * One horizontal bar per GPU for each measure (busy share, step time, launch
 * skew): the measures side by side when the width allows 300 px each, else
 * one under the other.
 */
export function gpuChart(gpus, { width = DEFAULT_WIDTH, table = { columns: [], rows: [] }, onePass = false, names = [], words = {} } = {}) {
  const W = Math.max(320, Math.round(width));
  const dw = deviceWords(words);  // the host's vendor's words (`words`: the host display's device_words)
  // each value as the report's GPU table prints it (`table`: the host's display.gpus_table, render's GPU columns)
  const cell = (column, unit) => (i) => {
    const text = ((table.rows || [])[i] || [])[(table.columns || []).indexOf(column)];
    return text === undefined ? "" : `${text}${unit}`;
  };
  const measures = [
    // of the pass where the host is one unmarked pass (`onePass`: the host's display `one_pass`, h37-onepass2)
    // a column found by its name as render.GPU_COLS writes it (the table's keys, NVIDIA's words whatever the vendor)
    ["busy_share", `${dw.active} (share of ${onePass ? "the pass" : "step"})`, cell("active (any GPU work)", ""), 1],
    ["step_ms", onePass ? "Pass time" : "Step time", cell("step ms", " ms"), null],
    ["launch_skew_ms", dw.skew, cell("skew ms", " ms"), null],
  ].filter(([key]) => gpus.some((g) => g[key] !== null && g[key] !== undefined));
  const side = measures.length > 0 && W >= measures.length * 300;
  const rowH = 20, headH = 20, blockH = headH + gpus.length * rowH + 10;
  const colW = side ? Math.floor(W / measures.length) : W;
  const labelW = 56, valueW = 70, plotW = Math.max(40, colW - labelW - valueW - 16);
  const height = side ? blockH : measures.length * blockH;
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, width: W, height, class: "chart gpu-chart", role: "img", "aria-label": dw.comparison },
    s("title", {}, dw.comparison));
  measures.forEach(([key, label, fmt, fixedMax], m) => {
    const max = fixedMax || Math.max(1e-9, ...gpus.map((g) => g[key] || 0));
    const g = s("g", { class: "measure", "data-measure": key, transform: side ? `translate(${m * colW},0)` : `translate(0,${m * blockH})` },
      s("text", { x: 0, y: 14, class: "chart-label" }, label));
    gpus.forEach((gpu, i) => {
      const v = gpu[key];
      const yy = headH + i * rowH;
      const who = capital(`${dw.device} ${gpu.gpu}`);
      g.append(s("text", { x: 0, y: yy + 13, class: "axis" }, who));
      if (v === null || v === undefined) return;
      const barW = Math.max(1, (v / max) * plotW);
      g.append(s("rect", { x: labelW, y: yy + 3, height: rowH - 6, width: barW, class: `bar bar-${key}` },
        // the GPU's name as a sentence says it (`names`: display.hosts[].gpus[].name, an inferred name's model; the
        // GPUs table keeps its reasons), else the report's own
        s("title", {}, `${who} (${names[i] || gpu.name || "?"}): ${label} ${fmt(i)}`)),
        s("text", { x: labelW + barW + 4, y: yy + 13, class: "axis value" }, fmt(i)));
    });
    svg.append(g);
  });
  return svg;
}

/** Reads {edges_us|edges, counts} (edges has one more entry than counts). */
export function histogramBins(hist) {
  const edges = hist?.edges_us || hist?.edges || hist?.bin_edges_us || [];
  const counts = hist?.counts || [];
  const bins = [];
  for (let i = 0; i < counts.length && i + 1 < edges.length; i++) bins.push({ lo: edges[i], hi: edges[i + 1], count: counts[i] });
  return bins;
}

/**
 * Kernel duration histogram on a log axis with the guide's 20–40 µs launch
 * latency band: kernels left of the band are shorter than it takes to launch
 * them. The band's label sits above the plot, never over the bars; axis
 * labels are kept inside the picture.
 */
export function kernelHistogram(hist, { width = DEFAULT_WIDTH } = {}) {
  const W = Math.max(320, Math.round(width));
  const bins = histogramBins(hist).filter((b) => b.hi > 0);
  const left = 48, right = 12, top = 22, plotH = 130, plotW = W - left - right, height = top + plotH + 38;
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, width: W, height, class: "chart histogram", role: "img", "aria-label": "Kernel duration histogram" },
    s("title", {}, "Kernel durations (µs, log scale) against the 20–40 µs launch latency"));
  if (!bins.length) return svg;
  const lo = Math.log10(Math.max(0.1, Math.min(...bins.map((b) => b.lo || b.hi / 2))));
  const hi = Math.log10(Math.max(...bins.map((b) => b.hi), 100));
  const x = (us) => left + ((Math.log10(Math.max(us, 0.1)) - lo) / (hi - lo)) * plotW;
  const maxCount = Math.max(1, ...bins.map((b) => b.count));
  const y = (c) => top + plotH - (c / maxCount) * plotH;
  /** A label centred on `cx` but kept within the picture. */
  const inside = (cx, text, attrs) => {
    const half = textWidth(text) / 2;
    const at = Math.min(Math.max(cx, half + 1), W - half - 1);
    return s("text", { x: at, "text-anchor": "middle", ...attrs }, text);
  };
  svg.append(s("rect", { x: x(20), y: top, width: x(40) - x(20), height: plotH, class: "launch-band" },
    s("title", {}, "Kernel launch latency: about 20–40 µs from enqueue to execution")),
  );
  for (const b of bins) {
    const x0 = x(b.lo || b.hi / 2), x1 = x(b.hi);
    svg.append(s("rect", { x: x0 + 0.5, width: Math.max(1, x1 - x0 - 1), y: y(b.count), height: top + plotH - y(b.count), class: b.hi <= 40 ? "bar bar-small" : "bar" },
      s("title", {}, `${b.lo}–${b.hi} µs: ${b.count.toLocaleString("en-US")} kernels`)));
  }
  svg.append(s("line", { x1: left, x2: W - right, y1: top + plotH, y2: top + plotH, class: "grid" }));
  // above the plot (over the band), so it never covers a bar
  svg.append(inside((x(20) + x(40)) / 2, "launch latency 20–40 µs", { y: top - 7, class: "band-label" }));
  for (let p = Math.ceil(lo); p <= Math.floor(hi); p++) {
    const v = 10 ** p;
    svg.append(s("line", { x1: x(v), x2: x(v), y1: top + plotH, y2: top + plotH + 4, class: "grid" }),
      inside(x(v), v >= 1000 ? `${v / 1000} ms` : `${v} µs`, { y: top + plotH + 16, class: "axis x-tick" }));
  }
  svg.append(s("text", { x: left, y: height - 4, class: "axis" }, `kernel count (max bin ${maxCount.toLocaleString("en-US")})`));
  return svg;
}

/** Up to this many ranks each gets its bar; beyond, the distribution and the outliers (render.RANKS_LISTED). */
export const RANKS_LISTED = 64;
const RANK_PARTS = [["compute ms", "device_compute", "compute"], ["exposed comm ms", "collectives", "exposed communication"],
  ["other ms", "other", "other (idle, copies, host)"]];

/**
 * The job's ranks (Report.ranks: rows of rank, step, compute, exposed comm, other, step less comm): one stacked
 * bar per rank, compute / exposed communication / the rest, in the table's order (most time before the
 * collectives first: a straggler on top, and the ranks that wait for it below).  With more than RANKS_LISTED
 * ranks: a histogram of the ranks' exposed communication, then bars for the outliers at both ends, named.
 */
export function ranksChart(table, { width = DEFAULT_WIDTH, cells = [] } = {}) {
  const W = Math.max(320, Math.round(width));
  const col = (name) => table.columns.indexOf(name);
  const rows = table.rows;
  // a rank's time as the ranks table prints it (`cells`: display.ranks, aligned with the rows)
  const said = (r, name) => `${((cells || [])[rows.indexOf(r)] || [])[col(name)] ?? ""} ms`;
  const many = rows.length > RANKS_LISTED;
  const shown = many ? [...rows.slice(0, 5), ...rows.slice(-5)] : rows;
  const { items, rows: legendRows } = legend(RANK_PARTS.map(([, key, label]) => [key, label]), W);
  const rowH = 16, labelW = Math.min(160, 12 + Math.max(...shown.map((r) => textWidth(r[0])))), valueW = 64;
  const histH = many ? 110 : 0;
  const top = legendRows * 16 + 8 + histH;
  const height = top + shown.length * rowH + 8;
  const plotW = Math.max(40, W - labelW - valueW);
  const max = Math.max(1e-9, ...shown.map((r) => r[col("step ms")] || 0));
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, width: W, height, class: "chart ranks-chart", role: "img",
    "aria-label": `Ranks: ${rows.length}` }, s("title", {}, `Per-rank step breakdown (${rows.length} ranks)`), ...items);
  if (many) {
    const exposed = rows.map((r) => r[col("exposed comm ms")] || 0);
    const end = (v) => said(rows[exposed.indexOf(v)], "exposed comm ms");
    svg.append(rankHistogram(exposed, W, legendRows * 16 + 8, histH - 10, [end(Math.min(...exposed)), end(Math.max(...exposed))]));
  }
  shown.forEach((r, i) => {
    const y = top + i * rowH;
    const g = s("g", { class: "rank", "data-rank": r[0] }, s("text", { x: 0, y: y + 12, class: "axis" }, r[0]));
    let x = labelW;
    for (const [name, key, label] of RANK_PARTS) {
      const v = r[col(name)] || 0;
      const w = (v / max) * plotW;
      if (w > 0) g.append(s("rect", { x, y: y + 2, width: Math.max(0.5, w), height: rowH - 4, class: `cat-${key}` },
        s("title", {}, `${r[0]}: ${label} ${said(r, name)} of a ${said(r, "step ms")} step`)));
      x += w;
    }
    g.append(s("text", { x: x + 4, y: y + 12, class: "axis value" }, said(r, "step ms")));
    if (many && i === 5) g.prepend(s("line", { x1: 0, x2: W, y1: y, y2: y, class: "grid" }));
    svg.append(g);
  });
  return svg;
}

/** A 20-bin histogram of the ranks' exposed communication (ms), labelled at its ends (`ends`: their texts). */
function rankHistogram(values, W, y0, H, ends) {
  const lo = Math.min(...values), hi = Math.max(...values), bins = 20;
  const counts = new Array(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor(((v - lo) / Math.max(hi - lo, 1e-9)) * bins))]++;
  const cmax = Math.max(...counts), bw = (W - 20) / bins, h = H - 28;
  const g = s("g", { class: "rank-histogram", transform: `translate(0,${y0})` },
    s("text", { x: 0, y: 10, class: "chart-label" }, `Exposed communication per rank, ${values.length} ranks (most waiting: right)`));
  counts.forEach((c, i) => {
    const bh = (c / cmax) * h;
    g.append(s("rect", { x: 10 + i * bw, y: 16 + h - bh, width: Math.max(1, bw - 2), height: bh, class: "cat-collectives" },
      s("title", {}, `${c} ranks`)));
  });
  g.append(s("text", { x: 10, y: H, class: "axis" }, ends[0]), s("text", { x: W - 60, y: H, class: "axis" }, ends[1]));
  return g;
}

/** A log axis' tick text: 0.5, 2, 10, 300, 2k, 50k. */
export function logTickText(v) {
  if (v >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (v >= 1e3) return `${Number((v / 1e3).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

/**
 * Ticks of a log axis over [lo, hi] (both > 0): powers of ten when at least `min` of them fall inside, else 1-3,
 * 1-2-5, then 1-1.5-2-3-5-7 of each decade, so a range inside one decade still reads (was: one tick per axis).
 */
export function logTicks(lo, hi, min = 3, max = 9) {
  if (!(lo > 0) || !(hi > lo)) return lo > 0 ? [lo] : [];
  let best = [];
  for (const steps of [[1], [1, 3], [1, 2, 5], [1, 1.5, 2, 3, 5, 7]]) {
    const out = [];
    for (let p = Math.floor(Math.log10(lo)); p <= Math.ceil(Math.log10(hi)); p++) {
      for (const m of steps) {
        const v = Number((m * 10 ** p).toPrecision(6));
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push(v);
      }
    }
    best = out;
    if (out.length >= min) break;
  }
  if (best.length <= max) return best;
  const every = Math.ceil(best.length / max);
  return best.filter((_, i) => i % every === 0);
}

/**
 * Dots that would cover each other moved sideways, the biggest staying put: each dot {x, y, r} gets `dx`, the first
 * offset (0, +d, -d, +2d, ...) at which it overlaps no dot placed before it.
 */
export function spreadDots(dots) {
  const placed = [];
  for (const d of [...dots].sort((a, b) => b.r - a.r)) {
    const step = d.r * 2 + 1;
    for (let k = 0; k < 60; k++) {
      const dx = k === 0 ? 0 : (k % 2 ? 1 : -1) * Math.ceil(k / 2) * step;
      if (placed.every((p) => Math.hypot(p.x + p.dx - d.x - dx, p.y - d.y) >= p.r + d.r + 0.5)) {
        d.dx = dx;
        break;
      }
    }
    if (d.dx === undefined) d.dx = 0;
    placed.push(d);
  }
  return dots;
}

/**
 * The top GEMM shapes on a roofline (HostReport.roofline; peak, bandwidth and dtype from the MFU card): log-log with
 * ticks on both axes, arithmetic intensity (FLOP/byte) across, TFLOP/s up; the roof is min(peak, intensity x
 * bandwidth), labelled with its peak ("bf16 peak 989 TFLOP/s") and its ridge (where the memory slope meets the peak).
 * Each shape is a dot sized by its time per step, moved sideways where it would cover another; its hover says how far
 * under its own roof it runs.
 */
export function rooflineChart(table, { peak, bandwidth, vectorPeak, dtype = "", width = DEFAULT_WIDTH, labels = {} } = {}) {
  const W = Math.max(320, Math.round(width));
  const col = (name) => table.columns.indexOf(name);
  // each shape's numbers as the CLI's roofline table prints them (`labels.roofline`: its columns, a row per shape)
  const said = labels.roofline || { columns: [], rows: [] };
  const text = (i, name) => (said.rows[i] || [])[said.columns.indexOf(name)] ?? "";
  const pts = table.rows.map((r, i) => ({ label: r[col("op and shapes")], x: r[col("FLOP/byte")], y: r[col("TFLOP/s")],
    share: r[col("of roofline")], ms: r[col("ms/step")], vector: r[col("kind")] === "depthwise", bound: r[col("bound")],
    roofT: r[col("roofline TFLOP/s")], i })).filter((p) => p.x > 0 && p.y > 0);
  // depthwise rows run on the vector units: the server rated each against their peak, not the matrix units' roof
  // drawn here (h37-flops68b); the vector roof is drawn at the peak they were rated against (`vectorPeak`, the MFU
  // card's vector_peak_flops, h37-roof68), else where a compute-bound depthwise row gives its height
  const vec = pts.filter((p) => p.vector), nGemm = pts.length - vec.length;
  const shapes = vec.length ? `${nGemm} GEMM and ${vec.length} depthwise shapes` : `${pts.length} GEMM shapes`;
  const left = 56, right = 14, top = 10, plotH = 190, plotW = W - left - right, height = top + plotH + 44 + (vec.length ? 14 : 0);
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, width: W, height, class: "chart roofline", role: "img",
    "aria-label": `Roofline: ${shapes}` }, s("title", {}, vec.length ? "GEMM and depthwise shapes against their units' rooflines" : "GEMM shapes against the GPU's roofline"));
  if (!pts.length) return svg;
  const peakT = peak > 0 ? peak / 1e12 : Math.max(...pts.map((p) => p.y));
  const ridge = peak > 0 && bandwidth > 0 ? peak / bandwidth : null;
  const xs = pts.map((p) => p.x).concat(ridge ? [ridge] : []);
  const xlo = Math.log10(Math.min(...xs) / 2), xhi = Math.log10(Math.max(...xs) * 2);
  const ylo = Math.log10(Math.min(...pts.map((p) => p.y), peakT) / 3), yhi = Math.log10(peakT * 2);
  const x = (v) => left + ((Math.log10(v) - xlo) / (xhi - xlo)) * plotW;
  const y = (v) => top + plotH - ((Math.log10(v) - ylo) / (yhi - ylo)) * plotH;
  for (const v of logTicks(10 ** ylo, 10 ** yhi)) {
    svg.append(s("line", { x1: left, x2: W - right, y1: y(v), y2: y(v), class: "grid" }),
      s("text", { x: left - 4, y: y(v) + 4, "text-anchor": "end", class: "axis y-tick" }, logTickText(v)));
  }
  for (const v of logTicks(10 ** xlo, 10 ** xhi)) {
    svg.append(s("line", { x1: x(v), x2: x(v), y1: top, y2: top + plotH, class: "grid" }),
      s("text", { x: Math.min(Math.max(x(v), left + 8), W - right - 8), y: top + plotH + 14, "text-anchor": "middle", class: "axis x-tick" }, logTickText(v)));
  }
  // the roof: the memory slope up to the ridge, then the peak; labelled with the peak and the ridge
  const x0 = 10 ** xlo, x1 = 10 ** xhi;
  const roofPts = ridge
    ? [[x0, Math.max(10 ** ylo, (x0 * bandwidth) / 1e12)], [ridge, peakT], [x1, peakT]]
    : [[x0, peakT], [x1, peakT]];
  // the roof's numbers as the server wrote them (`labels.roof`, the MFU card's peak); without a peak, the fastest shape's
  const roof = labels.roof || {};
  const top1 = pts.reduce((a, p) => (p.y > a.y ? p : a), pts[0]);
  const peakText = `${dtype ? `${dtype} ` : ""}peak ${peak > 0 ? roof.peak ?? "" : text(top1.i, "TFLOP/s")} TFLOP/s`;
  svg.append(s("polyline", { points: roofPts.map(([a, b]) => `${x(a)},${y(Math.max(b, 10 ** ylo))}`).join(" "), class: "roof" },
    s("title", {}, `roof: ${peakText}${bandwidth && roof.bandwidth ? `, memory ${roof.bandwidth} TB/s` : ""}`)),
  s("text", { x: W - right - 2, y: y(peakT) - 5, "text-anchor": "end", class: "roof-label" }, peakText));
  if (ridge) {
    const rx = x(ridge), label = `ridge ${roof.ridge ?? ""} FLOP/byte`;
    const fits = rx + 4 + textWidth(label) <= W - right;
    svg.append(s("line", { x1: rx, x2: rx, y1: y(peakT), y2: top + plotH, class: "ridge" },
      s("title", {}, `ridge point: ${roof.ridge ?? ""} FLOP/byte; below it a GEMM is bound by memory (${roof.bandwidth ?? ""} TB/s), above it by the peak`)),
    s("text", { x: fits ? rx + 4 : rx - 4, y: top + plotH - 6, "text-anchor": fits ? "start" : "end", class: "ridge-label" }, label));
  }
  // the vector units' roof: the peak the depthwise rows were rated against, as the server gives it (the MFU card's
  // vector_peak_flops, said as `labels.roof.vector_peak`), else the height a compute-bound depthwise row was rated
  // against (its "roofline TFLOP/s"); none where neither is known (an unknown GPU's units)
  const vecTop = vec.filter((p) => p.bound === "compute" && p.roofT > 0).sort((a, b) => b.roofT - a.roofT)[0];
  const vT = vec.length && vectorPeak > 0 ? vectorPeak / 1e12 : vecTop ? vecTop.roofT : null;
  const vecRoof = vT !== null && vT < peakT;
  if (vecRoof) {
    const vRidge = bandwidth > 0 ? (vT * 1e12) / bandwidth : null;
    const vPts = vRidge && vRidge > x0 ? [[x0, Math.max(10 ** ylo, (x0 * bandwidth) / 1e12)], [vRidge, vT], [x1, vT]] : [[x0, vT], [x1, vT]];
    const vSaid = vectorPeak > 0 ? roof.vector_peak ?? "" : text(vecTop.i, "roofline TFLOP/s");
    const vText = `vector units' peak ${vSaid} TFLOP/s (depthwise)`;
    svg.append(s("polyline", { points: vPts.map(([a, b]) => `${x(a)},${y(Math.max(b, 10 ** ylo))}`).join(" "), class: "roof roof-vector" },
      s("title", {}, `roof of the depthwise rows: ${vText}`)),
    s("text", { x: W - right - 2, y: y(vT) - 5, "text-anchor": "end", class: "roof-label roof-vector-label" }, vText));
  }
  // dots: area by time per step; the slowest shape drawn last, on top
  const maxMs = Math.max(1e-12, ...pts.map((p) => p.ms || 0));
  const dots = spreadDots(pts.map((p) => ({ p, x: x(p.x), y: y(p.y), r: 3.5 + 5.5 * Math.sqrt(Math.max(0, p.ms || 0) / maxMs) })));
  // a time of the one pass where the host is an unmarked pass (`labels.one_pass`, h37-onepass2), else per step
  const per = labels.one_pass ? "in the pass" : "per step";
  for (const d of [...dots].sort((a, b) => (a.p.ms || 0) - (b.p.ms || 0))) {
    const p = d.p;
    const cls = `gemm${p.vector ? " depthwise" : ""}${p.share !== null && p.share < 0.4 ? " gemm-low" : ""}`;
    svg.append(s("circle", { cx: d.x + d.dx, cy: d.y, r: Number(d.r.toFixed(2)), class: cls, "data-dx": d.dx },
      s("title", {}, `${p.label}: ${text(p.i, "TFLOP/s")} TFLOP/s at ${text(p.i, "FLOP/byte")} FLOP/byte, ${p.share === null ? "?" : text(p.i, "of roofline")} of its roofline${p.vector ? " (the vector units', not the matrix units' roof)" : ""}, ${text(p.i, "ms/step")} ms ${per}${d.dx ? " (moved sideways so it does not cover another shape)" : ""}`)));
  }
  if (vec.length) {
    svg.append(s("text", { x: left, y: height - 18, class: "axis roof-note" }, vecRoof
      ? "ringed dots: depthwise convolutions, on the vector units: their roof is the lower one"
      : "ringed dots: depthwise convolutions, on the vector units: rated against their lower roof, not this one"));
  }
  svg.append(s("text", { x: left, y: height - 4, class: "axis" }, `arithmetic intensity (FLOP/byte) → ; TFLOP/s ↑ (log scales; dot area: time ${per})`));
  return svg;
}

/**
 * One GPU's memory over the capture (GpuSummary.memory): allocated as an area, reserved as a line, the capacity
 * dashed, the peak marked, the steps' boundaries (`steps`: [{step, start_ms, end_ms, span, name}]) as light bands; under it, the
 * bytes live at the peak stacked by what holds them.  `labels`: its texts in the report's display (the GPU's
 * display memory: peaks, capacity, what holds the peak, the first and last event's time); `steps[].span` each step's.
 */
export function memoryChart(mem, { steps = [], width = DEFAULT_WIDTH, title = "GPU memory", categories = [], labels = {} } = {}) {
  const W = Math.max(360, Math.round(width));
  const tl = mem.timeline || {};
  // a history without times (a PyTorch 2.0 snapshot) is placed by its events' order: no time axis, no ms, no steps
  const byEvent = !tl.t_ms && Array.isArray(tl.event);
  const t = (byEvent ? tl.event : tl.t_ms) || [], alloc = tl.allocated || [], res = tl.reserved || [];
  if (byEvent) steps = [];
  const axisW = 64, padR = 12, top = 18, plotH = 150, bottom = top + plotH;
  // what holds memory at the peak: the server's categories in its order (legend.memory), then any it did not name
  const bd = breakdownKeys(categories, [{ breakdown: mem.breakdown || {} }]).filter(([k]) => (mem.breakdown || {})[k] > 0);
  const barTop = bottom + 28, barH = bd.length ? 14 : 0;
  const held = (k) => (labels.breakdown || {})[k] || {};
  const lg = legend(bd.map(([k, label]) => [`mem-${k}`, `${label} ${held(k).bytes ?? ""}`]), W - axisW - padR);
  const height = barTop + (bd.length ? barH + 8 + lg.rows * 16 : 0) + 4;
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, width: W, height, class: "chart memory-chart", role: "img", "aria-label": title,
    "data-gpu": mem.gpu ?? "" }, s("title", {}, title));
  const lo = t.length ? t[0] : 0;
  const hi = t.length ? t[t.length - 1] : 1;
  const span = hi > lo ? hi - lo : 1;
  const ymax = Math.max(1, mem.capacity_bytes || 0, mem.peak_reserved_bytes || 0, mem.peak_allocated_bytes || 0, ...alloc) * 1.02;
  const plotW = W - axisW - padR;
  const x = (v) => axisW + ((Math.min(hi, Math.max(lo, v)) - lo) / span) * plotW;
  const y = (v) => bottom - (v / ymax) * plotH;
  const grid = s("g", { class: "memory-axis" });
  for (const v of ticks(ymax / (2 ** 30), 4)) {
    const b = v * 2 ** 30;
    if (b > ymax) continue;
    grid.append(s("line", { x1: axisW, x2: W - padR, y1: y(b), y2: y(b), class: "grid" }),
      s("text", { x: axisW - 4, y: y(b) + 4, "text-anchor": "end", class: "axis" }, `${num2(v)} GiB`));
  }
  // the time axis' ends: the first and last event, by order, or at the times the server wrote (`labels.first`, `.last`)
  const ends = byEvent ? [lo, hi].map((v) => `event ${Math.round(v).toLocaleString("en-US")}`) : [units(labels.first ?? ""), units(labels.last ?? "")];
  grid.append(s("text", { x: axisW, y: bottom + 14, class: "axis" }, ends[0]),
    s("text", { x: W - padR, y: bottom + 14, "text-anchor": "end", class: "axis" }, ends[1]));
  if (byEvent) grid.append(s("text", { x: (axisW + W - padR) / 2, y: bottom + 14, "text-anchor": "middle", class: "axis memory-axis-kind" },
    "allocation events, in order (no times recorded)"));
  svg.append(grid);
  const bands = s("g", { class: "memory-steps" });
  for (const st of steps) {
    if (st.end_ms <= lo || st.start_ms >= hi) continue;
    bands.append(s("rect", { x: x(st.start_ms), y: top, width: Math.max(1, x(st.end_ms) - x(st.start_ms)), height: plotH,
      class: `step-band${st.step === mem.peak_step ? " peak-step" : ""}`, "data-step": st.step },
    s("title", {}, units(`${st.name || `step ${st.step}`}: ${st.span ?? ""}`))));
  }
  svg.append(bands);
  const pts = t.map((v, i) => [v, alloc[i]]).filter(([v]) => v >= lo && v <= hi);
  if (pts.length) {
    // a step function: each event's level holds until the next one
    let d = `M${x(pts[0][0]).toFixed(1)},${y(0).toFixed(1)}`;
    pts.forEach(([v, a], i) => {
      const yy = y(a).toFixed(1);
      d += ` L${x(v).toFixed(1)},${i ? y(pts[i - 1][1]).toFixed(1) : yy} L${x(v).toFixed(1)},${yy}`;
    });
    d += ` L${x(hi).toFixed(1)},${y(pts[pts.length - 1][1]).toFixed(1)} L${x(hi).toFixed(1)},${y(0).toFixed(1)} Z`;
    svg.append(s("path", { d, class: "mem-allocated" }, s("title", {}, `allocated, peak ${labels.peak_allocated ?? ""}`)));
  }
  const rpts = t.map((v, i) => [v, res[i]]).filter(([v, r]) => v >= lo && v <= hi && r !== null && r !== undefined);
  if (rpts.length) {
    let d = "";
    rpts.forEach(([v, r], i) => { d += `${i ? " L" : "M"}${x(v).toFixed(1)},${(i ? y(rpts[i - 1][1]) : y(r)).toFixed(1)} L${x(v).toFixed(1)},${y(r).toFixed(1)}`; });
    d += ` L${x(hi).toFixed(1)},${y(rpts[rpts.length - 1][1]).toFixed(1)}`;
    svg.append(s("path", { d, class: "mem-reserved" }, s("title", {}, `reserved, peak ${labels.peak_reserved ?? ""}`)));
  }
  if (mem.capacity_bytes) {
    svg.append(s("line", { x1: axisW, x2: W - padR, y1: y(mem.capacity_bytes), y2: y(mem.capacity_bytes), class: "mem-capacity" },
      s("title", {}, `capacity ${labels.capacity ?? ""} (${mem.capacity_source || "?"})`)),
    s("text", { x: W - padR, y: y(mem.capacity_bytes) - 4, "text-anchor": "end", class: "axis mem-capacity-label" }, `capacity ${labels.capacity ?? ""}`));
  }
  if (!byEvent && mem.peak_ms !== null && mem.peak_ms !== undefined && mem.peak_ms >= lo && mem.peak_ms <= hi) {
    const px = x(mem.peak_ms), py = y(mem.peak_allocated_bytes);
    // the step it falls in as the server names it (`peak_step_name`: "the pass" where the capture marks no step); a
    // report cached before it gave none: "step N"
    const inStep = labels.peak_step_name ?? (mem.peak_step !== null && mem.peak_step !== undefined ? `step ${mem.peak_step}` : "");
    const label = `peak ${labels.peak_allocated ?? ""}${inStep ? `, ${inStep}` : ""}`;
    svg.append(s("g", { class: "mem-peak", "data-ms": mem.peak_ms },
      s("line", { x1: px, x2: px, y1: top, y2: bottom, class: "mem-peak-line" }),
      s("circle", { cx: px, cy: py, r: 4 }, s("title", {}, units(`${label} at ${labels.peak_at ?? ""}`))),
      s("text", { x: Math.min(Math.max(px + 6, axisW), W - padR - textWidth(label)), y: Math.max(top + 10, py - 8), class: "axis mem-peak-label" }, label)));
  }
  if (bd.length) {
    const total = bd.reduce((a, [k]) => a + mem.breakdown[k], 0);
    const g = s("g", { class: "mem-breakdown" }, s("text", { x: 0, y: barTop + 11, class: "axis" }, "at peak"));
    let xx = axisW;
    for (const [k, label] of bd) {
      const w = (mem.breakdown[k] / total) * plotW;
      g.append(s("rect", { x: xx, y: barTop, width: Math.max(1, w), height: barH, class: `cat-mem-${k}`, "data-category": k },
        s("title", {}, `${label}: ${held(k).bytes ?? ""} (${held(k).share ?? ""})`)));
      xx += w;
    }
    const leg = s("g", { transform: `translate(${axisW},${barTop + barH + 8})` });
    lg.items.forEach((it) => leg.append(it));
    g.append(leg);
    svg.append(g);
  }
  return svg;
}

const num2 = (v) => String(Number(v.toPrecision(3)));
