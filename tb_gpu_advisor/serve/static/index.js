// Entry point: TensorBoard's iframe runs `import("./index.js").then(m => m.render())`.
// Wires the model (fetching), the bridge (TensorBoard messages) and the views.
// State lives in one small controller; views are rebuilt only when data changed.

import { Bridge, readUrlData, writeUrlData } from "./static/bridge.js";
import { h, replaceChildren } from "./static/dom.js";
import { tensorboardRoot } from "./static/links.js";
import * as diffViews from "./static/diff.js";
import { legendFor, safeName } from "./static/format.js";
import { fetchDiff, fetchDiffMarkdown, fetchReport, fetchReportMarkdown, fetchRuns, findSession, resolveSelection } from "./static/model.js";
import { closeOnOutsideClick, normalizeSettings, settingsControl } from "./static/settings.js";
import { followTheme } from "./static/theme.js";
import * as views from "./static/views.js";

export async function render() {
  const app = new App(document);
  await app.start();
  return app;
}

/** Offers `text` as a file download (Blob URL; nothing leaves the browser). */
function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}


class App {
  constructor(doc) {
    this.doc = doc;
    this.root = tensorboardRoot(doc.baseURI);
    this.runs = null;
    this.runsText = "";
    this.sel = null;
    this.wanted = null;
    this.cmp = null; // the run/session compared with ("Compare with…"), or null: the report alone
    this.settings = {}; // the applied settings (settings.js): sent with every report request, kept in the URL
    this.urlSettings = null; // a link's settings, read once the server said which settings there are (/runs legend)
    this.legend = {}; // what the server decides and the tab draws with: categories, idle kinds, rule waits, settings
    this.settingsDefaults = null; // what applies when a setting is unset: TensorBoard's flags (/runs `settings`)
    this.current = null; // {key, sel, text, report} or, comparing, {key, sel, cmp, text, diff}
    this.generation = 0;
    // TensorBoard's light/dark toggle (body.dark-mode on the parent page), before anything is drawn
    this.stopTheme = followTheme(window, doc);
    doc.head.append(h("link", { rel: "stylesheet", href: "./static/style.css" }));
    this.pickersEl = h("div", { class: "pickers" });
    this.settingsEl = h("div", { class: "settings-host" });
    closeOnOutsideClick(doc, this.settingsEl);
    this.exportButtons = [
      views.button("Export JSON", () => this.exportJson(), { disabled: true }),
      views.button("Export Markdown", () => this.exportMarkdown(), { disabled: true }),
      views.button("Copy link", () => this.copyLink(), { title: "Copy a link to this selection" }),
    ];
    this.statusEl = h("div", { class: "status" });
    this.reportEl = h("main", { class: "report-host", "aria-busy": "true" });
    doc.body.classList.add("gpu-advisor");
    doc.body.append(
      h("header", { class: "toolbar" }, h("h1", {}, "GPU Advisor"), this.pickersEl, this.settingsEl,
        h("div", { class: "toolbar-actions" }, this.exportButtons)),
      this.statusEl,
      this.reportEl);
  }

  async start() {
    this.bridge = new Bridge(window);
    this.bridge.listen("experimental.DataReloaded", () => this.reload());
    // The official message first; the parent's hash when it has nothing (see readUrlData).
    const official = await this.bridge.getUrlData();
    const url = Object.keys(official).length ? official : readUrlData(window);
    this.wanted = { run: url.run || "", session: url.session || "", host: url.host || "" };
    this.cmp = url.cmp_run ? { run: url.cmp_run, session: url.cmp_session || "" } : null;
    this.urlSettings = url; // a link's settings: normalised against the server's settings once /runs is in
    await this.reload();
  }

