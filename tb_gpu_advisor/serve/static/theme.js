// Light or dark, as TensorBoard shows it.
//
// TensorBoard's own toggle (header menu: browser default / light / dark)
// sets `dark-mode` on its document's <body> (its dark-mode-supporter); with
// "browser default" that class follows prefers-color-scheme. The plugin runs
// in a same-origin iframe (data/plugin_entry.html, no sandbox), so it reads
// that class from window.parent and watches it with a MutationObserver. Only
// when there is no readable TensorBoard page around it (opened on its own,
// or a cross-origin embedding) does it follow prefers-color-scheme itself.

const DARK_QUERY = "(prefers-color-scheme: dark)";

/** TensorBoard's <body> when the plugin is in its iframe and can read it, else null. */
export function tensorboardBody(win) {
  try {
    if (!win.parent || win.parent === win) return null;
    return win.parent.document?.body || null;
  } catch {
    return null; // cross-origin parent
  }
}

/** True for dark: TensorBoard's body.dark-mode, else the browser's colour scheme. */
export function isDark(win) {
  const body = tensorboardBody(win);
  if (body) return body.classList.contains("dark-mode");
  return Boolean(win.matchMedia?.(DARK_QUERY)?.matches);
}

/** Sets `theme-dark` / `theme-light` (and color-scheme, for form controls) on `doc`'s root. */
export function applyTheme(doc, dark) {
  const root = doc.documentElement;
  root.classList.toggle("theme-dark", dark);
  root.classList.toggle("theme-light", !dark);
  root.style.colorScheme = dark ? "dark" : "light";
  root.dataset.theme = dark ? "dark" : "light";
}

/**
 * Applies the theme now and whenever TensorBoard's body class (or, with no
 * TensorBoard around, the browser's scheme) changes. Returns a function
 * that stops following.
 */
export function followTheme(win, doc = win.document) {
  const update = () => applyTheme(doc, isDark(win));
  update();
  const stops = [];
  const body = tensorboardBody(win);
  if (body && win.MutationObserver) {
    const observer = new win.MutationObserver(update);
    observer.observe(body, { attributes: true, attributeFilter: ["class"] });
    stops.push(() => observer.disconnect());
  }
  const query = win.matchMedia?.(DARK_QUERY);
  if (query?.addEventListener) {
    // TensorBoard's "browser default" also changes its class then; harmless to re-read.
    query.addEventListener("change", update);
    stops.push(() => query.removeEventListener("change", update));
  }
  return () => stops.forEach((stop) => stop());
}
