// The tab's settings (issue #21 item 5): parsing, the URL round trip, the request parameters, the control, and
// the page's wiring of them (index.js under a stand-in TensorBoard page and server).
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fixture, legend, STATIC } from "./dom_env.js";

const settings = await import(new URL("settings.js", STATIC));
const model = await import(new URL("model.js", STATIC));
const views = await import(new URL("views.js", STATIC));
const { readUrlData, writeUrlData } = await import(new URL("bridge.js", STATIC));

// which settings there are is the server's (/runs' legend.settings, common/options.py settings_spec)
const SPEC = legend().settings;

test("a setting is a positive number in the CLI's spellings, kept as plain text; params a whole one", () => {
  const p = (key, text) => settings.parseSetting(key, text, SPEC);
  assert.deepEqual(p("params", "1.1e8"), { value: "110000000", error: null });
  assert.deepEqual(p("params", "110_000_000"), { value: "110000000", error: null });
  assert.deepEqual(p("params", " "), { value: "", error: null }); // cleared: unset
  assert.match(p("params", "1.5").error, /Parameters: must be a whole number/);
  for (const bad of ["-1", "0", "abc", "Infinity", "NaN", "1e400", "6 GB/s"]) {
    assert.match(p("net_gbps", bad).error, /must be a positive number/, bad);
  }
  assert.equal(p("net_gbps", "6.0").value, "6");
  assert.equal(p("net_gbps", "12.5").value, "12.5");
  assert.equal(p("model_flops", "1.2e15").value, "1200000000000000");
  assert.equal(p("model_flops", "1e22").value, "1e+22"); // the server reads exponents back
  assert.deepEqual(settings.normalizeSettings({ params: "1.1e8", net_gbps: "-3", model_flops: "", run: "r" }, SPEC), { params: "110000000" });
});

test("the settings are the server's: a setting it adds needs no edit of the tab", () => {
  assert.deepEqual(SPEC.map((x) => x.key), ["params", "net_gbps", "model_flops"]);
  const more = [...SPEC, { key: "seq_len", label: "Sequence length", whole: true, flag: "--gpu_advisor_seq_len", example: "e.g. 2048",
    help: "Tokens per sample.", unset: "from the trace" }];
  assert.deepEqual(settings.normalizeSettings({ seq_len: "2,048", params: "1e8" }, more), { params: "100000000", seq_len: "2048" });
  assert.match(settings.parseSetting("seq_len", "1.5", more).error, /Sequence length: must be a whole number/);
  const el = settings.settingsControl({}, {}, () => {}, { spec: more });
  assert.deepEqual([...el.querySelectorAll("input")].map((i) => i.dataset.setting), ["params", "net_gbps", "model_flops", "seq_len"]);
  assert.match(el.textContent, /Tokens per sample\. \(unset: from the trace\)/);
  assert.equal(settings.normalizeSettings({ params: "1e8" }).params, undefined); // no spec (no /runs yet): none
});

test("settings round-trip through the TensorBoard page's URL beside the selection and TensorBoard's own keys", () => {
  const parent = { location: { hash: "#gpu_advisor&smoothing=0.6&p.gpu_advisor.net_gbps=99" }, history: { state: null } };
  parent.history.replaceState = (state, title, url) => { parent.location.hash = url; };
  const applied = settings.normalizeSettings({ params: "1.1e8", net_gbps: "6", model_flops: "" }, SPEC);
  assert.equal(writeUrlData({ run: "r/1", session: "s", host: "", ...applied }, { parent }), true);
  assert.equal(parent.location.hash, "#gpu_advisor&smoothing=0.6&p.gpu_advisor.run=r%2F1&p.gpu_advisor.session=s"
    + "&p.gpu_advisor.params=110000000&p.gpu_advisor.net_gbps=6");
  const read = readUrlData({ parent });
  assert.deepEqual(settings.normalizeSettings(read, SPEC), applied);
  // cleared settings leave the URL
  writeUrlData({ run: "r/1", session: "s" }, { parent });
  assert.deepEqual(settings.normalizeSettings(readUrlData({ parent }), SPEC), {});
  assert.match(parent.location.hash, /smoothing=0\.6/);
});

function recordingFetch(body = { run: "r" }) {
  const urls = [];
  const fn = async (url) => {
    urls.push(url);
    const text = JSON.stringify(body);
    return { status: 200, ok: true, statusText: "", json: async () => JSON.parse(text), text: async () => text };
  };
  return { fn, urls };
}

