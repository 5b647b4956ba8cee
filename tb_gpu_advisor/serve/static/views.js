// Pure DOM builders: data in, elements out. No fetching, no global state.
// Untrusted profile text only ever goes through h()/s() as text.
// Every number this view prints comes written by the server: the report's `display` (report/view.display, the CLI's
// own formatters), so one quantity reads the same here as in the CLI's text and markdown and the MCP answer. Nothing
// here formats a number.

import { capital, DEFAULT_WIDTH, DEVICE_WORDS, deviceWords, gpuChart, kernelHistogram, memoryChart, ranksChart, RANKS_LISTED, rooflineChart, stepChart, stepSeries } from "./charts.js";
import { codeText, h, units, unitsTitle } from "./dom.js";
import { profileToolUrl, traceWindowUrl } from "./links.js";
import { windowTimelines } from "./timeline.js";

const DIRECTION = { higher: "↑ higher is better", lower: "↓ lower is better", none: "" };
const STATUS_TEXT = { good: "good", warning: "needs attention", critical: "problem", unknown: "n/a" };
/** A card value longer than this many characters is more than a number: drawn smaller (style.css .card-value.long). */
const LONG_VALUE = 9;

/** A <select> with options [{value, label}], the current value selected. */
export function select(label, options, value, onChange) {
  const el = h("select", { "aria-label": label, onChange: (e) => onChange(e.target.value) },
    options.map((o) => h("option", { value: o.value, selected: o.value === value }, o.label)));
  el.value = value;
  // the whole choice on hover, where a narrow window still cuts a long run name
  el.title = (options.find((o) => o.value === value) || {}).label || "";
  return h("label", { class: "picker" }, h("span", {}, label), el);
}

/** A run's picker label: runs the stock Profile tab cannot open name their format (the server's `format_name`). */
export function runLabel(r) {
  const other = (r.sessions || []).find((x) => x.stock_tool === false && x.format_name);
  return other ? `${r.run} (${other.format_name})` : r.run;
}

/**
 * Why a session has no links into the stock Profile tab (it reads XPlane files only). A format that only a desktop
 * application opens (the server's `native_viewer`: Nsight Systems) gets that application named, its windows in its
 * own time base from the session's start; the others open in Perfetto UI.
 */
export function noStockLinks(formatName, hasWindows = true, nativeViewer = null) {
  if (nativeViewer) {
    return `${formatName || "These"} files open in ${nativeViewer}, not in a browser, so there are no trace-viewer links here: `
      + (hasWindows ? `each window below opens as a step timeline here (Show step), and its times are ${nativeViewer}'s own `
        : `times are ${nativeViewer}'s own `)
      + `(ms from the start of the session, as its timeline shows them): open the report in ${nativeViewer} and go to that time.`;
  }
  return `The stock Profile tab cannot open ${formatName || "this format's"} files, so there are no trace-viewer links here: `
    + (hasWindows ? "each window below opens as a step timeline here (Show step), and the trace file opens in Perfetto UI "
      : "the trace file opens in Perfetto UI ")
    + "(ui.perfetto.dev) or chrome://tracing (ms from the trace's start, where their timelines start).";
}

/** The run / session / host pickers for the current selection. */
export function pickers(runs, sel, onSelect) {
  const run = runs.find((r) => r.run === sel.run) || runs[0];
  const session = run.sessions.find((x) => x.session === sel.session) || run.sessions[0];
  const byNewest = (sessions) => sessions.map((x) => ({ value: x.session, label: x.session }));
  return [
    select("Run", runs.map((r) => ({ value: r.run, label: runLabel(r) })), run.run,
      (v) => onSelect({ run: v, session: runs.find((r) => r.run === v).sessions[0].session, host: "" })),
    select("Session", byNewest(run.sessions), session.session, (v) => onSelect({ run: run.run, session: v, host: "" })),
    select("Host", [{ value: "", label: `All hosts (${session.hosts.length})` }, ...session.hosts.map((x) => ({ value: x.host, label: x.host }))],
      sel.host || "", (v) => onSelect({ run: run.run, session: session.session, host: v })),
  ];
}

/**
 * What discovery left out of the logdir (symlinks leaving it, JSON files that are no trace), one short line beside
 * the pickers with every path and reason on hover and in the list: never silently.
 */
export function skippedNote(skipped, { open = false } = {}) {
  if (!skipped || !skipped.length) return null;
  const n = skipped.length;
  return h("details", { class: "skipped muted small", open },
    h("summary", {}, `${n} entr${n === 1 ? "y" : "ies"} of the logdir left out`),
    h("ul", {}, skipped.map((x) => h("li", {}, h("code", {}, x.path), `: ${x.reason}`))));
}

export function button(label, onClick, attrs = {}) {
  return h("button", { type: "button", onClick, ...attrs }, label);
}

/**
 * The line shown while the server computes: its progress message
 * ("analysing worker0 (1/2)") becomes "Analyzing worker0 (1/2)…", other
 * messages follow "Analyzing the profile…" (never "Analyzing… analysing").
 */
export function progressText(message) {
  const text = String(message || "").trim();
  const own = /^analy[sz]ing\s+(.+)$/i.exec(text);
  if (own) return `Analyzing ${own[1].replace(/[.…]+$/, "")}…`;
  return text && !/^done$/i.test(text) ? `Analyzing the profile… (${text})` : "Analyzing the profile…";
}

