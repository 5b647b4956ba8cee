// The tab's own labels of a host's devices follow its vendor (h37-snap58; h37-wild57m *Left* 3): the server sends them
// in the vendor's words (display.hosts[].device_words, report/view.DEVICE_LABELS); NVIDIA's words where none is sent.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixture, legend, STATIC } from "./dom_env.js";

const charts = await import(new URL("charts.js", STATIC));
const views = await import(new URL("views.js", STATIC));

// what report/view.display sends for an Ascend NPU's host (devices.ascend.words of DEVICE_LABELS)
const NPU = { device: "NPU", devices: "NPUs", active: "NPU active: kernels, copies, collectives",
  skew: "Launch skew vs. first NPU", comparison: "Per-NPU comparison" };
const UNNAMED = { device: "device", devices: "devices", active: "device active: kernels, copies, collectives",
  skew: "Launch skew vs. first device", comparison: "Per-device comparison" };
const gpus = [{ gpu: 0, busy_share: 0.5, step_ms: 10, launch_skew_ms: 0 }, { gpu: 1, busy_share: 0.4, step_ms: 11, launch_skew_ms: 1 }];
const table = { columns: ["gpu", "name", "cc", "step ms", "active (any GPU work)", "kernels", "collectives/step", "skew ms"],
  rows: [["NPU0", "-", "-", "10.0", "50%", "3", "0", "0.00"], ["NPU1", "-", "-", "11.0", "40%", "3", "0", "1.00"]] };

test("the per-GPU chart of an NPU's host says NPU, its values still read from the table's keys", () => {
  const svg = charts.gpuChart(gpus, { table, words: NPU });
  const text = svg.textContent;
  assert.match(text, /Per-NPU comparison/);
  assert.match(text, /NPU active: kernels, copies, collectives/);
  assert.match(text, /Launch skew vs\. first NPU/);
  assert.deepEqual([...svg.querySelectorAll("text.axis")].filter((t) => !t.classList.contains("value")).map((t) => t.textContent).slice(0, 2), ["NPU 0", "NPU 1"]);
  assert.doesNotMatch(text, /GPU/);
  assert.ok([...svg.querySelectorAll("text.value")].some((t) => t.textContent === "50%"));
});

test("a host whose snapshot names no build: 'Device 0', never GPU", () => {
  const svg = charts.gpuChart(gpus, { table, words: UNNAMED });
  assert.doesNotMatch(svg.textContent, /GPU/);
  assert.match(svg.textContent, /Device 0/);
  const rows = [{ step: 1, gpu: 0, breakdown: { device_compute: 1 } }, { step: 1, gpu: 1, breakdown: { device_compute: 1 } }];
  const steps = charts.stepChart(rows, { labels: { device_words: UNNAMED } });
  assert.deepEqual([...steps.querySelectorAll(".panel-label")].map((p) => p.textContent), ["Device 0", "Device 1"]);
  assert.match(steps.querySelector("title").textContent, /one panel per device/);
});

test("the memory section's headings name the host's device", () => {
  const report = fixture();
  const hr = report.hosts[0];
  const g = hr.gpus.find((x) => x.memory);
  const el = views.memoryView(hr, g, { legend: legend() }, {}, { device_words: NPU });
  assert.equal(el.querySelector("h4").textContent, `NPU ${g.gpu} memory`);
  assert.match(el.querySelector(".memory-peak").textContent, new RegExp(`^NPU ${g.gpu} peak`));
});

test("control: without device_words (NVIDIA's host, a report served before a79) the labels say GPU", () => {
  const svg = charts.gpuChart(gpus, { table });
  assert.match(svg.textContent, /Per-GPU comparison/);
  assert.match(svg.textContent, /GPU active/);
  const report = fixture();
  const hr = report.hosts[0];
  const g = hr.gpus.find((x) => x.memory);
  assert.equal(views.memoryView(hr, g, { legend: legend() }, {}, {}).querySelector("h4").textContent, `GPU ${g.gpu} memory`);
});

// the finding card's "Where" (views.findingView) names its device in its host's words (h37-snap58 *Left* 2)
const whereOf = (el, rule, host) => {
  const card = [...el.querySelectorAll("details.finding")].find((d) => d.dataset.rule === rule && d.textContent.includes(`host ${host}`));
  const dts = [...card.querySelectorAll("dl.facts dt")];
  return dts.find((dt) => dt.textContent === "Where").nextElementSibling.textContent;
};
const viewCtx = { legend: legend(), root: "http://localhost:6006/prefix/", stockRun: "run1/2024_01_01_00_00_00", hosts: ["worker0", "worker1"] };

test("a finding on an NPU's host says 'NPU 0' where it lies, each host's own words", () => {
  const report = fixture();
  report.display.hosts[0].device_words = NPU;  // worker0 an Ascend host, worker1 NVIDIA's
  const el = views.reportView(report, viewCtx);
  assert.equal(whereOf(el, "launch_bound", "worker0"), "host worker0, NPU 0");
  assert.equal(whereOf(el, "launch_bound", "worker1"), "host worker1, GPU 0");
});

test("control: a report that sends no device words says GPU in the finding's place", () => {
  const report = fixture();
  for (const hs of report.display.hosts) delete hs.device_words;
  assert.equal(whereOf(views.reportView(report, viewCtx), "launch_bound", "worker0"), "host worker0, GPU 0");
  assert.equal(views.findingDevice({ hosts: ["a", "b"] }, { deviceWords: { a: NPU, b: UNNAMED } }), "GPU");
  assert.equal(views.findingDevice({ hosts: ["a", "b"] }, { deviceWords: { a: NPU, b: NPU } }), "NPU");
});
