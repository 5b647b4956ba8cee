// The step timeline of a finding's window (issue #21 item 4): each GPU stream and host thread of the step a finding
// names, as lanes, with the GPU's idle time painted as the step breakdown counts it and the finding's own wait
// highlighted. Drawn here as SVG (no library, no external page), from ./window (report/timeline.py), lazily: only
// when "Show step N" is pressed. "Download trace" serves the host's file (./trace); "Open in Perfetto" hands a trace
// to ui.perfetto.dev through its postMessage protocol (PING until PONG, then {perfetto: {buffer, title}}).
// Profile text (kernel, op and thread names) only ever becomes Text nodes and <title>s.

import { DEFAULT_WIDTH } from "./charts.js";
import { h, replaceChildren, s, units } from "./dom.js";
import { pollRoute } from "./model.js";
import { addSettings } from "./settings.js";

export const PERFETTO_ORIGIN = "https://ui.perfetto.dev";
/** The PyTorch trace itself goes to Perfetto up to this size; larger (or XPlane, or several files): the window. */
export const PERFETTO_FILE_BYTES = 256e6;

// What the GPU's idle categories are, their names and priority, the waits each rule speaks of and the names of the
// kinds of event all come from the server: /runs' `legend` (report/legend.py), handed here as `legend`. A rule or a
// category added on the server needs no edit here.

/** The GPU's idle categories, highest priority first (legend.idle: report/timeline.py IDLE_CATEGORIES). */
export function idleCategories(legend = {}) {
  return (legend.idle || []).map((c) => c.id);
}

function labelOf(list, id) {
  return (list || []).find((c) => c.id === id)?.label || String(id).replace(/_/g, " ");
}

/** The idle categories a finding's rule speaks of (legend.rule_waits; every kind of GPU idle time by default). */
export function focusCategories(rule, legend = {}) {
  const waits = (legend.rule_waits || {})[rule];
  return waits && waits.length ? waits : idleCategories(legend);
}

const ROW_H = 12;
const LANE_PAD = 3;
const AXIS_H = 30;
const CHAR_W = 6.6;

/** ./window's query for one window of the selected session (with the tab's settings: they name the report on screen). */
export function windowQuery(sel, w) {
  const query = new URLSearchParams({ run: sel.run, session: sel.session, host: w.host, start_ms: String(w.start_ms), end_ms: String(w.end_ms) });
  return addSettings(query, sel.settings);
}

/** ./trace: the host's file itself (`file`: which rank's file of a host merged from several). */
export function traceUrl(sel, host, file = 0) {
  const query = new URLSearchParams({ run: sel.run, session: sel.session, host });
  if (file) query.set("file", String(file));
  return `./trace?${query}`;
}

/** GET ./window until it is read (202 while the server reads the trace); resolves the timeline, or null when stale. */
export async function fetchWindow(sel, w, options = {}) {
  const response = await pollRoute("./window", windowQuery(sel, w), options);
  return response ? response.json() : null;
}