/** Progress while the server computes the report (202 answers). */
export function computingView(progress) {
  const share = Math.max(0, Math.min(1, progress?.progress || 0));
  return h("div", { class: "state computing", role: "status", "aria-live": "polite" },
    h("p", {}, progressText(progress?.message)),
    h("progress", { max: "100", value: String(Math.round(share * 100)), "aria-label": "analysis progress" }));
}

/**
 * Empty and error states: each says what happened and what to do next.
 * `frameworks`: the server's list ({name, capture}) -- how to capture a profile in each framework it reads.
 * `empty`: why a logdir lists nothing, when the server knows ({title, text}: symlinks not followed or leading out,
 * /runs' `empty`) -- then that reason is the message, and how to capture follows, folded.
 */
export function messageView(kind, detail = "", frameworks = [], empty = null) {
  if (kind === "no-profiles" && empty) {
    return h("div", { class: "state message no-profiles left-out", role: "status" },
      h("h2", {}, empty.title), h("p", {}, empty.text),
      frameworks.length ? h("details", { class: "how-to-capture" }, h("summary", {}, "How to capture a profile"),
        h("div", { class: "snippets" }, frameworks.map((f) => h("div", { class: "snippet-group" }, h("h4", {}, f.name), snippetBlock(f.capture, "python"))))) : null);
  }
  const views = {
    "no-logdir": ["The Advisor needs --logdir",
      "TensorBoard was started with --logdir_spec (or without a log directory). Profiles are found only under a single --logdir, like the Profile tab.",
      [["Shell", "tensorboard --logdir logs", "shell"]]],
    "no-profiles": ["No GPU profiles found yet",
      "The Advisor reads the profiles each framework below writes into the logdir. Capture a few steady-state steps (about 10 s) on a machine with a GPU, then reload.",
      frameworks.map((f) => [f.name, f.capture, "python"])],
    error: ["Could not load the report", detail, []],
  };
  const [title, text, snippets] = views[kind] || views.error;
  return h("div", { class: `state message ${kind}`, role: kind === "error" ? "alert" : "status" },
    h("h2", {}, title), h("p", {}, text),
    snippets.length > 1
      ? h("div", { class: "snippets" }, snippets.map(([name, code, lang]) => h("div", { class: "snippet-group" }, h("h4", {}, name), snippetBlock(code, lang))))
      : snippets.map(([, code, lang]) => snippetBlock(code, lang)));
}

/** Code with a copy button (navigator.clipboard; falls back to selecting the text). */
export function snippetBlock(text, lang) {
  const pre = h("pre", { class: `snippet lang-${lang || "text"}`, tabindex: "0" }, h("code", {}, text));
  const copy = button("Copy", async () => {
    try {
      await navigator.clipboard.writeText(text);
      copy.textContent = "Copied";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(pre);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      copy.textContent = "Press Ctrl+C";
    }
    setTimeout(() => (copy.textContent = "Copy"), 1500);
  }, { class: "copy", "aria-label": "Copy snippet" });
  return h("div", { class: "snippet-wrap" }, pre, copy);
}

/** Why a card reads as it does (render.card_note's cases; n/a is in the meaning): not graded, graded by a finding, not flagged. */
export function cardNote(m) {
  const d = m.detail || {};
  if (d.not_applicable || d.not_available) return null; // the card's meaning already gives the reason
  if (d.not_graded) return d.not_graded;
  if (d.graded_by && typeof d.graded_by === "object") return `graded by its finding: ${d.graded_by.label} ${d.graded_by.display}`;
  if (d.not_flagged) return `not flagged: ${d.not_flagged}`;
  return null;
}

/**
 * One headline card: value, status colour, good direction, one-line meaning, and why it is graded so; a card a
 * setting would give (the MFU of a trace without FLOPs) points at the tab's Settings, never at a command-line flag.
 * `shown`: its texts in the report's display (display.cards[i]: its threshold as the CLI writes it).
 */
export function metricCard(m, ctx = {}, shown = {}) {
  const note = cardNote(m);
  const value = m.display || "–";
  return h("div", { class: `card status-${m.status}`, role: "group", "aria-label": m.label },
    h("div", { class: "card-label" }, m.label),
    // a value longer than a number ("72.4% known: 100.0% 16-bit") in a smaller size: two lines at most at 1024 px
    h("div", { class: value.length > LONG_VALUE ? "card-value long" : "card-value", title: value },
      // broken only at spaces ("16-bit" stays whole)
      value.split(" ").map((word, i) => [i ? " " : "", h("span", { class: "nobr" }, word)])),
    h("div", { class: "card-meta" },
      m.status && m.status !== "unknown" ? [h("span", { class: "badge" }, STATUS_TEXT[m.status] || m.status), " "] : null,
      h("span", { class: "muted" }, DIRECTION[m.good_direction] || "")),
    // two lines each at most (style.css), the whole text on hover: the cards must leave the findings on screen
    m.meaning ? h("p", { class: "card-meaning", title: units(m.meaning) }, units(m.meaning)) : null,
    note ? h("p", { class: "card-note small", title: units(note) }, units(note)) : null,
    settingButton((m.detail || {}).needs_setting, ctx, { help: false }),  // a card stays compact: the help on hover
    shown.threshold ? h("div", { class: "muted small" }, `threshold ${shown.threshold}`) : null);
}

