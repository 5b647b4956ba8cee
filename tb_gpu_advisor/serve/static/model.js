// Data access: the plugin's JSON routes (relative URLs, so --path_prefix works)
// and the pure selection logic. No DOM here.

import { addSettings } from "./settings.js";

/** Thrown for non-OK answers; `message` is what the server said. */
export class FetchError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

/** What the server said: a JSON body's `error`, or the plain text TensorBoard answers a 400/404 with. */
async function readError(response) {
  const said = (body) => body.error || body.message || JSON.stringify(body);
  try {
    if (typeof response.text !== "function") return said(await response.json());
    const text = await response.text();
    try {
      return said(JSON.parse(text));
    } catch {
      return text.trim() || `${response.status} ${response.statusText}`;
    }
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

/** GET ./runs -> {logdir_set, runs: [{run, sessions: [{session, stock_run, mtime_ms, has_gpu, hosts}]}]}. */
export async function fetchRuns(fetchFn = fetch) {
  const response = await fetchFn("./runs");
  if (!response.ok) throw new FetchError(await readError(response), response.status);
  return response.json();
}

/** The query of a report route: run, session, (when one is picked) host, and the applied settings (settings.js). */
export function reportQuery(selection, settings = {}) {
  const query = new URLSearchParams({ run: selection.run, session: selection.session });
  if (selection.host) query.set("host", selection.host);
  return addSettings(query, settings);
}

/**
 * The query of a diff route: `base` is the run/session compared with (the "Compare with…" pick), `selection`
 * the one shown (new); its host, when picked, is the host compared; both sides are analysed with the settings.
 */
export function diffQuery(base, selection, settings = {}) {
  const query = new URLSearchParams({ base_run: base.run, base_session: base.session, new_run: selection.run, new_session: selection.session });
  if (selection.host) query.set("host", selection.host);
  return addSettings(query, settings);
}

/** Polls `route?query` until the server stops answering 202 "computing"; returns the final response. */
export async function pollRoute(route, query, { onProgress = () => {}, isStale = () => false, fetchFn = fetch, pollMs = 400 } = {}) {
  for (;;) {
    const response = await fetchFn(`${route}?${query}`);
    if (isStale()) return null;
    if (response.status === 202) {
      onProgress(await response.json());
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      if (isStale()) return null;
      continue;
    }
    if (!response.ok) throw new FetchError(await readError(response), response.status);
    return response;
  }
}

/**
 * GET ./report until it is ready. The server answers 202 {state: "computing",
 * progress, message} while a worker computes; `onProgress` gets each of those.
 * `isStale()` lets the caller abandon polling when the selection changed;
 * `settings` are the applied settings (params, net_gbps, model_flops).
 * Resolves {text, report} (text is kept to detect "unchanged" on reload).
 */
export async function fetchReport(selection, options = {}) {
  const response = await pollRoute("./report", reportQuery(selection, options.settings), options);
  if (!response) return null;
  const text = await response.text();
  return { text, report: JSON.parse(text) };
}

/** GET ./diff (base vs the selection) until ready, like fetchReport; resolves {text, diff}. */
export async function fetchDiff(base, selection, options = {}) {
  const response = await pollRoute("./diff", diffQuery(base, selection, options.settings), options);
  if (!response) return null;
  const text = await response.text();
  return { text, diff: JSON.parse(text) };
}

/** GET ./diff.md: the same diff as Markdown (the CLI's renderer). */
export async function fetchDiffMarkdown(base, selection, options = {}) {
  const response = await pollRoute("./diff.md", diffQuery(base, selection, options.settings), options);
  return response ? response.text() : null;
}

/**
 * GET ./report.md: the same report rendered as Markdown by the server (the
 * CLI's renderer; the browser has none). Polls like fetchReport; resolves the text.
 */
export async function fetchReportMarkdown(selection, options = {}) {
  const response = await pollRoute("./report.md", reportQuery(selection, options.settings), options);
  return response ? response.text() : null;
}

/** Finds a session entry in the /runs listing. */
export function findSession(runs, run, session) {
  const r = (runs || []).find((x) => x.run === run);
  return r ? r.sessions.find((x) => x.session === session) || null : null;
}

/**
 * The session to open on: the newest (largest mtime; ties: listing order)
 * that may have GPU activity, so a newer CPU-only capture does not hide the
 * GPU ones. `has_gpu` comes from /runs (gpu_probe: true, false, or null when
 * the server could not tell cheaply); only sessions known to have no GPU
 * activity are passed over, and when every session is CPU-only the newest is
 * taken.
 */
export function newestSelection(runs) {
  let best = null, bestAny = null;
  for (const r of runs || []) {
    for (const s of r.sessions) {
      const cand = { run: r.run, session: s.session, mtime: s.mtime_ms };
      if (!bestAny || cand.mtime > bestAny.mtime) bestAny = cand;
      if (s.has_gpu !== false && (!best || cand.mtime > best.mtime)) best = cand;
    }
  }
  const pick = best || bestAny;
  return pick ? { run: pick.run, session: pick.session, host: "" } : null;
}

/**
 * Resolves the selection to show: the wanted one (URL or user choice) when it
 * still exists, else the newest session. A vanished host falls back to "all".
 */
export function resolveSelection(runs, wanted) {
  if (wanted && wanted.run) {
    // A link may name only the run (or a session since deleted): take that run's newest session.
    const run = runs.find((r) => r.run === wanted.run);
    const newest = run ? newestSelection([run]) : null;
    const s = findSession(runs, wanted.run, wanted.session) || (newest && findSession(runs, wanted.run, newest.session));
    if (s) {
      const host = wanted.host && s.hosts.some((h) => h.host === wanted.host) ? wanted.host : "";
      return { run: wanted.run, session: s.session, host };
    }
  }
  return newestSelection(runs);
}
