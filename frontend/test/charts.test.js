import assert from "node:assert/strict";
import { test } from "node:test";
import { legend, STATIC } from "./dom_env.js";

const charts = await import(new URL("charts.js", STATIC));

/**
 * Rows as the analyzer emits them on a multi-GPU host: one per (step, GPU),
 * GPU-major, plus (`hostWide`) one row per step with gpu null, the mean over GPUs.
 */
function multiGpuRows(gpus, steps, slowGpu = 0, hostWide = false) {
  const rows = [];
  if (hostWide) for (let st = 1; st <= steps; st++) rows.push({ step: st, gpu: null, step_ms: 7, breakdown: { device_compute: 4, launch_wait: 1, other: 2 } });
  for (let g = 0; g < gpus; g++) {
    for (let st = 1; st <= steps; st++) {
      const compute = g === slowGpu ? 6 : 3;
      rows.push({ step: st, gpu: g, start_ms: st * 10, step_ms: compute + 1, breakdown: { device_compute: compute, launch_wait: 1 } });
    }
  }
  return rows;
}

test("stepSeries groups per-GPU rows into one series per GPU on a shared step axis", () => {
  const rows = multiGpuRows(4, 6).reverse(); // order must not matter
  const { buckets, groupSize, series } = charts.stepSeries(rows);
  assert.equal(groupSize, 1);
  assert.deepEqual(buckets.map((b) => b.first), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(series.map((x) => x.gpu), [0, 1, 2, 3]);
  assert.ok(series.every((x) => x.bars.length === 6 && x.bars.every((b) => b && b.count === 1)));
  // a bar of one row names it (its texts are the report's display.steps of that row)
  assert.deepEqual(rows[series[0].bars[0].row], { step: 1, gpu: 0, start_ms: 10, step_ms: 7, breakdown: { device_compute: 6, launch_wait: 1 } });
  assert.deepEqual(series[2].bars[0].breakdown, { device_compute: 3, launch_wait: 1 });
});

test("stepSeries averages consecutive steps beyond maxBars and leaves gaps for missing steps", () => {
  const rows = multiGpuRows(2, 500).filter((r) => !(r.gpu === 1 && r.step <= 10));
  const { buckets, groupSize, series } = charts.stepSeries(rows, 100);
  assert.equal(groupSize, 5);
  assert.equal(buckets.length, 100);
  assert.deepEqual(buckets[0], { first: 1, last: 5 });
  assert.deepEqual(buckets.at(-1), { first: 496, last: 500 });
  assert.equal(series[0].bars[0].count, 5);
  assert.equal(series[0].bars[0].step_ms, 7);
  assert.equal(series[0].bars[0].row, null); // a mean of 5 rows: no one row's texts
  assert.equal(series[1].bars[0], null); // GPU 1 has no rows for steps 1-5
  assert.equal(series[1].bars[2].count, 5);
});

test("single-GPU rows keep one panel with one bar per step", () => {
  const rows = [1, 2, 3].map((st) => ({ step: st, gpu: null, step_ms: 2, breakdown: { device_compute: 2 } }));
  const svg = charts.stepChart(rows);
  assert.equal(svg.querySelectorAll("g.gpu-panel").length, 1);
  assert.equal(svg.querySelectorAll("g.step-bar").length, 3);
  assert.equal(svg.querySelectorAll(".panel-label").length, 0);
  assert.ok(!svg.classList.contains("multi-gpu"));
});

/** Texts standing in for the server's (a host's display: report/view): each step's times and each panel's label
 * written out with the row's own values, so a test sees which the chart printed. */
function labelsOf(rows, panels = {}) {
  return { panels, steps: rows.map((r) => ({ step: `<${r.step_ms}>`, breakdown: Object.fromEntries(Object.entries(r.breakdown).map(([k, v]) => [k, `<${v}>`])) })) };
}

test("multi-GPU step chart: one labelled panel per GPU, same scale, step labels not repeated", () => {
  const rows = multiGpuRows(8, 6, 0);
  const svg = charts.stepChart(rows, { categories: legend().categories, labels: labelsOf(rows, { 0: "device compute <6> of <7>", 3: "device compute <3> of <4>" }) });
  assert.ok(svg.classList.contains("multi-gpu"));
  const panels = [...svg.querySelectorAll("g.gpu-panel")];
  assert.deepEqual(panels.map((p) => p.getAttribute("data-gpu")), ["0", "1", "2", "3", "4", "5", "6", "7"]);
  assert.deepEqual(panels.map((p) => p.querySelectorAll("g.step-bar").length), [6, 6, 6, 6, 6, 6, 6, 6]);
  assert.equal(panels[0].querySelector(".panel-label").textContent, "GPU 0 · device compute <6> of <7>");
  assert.equal(panels[3].querySelector(".panel-label").textContent, "GPU 3 · device compute <3> of <4>");
  assert.equal(panels[1].querySelector(".panel-label").textContent, "GPU 1"); // the server gave no label: no number
  // x labels: each step once (not once per GPU as with interleaved rows)
  assert.deepEqual([...svg.querySelectorAll(".step-tick")].map((t) => t.textContent), ["1", "2", "3", "4", "5", "6"]);
  // same y scale: GPU 0's 7 ms bars are 7/4 as tall as GPU 1's 4 ms bars
  const barHeight = (p) => [...p.querySelector("g.step-bar").querySelectorAll("rect")].reduce((a, r) => a + Number(r.getAttribute("height")), 0);
  assert.ok(Math.abs(barHeight(panels[0]) / barHeight(panels[1]) - 7 / 4) < 0.05);
  // panels do not overlap and the picture stays a reasonable height
  const tops = panels.map((p) => Math.min(...[...p.querySelectorAll("rect")].map((r) => Number(r.getAttribute("y")))));
  assert.ok(tops.every((t, i) => i === 0 || t > tops[i - 1]));
  const height = Number(svg.getAttribute("viewBox").split(" ")[3]);
  assert.ok(height < 560, height);
  const tip = panels[2].querySelector("rect title").textContent;
  assert.equal(tip, "GPU 2, step 1: Device compute <3> of <4>");
});

test("the host-wide rows (gpu null) become a first 'All GPUs (mean)' panel", () => {
  const rows = multiGpuRows(4, 6, 0, true);
  const svg = charts.stepChart(rows, { labels: labelsOf(rows, { "": "device compute <4> of <7>" }) });
  const panels = [...svg.querySelectorAll("g.gpu-panel")];
  assert.deepEqual(panels.map((p) => p.getAttribute("data-gpu")), ["", "0", "1", "2", "3"]);
  assert.equal(panels[0].querySelector(".panel-label").textContent, "All GPUs (mean) · device compute <4> of <7>");
  assert.match(panels[0].querySelector("rect title").textContent, /^all GPUs \(mean\), step 1: /);
  assert.deepEqual([...svg.querySelectorAll(".step-tick")].map((t) => t.textContent), ["1", "2", "3", "4", "5", "6"]);
});

test("long multi-GPU captures are aggregated, labelled as such, and bars stay wide enough", () => {
  const svg = charts.stepChart(multiGpuRows(4, 1000));
  const panels = [...svg.querySelectorAll("g.gpu-panel")];
  assert.equal(panels.length, 4);
  const perPanel = panels[0].querySelectorAll("g.step-bar").length;
  assert.ok(perPanel <= charts.MAX_STEP_BARS && perPanel >= 50, perPanel);
  assert.match(svg.querySelector(".step-note").textContent, /mean of 9 consecutive steps/);
  // a mean of 9 steps: its steps and category, no number the server did not write (the axis reads its height)
  assert.equal(panels[0].querySelector("rect title").textContent, "GPU 0, steps 1–9 (mean of 9): device compute");
  assert.ok(svg.querySelectorAll(".step-tick").length <= 13);
  const w = Number(panels[0].querySelector("rect").getAttribute("width"));
  assert.ok(w >= 3, w);
});

test("rooflineChart puts each GEMM shape under the roof, the slow ones marked, with its share on hover", () => {
  const table = {
    title: "GEMM shapes against their roofline",
    columns: ["op and shapes", "kind", "precision", "calls/step", "ms/step", "TFLOP/s", "FLOP/byte", "roofline TFLOP/s", "of roofline", "bound"],
    rows: [["aten::mm bf16 [4096,4096]x[4096,4096]", "matmul", "bf16", 8, 1.3, 830, 1365, 989, 0.84, "compute"],
      ["aten::mm bf16 [64,1024]x[1024,1024]", "matmul", "bf16", 48, 1.92, 3.4, 57, 190, 0.018, "memory"]],
  };
  // its numbers as the CLI's roofline table prints them (labels.roofline: render.ROOF_COLS, render.roofline_rows)
  const roofline = { columns: ["op and shapes", "precision", "calls/step", "ms/step", "TFLOP/s", "FLOP/byte", "roofline TFLOP/s", "of roofline", "bound"],
    rows: table.rows.map((r) => [r[0], r[2], ...r.slice(3, 8).map((v) => `<${v}>`), `<${r[8]}>`, r[9]]) };
  const svg = charts.rooflineChart(table, { peak: 989e12, bandwidth: 3.35e12, width: 600, labels: { roofline } });
  const dots = [...svg.querySelectorAll("circle")];
  assert.equal(dots.length, 2);
  assert.deepEqual(dots.map((d) => d.getAttribute("class")), ["gemm", "gemm gemm-low"]);
  assert.equal(dots[1].querySelector("title").textContent,
    "aten::mm bf16 [64,1024]x[1024,1024]: <3.4> TFLOP/s at <57> FLOP/byte, <0.018> of its roofline, <1.92> ms per step");
  // the big GEMM sits right of the ridge (295 FLOP/byte) and under the peak line; the small one far below
  const roof = svg.querySelector("polyline").getAttribute("points").split(" ").map((p) => p.split(",").map(Number));
  assert.equal(roof.length, 3);
  const peakY = roof[2][1];
  assert.ok(Number(dots[0].getAttribute("cy")) > peakY && Number(dots[1].getAttribute("cy")) > Number(dots[0].getAttribute("cy")));
  assert.ok(Number(dots[0].getAttribute("cx")) > roof[1][0] && Number(dots[1].getAttribute("cx")) < roof[1][0]);
});

test("the breakdown's categories, their names and order are the server's; one it adds still draws", () => {
  const categories = legend().categories;
  assert.deepEqual(categories.slice(0, 2).map((c) => c.id), ["device_compute", "launch_wait"]);
  assert.ok(["startup", "unseen", "allocator"].every((id) => categories.some((c) => c.id === id)));
  const rows = [1, 2].map((st) => ({ step: st, gpu: null, step_ms: 6, breakdown: { device_compute: 2, startup: 1, brand_new: 3 } }));
  const svg = charts.stepChart(rows, { categories, labels: labelsOf(rows) });
  const names = [...svg.querySelectorAll(".legend-item text")].map((t) => t.textContent);
  assert.deepEqual(names, ["Device compute", "One-time start-up", "brand new"]); // server order, then the unknown one
  assert.equal(svg.querySelectorAll("g.step-bar rect.cat-brand_new").length, 2);
  assert.match(svg.querySelector("rect.cat-startup title").textContent, /One-time start-up <1> of <6>/);
});

test("the host's reads of managed memory are their own ledger category, named and ordered by the server (h37-copy63)", () => {
  const categories = legend().categories;
  const ids = categories.map((c) => c.id);
  assert.ok(ids.indexOf("managed_read") >= 0 && ids.indexOf("managed_read") < ids.indexOf("other"));
  const rows = [1, 2].map((st) => ({ step: st, gpu: null, step_ms: 1.27, breakdown: { device_compute: 0.57, managed_read: 0.43, other: 0.27 } }));
  const svg = charts.stepChart(rows, { categories, labels: labelsOf(rows) });
  const names = [...svg.querySelectorAll(".legend-item text")].map((t) => t.textContent);
  assert.deepEqual(names, ["Device compute", "Host reading managed memory (page faults)", "Other / idle"]);
  assert.equal(svg.querySelectorAll("g.step-bar rect.cat-managed_read").length, 2);
});

test("log ticks: at least three on an axis that spans less than a decade (was: one)", () => {
  assert.deepEqual(charts.logTicks(0.5, 2000), [1, 10, 100, 1000]);
  assert.deepEqual(charts.logTicks(60, 400), [70, 100, 150, 200, 300]);
  assert.deepEqual(charts.logTicks(200, 3000), [300, 1000, 3000]);
  assert.ok(charts.logTicks(1e-3, 1e9).length <= 9);
  assert.equal(charts.logTickText(2000), "2k");
  assert.equal(charts.logTickText(0.5), "0.5");
});

const ROOF_COLS = ["op and shapes", "kind", "precision", "calls/step", "ms/step", "TFLOP/s", "FLOP/byte", "roofline TFLOP/s", "of roofline", "bound"];

test("the roofline labels its roof and ridge and has ticks on both axes", () => {
  const table = { title: "t", columns: ROOF_COLS,
    rows: [["aten::mm bf16 [4096,4096]x[4096,4096]", "matmul", "bf16", 8, 1.3, 830, 1365, 989, 0.84, "compute"],
      ["aten::mm bf16 [64,1024]x[1024,1024]", "matmul", "bf16", 48, 1.92, 3.4, 57, 190, 0.018, "memory"]] };
  // the roof's numbers as the server wrote them (the host's display.roof: report/view._roof)
  const svg = charts.rooflineChart(table, { peak: 989e12, bandwidth: 3.35e12, dtype: "bf16", width: 700,
    labels: { roof: { peak: "<989>", bandwidth: "<3.35>", ridge: "<295>" } } });
  assert.equal(svg.querySelector(".roof-label").textContent, "bf16 peak <989> TFLOP/s");
  assert.equal(svg.querySelector(".ridge-label").textContent, "ridge <295> FLOP/byte");
  assert.match(svg.querySelector("line.ridge title").textContent, /bound by memory \(<3\.35> TB\/s\)/);
  assert.ok(svg.querySelectorAll(".x-tick").length >= 3 && svg.querySelectorAll(".y-tick").length >= 3);
  // every label inside the picture
  const W = Number(svg.getAttribute("width"));
  for (const t of svg.querySelectorAll("text")) assert.ok(Number(t.getAttribute("x")) >= 0 && Number(t.getAttribute("x")) <= W, t.textContent);
});

test("roofline dots that would cover each other are moved apart and sized by their time", () => {
  const row = (label, ms) => [label, "matmul", "bf16", 8, ms, 100, 200, 600, 0.17, "memory"];
  const table = { title: "t", columns: ROOF_COLS, rows: [row("a", 4), row("b", 1), row("c", 0.25), ["d", "matmul", "bf16", 1, 2, 50, 30, 90, 0.5, "memory"]] };
  const svg = charts.rooflineChart(table, { peak: 989e12, bandwidth: 3.35e12, width: 700 });
  const dots = [...svg.querySelectorAll("circle")].map((c) => ({ x: Number(c.getAttribute("cx")), y: Number(c.getAttribute("cy")),
    r: Number(c.getAttribute("r")), name: c.querySelector("title").textContent.split(":")[0] }));
  assert.equal(dots.length, 4);
  for (let i = 0; i < dots.length; i++) {
    for (let j = i + 1; j < dots.length; j++) {
      assert.ok(Math.hypot(dots[i].x - dots[j].x, dots[i].y - dots[j].y) >= dots[i].r + dots[j].r, `${dots[i].name} covers ${dots[j].name}`);
    }
  }
  const r = Object.fromEntries(dots.map((d) => [d.name, d.r]));
  assert.ok(r.a > r.b && r.b > r.c, JSON.stringify(r));
  const a = dots.find((d) => d.name === "a"), b = dots.find((d) => d.name === "b");
  assert.equal(a.y, b.y); // moved sideways only: the height still reads as the TFLOP/s
  assert.match(svg.querySelector("circle[data-dx]:not([data-dx='0']) title").textContent, /moved sideways/);
});

test("the step chart of a report prints its display: each panel's ledger, each step's times (report/view)", async () => {
  const { fixture } = await import("./dom_env.js");
  const report = fixture();
  const hr = report.hosts[0], shown = report.display.hosts[0];
  // one GPU's panels: the host's rows are its steps; their hover says the step's times as the server wrote them
  const svg = charts.stepChart(hr.step_rows, { categories: legend().categories, labels: shown });
  const tip = svg.querySelector("g.step-bar rect.cat-device_compute title").textContent;
  assert.equal(tip, `step 0: Device compute ${shown.steps[0].breakdown.device_compute} of ${shown.steps[0].step}`);
  // two GPUs' panels: each labelled with its ledger's line (was the bars' means, computed here)
  const rows = [...hr.step_rows.map((r) => ({ ...r, gpu: 0 })), ...hr.step_rows.map((r) => ({ ...r, gpu: 1 }))];
  const two = charts.stepChart(rows, { labels: { panels: { 0: "device compute A", 1: "device compute B" } } });
  assert.deepEqual([...two.querySelectorAll(".panel-label")].map((t) => t.textContent), ["GPU 0 · device compute A", "GPU 1 · device compute B"]);
});

test("an AMD report's breakdown legend names HIP's allocator calls, an NVIDIA report's CUDA's (legendFor)", async () => {
  const { legendFor } = await import(new URL("format.js", STATIC));
  const label = (report) => legendFor(legend(), report).categories.find((c) => c.id === "allocator").label;
  const host = (vendor) => ({ hosts: [{ capture: { vendor } }] });
  assert.match(label(host("AMD")), /hipMalloc \/ hipFree/);
  assert.doesNotMatch(label(host("AMD")), /cuda/i);
  assert.match(label(host("NVIDIA")), /cudaMalloc \/ cudaFree/);
  assert.match(label({ hosts: [{ capture: {} }] }), /cudaMalloc/); // no vendor named: the default vendor's words
  const idle = legendFor(legend(), host("AMD")).idle.find((c) => c.id === "allocator").label;
  assert.match(idle, /hipMalloc/);
});

test("a one-pass capture's step bar says 'the pass' on hover, a marked step's 'step N' (h37-words22)", async () => {
  const { readFileSync } = await import("node:fs");
  const { fixture } = await import("./dom_env.js");
  // a real one-pass capture as /report serves it (wild/cold_a100_alexnet, tests/support/plugin_fixtures.py)
  const { host, shown } = JSON.parse(readFileSync(new URL("./fixtures/pass.json", import.meta.url), "utf8"));
  const tips = [...charts.stepChart(host.step_rows, { categories: legend().categories, labels: shown })
    .querySelectorAll("g.step-bar rect title")].map((t) => t.textContent);
  assert.ok(tips.length > 0);
  assert.ok(tips.every((t) => /^(GPU \d+, )?the pass: /.test(t)) && !tips.some((t) => /step \d/.test(t)), tips.join(" | "));
  // the control: the marked fixture report's bars keep their step numbers
  const report = fixture();
  const marked = [...charts.stepChart(report.hosts[0].step_rows, { labels: report.display.hosts[0] })
    .querySelectorAll("g.step-bar rect title")].map((t) => t.textContent);
  assert.ok(marked.length && marked.every((t) => /^(GPU \d+, )?step \d+: /.test(t)), marked.join(" | "));
});

test("a one-pass capture's step axis names the pass under its bar, a marked report's axis its step ids (h37-words23)", async () => {
  const { readFileSync } = await import("node:fs");
  const { fixture } = await import("./dom_env.js");
  // the real one-pass capture as /report serves it (wild/cold_a100_alexnet): its one row is step 0 of no marked step
  const { host, shown } = JSON.parse(readFileSync(new URL("./fixtures/pass.json", import.meta.url), "utf8"));
  const ticks = (svg) => [...svg.querySelectorAll("text.step-tick")].map((t) => t.textContent);
  assert.deepEqual(ticks(charts.stepChart(host.step_rows, { categories: legend().categories, labels: shown })), ["the pass"]);
  // the control: the marked fixture report's axis keeps the ids its bars are numbered by
  const report = fixture();
  const marked = ticks(charts.stepChart(report.hosts[0].step_rows, { labels: report.display.hosts[0] }));
  assert.ok(marked.length && marked.every((t) => /^\d+$/.test(t)), marked.join(" | "));
  // a report cached before the names (no one_pass) keeps the id
  assert.deepEqual(ticks(charts.stepChart(host.step_rows, { categories: legend().categories })), ["0"]);
});

test("the vector roof is drawn at the MFU card's vector peak, even with memory-bound depthwise rows alone (h37-roof68)", () => {
  // main: no compute-bound depthwise row gives the roof's height, so none is drawn -- "rated against their lower roof,
  // not this one" with no lower roof on the chart
  const gemm = ["aten::mm bf16 [4096,4096]x[4096,4096]", "matmul", "bf16", 8, 1.3, 830, 1365, 989, 0.84, "compute"];
  const dw = ["aten::_conv_depthwise2d fp32 [64,256,56,56]x[256,1,3,3]", "depthwise", "fp32", 4, 0.18, 1.9, 2.2, 7.4, 0.26, "memory"];
  const roofline = { columns: ROOF_COLS, rows: [gemm, dw].map((r) => r.map((v, j) => (j >= 3 && j <= 8 ? `<${v}>` : v))) };
  const labels = { roofline, roof: { peak: "989", bandwidth: "3.35", ridge: "295", vector_peak: "66.9" } };
  const svg = charts.rooflineChart({ title: "t", columns: ROOF_COLS, rows: [gemm, dw] },
    { peak: 989e12, bandwidth: 3.35e12, vectorPeak: 66.9e12, width: 700, labels });
  const vroof = svg.querySelector("polyline.roof-vector");
  assert.ok(vroof, "no vector roof drawn");
  assert.equal(svg.querySelector(".roof-vector-label").textContent, "vector units' peak 66.9 TFLOP/s (depthwise)");
  assert.match(svg.querySelector(".roof-note").textContent, /their roof is the lower one/);
  // its flat part lies under the matrix roof's, and it meets the memory slope at its own ridge (66.9 / 3.35 FLOP/byte)
  const pts = (el) => el.getAttribute("points").split(" ").map((p) => p.split(",").map(Number));
  const [mroof] = [...svg.querySelectorAll("polyline")].filter((p) => !p.classList.contains("roof-vector"));
  assert.ok(pts(vroof).at(-1)[1] > pts(mroof).at(-1)[1]);
  assert.equal(pts(vroof).length, 3);
  assert.deepEqual(pts(vroof)[0], pts(mroof)[0]);  // the same bandwidth slope below both ridges
  // the memory-bound depthwise dot lies under its roof
  const dot = svg.querySelector("circle.depthwise");
  assert.ok(Number(dot.getAttribute("cy")) > pts(vroof).at(-1)[1]);
  // the control: no depthwise row, no vector roof, whatever the card says
  const only = charts.rooflineChart({ title: "t", columns: ROOF_COLS, rows: [gemm] },
    { peak: 989e12, bandwidth: 3.35e12, vectorPeak: 66.9e12, width: 700, labels });
  assert.equal(only.querySelector("polyline.roof-vector"), null);
});

test("a depthwise row is marked as the vector units' work, with their roof where the server's numbers give it (h37-flops68b)", () => {
  // main: one roof, the matrix units' peak, titled "GEMM shapes", and the depthwise dot drawn as one more GEMM under it
  const gemm = ["aten::mm bf16 [4096,4096]x[4096,4096]", "matmul", "bf16", 8, 1.3, 830, 1365, 989, 0.84, "compute"];
  const dwMemory = ["aten::_conv_depthwise2d fp32 [64,256,56,56]x[256,1,3,3]", "depthwise", "fp32", 4, 0.18, 1.9, 2.2, 7.4, 0.26, "memory"];
  const dwCompute = ["aten::_conv_depthwise2d fp32 [8,64,512,512]x[64,1,31,31]", "depthwise", "fp32", 1, 2.4, 40, 120, 67, 0.6, "compute"];
  const roofline = (rows) => ({ columns: ROOF_COLS, rows: rows.map((r) => r.map((v, j) => (j >= 3 && j <= 8 ? `<${v}>` : v))) });
  const memOnly = charts.rooflineChart({ title: "t", columns: ROOF_COLS, rows: [gemm, dwMemory] },
    { peak: 989e12, bandwidth: 3.35e12, width: 700, labels: { roofline: roofline([gemm, dwMemory]) } });
  assert.equal(memOnly.getAttribute("aria-label"), "Roofline: 1 GEMM and 1 depthwise shapes");
  assert.deepEqual([...memOnly.querySelectorAll("circle")].map((c) => c.getAttribute("class")).sort(), ["gemm", "gemm depthwise gemm-low"]);
  assert.match(memOnly.querySelector("circle.depthwise title").textContent, /of its roofline \(the vector units', not the matrix units' roof\)/);
  assert.equal(memOnly.querySelectorAll("polyline").length, 1);  // no height for the vector roof: said, not drawn
  assert.match(memOnly.querySelector(".roof-note").textContent, /depthwise convolutions, on the vector units: rated against their lower roof, not this one/);
  const both = charts.rooflineChart({ title: "t", columns: ROOF_COLS, rows: [gemm, dwMemory, dwCompute] },
    { peak: 989e12, bandwidth: 3.35e12, width: 700, labels: { roofline: roofline([gemm, dwMemory, dwCompute]) } });
  const vroof = both.querySelector("polyline.roof-vector");
  assert.ok(vroof);
  assert.equal(both.querySelector(".roof-vector-label").textContent, "vector units' peak <67> TFLOP/s (depthwise)");
  // the vector roof lies under the matrix one, and the compute-bound depthwise dot under the vector roof
  const flatY = (el) => Number(el.getAttribute("points").split(" ").at(-1).split(",")[1]);
  const [mroof] = [...both.querySelectorAll("polyline")].filter((p) => !p.classList.contains("roof-vector"));
  assert.ok(flatY(vroof) > flatY(mroof));
  const dot = [...both.querySelectorAll("circle.depthwise")].find((c) => c.querySelector("title").textContent.includes("31,31"));
  assert.ok(Number(dot.getAttribute("cy")) > flatY(vroof));
  const W = Number(both.getAttribute("width"));
  for (const t of both.querySelectorAll("text")) assert.ok(Number(t.getAttribute("x")) >= 0 && Number(t.getAttribute("x")) <= W, t.textContent);
});