/** Round tick times (ms) inside [lo, hi], about `count` of them. */
export function timeTicks(lo, hi, count = 6) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((x) => x >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

const cut = (text, chars) => (text.length <= chars ? text : `${text.slice(0, Math.max(1, chars - 1))}…`);

/** What the window's `display` says (report/timeline.display: every time and byte count as the CLI writes it). */
const said = (data) => data.display || {};

/** Lane positions: {lane, y, height, index} each, GPU lanes first (as served), and the total height. */
function layout(lanes) {
  let y = AXIS_H;
  const placed = lanes.map((lane, index) => {
    const height = Math.max(1, lane.rows) * ROW_H + 2 * LANE_PAD;
    const at = { lane, y, height, index };
    y += height + 1;
    return at;
  });
  return { placed, height: y };
}

/**
 * The window's lanes as an SVG drawn at `width` px: events as rects (hover: name and duration), each GPU's idle runs
 * as bands behind its lanes, the `focus` categories (the finding's wait) marked `.focus`, step boundaries dashed.
 */
export function timelineChart(data, { width = DEFAULT_WIDTH, legend = {}, focus = idleCategories(legend), title = "Step timeline" } = {}) {
  const W = Math.max(360, Math.round(width));
  const labelW = Math.round(Math.min(220, Math.max(110, W * 0.2)));
  const plotW = W - labelW - 8;
  const { start_ms: lo, end_ms: hi } = data;
  const x = (t) => labelW + ((Math.min(hi, Math.max(lo, t)) - lo) / (hi - lo)) * plotW;
  const { placed, height: lanesEnd } = layout(data.lanes);
  const mem = (data.memory || []).filter((m) => (m.t_ms || []).length);
  const height = lanesEnd + 4 + mem.length * (MEM_H + 6);
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, width: W, height, class: "chart timeline", role: "img", "aria-label": title,
    "data-start": lo, "data-end": hi }, s("title", {}, title));
  // time axis (ms in the trace viewer's time base, as the finding's window), with step boundaries
  const axis = s("g", { class: "time-axis" });
  for (const t of timeTicks(lo, hi, Math.max(2, Math.floor(plotW / 110)))) {
    axis.append(s("line", { x1: x(t), x2: x(t), y1: AXIS_H - 4, y2: lanesEnd, class: "grid" }),
      s("text", { x: Math.min(x(t), W - 30), y: AXIS_H - 8, "text-anchor": "middle", class: "axis" }, `${t} ms`));
  }
  (data.steps || []).forEach((st, i) => {
    const told = (said(data).steps || [])[i] || {};
    // the server's name ("the pass" where the capture marks no step); a window served before it gave none: "step N"
    const label = told.name || `step ${st.step}`;
    for (const [edge, t] of [["start", st.start_ms], ["end", st.end_ms]]) {
      if (t <= lo || t >= hi) continue;
      axis.append(s("line", { x1: x(t), x2: x(t), y1: 2, y2: lanesEnd, class: `step-edge step-${edge}` }, s("title", {}, units(`${label} ${edge}s at ${told[edge] ?? ""}`))));
    }
    const a = Math.max(lo, st.start_ms), b = Math.min(hi, st.end_ms);
    if (b > a && x(b) - x(a) > label.length * CHAR_W + 6) axis.append(s("text", { x: x(a) + 4, y: 10, class: "axis step-label" }, label));
  });
  svg.append(axis);
  svg.append(idleBands(data, placed, x, focus, legend));
  for (const at of placed) svg.append(laneGroup(at, x, labelW, legend, (said(data).lanes || [])[at.index]));
  mem.forEach((m, i) => svg.append(memoryLane(m, lanesEnd + 4 + i * (MEM_H + 6), x, labelW, hi,
    (said(data).memory || [])[(data.memory || []).indexOf(m)])));
  return svg;
}

const MEM_H = 56;

/**
 * One GPU's memory through the window (./window's `memory`, issue #29), under the lanes: allocated as an area and
 * reserved as a line, as step functions (a level holds until the next allocator event), scaled to the window's
 * highest level; the capacity named on hover.  `shown`: its bytes as the server wrote them (the window's display).
 */
function memoryLane(m, top, x, labelW, hi, shown = {}) {
  const t = m.t_ms, a = m.allocated, r = m.reserved || [];
  const top1 = Math.max(1, ...a, ...r.filter((v) => v !== null && v !== undefined)) * 1.08;
  const y = (v) => top + MEM_H - (v / top1) * MEM_H;
  const step = (vals) => {
    let d = "";
    vals.forEach(([tt, v], i) => { d += `${i ? " L" : "M"}${x(tt).toFixed(1)},${(i ? y(vals[i - 1][1]) : y(v)).toFixed(1)} L${x(tt).toFixed(1)},${y(v).toFixed(1)}`; });
    return vals.length ? `${d} L${x(hi).toFixed(1)},${y(vals[vals.length - 1][1]).toFixed(1)}` : "";
  };
  const av = t.map((tt, i) => [tt, a[i]]);
  const rv = t.map((tt, i) => [tt, r[i]]).filter(([, v]) => v !== null && v !== undefined);
  const above = m.baseline === "capture_start" ? " above the capture's start" : "";
  const label = `GPU ${m.gpu} memory`;
  const g = s("g", { class: "lane lane-memory", "data-gpu": m.gpu },
    s("text", { x: 4, y: top + 12, class: "lane-label" }, label,
      s("title", {}, `${label}: allocated up to ${shown.peak}${above} in this window${shown.capacity ? `, of ${shown.capacity}` : ""}`)),
    s("text", { x: 4, y: top + 26, class: "lane-label muted" }, shown.peak));
  if (av.length) {
    g.append(s("path", { d: `${step(av)} L${x(hi).toFixed(1)},${y(0).toFixed(1)} L${x(av[0][0]).toFixed(1)},${y(0).toFixed(1)} Z`, class: "mem-allocated" },
      s("title", {}, `allocated, up to ${shown.peak}${above}`)));
  }
  if (rv.length) g.append(s("path", { d: step(rv), class: "mem-reserved" }, s("title", {}, `reserved, up to ${shown.reserved}`)));
  g.append(s("line", { x1: labelW, x2: x(hi), y1: top + MEM_H + 0.5, y2: top + MEM_H + 0.5, class: "lane-rule" }));
  return g;
}