  /** TensorBoard reload (or first load): refresh the run list, then the report, quietly. */
  async reload() {
    let listing;
    try {
      listing = await fetchRuns();
    } catch (e) {
      return this.showMessage("error", `Could not list profiles: ${e.message}`);
    }
    const text = JSON.stringify(listing);
    const runsChanged = text !== this.runsText;
    this.runs = listing.runs;
    this.frameworks = listing.frameworks || [];
    this.skipped = listing.skipped || [];
    this.empty = listing.empty || null;
    this.legend = listing.legend || {};
    if (this.urlSettings) { // a link's settings; one that is not a valid number (or no setting at all) is dropped
      this.settings = normalizeSettings(this.urlSettings, this.legend.settings);
      this.urlSettings = null;
    }
    this.runsText = text;
    if (!listing.logdir_set) return this.showMessage("no-logdir");
    if (!this.runs.length) return this.showMessage("no-profiles");
    const sel = resolveSelection(this.runs, this.wanted || this.sel);
    const cmp = resolveCompare(this.runs, this.cmp, sel);
    if (runsChanged || !sameSel(sel, this.sel) || !sameCmp(cmp, this.cmp)) this.renderPickers(sel, cmp);
    const defaults = listing.settings || {};
    if (!this.settingsEl.firstChild || JSON.stringify(defaults) !== JSON.stringify(this.settingsDefaults)) {
      this.settingsDefaults = defaults;
      this.renderSettings();
    }
    this.sel = sel;
    this.cmp = cmp;
    await this.load({ quiet: Boolean(this.current) && this.current.key === viewKey(sel, cmp) });
  }

  renderPickers(sel, cmp = this.cmp) {
    replaceChildren(this.pickersEl, views.pickers(this.runs, sel, (next) => this.select(next)),
      diffViews.comparePicker(this.runs, sel, cmp, (c) => this.compare(c)), views.skippedNote(this.skipped));
  }

  select(next) {
    this.wanted = next;
    this.sel = resolveSelection(this.runs, next);
    this.cmp = resolveCompare(this.runs, this.cmp, this.sel);
    this.writeUrl();
    this.renderPickers(this.sel);
    this.load({ quiet: false });
  }

  /** "Compare with…": another run/session as the base of a diff, or null for the report alone. */
  compare(cmp) {
    this.cmp = resolveCompare(this.runs, cmp, this.sel);
    this.writeUrl();
    this.renderPickers(this.sel);
    this.load({ quiet: false });
  }

  writeUrl() {
    writeUrlData({ run: this.sel.run, session: this.sel.session, host: this.sel.host, cmp_run: this.cmp?.run, cmp_session: this.cmp?.session,
      ...Object.fromEntries((this.legend.settings || []).map((x) => [x.key, this.settings[x.key]])) });
  }

  /** The Settings control beside the pickers; kept open (and the field focused) when redrawn after a change. */
  renderSettings({ open = false } = {}) {
    const focused = this.doc.activeElement?.dataset?.setting;
    replaceChildren(this.settingsEl, settingsControl(this.settings, this.settingsDefaults || {}, (next) => this.applySettings(next),
      { open, spec: this.legend.settings || [] }));
    if (focused) this.settingsEl.querySelector(`input[data-setting="${focused}"]`)?.focus();
  }

  /** New settings: into the URL, and the report (or diff) requested again with them. */
  applySettings(next) {
    this.settings = normalizeSettings(next, this.legend.settings);
    this.writeUrl();
    this.renderSettings({ open: true });
    this.load({ quiet: false });
  }

  /** A finding that a setting would judge (its metric's detail.needs_setting): open Settings at that field. */
  focusSetting(key) {
    const details = this.settingsEl.querySelector("details.settings");
    if (!details) return;
    details.open = true;
    details.querySelector(`input[data-setting="${key}"]`)?.focus();
    window.scrollTo(0, 0);
  }

  /** Fetches the report, or the diff of the compared run (base) and the selection (new) where a run is compared;
   * the show* methods swap the DOM only if the answer changed (no flicker on reload).  A load that a newer one
   * overtook shows nothing. */
  async load({ quiet }) {
    const gen = ++this.generation;
    const { sel, cmp, settings } = this;
    const isStale = () => gen !== this.generation;
    if (!quiet) this.setLoading();
    const options = {
      settings,
      isStale,
      onProgress: (p) => {
        if (!isStale()) replaceChildren(this.statusEl, views.computingView(p));
      },
    };
    try {
      const result = await (cmp ? fetchDiff(cmp, sel, options) : fetchReport(sel, options));
      if (!result || isStale()) return;
      replaceChildren(this.statusEl);
      if (cmp) this.showDiff(sel, cmp, result, settings);
      else this.showReport(sel, result, settings);
    } catch (e) {
      if (isStale()) return;
      this.showError(cmp ? `Could not compare: ${e.message}`
        : `${e.message}${e.status === 404 ? " (the session may have been removed; reload)" : ""}`);
    }
  }

