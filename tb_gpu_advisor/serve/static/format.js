// What the tab reads of the server's legend, and the names of the files it exports.  It formats no number: every
// number the tab prints comes written by the server (the report's and the window's `display`, the diff's), the CLI's
// own digits, so a quantity reads the same on screen as in the CLI's text and markdown (issue #37).  What the numbers
// are (the breakdown's categories, their names and order) comes from the server too: /runs' `legend`
// (report/legend.py), never a list kept here.

/** The legend in the words of a report's GPU vendor: /runs' `legend.vendors[capture.vendor]` over its defaults
 * (an AMD report's allocator is "hipMalloc / hipFree"); a report that names no vendor keeps the defaults. */
export function legendFor(legend, report) {
  const vendor = (report?.hosts || []).map((x) => x.capture?.vendor).find(Boolean);
  return { ...(legend || {}), ...(((legend || {}).vendors || {})[vendor] || {}) };
}

/**
 * A file name of the export: every name in it whole up to 180 characters (a diff names two runs and sessions; cut at
 * 80 it lost the new side, issue #36); past that its start and end, so both sides stay told apart.
 */
export function safeName(text, limit = 180) {
  const name = String(text).replace(/[^A-Za-z0-9._-]+/g, "_");
  return name.length <= limit ? name : `${name.slice(0, limit / 2)}_${name.slice(-(limit / 2 - 1))}`;
}