test("every report and diff request carries the applied settings, and only those", async () => {
  const applied = { params: "110000000", net_gbps: "6" };
  const { fn, urls } = recordingFetch();
  await model.fetchReport({ run: "r", session: "s", host: "h" }, { fetchFn: fn, settings: applied });
  await model.fetchReportMarkdown({ run: "r", session: "s" }, { fetchFn: fn, settings: { model_flops: "2000000000000" } });
  await model.fetchDiff({ run: "a", session: "s" }, { run: "b", session: "t" }, { fetchFn: fn, settings: applied });
  await model.fetchDiffMarkdown({ run: "a", session: "s" }, { run: "b", session: "t" }, { fetchFn: fn, settings: applied });
  await model.fetchReport({ run: "r", session: "s" }, { fetchFn: fn });
  // a finding's step timeline names the report on screen by its settings too
  const { windowQuery } = await import(new URL("timeline.js", STATIC));
  assert.equal(String(windowQuery({ run: "r", session: "s", settings: applied }, { host: "h", start_ms: 1, end_ms: 2 })),
    "run=r&session=s&host=h&start_ms=1&end_ms=2&params=110000000&net_gbps=6");
  assert.deepEqual(urls, [
    "./report?run=r&session=s&host=h&params=110000000&net_gbps=6",
    "./report.md?run=r&session=s&model_flops=2000000000000",
    "./diff?base_run=a&base_session=s&new_run=b&new_session=t&params=110000000&net_gbps=6",
    "./diff.md?base_run=a&base_session=s&new_run=b&new_session=t&params=110000000&net_gbps=6",
    "./report?run=r&session=s",
  ]);
});

test("a server's plain-text 400 reaches the user as the server wrote it", async () => {
  const fn = async () => ({ status: 400, ok: false, statusText: "BAD REQUEST", json: async () => { throw new Error("not JSON"); },
    text: async () => "Invalid argument: params: must be a positive whole number (the model's parameter count), got 'x'" });
  await assert.rejects(model.fetchReport({ run: "r", session: "s" }, { fetchFn: fn, settings: { params: "1" } }),
    (e) => e.status === 400 && /params: must be a positive whole number/.test(e.message));
});

function change(input, value) {
  input.value = value;
  input.dispatchEvent(new window.Event("change"));
}

test("the control: three labelled number fields, each explained, applied on change, invalid ones refused", () => {
  const applied = [];
  const el = settings.settingsControl({ net_gbps: "6" }, { params: null, net_gbps: null, net_gbps_default: 25 }, (s) => applied.push(s), { spec: SPEC });
  document.body.append(el);
  const inputs = [...el.querySelectorAll("input[type=number]")];
  assert.deepEqual(inputs.map((i) => i.dataset.setting), ["params", "net_gbps", "model_flops"]);
  assert.deepEqual(inputs.map((i) => el.querySelector(`label[for="${i.id}"]`).textContent),
    ["Parameters", "Network GB/s per GPU", "Model FLOPs per step and GPU"]);
  for (const i of inputs) assert.ok(el.querySelector(`#${i.getAttribute("aria-describedby")}`).textContent.length > 40);
  assert.equal(inputs[1].value, "6");
  assert.match(el.querySelector("summary").textContent, /Settings\s*1 set/);
  assert.match(el.textContent, /unset: 25 GB\/s/);
  change(inputs[0], "1.1e8");
  assert.deepEqual(applied, [{ net_gbps: "6", params: "110000000" }]);
  change(inputs[0], "1.5");
  assert.equal(applied.length, 1); // refused, and said why
  assert.equal(inputs[0].getAttribute("aria-invalid"), "true");
  assert.match(el.querySelector(".setting-error:not([hidden])").textContent, /whole number/);
  change(inputs[1], "");
  assert.deepEqual(applied[1], {}); // cleared
  el.querySelector("button.settings-reset").click();
  assert.deepEqual(applied[2], {});
  el.remove();
});