/** Each GPU's idle runs, as bands over the height of that GPU's lanes; the finding's wait marked `.focus`. */
function idleBands(data, placed, x, focus, legend) {
  const g = s("g", { class: "idle-runs" });
  (data.idle || []).forEach((run, i) => {
    const own = placed.filter((p) => p.lane.kind === "gpu" && p.lane.gpu === run.gpu);
    if (!own.length) return;
    const top = own[0].y, bottom = own[own.length - 1].y + own[own.length - 1].height;
    const x0 = x(run.start_ms), x1 = x(run.end_ms);
    const on = focus.includes(run.category);
    g.append(s("rect", { x: x0, y: top, width: Math.max(1, x1 - x0), height: bottom - top,
      class: `idle cat-${run.category}${on ? " focus" : ""}`, "data-gpu": run.gpu, "data-category": run.category,
      "data-start": run.start_ms, "data-end": run.end_ms },
    s("title", {}, units(`GPU ${run.gpu} — ${labelOf(legend.idle, run.category)}: ${(said(data).idle || [])[i] ?? ""}`))));
  });
  return g;
}

/** One lane: its label (cut to the label column, whole on hover) and its events, stacked in rows (`times`: each
 * event's duration and span as the server wrote them). */
function laneGroup(at, x, labelW, legend, times = []) {
  const { lane, y, height } = at;
  const g = s("g", { class: `lane lane-${lane.kind}`, "data-kind": lane.kind, "data-gpu": lane.gpu ?? "" },
    s("line", { x1: 0, x2: x(Infinity), y1: y + height + 0.5, y2: y + height + 0.5, class: "lane-rule" }),
    s("text", { x: 4, y: y + LANE_PAD + 10, class: "lane-label" }, cut(lane.label, Math.floor((labelW - 8) / CHAR_W)),
      s("title", {}, lane.label)));
  lane.events.forEach(([start, end, name, kind, row], i) => {
    const x0 = x(start), x1 = x(end);
    g.append(s("rect", { x: x0, y: y + LANE_PAD + row * ROW_H, width: Math.max(0.75, x1 - x0), height: ROW_H - 2, class: `ev k-${kind}` },
      s("title", {}, `${name} — ${labelOf(legend.kinds, kind)}, ${units((times || [])[i] ?? "")}`)));
  });
  return g;
}

/**
 * Each idle category's time in the window, per GPU, as the server summed it over every run (`idle_ms`), drawn or
 * not: over a step's window it is that step's row of the report's breakdown. Read, never re-added from the drawn
 * runs (the drawing keeps the 2,000 longest).
 */
export function idleTotals(data, category) {
  const text = (said(data).idle_ms || []).map((g) => (g.ms || {})[category]);
  const per = (data.idle_ms || []).map((g, i) => [g, text[i]]).filter(([g]) => (g.ms || {})[category] > 0);
  if (!per.length) return "";
  if (per.length === 1 && (data.idle_ms || []).length === 1) return units(per[0][1] ?? "");
  return per.map(([g, t]) => `GPU ${g.gpu} ${units(t ?? "")}`).join(" · ");
}

/** The kinds of event and of idle time drawn, as an HTML legend (the finding's wait says it is highlighted), each
 * idle category with its time in the window. */