/**
 * The headline cards; the ones with no meaning for the run's framework (detail.not_applicable) collapse into one
 * line under them, each label with its reason on hover, so the cards that mean something keep the screen.
 */
export function scorecard(metrics, ctx = {}, cards = []) {
  const na = metrics.filter((m) => (m.detail || {}).not_applicable);
  const shown = metrics.map((m, i) => [m, (cards || [])[i] || {}]).filter(([m]) => !(m.detail || {}).not_applicable);
  return h("section", { class: "scorecard-wrap", "aria-label": "Headline numbers" },
    h("div", { class: "scorecard" }, shown.map(([m, c]) => metricCard(m, ctx, c))),
    na.length ? h("p", { class: "muted small na-cards" }, "Not applicable to this capture: ",
      na.map((m, i) => [i ? ", " : "", h("span", { title: m.detail.not_applicable }, m.label)])) : null);
}

/**
 * A report table (report_schema.Table) under its own title, each cell as the server wrote it: `cells`, rows of text
 * aligned with `t.rows` (the report's display: the CLI's digits, shares as percentages); `t.rows` only say which
 * columns are empty and which cells are numbers.  A table whose rows are text already is its own `cells`.
 */
export function tableView(t, cells = t.rows) {
  // a column no row fills says nothing: it is left out (the JSON keeps it)
  const keep = t.columns.map((_, i) => t.rows.some((row) => row[i] !== null && row[i] !== undefined && row[i] !== ""));
  const idx = t.columns.map((_, i) => i).filter((i) => keep[i] || !t.rows.length);
  const td = (v, text) => {
    // prose cells ("0.2 ms into step 13, 1% of it") and the server's numbers in the tab's unit style ("880 µs");
    // names (no space) as written
    const shown = (typeof v === "string" && v.includes(" ") && v.length <= 60) || typeof v === "number" ? units(text) : text;
    if (typeof v === "number") return h("td", { class: "num" }, shown);
    // long names (C++ kernels) clamp to two lines, whole on hover
    return typeof v === "string" && v.length > 60 ? h("td", { class: "name", title: v }, h("span", {}, shown)) : h("td", {}, shown);
  };
  const text = (r, i) => String(((cells || [])[r] || [])[i] ?? "");
  return h("div", { class: "table-wrap" },
    h("table", {},
      h("caption", {}, t.title),
      h("thead", {}, h("tr", {}, idx.map((i) => h("th", { scope: "col" }, unitsTitle(t.columns[i]))))),
      h("tbody", {}, t.rows.map((row, r) => h("tr", {}, idx.map((i) => td(row[i], text(r, i))))))));
}

/** A report table and its cells as the server wrote them (`shown`: {columns, rows}, report/view.table_cells: the
 * CLI's titles -- a column of sub-ms times in µs -- and digits), as tableView's arguments. */
function said(t, shown = {}) {
  return [{ ...t, columns: shown.columns || t.columns }, shown.rows];
}

/** Links for one finding: trace viewer at each window (`spans`: each window's times as the server wrote them), and the
 * stock tools for its host. */
export function findingLinks(f, ctx, spans = []) {
  if (ctx.stockTool === false) {
    // the windows still say where to look, in the time base of the viewer that opens the file (capture.time_base)
    return h("div", { class: "links" }, h("p", { class: "no-links" }, noStockLinks(ctx.formatName, f.windows.length > 0, ctx.nativeViewer)),
      f.windows.length ? h("ul", { class: "windows" }, f.windows.slice(0, 3).map((w, i) =>
        h("li", {}, `${w.label}: ${(spans || [])[i] ?? ""}`))) : null);
  }
  const links = [];
  f.windows.slice(0, 3).forEach((w, i) => {
    links.push(h("a", { href: traceWindowUrl(ctx.root, ctx.stockRun, w.host, w.start_ms, w.end_ms), target: "_top", class: "link trace" },
      `Open in trace viewer: ${w.label} (${(spans || [])[i] ?? ""})`));
  });
  const host = f.host || (f.hosts || [])[0] || f.windows[0]?.host || ctx.hosts[0] || "";
  if (host) {
    links.push(h("a", { href: profileToolUrl(ctx.root, ctx.stockRun, "trace_viewer@", host), target: "_top", class: "link" }, "Profile: trace viewer"),
      h("a", { href: profileToolUrl(ctx.root, ctx.stockRun, "kernel_stats", host), target: "_top", class: "link" }, "Profile: kernel stats"),
      h("a", { href: profileToolUrl(ctx.root, ctx.stockRun, "overview_page", host), target: "_top", class: "link" }, "Profile: overview page"));
  }
  return h("nav", { class: "links", "aria-label": "Open in the Profile tab" }, links);
}

/**
 * For a finding a setting would judge (its metric's `detail.needs_setting`, e.g. allreduce_slow without the
 * parameter count): a button that opens the tab's Settings at that field -- TensorBoard has no --params.
 */
export function settingPointer(f, ctx) {
  return settingButton(f.metric?.detail?.needs_setting, ctx);
}

/** The button that opens Settings at the field `key` names (a finding's or a card's `detail.needs_setting`). */
function settingButton(key, ctx, { help = true } = {}) {
  const spec = (ctx?.legend?.settings || []).find((x) => x.key === key);
  if (!spec || !ctx.onSetting) return null;
  return h("p", { class: "setting-pointer" },
    h("button", { type: "button", class: "set-setting", dataset: { setting: spec.key }, title: spec.help, onClick: () => ctx.onSetting(spec.key) },
      `Set ${spec.label} in Settings`),
    help ? h("span", { class: "muted small" }, ` ${spec.help}`) : null);
}