  showDiff(sel, cmp, result, settings = {}) {
    const key = viewKey(sel, cmp);
    this.reportEl.classList.remove("stale");
    this.reportEl.setAttribute("aria-busy", "false");
    this.doc.body.dataset.state = "ready";
    const identity = diffViews.diffIdentity(result.diff); // generated_at aside: every /diff answer has a new one
    const same = Boolean(this.current) && this.current.key === key;
    this.doc.body.dataset.settings = new URLSearchParams(settings).toString();
    if (same && this.current.identity === identity) { // what is on screen is what the exports give
      this.current.settings = settings;
      return;
    }
    const scrollY = window.scrollY;
    replaceChildren(this.reportEl, diffViews.diffView(result.diff, { width: this.chartWidth(), onClose: () => this.compare(null), legend: this.legend }));
    this.observeCharts();
    window.scrollTo(0, same ? scrollY : 0); // another pair starts at its top
    this.current = { key, sel, cmp, settings, text: result.text, diff: result.diff, identity };
    Object.assign(this.doc.body.dataset, { run: sel.run, session: sel.session, host: sel.host, compare: `${cmp.run}/${cmp.session}` });
    this.setExport(true);
  }

  setLoading() {
    this.reportEl.classList.toggle("stale", Boolean(this.current));
    this.reportEl.setAttribute("aria-busy", "true");
    this.doc.body.dataset.state = "loading";
  }

  showError(text) {
    this.current = null;
    this.setExport(false);
    replaceChildren(this.statusEl);
    replaceChildren(this.reportEl, views.messageView("error", text));
    this.doc.body.dataset.state = "error";
  }

  showReport(sel, result, settings = {}) {
    const key = viewKey(sel, null);
    this.reportEl.classList.remove("stale");
    this.reportEl.setAttribute("aria-busy", "false");
    this.doc.body.dataset.state = "ready";
    this.doc.body.dataset.settings = new URLSearchParams(settings).toString();
    if (this.current && this.current.key === key && this.current.text === result.text) {
      this.current.settings = settings; // a setting this report does not depend on: same view, new settings
      return;
    }
    const session = findSession(this.runs, sel.run, sel.session);
    const ctx = { root: this.root, stockRun: session?.stock_run || `${sel.run}/${sel.session}`, stockTool: session?.stock_tool !== false, formatName: session?.format_name,
      hosts: (session?.hosts || []).map((x) => x.host), onSetting: (k) => this.focusSetting(k), settings,
      // the step timelines' routes (timeline.js): which session, its format, each host's size and file count
      run: sel.run, session: sel.session, perfetto: session?.perfetto, nativeViewer: session?.native_viewer, hostInfo: Object.fromEntries((session?.hosts || []).map((x) => [x.host, x])),
      legend: legendFor(this.legend, result.report) };
    const scrollY = window.scrollY;
    const open = this.current && this.current.key === key ? this.openState() : null;
    replaceChildren(this.reportEl, views.reportView(result.report, { ...ctx, chartWidth: this.chartWidth() }));
    if (open) this.restoreOpenState(open);
    this.observeCharts();
    window.scrollTo(0, this.current && this.current.key === key ? scrollY : 0); // another selection starts at its top
    this.current = { key, sel, settings, text: result.text, report: result.report };
    // for tests and automation: which selection (and settings) is on screen
    Object.assign(this.doc.body.dataset, { run: sel.run, session: sel.session, host: sel.host });
    delete this.doc.body.dataset.compare;
    this.setExport(true);
  }

  /** The width charts get: the report's content box (figures then redraw to their own width). */
  chartWidth() {
    const style = window.getComputedStyle ? window.getComputedStyle(this.reportEl) : null;
    const pad = style ? (parseFloat(style.paddingLeft) || 0) + (parseFloat(style.paddingRight) || 0) : 0;
    const w = this.reportEl.clientWidth - pad;
    return w > 200 ? w : undefined;
  }

  /** Charts follow their figure's width: on window resize, and when a folded host is opened. */
  observeCharts() {
    this.chartObserver?.disconnect();
    if (!window.ResizeObserver) return;
    this.chartObserver = new ResizeObserver((entries) => {
      for (const e of entries) views.fitChart(e.target, e.contentRect.width);
    });
    for (const fig of this.reportEl.querySelectorAll("figure.chart-figure")) this.chartObserver.observe(fig);
  }

