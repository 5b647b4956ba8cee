// The user's settings (issue #21 item 5): three numbers the trace cannot give -- the model's parameter count, the
// network between hosts, the model's FLOPs per step. The tab sends the applied ones with every report and diff
// request (query parameters the server checks again: a bad one is its 400), keeps them in the URL like the
// selection, and shows them in a small "Settings" control beside the pickers. Unset, TensorBoard's flags apply
// (/runs lists them as `settings`).

import { h } from "./dom.js";

/** The three settings: URL and query key, label, what each changes (one line), and the flag that sets a default. */
export const SETTINGS = [
  { key: "params", label: "Parameters", whole: true, flag: "--gpu_advisor_params", example: "e.g. 110000000",
    help: "The model's parameter count: each AllReduce is judged against parameters × 4 B over the link." },
  { key: "net_gbps", label: "Network GB/s per GPU", whole: false, flag: "--gpu_advisor_net_gbps", example: "e.g. 50",
    help: "Bandwidth between hosts that collectives across host files are compared with." },
  { key: "model_flops", label: "Model FLOPs per step and GPU", whole: false, flag: "--gpu_advisor_model_flops_per_step",
    example: "e.g. 6e12", help: "MFU from the model's own FLOPs (e.g. 6 × params × tokens per GPU) instead of the trace's shapes." },
];

export const SETTING_KEYS = SETTINGS.map((s) => s.key);

/**
 * One setting's text -> {value, error}: "" is unset; a positive finite number (a whole one for `params`) is kept
 * as the shortest text that reads back to it ("1.1e8" -> "110000000"); anything else is an error saying why.
 */
export function parseSetting(key, text) {
  const spec = SETTINGS.find((s) => s.key === key);
  const raw = String(text ?? "").trim();
  if (!raw) return { value: "", error: null };
  const n = /^[0-9][0-9_,]*(\.[0-9]*)?([eE][+-]?[0-9]+)?$|^\.[0-9]+([eE][+-]?[0-9]+)?$/.test(raw)
    ? Number(raw.replace(/[_,]/g, "")) : NaN;
  if (!(n > 0) || !Number.isFinite(n)) return { value: "", error: `${spec.label}: must be a positive number` };
  if (spec.whole && !Number.isInteger(n)) return { value: "", error: `${spec.label}: must be a whole number` };
  return { value: plain(n), error: null };
}

/** A number as text without a fraction when whole (up to 1e21, where JavaScript switches to exponents). */
function plain(n) {
  return Number.isInteger(n) && n < 1e21 ? BigInt(n).toString() : String(n);
}

/** The valid settings of `raw` (a URL's keys, a form's values), each normalised; invalid or empty ones left out. */
export function normalizeSettings(raw = {}) {
  const out = {};
  for (const key of SETTING_KEYS) {
    const { value } = parseSetting(key, raw[key]);
    if (value) out[key] = value;
  }
  return out;
}

/** Adds the applied settings to a request's query (URLSearchParams); returns it. */
export function addSettings(query, settings = {}) {
  for (const key of SETTING_KEYS) if (settings[key]) query.set(key, settings[key]);
  return query;
}

export function sameSettings(a = {}, b = {}) {
  return SETTING_KEYS.every((k) => (a[k] || "") === (b[k] || ""));
}

/** What applies when a setting is unset: TensorBoard's flag, else the Advisor's default (or the trace's own). */
export function defaultText(key, defaults = {}) {
  const spec = SETTINGS.find((s) => s.key === key);
  if (defaults[key] !== null && defaults[key] !== undefined) return `unset: ${plain(Number(defaults[key]))} from ${spec.flag}`;
  if (key === "net_gbps") return `unset: ${defaults.net_gbps_default ?? 25} GB/s (a 200 Gb/s NIC per GPU)`;
  if (key === "params") return "unset: AllReduce time is measured, not judged";
  return "unset: from the FLOPs the trace's shapes give";
}

/**
 * The "Settings" control: a disclosure beside the pickers with one number field per setting, its one-line
 * explanation and what applies when it is unset. A field is applied when it changes (Enter or leaving it):
 * `onApply(settings)` gets every applied setting; an invalid entry is marked and not applied.
 */
export function settingsControl(settings, defaults, onApply, { open = false } = {}) {
  const applied = SETTING_KEYS.filter((k) => settings[k]).length;
  const fields = SETTINGS.map((spec) => settingField(spec, settings, defaults, onApply));
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

function settingField(spec, settings, defaults, onApply) {
  const id = `gpu-advisor-setting-${spec.key}`;
  const error = h("span", { class: "setting-error small", role: "alert", hidden: true });
  const input = h("input", { id, name: spec.key, type: "number", min: "0", step: spec.whole ? "1" : "any",
    inputmode: "decimal", placeholder: spec.example, value: settings[spec.key] || "", dataset: { setting: spec.key },
    "aria-describedby": `${id}-help` });
  input.value = settings[spec.key] || "";
  input.addEventListener("change", () => {
    // a number field gives "" for text it cannot read: that is an error, not a cleared setting
    const bad = input.validity && input.validity.badInput;
    const { value, error: why } = bad ? { value: "", error: `${spec.label}: must be a positive number` } : parseSetting(spec.key, input.value);
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
    h("p", { id: `${id}-help`, class: "setting-help small muted" }, spec.help, " ", h("span", { class: "setting-default" }, `(${defaultText(spec.key, defaults)})`)),
    error);
}