/** "on 2 hosts: worker0, worker1" for a finding merged over hosts (report_schema.Finding.hosts), else "". */
export function hostsText(f) {
  const hosts = f.hosts || [];
  return hosts.length ? `on ${hosts.length} host${hosts.length === 1 ? "" : "s"}: ${hosts.join(", ")}` : "";
}

/**
 * One finding. Only the top one is open: its summary, its saving and its
 * recommended change come first, so they are on screen without scrolling;
 * the facts, the evidence and the links follow.  `shown`: its texts in the report's display (display.findings[i]:
 * its saving as the CLI's finding line says it -- per step, or of the one step its host kept --, the memory it frees,
 * its evidence's cells, its windows' times).
 */
/** The word for a finding's device in its host's vendor's words ("NPU" on an Ascend host; `ctx.deviceWords`: each
 * host's display.hosts[].device_words by host name); a finding over several hosts says theirs where they agree, and
 * NVIDIA's where a report carries none (served before a79). */
export function findingDevice(f, ctx) {
  const byHost = (ctx && ctx.deviceWords) || {};
  const hosts = f.host ? [f.host] : (f.hosts || []).length ? f.hosts : Object.keys(byHost);
  const said = [...new Set(hosts.map((x) => deviceWords(byHost[x]).device))];
  return said.length === 1 ? said[0] : DEVICE_WORDS.device;
}

export function findingView(f, rank, ctx, shown = {}) {
  const where = [f.host ? `host ${f.host}` : hostsText(f) || null, f.gpu !== null && f.gpu !== undefined ? `${findingDevice(f, ctx)} ${f.gpu}` : null].filter(Boolean).join(", ");
  // the server's words ("low confidence (the pass)" on one pass, h37-onepass2); a report cached before them: its own
  const conf = shown.confidence || (f.confidence && f.confidence !== "high" ? `${f.confidence} confidence (steps)` : "");
  return h("details", { class: `finding sev-${f.severity}`, open: rank === 1, dataset: { findingId: f.id, rule: f.rule } },
    h("summary", {},
      h("span", { class: "rank" }, `#${rank}`),
      h("span", { class: `badge sev` }, f.severity),
      h("span", { class: "finding-title" }, units(f.title)),
      hostsText(f) ? h("span", { class: "finding-hosts muted" }, hostsText(f)) : null,
      shown.saving ? h("span", { class: "saving" }, units(shown.saving)) : null,
      shown.frees ? h("span", { class: "saving saving-bytes" }, shown.frees) : null,
      conf ? h("span", { class: "confidence muted" }, conf) : null),
    h("div", { class: "finding-body" },
      h("p", { class: "summary" }, codeText(f.summary)),
      settingPointer(f, ctx),
      f.actions.length ? h("div", { class: "actions" }, h("h4", {}, f.actions.length > 1 ? "Recommended changes" : "Recommended change"),
        h("ol", {}, f.actions.map((a) => h("li", {}, h("p", {}, units(a.text)), a.snippet ? snippetBlock(a.snippet, a.snippet_lang) : null)))) : null,
      h("dl", { class: "facts" },
        f.metric ? [h("dt", {}, f.metric.label), h("dd", {}, f.metric.display)] : null,
        shown.freed ? [h("dt", {}, "Memory it frees"), h("dd", {}, shown.freed)] : null,
        f.saving ? [h("dt", {}, "Estimated saving"), h("dd", {}, units(shown.saving_value || ""), h("span", { class: "muted" }, ` — ${units(f.saving.assumption)}`),
          (f.saving.overlaps || []).length ? h("div", { class: "overlap small" }, overlapText(f, ctx)) : null)] : null,
        where ? [h("dt", {}, "Where"), h("dd", {}, where)] : null,
        [h("dt", {}, "Guide"), h("dd", {}, f.guide_section)]),
      f.evidence.map((t, i) => tableView(...said(t, (shown.evidence || [])[i]))),
      findingLinks(f, ctx, shown.windows),
      windowTimelines(f, ctx, shown.windows, shown.window_names)));
}

export function findingsView(all, ctx) {
  // "healthy" is the verdict (the line above the cards), not a numbered finding
  const findings = all.filter((f) => f.rule !== "healthy");
  if (!findings.length) {
    // "within their thresholds" only where a card has a value: a capture whose cards are all n/a (a memory snapshot
    // alone) measured none of them
    const measured = (ctx.headline || []).some((m) => m.value !== null && m.value !== undefined && m.status !== "unknown");
    return h("section", { class: "findings healthy" }, h("h2", {}, "Findings"),
      h("p", {}, "No problems found against the guide's checks. " + (measured || !ctx.headline
        ? "The numbers above are within their thresholds."
        : "None of the numbers above could be measured in this capture (n/a), so the checks that read them did not run.")));
  }
  return h("section", { class: "findings", "aria-label": "Findings" },
    h("h2", {}, `Findings (${findings.length}), ranked by estimated saving`),
    findings.map((f, i) => findingView(f, i + 1, { ...ctx, ranks: new Map(findings.map((g, j) => [g.id, j + 1])) },
      ((ctx.display || {}).findings || [])[all.indexOf(f)])));
}

