import assert from "node:assert/strict";
import { test } from "node:test";
import { fixture, STATIC } from "./dom_env.js";

const model = await import(new URL("model.js", STATIC));
const charts = await import(new URL("charts.js", STATIC));
const { Bridge, readUrlData, writeUrlData } = await import(new URL("bridge.js", STATIC));

const RUNS = [
  { run: "a", sessions: [{ session: "s2", mtime_ms: 5, hosts: [{ host: "h" }] }] },
  { run: "b", sessions: [{ session: "s9", mtime_ms: 9, hosts: [{ host: "h1" }, { host: "h2" }] }, { session: "s1", mtime_ms: 1, hosts: [{ host: "h1" }] }] },
];

test("default selection is the newest session; URL selection wins when it exists", () => {
  assert.deepEqual(model.newestSelection(RUNS), { run: "b", session: "s9", host: "" });
  assert.deepEqual(model.resolveSelection(RUNS, { run: "a", session: "s2", host: "h" }), { run: "a", session: "s2", host: "h" });
  assert.deepEqual(model.resolveSelection(RUNS, { run: "b", session: "s1", host: "gone" }), { run: "b", session: "s1", host: "" });
  assert.deepEqual(model.resolveSelection(RUNS, { run: "x", session: "y" }), { run: "b", session: "s9", host: "" });
  // a link naming only the run (or a vanished session) opens that run's newest session
  const newestOfA = model.newestSelection([RUNS.find((r) => r.run === "a")]).session;
  assert.deepEqual(model.resolveSelection(RUNS, { run: "a" }), { run: "a", session: newestOfA, host: "" });
  assert.deepEqual(model.resolveSelection(RUNS, { run: "a", session: "gone" }), { run: "a", session: newestOfA, host: "" });
  assert.equal(model.newestSelection([]), null);
});

function fakeFetch(answers) {
  const urls = [];
  const fn = async (url) => {
    urls.push(url);
    const [status, body] = answers.shift();
    const text = JSON.stringify(body);
    return { status, ok: status < 300, statusText: "", json: async () => JSON.parse(text), text: async () => text };
  };
  return { fn, urls };
}

test("fetchReport polls while the server computes, then returns the report", async () => {
  const { fn, urls } = fakeFetch([[202, { state: "computing", progress: 0.2 }], [202, { state: "computing", progress: 0.7 }], [200, { run: "r" }]]);
  const progress = [];
  const result = await model.fetchReport({ run: "r/x", session: "s&1", host: "h" }, { fetchFn: fn, pollMs: 1, onProgress: (p) => progress.push(p.progress) });
  assert.deepEqual(progress, [0.2, 0.7]);
  assert.deepEqual(result.report, { run: "r" });
  assert.equal(urls[0], "./report?run=r%2Fx&session=s%261&host=h");
});

test("fetchReport drops a stale answer and surfaces server errors", async () => {
  const stale = fakeFetch([[202, { state: "computing" }], [200, {}]]);
  assert.equal(await model.fetchReport({ run: "r", session: "s" }, { fetchFn: stale.fn, pollMs: 1, isStale: () => stale.urls.length >= 1 }), null);
  const bad = fakeFetch([[404, { error: "no profile session 's'" }]]);
  await assert.rejects(model.fetchReport({ run: "r", session: "s" }, { fetchFn: bad.fn }), (e) => e.status === 404 && /no profile session/.test(e.message));
});

test("markdown export is fetched from ./report.md (server-rendered), polling while it computes", async () => {
  const answers = [[202, { state: "computing", progress: 0.5 }]];
  const urls = [];
  const fn = async (url) => {
    urls.push(url);
    if (answers.length) {
      const [status, body] = answers.shift();
      return { status, ok: false, statusText: "", json: async () => body, text: async () => JSON.stringify(body) };
    }
    return { status: 200, ok: true, statusText: "", text: async () => "## GPU Advisor: run `r`\n" };
  };
  const progress = [];
  const md = await model.fetchReportMarkdown({ run: "r", session: "s", host: "w 1" }, { fetchFn: fn, pollMs: 1, onProgress: (p) => progress.push(p.progress) });
  assert.equal(md, "## GPU Advisor: run `r`\n");
  assert.deepEqual(progress, [0.5]);
  assert.deepEqual(urls, ["./report.md?run=r&session=s&host=w+1", "./report.md?run=r&session=s&host=w+1"]);
  const bad = fakeFetch([[500, { state: "error", error: "boom" }]]);
  await assert.rejects(model.fetchReportMarkdown({ run: "r", session: "s" }, { fetchFn: bad.fn }), (e) => e.status === 500 && /boom/.test(e.message));
});