export function timelineLegend(data, focus, legend = {}) {
  const all = idleCategories(legend);
  const on = focus || all;
  const kinds = [...new Set(data.lanes.flatMap((l) => l.events.map((e) => e[3])))];
  const seen = new Set((data.idle || []).map((r) => r.category));
  const idle = [...all, ...[...seen].filter((c) => !all.includes(c))].filter((c) => seen.has(c));
  const total = (c) => { const t = idleTotals(data, c); return t ? `: ${t}` : ""; };
  return h("ul", { class: "timeline-legend small" },
    kinds.map((k) => h("li", {}, h("span", { class: `swatch k-${k}` }), labelOf(legend.kinds, k))),
    idle.map((c) => h("li", { class: on.includes(c) ? "focus" : "", dataset: { category: c } }, h("span", { class: `swatch idle cat-${c}` }),
      labelOf(legend.idle, c) + (on.includes(c) && on.length < all.length ? " (this finding)" : "") + total(c))));
}

/** The window as a Chrome JSON trace (what Perfetto opens): one track per lane, and each GPU's idle runs. */
export function chromeTrace(data, legend = {}) {
  const events = [];
  const named = new Set();
  const proc = (pid, name) => {
    if (!named.has(pid)) events.push({ ph: "M", name: "process_name", pid, tid: 0, args: { name } });
    named.add(pid);
  };
  data.lanes.forEach((lane, i) => {
    const pid = lane.kind === "gpu" ? 100 + lane.gpu : 1;
    proc(pid, lane.kind === "gpu" ? `GPU ${lane.gpu}` : `host ${data.host}`);
    events.push({ ph: "M", name: "thread_name", pid, tid: i + 1, args: { name: lane.label } });
    for (const [start, end, name, kind] of lane.events) events.push({ ph: "X", name, cat: kind, pid, tid: i + 1, ts: start * 1000, dur: (end - start) * 1000 });
  });
  for (const run of data.idle || []) {
    const pid = 100 + run.gpu, tid = 100000 + run.gpu;
    proc(pid, `GPU ${run.gpu}`);
    if (!named.has(`${pid}/${tid}`)) events.push({ ph: "M", name: "thread_name", pid, tid, args: { name: `GPU ${run.gpu} idle (as the breakdown counts it)` } });
    named.add(`${pid}/${tid}`);
    events.push({ ph: "X", name: labelOf(legend.idle, run.category), cat: "idle", pid, tid, ts: run.start_ms * 1000, dur: (run.end_ms - run.start_ms) * 1000 });
  }
  return { traceEvents: events, displayTimeUnit: "ms",
    otherData: { source: "tb-gpu-advisor step timeline", host: data.host, start_ms: data.start_ms, end_ms: data.end_ms, time_base: data.time_base } };
}

/**
 * Opens ui.perfetto.dev in a new tab and hands it a trace (Perfetto's documented deep-link protocol): PING every
 * 250 ms until the tab answers PONG, then post {perfetto: {buffer, title, fileName}}. `open` must run inside the
 * click (pop-up blockers); `load()` resolves the ArrayBuffer meanwhile. Resolves true once posted; `onStatus` says
 * each step in words (blocked pop-up, no answer: download the trace instead).
 */
export function openInPerfetto(load, { title, fileName, open = (url) => window.open(url, "_blank"), onStatus = () => {}, timeoutMs = 30000, pingMs = 250 } = {}) {
  const win = open(`${PERFETTO_ORIGIN}/#!/`);
  if (!win) {
    onStatus("The browser blocked the new tab: allow pop-ups for TensorBoard, or use Download trace and open the file at ui.perfetto.dev.");
    return Promise.resolve(false);
  }
  onStatus("Waiting for Perfetto UI to open…");
  return new Promise((resolve) => {
    let buffer = null, ready = false, done = false, ping = null, timer = null;
    const finish = (ok, message) => {
      if (done) return;
      done = true;
      clearInterval(ping);
      clearTimeout(timer);
      window.removeEventListener("message", onMessage);
      onStatus(message);
      resolve(ok);
    };
    const send = () => {
      if (!ready || !buffer || done) return;
      win.postMessage({ perfetto: { buffer, title, fileName } }, PERFETTO_ORIGIN);
      finish(true, "Opened in Perfetto UI, in the new tab.");
    };
    const onMessage = (e) => {
      if (e.source === win && e.origin === PERFETTO_ORIGIN && e.data === "PONG") {
        ready = true;
        send();
      }
    };
    window.addEventListener("message", onMessage);
    ping = setInterval(() => {
      if (win.closed) return finish(false, "The Perfetto tab was closed before the trace was sent.");
      try {
        win.postMessage("PING", PERFETTO_ORIGIN);
      } catch {
        // not navigated to Perfetto yet: the next ping
      }
    }, pingMs);
    timer = setTimeout(() => finish(false, "Perfetto UI did not answer (no network to ui.perfetto.dev?): use Download trace and open the file there."), timeoutMs);
    Promise.resolve().then(load).then((b) => {
      buffer = b;
      send();
    }, (e) => finish(false, `Could not read the trace: ${e.message}`));
  });
}