/** "Overlaps with finding #2, #4": the other findings by the rank they are shown at, never by their rule id. */
export function overlapText(f, ctx) {
  const ids = (f.saving && f.saving.overlaps) || [];
  const ranks = ctx && ctx.ranks ? ids.map((i) => ctx.ranks.get(i)).filter((r) => r) : [];
  const others = ranks.length === ids.length ? `finding ${ranks.sort((a, b) => a - b).map((r) => `#${r}`).join(", ")}`
    : `${ids.length} other finding${ids.length === 1 ? "" : "s"}`;
  return `Overlaps with ${others}: the savings do not add up.`;
}

/**
 * A chart in a figure that redraws itself for the width it gets
 * (`fitChart`, called by the page when the figure is laid out or resized).
 */
export function chartFigure(caption, draw, width = DEFAULT_WIDTH) {
  const fig = h("figure", { class: "chart-figure", dataset: { width: String(Math.round(width)) } }, h("figcaption", {}, caption), draw(width));
  fig.drawChart = draw;
  return fig;
}

/** Redraws a chartFigure at its current width (no-op while hidden, e.g. in a closed <details>, or unchanged). */
export function fitChart(fig, width = fig.clientWidth) {
  const w = Math.floor(width);
  if (!fig.drawChart || !(w > 0) || Math.abs(w - Number(fig.dataset.width)) < 2) return false;
  fig.querySelector("svg")?.replaceWith(fig.drawChart(w));
  fig.dataset.width = String(w);
  return true;
}

/** The host's kept steps as time windows (its host-wide step rows), for the memory chart's bands; `span` and `name`:
 * each one's times and name ("the pass" where the capture marks no step) as the server wrote them (display.steps). */
export function hostSteps(hr, shown = {}) {
  return (hr.step_rows || []).map((r, i) => [r, (shown.steps || [])[i] || {}]).filter(([r]) => r.gpu === null || r.gpu === undefined)
    .map(([r, said]) => ({ step: r.step, start_ms: r.start_ms, end_ms: r.start_ms + r.step_ms, span: said.span, name: said.name }));
}

/**
 * One GPU's memory (GpuSummary.memory): its chart over the capture, the peak in words, the ops holding the most at
 * the peak, and the out-of-memory errors a snapshot recorded, with what was live then.  `shown`: its texts in the
 * report's display (display.hosts[h].gpus[g].memory: the peak in words, the tables' cells, the chart's labels).
 */
export function memoryView(hr, g, ctx, shown = {}, hostShown = {}) {
  const m = g.memory;
  const width = ctx.chartWidth || DEFAULT_WIDTH;
  const steps = hostSteps(hr, hostShown);
  const who = capital(`${deviceWords(hostShown.device_words).device} ${g.gpu}`);  // "NPU 0", "Device 0": the vendor's
  const parts = [h("p", { class: "memory-peak" }, units(`${who} peak: ${shown.peak}.`))];
  if (m.note) parts.push(h("p", { class: "note" }, m.note));
  if ((m.timeline?.t_ms || m.timeline?.event || []).length) {
    const shaded = hostShown.one_pass ? "the pass shaded" : "steps shaded";
    parts.push(chartFigure(`${who} memory: allocated (area), reserved (line), capacity (dashed), the peak marked, ${shaded}`,
      (w) => memoryChart({ ...m, gpu: g.gpu }, { steps, width: w, title: `${who} memory`, categories: shown.categories || ctx.legend?.memory, labels: shown }), width));
  }
  if ((m.top || []).length) {
    parts.push(tableView({ title: `What holds ${who}'s memory at its peak`, columns: ["op", "holds", "size", "allocations"],
      rows: m.top }, shown.top));
  }
  (m.ooms || []).forEach((o, i) => {
    const told = (shown.ooms || [])[i] || {};
    parts.push(h("div", { class: "oom", role: "note" },
      h("h4", {}, told.title || "Out of memory"),
      o.frames.length ? h("p", { class: "small" }, "Asked for at ", h("code", {}, o.frames[0])) : null,
      tableView({ title: "The largest live allocations then", columns: ["size", "holds", "allocated at"], rows: o.live }, told.live)));
  });
  return h("section", { class: "gpu-memory", dataset: { gpu: String(g.gpu) } }, h("h4", {}, `${who} memory`), parts);
}

/**
 * Every GPU's memory peak side by side: the CLI's peak table (display.memory: its columns, its rows, its notes), a
 * section of the report when some host records allocator events.
 */
export function memoryPeaksView(shown) {
  if (!shown || !(shown.rows || []).length) return null;
  return h("section", { class: "memory", "aria-label": "GPU memory" }, h("h2", {}, "GPU memory"),
    tableView({ title: "Peak memory per GPU", columns: shown.columns, rows: shown.rows }),
    (shown.notes || []).length ? h("ul", { class: "notes" }, shown.notes.map((n) => h("li", {}, units(n)))) : null);
}

/**
 * Whether a host's job block says its window times no GPU step: the server's answer, `job.no_gpu_step` (why, in the
 * words of the report's title; `tb_gpu_advisor.report.verdict.no_gpu_step_reason`), read as given -- the tab keeps no
 * test of its own that a third reason would have to be added to (h37-tidy30).
 */
export function noStepTimed(job) {
  return Boolean(job?.no_gpu_step);
}