test("the browser has no markdown renderer of its own", async () => {
  const { existsSync, readFileSync } = await import("node:fs");
  assert.equal(existsSync(new URL("markdown.js", STATIC)), false);
  assert.doesNotMatch(readFileSync(new URL("index.js", STATIC), "utf8"), /markdown\.js/);
});

test("charts: stacked steps, launch-latency band, ticks", () => {
  const report = fixture();
  const steps = charts.stepChart(report.hosts[0].step_rows);
  assert.equal(steps.querySelectorAll("g.step-bar").length, 6);
  assert.ok(steps.querySelectorAll(".cat-launch_wait").length >= 6);
  const hist = charts.kernelHistogram(report.hosts[0].kernel_durations_us);
  assert.ok(hist.querySelector(".launch-band"));
  assert.equal(hist.querySelectorAll("rect.bar").length, 7);
  assert.equal(hist.querySelectorAll("rect.bar-small").length, 5);
  assert.deepEqual(charts.ticks(42), [0, 20, 40]);
  assert.deepEqual(charts.ticks(0.9), [0, 0.25, 0.5, 0.75]);
  const gpus = charts.gpuChart(report.hosts[0].gpus);
  assert.equal(gpus.querySelectorAll("rect.bar").length, 6);
});

test("bridge speaks TensorBoard's MessagePort protocol", async () => {
  let hostPort;
  const parent = { postMessage: (msg, origin, ports) => { assert.equal(msg, "experimental.bootstrap"); hostPort = ports[0]; } };
  const bridge = new Bridge({ parent }, 500);
  const replies = [];
  hostPort.onmessage = (e) => {
    const msg = JSON.parse(e.data);
    if (msg.isReply) return replies.push(msg);
    assert.equal(msg.type, "experimental.GetURLPluginData");
    assert.deepEqual(msg.payload, { pluginName: "gpu_advisor" });
    hostPort.postMessage(JSON.stringify({ type: msg.type, id: msg.id, payload: { run: "a", session: "s2" }, error: null, isReply: true }));
  };
  assert.deepEqual(await bridge.getUrlData(), { run: "a", session: "s2" });
  let reloaded = 0;
  bridge.listen("experimental.DataReloaded", () => reloaded++);
  hostPort.postMessage(JSON.stringify({ type: "experimental.DataReloaded", id: 7, payload: null, error: null, isReply: false }));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(reloaded, 1);
  assert.deepEqual(replies.map((r) => [r.type, r.id, r.isReply]), [["experimental.DataReloaded", 7, true]]);
  hostPort.close();
  bridge._port.close();
});

test("bridge without a parent degrades to no URL data", async () => {
  const win = {};
  win.parent = win;
  assert.deepEqual(await new Bridge(win).getUrlData(), {});
});

test("writeUrlData keeps TensorBoard's keys and replaces ours", () => {
  const calls = [];
  const parent = { location: { hash: "#gpu_advisor&p.gpu_advisor.run=old&smoothing=0.6" }, history: { state: null, replaceState: (...a) => calls.push(a[2]) } };
  assert.equal(writeUrlData({ run: "r/1", session: "s", host: "" }, { parent }), true);
  assert.deepEqual(calls, ["#gpu_advisor&smoothing=0.6&p.gpu_advisor.run=r%2F1&p.gpu_advisor.session=s"]);
  const cross = { get location() { throw new Error("cross-origin"); } };
  assert.equal(writeUrlData({ run: "r" }, { parent: cross }), false);
});

test("readUrlData reads our keys from the parent hash", () => {
  const parent = { location: { hash: "#gpu_advisor&p.gpu_advisor.run=r%2F1&p.gpu_advisor.session=s&smoothing=0.6" } };
  assert.deepEqual(readUrlData({ parent }), { run: "r/1", session: "s" });
  const win = {};
  win.parent = win;
  assert.deepEqual(readUrlData(win), {});
});