  /** Which <details> the user opened or closed, to keep them so when a reload redraws the same report. */
  openState() {
    const state = new Map();
    this.reportEl.querySelectorAll("details").forEach((d, i) => state.set(detailsKey(d, i), d.open));
    return state;
  }

  restoreOpenState(state) {
    this.reportEl.querySelectorAll("details").forEach((d, i) => {
      const open = state.get(detailsKey(d, i));
      if (open !== undefined) d.open = open;
    });
  }

  showMessage(kind, detail) {
    this.generation++;
    this.current = null;
    this.setExport(false);
    replaceChildren(this.pickersEl);
    replaceChildren(this.settingsEl);
    replaceChildren(this.statusEl);
    // nothing listed because of what was left out (symlinks not followed or leading out): that reason is the message
    const empty = kind === "no-profiles" ? this.empty : null;
    replaceChildren(this.reportEl, views.messageView(kind, detail, this.frameworks, empty),
      kind === "no-profiles" ? views.skippedNote(this.skipped, { open: Boolean(empty) }) : null);
    this.reportEl.setAttribute("aria-busy", "false");
    this.doc.body.dataset.state = kind;
  }

  setExport(enabled) {
    this.exportButtons[0].disabled = !enabled;
    this.exportButtons[1].disabled = !enabled;
  }

  baseName() {
    const { run, session, host } = this.current.sel;
    const cmp = this.current.cmp;
    const name = `${run}_${session}${host ? `_${host}` : ""}`;
    return safeName(cmp ? `gpu-advisor-diff_${cmp.run}_${cmp.session}_vs_${name}` : `gpu-advisor_${name}`);
  }

  exportJson() {
    if (this.current) download(`${this.baseName()}.json`, JSON.stringify(this.current.diff || this.current.report, null, 2), "application/json");
  }

  /** The server renders the Markdown (render.to_markdown, the same as the CLI's --format markdown). */
  async exportMarkdown() {
    if (!this.current) return;
    const { sel, settings } = this.current;
    const name = `${this.baseName()}.md`;
    const button = this.exportButtons[1];
    button.disabled = true;
    try {
      const { cmp } = this.current;
      const text = cmp ? await fetchDiffMarkdown(cmp, sel, { settings }) : await fetchReportMarkdown(sel, { settings });
      if (text !== null) download(name, text, "text/markdown");
    } catch (e) {
      replaceChildren(this.statusEl, views.messageView("error", `Markdown export failed: ${e.message}`));
    } finally {
      button.disabled = !this.current;
    }
  }

  async copyLink() {
    let link;
    try {
      link = window.parent.location.href;
    } catch {
      link = this.root;
    }
    try {
      await navigator.clipboard.writeText(link);
      this.exportButtons[2].textContent = "Link copied";
    } catch {
      window.prompt("Copy this link:", link);
    }
    setTimeout(() => (this.exportButtons[2].textContent = "Copy link"), 1500);
  }
}

function detailsKey(d, i) {
  return d.dataset.findingId ? `f:${d.dataset.findingId}` : d.dataset.host ? `h:${d.dataset.host}` : `i:${i}`;
}

/** What is on screen: a selection's report, or its diff against `cmp`. */
function viewKey(sel, cmp) {
  const key = `${sel.run}\u0000${sel.session}\u0000${sel.host}`;
  return cmp ? `diff\u0000${cmp.run}\u0000${cmp.session}\u0000${key}` : key;
}

/** The compared run/session when it exists and is not the selection itself (a run alone: its newest session). */
function resolveCompare(runs, cmp, sel) {
  if (!cmp || !cmp.run) return null;
  const run = (runs || []).find((r) => r.run === cmp.run);
  const session = run && (run.sessions.find((x) => x.session === cmp.session) || run.sessions[0]);
  if (!session || (run.run === sel.run && session.session === sel.session)) return null;
  return { run: run.run, session: session.session };
}

function sameCmp(a, b) {
  return (!a && !b) || (Boolean(a && b) && a.run === b.run && a.session === b.session);
}

function sameSel(a, b) {
  return Boolean(a && b) && a.run === b.run && a.session === b.session && (a.host || "") === (b.host || "");
}