/**
 * What "Open in Perfetto" sends: the trace file itself when Perfetto opens the session's format as it is (the
 * server says so: /runs' `perfetto`) and one file holds the host, else the window drawn.
 */
export function perfettoSource(data, ctx) {
  const info = (ctx.hostInfo || {})[data.host] || {};
  if (ctx.perfetto === true && (info.files || 1) === 1 && info.size && info.size <= PERFETTO_FILE_BYTES) {
    return { whole: true, label: "Open trace in Perfetto", url: traceUrl(ctx, data.host), title: `${ctx.run}/${ctx.session} ${data.host}` };
  }
  return { whole: false, label: "Open window in Perfetto",
    title: units(`${ctx.run}/${ctx.session} ${data.host} ${said(data).span ?? ""} (Advisor window)`) };
}

async function perfettoBuffer(source, data, legend, fetchFn = fetch) {
  if (!source.whole) return new TextEncoder().encode(JSON.stringify(chromeTrace(data, legend))).buffer;
  const response = await fetchFn(source.url);
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  return response.arrayBuffer();
}

// the server's name of the window's step (`names`: the finding's display.window_names, "the pass" where the capture
// marks no step); a report served before it gave none: "step N"; a window of no step is numbered
const windowName = (w, i, names = []) => names[i] || (w.step !== null && w.step !== undefined ? `step ${w.step}` : `window ${i + 1}`);

/**
 * The "Show …" labels of a finding's windows: "Show step 10", naming the host when the windows lie on several
 * ("Show step 10 on worker1": was three identical "Show step 10" buttons for three hosts), and the GPU or the
 * window's number where that still leaves two alike.
 */
export function windowButtonLabels(windows, names = []) {
  const hosts = new Set(windows.map((w) => w.host));
  const base = windows.map((w, i) => `Show ${windowName(w, i, names)}${hosts.size > 1 ? ` on ${w.host}` : ""}`);
  const gpu = (w) => (w.gpu !== null && w.gpu !== undefined ? `, GPU ${w.gpu}` : "");
  const count = (xs, x) => xs.filter((y) => y === x).length;
  const withGpu = base.map((label, i) => (count(base, label) > 1 ? `${label}${gpu(windows[i])}` : label));
  return withGpu.map((label, i) => (count(withGpu, label) > 1 ? `${label} (${i + 1})` : label));
}

/** The figure of one loaded window: caption, SVG (redrawn at its box's width), legend, bounds note, Perfetto. */
export function timelineFigure(data, w, f, ctx, width) {
  const legend = ctx.legend || {};
  const focus = focusCategories(f.rule, legend);
  const caption = units(`${w.label}: ${said(data).span ?? ""} on ${w.host}${w.gpu !== null && w.gpu !== undefined ? `, GPU ${w.gpu}` : ""}`);
  const draw = (px) => timelineChart(data, { width: px, focus, legend, title: `Step timeline, ${caption}` });
  const status = h("span", { class: "perfetto-status muted small", role: "status", "aria-live": "polite" });
  const source = perfettoSource(data, ctx);
  const perfetto = h("button", { type: "button", class: "open-perfetto", title: source.whole ? "The whole trace file, in a new tab" : "The events drawn here, in a new tab",
    onClick: () => openInPerfetto(() => perfettoBuffer(source, data, legend), { title: source.title, fileName: source.whole ? undefined : "advisor-window.json",
      onStatus: (m) => replaceChildren(status, m) }) }, source.label);
  const empty = !data.lanes.length && !(data.memory || []).some((m) => (m.t_ms || []).length);
  const fig = h("figure", { class: "timeline-figure", dataset: { width: String(Math.round(width)), host: w.host, start: String(w.start_ms), end: String(w.end_ms) } },
    h("figcaption", {}, caption),
    empty ? h("p", { class: "muted" }, "Nothing was recorded on this host in this window.") : draw(width),
    empty ? null : timelineLegend(data, focus, legend),
    data.note ? h("p", { class: "timeline-note muted small" }, data.note) : null,
    h("p", { class: "timeline-time-base muted small" }, `Times: ${data.time_base || "ms from the trace's start"}.`),
    h("div", { class: "timeline-actions" }, perfetto, status));
  if (!empty) fig.drawChart = draw;
  return fig;
}