/**
 * The host line's steps: the count and source; "no step timed" where none is kept or the window times no GPU step
 * -- with the loop a window without GPU work marks, timed on the CPU, where it marks one (`shown.host_loop`, the
 * server's words) --; "one pass, no step marked" for the one pass of a capture that marks none.
 */
function stepsFact(hr, shown) {
  if (noStepTimed(hr.job) && shown.host_loop) return `no GPU step: its loop on the CPU, ${units(shown.host_loop)}`;
  if (hr.steps?.count === 0 || noStepTimed(hr.job)) return "no step timed";
  if (shown.one_pass) return "one pass, no step marked";
  if (hr.steps?.count === undefined) return null;
  return `${hr.steps.count} step${hr.steps.count === 1 ? "" : "s"}${hr.steps.source_label ? ` (${hr.steps.source_label})` : ""}`;
}

/** Capture facts for a host's heading: framework, length (`shown.capture`, as the server wrote it), steps, GPUs. */
export function hostFacts(hr, shown = {}) {
  const fw = hr.capture?.framework;
  const name = fw ? hr.capture.framework_name || fw : null;
  return [
    // a framework's name ("PyTorch capture"), or the phrase the server gives a capture of none ("a GPU program with no
    // ML framework"): "capture of" it, never "a GPU program with no ML framework capture"
    name ? (/^an? /.test(name) ? `capture of ${name}` : `${name} capture`) : null,
    shown.capture ? units(`capture ${shown.capture}`) : null,
    // the source in words (`source_label`); a report cached before it gave none says no more than the count
    // none kept (a memory snapshot's allocations): no step timed, as the CLI's header says -- not "0 steps"
    // one pass of a capture that marks no step (`shown.one_pass`, the server's test): not "1 step", as the CLI's header
    // a window that times no GPU step (`noStepTimed`) counts no step either: the CLI's header says "no step" there,
    // and the report's step rows are empty
    stepsFact(hr, shown),
    // a GPU side unrecorded (CUDA tracing off) is no host without a GPU: its GPU's work went unseen
    // each GPU by its name as a sentence says it (display `gpus[].name`: an inferred name's model, so two inferred
    // T4s are one "NVIDIA T4"; the GPUs table keeps the reasons), else the report's own
    hr.gpus.length ? `${hr.gpus.length} GPU${hr.gpus.length > 1 ? "s" : ""}: ${[...new Set(hr.gpus.map((g, i) => ((shown.gpus || [])[i] || {}).name || g.name))].join(", ")}`
      : hr.job?.gpu_unrecorded ? "GPU work not recorded" : "no GPU",
  ].filter(Boolean);
}

/**
 * The words of a host's damage of one kind: its typed records (`damage_records`, schema 1.7: kind, code, words,
 * where), else -- a report of schema 1.6 or before -- its `damage` words told apart by the lists that named the kinds.
 */
function damageOfKind(hr, kind) {
  if ((hr.damage_records || []).length) return hr.damage_records.filter((d) => d.kind === kind).map((d) => d.detail);
  const contra = new Set(hr.contradictions || []);
  const unread = new Set(hr.unreadable || []);
  const of = { cut: (d) => !contra.has(d) && !unread.has(d), unreadable: (d) => unread.has(d),
    contradiction: (d) => contra.has(d) && !unread.has(d) };
  return (hr.damage || []).filter(of[kind]);
}

/**
 * A damaged host's notice in the server's words (`display.hosts[].damage`: report/verdict.py damage_words, the note's
 * own constants): its title, then each kind's entries with the paragraph the server wrote for it -- a file cut off
 * mid-write (every number partial, what lies past the damage missing), records left unread in a file read to its end
 * (`unreadable`, schema 1.6: left out, nothing past them), records of a file read whole that contradict each other
 * (`contradictions`, schema 1.5: the numbers the file's own). A report without the words lists the entries alone.
 */
function damageView(hr, shown = {}) {
  const said = shown.damage || {};
  const kinds = [["cut", "cuts"], ["unreadable", "unreadable"], ["contradiction", "contradictions"]].map(
    ([kind, cls]) => [kind, damageOfKind(hr, kind), cls]);
  const box = h("div", { class: "state message damaged", role: "alert" }, h("h4", {}, said.title || "Damaged file"));
  for (const [kind, entries, cls] of kinds) {
    if (!entries.length) continue;
    box.append(h("ul", { class: cls }, entries.map((d) => h("li", {}, d))));
    if (said[kind]) box.append(h("p", {}, said[kind]));
  }
  return box;
}

/**
 * Per-host detail, folded under the findings (a <details>, closed): capture
 * facts, the no-GPU notice, the charts and the report's tables. A host whose
 * file could not be read is shown open, as an alert; one read from a damaged
 * file is open too, the damage first.
 */