test("the open panel closes on Escape and on a click outside it, not on a finding's button that opened it", () => {
  const host = document.createElement("div");
  const outside = document.createElement("p");
  const pointer = document.createElement("button");
  pointer.className = "set-setting";
  document.body.append(host, outside, pointer);
  settings.closeOnOutsideClick(document, host);
  host.append(settings.settingsControl({}, {}, () => {}, { open: true, spec: SPEC }));
  const details = host.querySelector("details.settings");
  details.querySelector("input").dispatchEvent(new window.KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
  assert.equal(details.open, false);
  details.open = true;
  details.querySelector("input").click();
  pointer.click();
  assert.equal(details.open, true);
  outside.click();
  assert.equal(details.open, false);
  host.remove(); outside.remove(); pointer.remove();
});

test("the flags' settings are what an unset field says applies", () => {
  const el = settings.settingsControl({}, { params: 110000000, net_gbps: 12, model_flops: null, net_gbps_default: 25 }, () => {}, { spec: SPEC });
  const help = [...el.querySelectorAll(".setting-default")].map((x) => x.textContent);
  assert.deepEqual(help, ["(unset: 110000000 from --gpu_advisor_params)", "(unset: 12 from --gpu_advisor_net_gbps)",
    "(unset: from the FLOPs the trace's shapes give)"]);
  assert.equal(el.querySelector("button.settings-reset").disabled, true);
});

test("a finding a setting would judge points at that field instead of a command-line flag", () => {
  const report = fixture();
  report.findings[0].metric.detail = { ...(report.findings[0].metric.detail || {}), needs_setting: "params" };
  const asked = [];
  const el = views.reportView(report, { root: "http://localhost:6006/", stockRun: "r/s", hosts: [], onSetting: (k) => asked.push(k), legend: legend() });
  const buttons = el.querySelectorAll("button.set-setting");
  assert.equal(buttons.length, 1);
  assert.equal(buttons[0].textContent, "Set Parameters in Settings");
  buttons[0].click();
  assert.deepEqual(asked, ["params"]);
  assert.equal(views.reportView(fixture(), { root: "http://localhost:6006/", stockRun: "r/s", hosts: [], legend: legend() }).querySelectorAll("button.set-setting").length, 0);
});

test("an MFU card the trace gives no FLOPs for points at Settings, not at --model-flops-per-step", () => {
  const report = fixture();
  report.headline = [{ id: "mfu", label: "Model FLOPs utilisation", value: null, unit: "share", display: "n/a",
    good_direction: "higher", status: "unknown", meaning: "the trace gives no FLOPs: give the model's FLOPs per step and GPU",
    threshold: 0.3, detail: { not_available: "the trace gives no FLOPs", needs_setting: "model_flops" } }];
  const asked = [];
  const el = views.reportView(report, { root: "http://localhost:6006/", stockRun: "r/s", hosts: [], onSetting: (k) => asked.push(k), legend: legend() });
  const card = el.querySelector(".scorecard .card");
  assert.equal(card.querySelector("button.set-setting").textContent, "Set Model FLOPs per step and GPU in Settings");
  assert.doesNotMatch(card.textContent, /--model-flops-per-step/);
  card.querySelector("button.set-setting").click();
  assert.deepEqual(asked, ["model_flops"]);
});

// -- the page: index.js in a stand-in TensorBoard page, against a stand-in server ----------------------------------

/** index.js where TensorBoard serves it: beside static/ (it imports "./static/*.js"), as the plugin's /index.js; the
 * folder is removed when the test `t` ends (a suite that leaves a folder per run fills a CI machine's /tmp). */
function servedIndex(t) {
  const dir = mkdtempSync(join(tmpdir(), "advisor-tab-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(fileURLToPath(new URL("index.js", STATIC)), join(dir, "index.js"));
  symlinkSync(fileURLToPath(STATIC), join(dir, "static"));
  return pathToFileURL(join(dir, "index.js")).href;
}

const RUNS = { logdir_set: true, frameworks: [], skipped: [], settings: { params: null, net_gbps: null, model_flops: null, net_gbps_default: 25 }, legend: legend(),
  runs: [{ run: "ddp", sessions: [{ session: "s1", mtime_ms: 1, has_gpu: true, stock_run: "ddp/s1", hosts: [{ host: "node0" }] }] }] };

test("the page restores settings from the URL, sends them, and a changed field re-requests and rewrites the URL", async (t) => {
  const parent = { location: { hash: "#gpu_advisor&p.gpu_advisor.run=ddp&p.gpu_advisor.params=1.1e8&p.gpu_advisor.model_flops=oops" },
    history: { state: null }, postMessage: () => {}, document: null };
  parent.history.replaceState = (state, title, url) => { parent.location.hash = url; };
  Object.defineProperty(window, "parent", { value: parent, configurable: true });
  const requests = [];
  globalThis.fetch = async (url) => {
    requests.push(url);
    const body = url.startsWith("./runs") ? RUNS : { ...fixture(), run: "ddp", session: "s1", params: new URLSearchParams(url.split("?")[1]).get("params") };
    const text = JSON.stringify(body);
    return { status: 200, ok: true, statusText: "", json: async () => JSON.parse(text), text: async () => text };
  };
  const { render } = await import(servedIndex(t));
  const app = await render(); // the bridge gets no answer (1.5 s), then the parent's hash is read
  assert.deepEqual(app.settings, { params: "110000000" }); // the unreadable model_flops is dropped, never sent
  assert.equal(requests.at(-1), "./report?run=ddp&session=s1&params=110000000");
  assert.equal(document.body.dataset.settings, "params=110000000");
  const input = document.querySelector(".settings input[data-setting=net_gbps]");
  assert.equal(document.querySelector(".settings input[data-setting=params]").value, "110000000");
  change(input, "6");
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(requests.at(-1), "./report?run=ddp&session=s1&params=110000000&net_gbps=6");
  assert.match(parent.location.hash, /p\.gpu_advisor\.params=110000000&p\.gpu_advisor\.net_gbps=6$/);
  assert.equal(document.body.dataset.settings, "params=110000000&net_gbps=6");
  assert.equal(document.querySelector("details.settings").open, true); // still open for the next field
  // the export asks the server for the same settings' Markdown
  URL.createObjectURL = () => "blob:x";
  URL.revokeObjectURL = () => {};
  const downloads = [];
  window.HTMLAnchorElement.prototype.click = function () { downloads.push(this.download); }; // jsdom cannot navigate
  await app.exportMarkdown();
  assert.equal(requests.at(-1), "./report.md?run=ddp&session=s1&params=110000000&net_gbps=6");
  assert.equal(downloads.length, 1);
  app.stopTheme();
  app.bridge._port.close(); // the MessageChannel to the stand-in page would keep the test process alive
});