/** Redraws a timeline figure at its box's width (none while hidden, or when the width did not change). */
export function fitTimeline(fig, width = fig.clientWidth) {
  const w = Math.floor(width);
  if (!fig.drawChart || !(w > 0) || Math.abs(w - Number(fig.dataset.width)) < 2) return false;
  fig.querySelector("svg.timeline")?.replaceWith(fig.drawChart(w));
  fig.dataset.width = String(w);
  return true;
}

/**
 * A finding's "Show step N" toggles (one per window it names, up to 3), "Download trace", and the panel they open
 * the step timeline in: fetched on the first press, drawn at the panel's width, redrawn when it changes.
 * `ctx`: {run, session, perfetto, hostInfo, legend, chartWidth, fetchFn}; nothing without a session (a detached report).
 * `spans`: each window's times as the server wrote them (the finding's display.windows).
 */
export function windowTimelines(f, ctx, spans = [], names = []) {
  const windows = (f.windows || []).slice(0, 3);
  if (!windows.length || !ctx.session) return null;
  const panel = h("div", { class: "timeline-panel", hidden: true });
  let shown = -1, generation = 0, observer = null;
  const labels = windowButtonLabels(windows, names);
  const buttons = windows.map((w, i) => h("button", { type: "button", class: "show-window", "aria-pressed": "false", "aria-expanded": "false",
    title: `${w.label} (${(spans || [])[i] ?? ""} on ${w.host})`, dataset: { host: w.host }, onClick: () => toggle(i) }, labels[i]));
  const hosts = [...new Set(windows.map((w) => w.host))];
  const downloads = hosts.map((host) => h("a", { class: "link download-trace", href: traceUrl(ctx, host), download: "" },
    hosts.length > 1 ? `Download trace (${host})` : "Download trace"));

  async function toggle(i) {
    const gen = ++generation;
    observer?.disconnect();
    buttons.forEach((b, j) => {
      b.setAttribute("aria-pressed", String(j === i && shown !== i));
      b.setAttribute("aria-expanded", String(j === i && shown !== i));
    });
    if (shown === i) {
      shown = -1;
      panel.hidden = true;
      replaceChildren(panel);
      return;
    }
    shown = i;
    panel.hidden = false;
    const w = windows[i];
    replaceChildren(panel, h("p", { class: "muted", role: "status" }, `Reading ${w.host} for ${windowName(w, i, names)}…`));
    try {
      const data = await fetchWindow(ctx, w, {
        fetchFn: ctx.fetchFn || fetch,
        isStale: () => gen !== generation,
        onProgress: (p) => gen === generation && replaceChildren(panel, h("p", { class: "muted", role: "status" }, `Reading ${w.host}… ${p.message || ""}`)),
      });
      if (!data || gen !== generation) return;
      const width = panel.clientWidth || ctx.chartWidth || DEFAULT_WIDTH;
      const fig = timelineFigure(data, w, f, ctx, width);
      replaceChildren(panel, fig);
      if (window.ResizeObserver) {
        observer = new ResizeObserver((entries) => entries.forEach((e) => fitTimeline(fig, e.contentRect.width)));
        observer.observe(fig);
      }
    } catch (e) {
      if (gen === generation) replaceChildren(panel, h("p", { class: "timeline-error", role: "alert" }, `Could not draw ${windowName(w, i, names)}: ${e.message}`));
    }
  }

  return h("div", { class: "timelines" },
    h("div", { class: "timeline-bar" }, h("span", { class: "muted small" }, "Step timeline:"), buttons, downloads), panel);
}