export function hostView(hr, ctx, shown = {}) {
  const width = ctx.chartWidth || DEFAULT_WIDTH;
  if (hr.error) {
    return h("section", { class: "host error", role: "alert", dataset: { host: hr.host } }, h("h3", {}, `Host ${hr.host}`),
      h("p", {}, "This host's profile could not be read: ", h("code", {}, hr.error)),
      h("p", { class: "muted" }, "The other hosts are analyzed without it. Re-capture this host, or check the file is a complete .xplane.pb."));
  }
  const parts = [];
  const damaged = (hr.damage || []).length > 0;
  if (damaged) parts.push(damageView(hr, shown));
  if (hr.job?.summary) parts.push(h("p", { class: "note job" }, codeText(hr.job.summary)));
  if (hr.steps?.note) parts.push(h("p", { class: "note" }, codeText(hr.steps.note)));
  if (!hr.gpus.length) {
    parts.push(h("div", { class: "state message no-gpu" }, h("h4", {}, "No GPU activity in this capture"),
      // why there is none (no GPU seen, CUDA tracing off, a window before the GPU work, NVTX alone) and how to capture
      // it are the findings' words: the tab adds no cause of its own (it said "a machine where the framework sees the
      // GPU, with CUPTI available" under an Nsight finding that CUDA tracing was off)
      h("p", {}, "The profile has no GPU kernels or copies, so the GPU checks could not run. The findings above say why, and how to capture the GPU's work.")));
  }
  hr.gpus.forEach((g, i) => { if (g.memory) parts.push(memoryView(hr, g, ctx, ((shown.gpus || [])[i] || {}).memory || {}, shown)); });
  if (hr.step_rows.length) {
    const perGpu = stepSeries(hr.step_rows).series.length > 1;
    // one pass of a capture that marks no step (`shown.one_pass`) has no steps to break down: the pass's time is
    // (h37-onepass2, as the server's table titles say "the pass")
    const what = shown.one_pass ? "Time breakdown of the pass" : "Per-step time breakdown";
    const caption = perGpu ? `${what}, one panel per ${deviceWords(shown.device_words).device} (same time scale)` : what;
    parts.push(chartFigure(caption, (w) => stepChart(hr.step_rows, { width: w, categories: ctx.legend?.categories, labels: shown,
      ...(shown.one_pass ? { title: what } : {}) }), width));
  }
  if (hr.gpus.length > 1) parts.push(chartFigure(deviceWords(shown.device_words).comparison, (w) => gpuChart(hr.gpus, { width: w, table: shown.gpus_table, onePass: shown.one_pass, names: (shown.gpus || []).map((g) => g?.name), words: shown.device_words }), width));
  // drawn when a kernel was timed: a capture with none has every bin at 0, an empty chart with no word
  if ((hr.kernel_durations_us?.counts || []).some((n) => n > 0)) {
    parts.push(chartFigure("Kernel durations against the 20–40 µs launch latency", (w) => kernelHistogram(hr.kernel_durations_us, { width: w }), width));
  }
  if (hr.roofline && hr.roofline.rows.length) {
    const mfu = (hr.headline || []).find((m) => m.id === "mfu")?.detail || {};
    // a depthwise row runs on the vector units and was rated against their roof, not the matrix units' (h37-flops68b)
    const kindCol = hr.roofline.columns.indexOf("kind");
    const depthwise = kindCol >= 0 && hr.roofline.rows.some((r) => r[kindCol] === "depthwise");
    parts.push(chartFigure(`GEMM shapes against the ${mfu.dtype || ""} roofline${depthwise ? ", depthwise convolutions (ringed) against the vector units'" : ""} (dots under the roof run below what their shapes allow)`,
      // the roof of the GEMMs' own precision (its peak), else the GPU's best dense peak the MFU is over
      // and the vector units' peak the depthwise rows were rated against, where the server knows it (h37-roof68)
      (w) => rooflineChart(hr.roofline, { peak: mfu.dtype_peak_flops || mfu.peak_flops, bandwidth: mfu.memory_bandwidth, vectorPeak: mfu.vector_peak_flops,
        dtype: mfu.dtype_peak_flops ? mfu.dtype : mfu.peak_dtype || mfu.dtype, width: w, labels: shown }), width));
  }
  const tables = [["kernels", hr.kernels], ["ops", hr.ops], ["memcpy", hr.memcpy]].map(([k, t]) => t && said(t, (shown.tables || {})[k]));
  // the roofline as the CLI lists it: its columns and digits
  if (hr.roofline && shown.roofline) tables.push([{ ...hr.roofline, ...shown.roofline }, shown.roofline.rows]);
  for (const [t, cells] of tables.filter(Boolean)) if (t.rows.length) parts.push(h("details", { class: "table-details" }, h("summary", {}, `${t.title} (${t.rows.length} row${t.rows.length === 1 ? "" : "s"})`), tableView(t, cells)));
  return h("details", { class: damaged ? "host damaged" : "host", open: damaged, dataset: { host: hr.host } },
    h("summary", {}, h("span", { class: "host-name" }, `Host ${hr.host}`), " ", h("span", { class: "muted host-facts" }, hostFacts(hr, shown).join(" · ")),
      h("span", { class: "muted host-more" }, " — charts and tables")),
    h("div", { class: "host-body" }, parts));
}

/** "If every fix lands": the step from the union of recovered time (rules/savings.py), saying when savings overlap --
 * the CLI's line (display.achievable, render.achievable_text); none where no fix recovers time. */
export function achievableLine(text) {
  return text ? h("p", { class: "achievable" }, units(text)) : null;
}

/**
 * The job's ranks side by side (Report.ranks, 2+ ranks): a stacked bar per rank up to RANKS_LISTED, else the
 * distribution with the outliers named; the table under it, folded.  `unrecorded`: the labels of the job's ranks
 * whose GPU side went unrecorded (`job.unrecorded_rank_labels`); `world`: the job's world size where its files say
 * it (`job.job_ranks`).  One recorded rank beside unrecorded ones has no chart, but still its heading -- "Ranks (2,
 * 1 recorded)" and who was not recorded --, as the CLI's title says "2 ranks on 1 host (1 recorded)" (h37-job62
 * *Left* 2: the tab said nothing of them).
 */
