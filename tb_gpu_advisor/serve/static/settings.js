// The user's settings (issue #21 item 5): numbers the trace cannot give -- the model's parameter count, the network
// between hosts, the model's FLOPs per step. The tab sends the applied ones with every report and diff request (query
// parameters the server checks again: a bad one is its 400), keeps them in the URL like the selection, and shows them
// in a small "Settings" control beside the pickers. Unset, TensorBoard's flags apply (/runs lists them as `settings`).
// Which settings there are -- key, label, whether whole, flag, example, one line of help, what applies unset -- is the
// server's (common/options.py settings_spec, served as /runs' legend.settings): `spec` below, never a list kept here.

import { h } from "./dom.js";

/**
 * One setting's text -> {value, error}: "" is unset; a positive finite number (a whole one for a `whole` setting) is
 * kept as the shortest text that reads back to it ("1.1e8" -> "110000000"); anything else is an error saying why.
 */
export function parseSetting(key, text, spec = []) {
  const setting = spec.find((s) => s.key === key) || { key, label: key, whole: false };
  const raw = String(text ?? "").trim();
  if (!raw) return { value: "", error: null };
  const n = /^[0-9][0-9_,]*(\.[0-9]*)?([eE][+-]?[0-9]+)?$|^\.[0-9]+([eE][+-]?[0-9]+)?$/.test(raw)
    ? Number(raw.replace(/[_,]/g, "")) : NaN;
  if (!(n > 0) || !Number.isFinite(n)) return { value: "", error: `${setting.label}: must be a positive number` };
  if (setting.whole && !Number.isInteger(n)) return { value: "", error: `${setting.label}: must be a whole number` };
  return { value: plain(n), error: null };
}

/** A number as text without a fraction when whole (up to 1e21, where JavaScript switches to exponents). */
function plain(n) {
  return Number.isInteger(n) && n < 1e21 ? BigInt(n).toString() : String(n);
}

/** The valid settings of `raw` (a URL's keys, a form's values) that `spec` names, each normalised; invalid or empty ones left out. */
export function normalizeSettings(raw = {}, spec = []) {
  const out = {};
  for (const { key } of spec) {
    const { value } = parseSetting(key, raw[key], spec);
    if (value) out[key] = value;
  }
  return out;
}

/** Adds the applied settings (normalised: only known keys) to a request's query (URLSearchParams); returns it. */
export function addSettings(query, settings = {}) {
  for (const [key, value] of Object.entries(settings || {})) if (value) query.set(key, value);
  return query;
}

export function sameSettings(a = {}, b = {}) {
  const keys = new Set([...Object.keys(a || {}), ...Object.keys(b || {})]);
  return [...keys].every((k) => ((a || {})[k] || "") === ((b || {})[k] || ""));
}

/** What applies when a setting is unset: TensorBoard's flag, else what the server says applies (`unset`). */
export function defaultText(setting, defaults = {}) {
  if (defaults[setting.key] !== null && defaults[setting.key] !== undefined) return `unset: ${plain(Number(defaults[setting.key]))} from ${setting.flag}`;
  return `unset: ${setting.unset}`;
}

/**
 * The "Settings" control: a disclosure beside the pickers with one number field per setting, its one-line
 * explanation and what applies when it is unset. A field is applied when it changes (Enter or leaving it):
 * `onApply(settings)` gets every applied setting; an invalid entry is marked and not applied.
 */
export function settingsControl(settings, defaults, onApply, { open = false, spec = [] } = {}) {
  const applied = spec.filter((x) => settings[x.key]).length;
  const fields = spec.map((setting) => settingField(setting, spec, settings, defaults, onApply));
  const reset = h("button", { type: "button", class: "settings-reset", disabled: !applied, onClick: () => onApply({}) }, "Clear all");
  const details = h("details", { class: "settings", open, dataset: { applied: String(applied) },
    // Escape closes the panel (it floats over the report), back on its summary
    onKeydown: (e) => {
      if (e.key !== "Escape" || !details.open) return;
      details.open = false;
      details.querySelector("summary").focus();
    } },
    h("summary", {}, "Settings", applied ? h("span", { class: "badge settings-count" }, `${applied} set`) : null),
    h("form", { class: "settings-panel", onSubmit: (e) => e.preventDefault() },
      h("p", { class: "muted small" }, "Numbers the profile cannot tell; each changes the report and stays in the link."),
      fields, h("div", { class: "settings-actions" }, reset)));
  return details;
}

/**
 * Closes an open Settings panel when a click lands outside it (it floats over the report) -- except a finding's
 * "Set … in Settings" button, which is what opened it.
 */
export function closeOnOutsideClick(doc, host) {
  doc.addEventListener("click", (e) => {
    const details = host.querySelector("details.settings[open]");
    if (details && !details.contains(e.target) && !e.target.closest?.(".set-setting")) details.open = false;
  });
}

function settingField(setting, all, settings, defaults, onApply) {
  const spec = setting;
  const id = `gpu-advisor-setting-${spec.key}`;
  const error = h("span", { class: "setting-error small", role: "alert", hidden: true });
  const input = h("input", { id, name: spec.key, type: "number", min: "0", step: spec.whole ? "1" : "any",
    inputmode: "decimal", placeholder: spec.example, value: settings[spec.key] || "", dataset: { setting: spec.key },
    "aria-describedby": `${id}-help` });
  input.value = settings[spec.key] || "";
  input.addEventListener("change", () => {
    // a number field gives "" for text it cannot read: that is an error, not a cleared setting
    const bad = input.validity && input.validity.badInput;
    const { value, error: why } = bad ? { value: "", error: `${spec.label}: must be a positive number` } : parseSetting(spec.key, input.value, all);
    error.textContent = why || "";
    error.hidden = !why;
    input.setAttribute("aria-invalid", why ? "true" : "false");
    if (why) return;
    const next = { ...settings };
    if (value) next[spec.key] = value; else delete next[spec.key];
    if (!sameSettings(next, settings)) onApply(next);
  });
  return h("div", { class: "setting" },
    h("label", { for: id }, spec.label),
    input,
    h("p", { id: `${id}-help`, class: "setting-help small muted" }, spec.help, " ", h("span", { class: "setting-default" }, `(${defaultText(spec, defaults)})`)),
    error);
}
