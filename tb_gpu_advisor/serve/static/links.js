// Links into the stock Profile tab (xprof). The Profile tab reads its state
// from the TOP page's query string (?run=<run>/<session>&tool=..&host=..#profile),
// so these links navigate the top window. The trace viewer's own page accepts
// view_start/view_end (ms) to open zoomed on a window. All URLs are built from
// the iframe's base URL (<root>data/plugin/gpu_advisor/), so --path_prefix works.

/** TensorBoard's root URL (with any --path_prefix), from the plugin's base URL. */
export function tensorboardRoot(baseURI) {
  return new URL("../../../", baseURI).href;
}

/** A stock Profile tab tool (overview_page, kernel_stats, trace_viewer@, ...) for run+host. */
export function profileToolUrl(root, stockRun, tool, host) {
  const url = new URL(root);
  url.search = new URLSearchParams({ run: stockRun, tool, host: host || "" }).toString();
  url.hash = "profile";
  return url.href;
}

/** The stock trace viewer page opened on [startMs, endMs] (padded a little so the edges show). */
export function traceWindowUrl(root, stockRun, host, startMs, endMs) {
  const data = new URL("data/plugin/profile/data", root);
  data.search = new URLSearchParams({ run: stockRun, tag: "trace_viewer@", host: host || "" }).toString();
  const pad = Math.max((endMs - startMs) * 0.05, 0.01);
  const url = new URL("data/plugin/profile/trace_viewer_index.html", root);
  url.search = new URLSearchParams({
    is_streaming: "true",
    is_oss: "true",
    trace_data_url: data.pathname + data.search,
    view_start: String(Math.max(0, startMs - pad)),
    view_end: String(endMs + pad),
  }).toString();
  return url.href;
}