export function ranksView(ranks, ctx, cells = [], unrecorded = [], world = 0) {
  const n = ranks ? (ranks.rows || []).length : 0;
  if (n < 2 && !unrecorded.length) return null;
  const width = ctx.chartWidth || DEFAULT_WIDTH;
  // one process's GPUs (a TensorFlow MirroredStrategy worker) are GPUs, not ranks: the table's title says which
  const gpus = (ranks?.title || "").startsWith("GPUs");
  const [unit, Units] = gpus ? ["GPU", "GPUs"] : ["rank", "Ranks"];
  // the job's ranks whose GPU side went unrecorded have no row: counted as the CLI's title counts them
  // ("4 ranks on 1 host (3 recorded)", "2 of 4 ranks"; `job.unrecorded_rank_labels`, h37-verdict61; render._step_info)
  const recorded = Math.max(n, 1);
  const held = (gpus ? n : recorded + unrecorded.length);
  const of = !gpus && world > held ? ` of ${world}` : "";
  const count = unrecorded.length && !gpus ? `${held}${of}, ${recorded} recorded` : `${n}${of}`;
  const heading = h("h2", {}, `${Units} (${count})`);
  const lost = unrecorded.length && !gpus
    ? h("p", { class: "muted small" }, `GPU work not recorded: ${unrecorded.join(", ")}`) : null;
  if (n < 2) return h("section", { class: "ranks", "aria-label": Units }, heading, lost);
  const caption = n > RANKS_LISTED ? `${n} ${unit}s: exposed communication per ${unit}, and the 5 ${unit}s at each end`
    : `${n} ${unit}s: compute, exposed communication and the rest of each step (most time before the collectives first)`;
  return h("section", { class: "ranks", "aria-label": Units }, heading, lost,
    chartFigure(caption, (w) => ranksChart(ranks, { width: w, cells }), width),
    h("details", { class: "table-details" }, h("summary", {}, `${ranks.title} (${n} rows)`), tableView(ranks, cells)));
}

/** The whole report below the toolbar. */
/**
 * The report's notes, less a damaged host's note: its host section leads with the damage, open, so the damage text
 * appears once per screen (issue #36; the CLI's text and markdown leave it out of their notes alike).
 */
function notesView(report) {
  const damaged = report.hosts.filter((hr) => (hr.damage || []).length).map((hr) => `${hr.host}: the file is damaged`);
  const notes = (report.notes || []).filter((n) => !damaged.some((d) => n.startsWith(d)));
  return notes.length ? h("ul", { class: "notes" }, notes.map((n) => h("li", {}, units(n)))) : null;
}

/**
 * The server's verdict, less the damage it quotes: the damaged host's section below says it, open (once per screen),
 * pointed to by the kind of the entry quoted (a cut, records left unread, records that contradict each other).
 */
function screenVerdict(report) {
  const v = report.verdict || "";
  for (const hr of report.hosts) {
    const d = (hr.damage || []).find((x) => v.includes(`(${x})`));
    if (d === undefined) continue;
    const what = (hr.contradictions || []).includes(d) ? "what contradicts"
      : (hr.unreadable || []).includes(d) ? "what could not be read" : "what was lost";
    return v.replace(`(${d})`, `(${what}: in its host below)`);
  }
  return v;
}

export function reportView(report, ctx) {
  const shown = report.display || {};
  const noGpu = report.hosts.length && report.hosts.every((hr) => !hr.error && !hr.gpus.length);
  return h("div", { class: "report" },
    // the server's verdict (report/verdict.py): the same words as the CLI's text and markdown
    h("p", { class: "verdict" }, (report.healthy ? "✓ " : "") + units(screenVerdict(report) || (report.healthy ? "Healthy: no check of the guide fired" : `${report.findings.length} finding${report.findings.length === 1 ? "" : "s"}`)) + (noGpu ? " — no GPU in this capture" : "")),
    achievableLine(shown.achievable),
    scorecard(report.headline, ctx, shown.cards),
    notesView(report),
    findingsView(report.findings, { ...ctx, headline: report.headline, display: shown,
      deviceWords: Object.fromEntries(report.hosts.map((hr, i) => [hr.host, ((shown.hosts || [])[i] || {}).device_words])) }),
    memoryPeaksView(shown.memory),
    ranksView(report.ranks, ctx, shown.ranks,
      report.hosts.flatMap((hr) => (hr.error ? [] : hr.job?.unrecorded_rank_labels || [])),
      Math.max(0, ...report.hosts.map((hr) => Number(hr.job?.job_ranks) || 0))),
    report.collectives ? h("section", { class: "collectives", "aria-label": "Collectives" }, h("h2", {}, "Collectives"),
      tableView(report.collectives, shown.collectives)) : null,
    h("section", { class: "hosts", "aria-label": "Per-host details" },
      h("h2", {}, report.hosts.length > 1 ? `Per host (${report.hosts.length})` : "Per host"), report.hosts.map((hr, i) => hostView(hr, ctx, (shown.hosts || [])[i]))),
    h("p", { class: "muted small" }, `Analyzer ${report.analyzer_version} · generated ${report.generated_at} · schema ${report.schema_version}`));
}
