// The tab's GPU memory (issue #29): the chart per GPU (allocated, reserved, capacity, the peak, the steps), the
// breakdown at the peak, the peak table, memory findings' bytes, an OOM's live allocations, and the memory under a
// step timeline's lanes. The report is tests/support/plugin_fixtures.py's (GpuSummary.memory of schema 1.3).
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixture, HOSTILE, legend, STATIC } from "./dom_env.js";

const charts = await import(new URL("charts.js", STATIC));
const views = await import(new URL("views.js", STATIC));
const timeline = await import(new URL("timeline.js", STATIC));
const { units } = await import(new URL("dom.js", STATIC));
const ctx = { root: "http://localhost:6006/prefix/", stockRun: "run1/2024_01_01_00_00_00", hosts: ["worker0", "worker1"] };

const memOf = (report) => report.hosts[0].gpus[0].memory;

test("the memory chart draws allocated, reserved, capacity and the peak where the data puts them", () => {
  const report = fixture();
  const mem = { ...memOf(report), gpu: 0 };
  const shown = report.display.hosts[0];
  const steps = views.hostSteps(report.hosts[0], shown);
  // what holds memory, in the server's order and words (/runs' legend.memory, report/legend.py); its bytes as the
  // server wrote them (the GPU's display memory)
  const svg = charts.memoryChart(mem, { steps, width: 800, categories: legend().memory, labels: shown.gpus[0].memory });
  assert.equal(svg.getAttribute("width"), "800");
  const area = svg.querySelector("path.mem-allocated");
  const line = svg.querySelector("path.mem-reserved");
  assert.ok(area && line, "allocated area and reserved line");
  const cap = svg.querySelector("line.mem-capacity");
  const peak = svg.querySelector(".mem-peak circle");
  // the capacity line lies above the peak (40 GiB vs 19.5 GiB: higher on screen = smaller y)
  assert.ok(Number(cap.getAttribute("y1")) < Number(peak.getAttribute("cy")));
  assert.match(svg.querySelector(".mem-peak-label").textContent, /peak 19\.5 GiB, step 3/);
  assert.match(svg.querySelector(".mem-capacity-label").textContent, /capacity 40\.0 GiB/);
  // the peak sits at its time: its x between the first and last point's
  const cx = Number(peak.getAttribute("cx"));
  assert.ok(cx > 64 && cx < 800 - 12);
  // one band per step, the peak's step marked; the breakdown at the peak stacked in its categories
  const bands = [...svg.querySelectorAll("rect.step-band")];
  assert.equal(bands.length, steps.length);
  assert.deepEqual(bands.filter((b) => b.classList.contains("peak-step")).map((b) => b.dataset.step), ["3"]);
  assert.deepEqual([...svg.querySelectorAll(".mem-breakdown rect[data-category]")].map((r) => r.dataset.category), ["held", "activations"]);
  assert.deepEqual([...svg.querySelectorAll(".mem-breakdown rect[data-category] title")].map((t) => t.textContent),
    ["held", "activations"].map((k) => `${legend().memory.find((c) => c.id === k).label}: ${shown.gpus[0].memory.breakdown[k].bytes} (${shown.gpus[0].memory.breakdown[k].share})`));
  // each step's band says its times as the server wrote them
  assert.equal(bands[0].querySelector("title").textContent, units(`step 0: ${shown.steps[0].span}`));
});

test("the host section shows each GPU's memory: its peak in words, the chart, the holders and the OOM, as text", () => {
  const report = fixture();
  const el = views.reportView(report, ctx);
  const sec = el.querySelector(".host .gpu-memory[data-gpu='0']");
  assert.ok(sec, "GPU 0's memory section");
  assert.match(sec.querySelector(".memory-peak").textContent, /19\.5 GiB allocated \(19\.8 GiB reserved\) of 40\.0 GiB, 18\.0 ms into step 3/);
  assert.ok(sec.querySelector("svg.memory-chart"));
  assert.match(sec.querySelector(".oom h4").textContent, /2\.00 GiB could not be allocated/);
  assert.ok(sec.textContent.includes(HOSTILE), "hostile op and frame names shown as text");
  assert.equal(sec.querySelector("img"), null);
  assert.equal(el.querySelector(".host .gpu-memory[data-gpu='1']"), null, "GPU 1 records no memory");
});

test("the report lists every GPU's peak in one table, and a memory finding says what it frees", () => {
  const report = fixture();
  const el = views.reportView(report, ctx);
  const table = el.querySelector("section.memory table");
  const rows = [...table.querySelectorAll("tbody tr")];
  assert.equal(rows.length, 2); // one per host with memory: GPU 0 of worker0 and worker1
  // the CLI's peak table: its columns, its digits ("49.4%", as the text report prints it)
  assert.deepEqual([...table.querySelectorAll("th")].map((th) => th.textContent), report.display.memory.columns);
  assert.deepEqual([...rows[0].querySelectorAll("td")].map((td) => td.textContent), report.display.memory.rows[0]);
  assert.match(rows[0].textContent, /worker0.*19\.5 GiB.*19\.8 GiB.*40\.0 GiB.*49\.4%.*step 3/);
  const f = [...el.querySelectorAll(".finding")].find((x) => x.dataset.rule === "activation_memory");
  assert.match(f.querySelector(".saving-bytes").textContent, /frees ~5\.25 GiB/);
  assert.ok(!el.querySelector(".finding[data-rule='launch_bound'] .saving-bytes"));
});

test("no memory, no memory section", () => {
  const report = fixture();
  for (const hr of report.hosts) for (const g of hr.gpus) g.memory = null;
  report.display.memory.rows = []; // as report/view.display writes a report without memory
  const el = views.reportView(report, ctx);
  assert.equal(el.querySelector("section.memory"), null);
  assert.equal(el.querySelector(".gpu-memory"), null);
});

test("a step timeline draws each GPU's memory under its lanes, inside the plot", () => {
  const data = {
    start_ms: 100, end_ms: 200, host: "worker0", lanes: [], idle: [], steps: [{ step: 3, start_ms: 100, end_ms: 200 }],
    memory: [{ gpu: 0, baseline: "absolute", capacity_bytes: 40 * 2 ** 30, t_ms: [100, 120, 150, 180],
      allocated: [12 * 2 ** 30, 16 * 2 ** 30, 19 * 2 ** 30, 13 * 2 ** 30], reserved: [20 * 2 ** 30, 20 * 2 ** 30, 20 * 2 ** 30, 20 * 2 ** 30] }],
  };
  const svg = timeline.timelineChart(data, { width: 700 });
  const lane = svg.querySelector(".lane-memory");
  assert.equal(lane.dataset.gpu, "0");
  assert.match(lane.textContent, /GPU 0 memory/);
  const d = lane.querySelector("path.mem-allocated").getAttribute("d");
  const xs = [...d.matchAll(/[ML]([\d.]+),/g)].map((m) => Number(m[1]));
  assert.ok(xs.every((v) => v >= 0 && v <= 700), "every point inside the plot");
  assert.ok(lane.querySelector("path.mem-reserved"));
  // a window with memory but no lanes (a snapshot's) is still drawn
  const fig = timeline.timelineFigure(data, { host: "worker0", label: "memory peak", start_ms: 100, end_ms: 200, gpu: 0, step: 3 },
    { rule: "activation_memory" }, { format: "kineto" }, 700);
  assert.ok(fig.querySelector("svg.timeline"));
});

test("a history without times is drawn by its events' order: no ms on the axis, no steps, no timed peak", () => {
  // h37-left45: a PyTorch 2.0 snapshot's series carries `event` (its place in the history's order), not `t_ms`
  const mem = { ...memOf(fixture()), gpu: 0, peak_ms: null, peak_step: null, peak_place: "event 90 of 131",
    timeline: { axis: "allocation events", event: [1, 40, 90, 131], allocated: [2 ** 30, 3 * 2 ** 30, 5 * 2 ** 30, 2 ** 30],
      reserved: [4 * 2 ** 30, 4 * 2 ** 30, 6 * 2 ** 30, 6 * 2 ** 30] } };
  const svg = charts.memoryChart(mem, { steps: [{ step: 1, start_ms: 0, end_ms: 0.1 }], width: 700 });
  const axis = [...svg.querySelectorAll(".memory-axis text")].map((t) => t.textContent);
  assert.ok(axis.includes("event 1") && axis.includes("event 131"), axis.join(" | "));
  assert.ok(axis.some((t) => /allocation events/.test(t)));
  assert.ok(!axis.some((t) => /\d\s*(ms|µs|us)\b/.test(t)), axis.join(" | "));
  assert.equal(svg.querySelectorAll("rect.step-band").length, 0);
  assert.equal(svg.querySelector(".mem-peak"), null);
  assert.ok(svg.querySelector("path.mem-allocated") && svg.querySelector("path.mem-reserved"));
  // the GPU's section draws it (views.memoryView looked for `t_ms` only)
  const hr = { ...fixture().hosts[0], step_rows: [] };
  const el = views.memoryView(hr, { gpu: 0, memory: mem }, { ...ctx, legend: legend() });
  assert.ok(el.querySelector("svg.memory-chart"));
});

test("the memory peak names the step the server names: 'the pass' where no step is marked (h37-tabpass)", () => {
  const report = fixture();
  const mem = { ...memOf(report), gpu: 0 };
  const shown = report.display.hosts[0].gpus[0].memory;
  const peakLabel = (labels) => charts.memoryChart(mem, { width: 800, labels }).querySelector(".mem-peak-label").textContent;
  assert.equal(shown.peak_step_name, "step 3");  // the marked fixture: its step's number, as before
  assert.match(peakLabel(shown), /, step 3$/);
  const pass = peakLabel({ ...shown, peak_step_name: "the pass" });  // a one-pass host's (tests/serve/test_tab_pass.py)
  assert.match(pass, /, the pass$/);
  assert.doesNotMatch(pass, /step/);
});

test("the memory chart's band over a one-pass capture says 'the pass', a marked step's 'step N' (h37-words22)", async () => {
  const { readFileSync } = await import("node:fs");
  // a real one-pass host's steps as /report serves them (wild/cold_a100_alexnet, tests/support/plugin_fixtures.py);
  // it records no memory, so the line drawn over its pass is made here: the band's name is the server's
  const { host, shown } = JSON.parse(readFileSync(new URL("./fixtures/pass.json", import.meta.url), "utf8"));
  const steps = views.hostSteps(host, shown);
  assert.deepEqual(steps.map((s) => s.name), ["the pass"]);
  const { start_ms: a, end_ms: b } = steps[0];
  const mem = { gpu: 0, timeline: { t_ms: [a - 1, (a + b) / 2, b + 1], allocated: [0, 1 << 20, 0] } };
  const titles = [...charts.memoryChart(mem, { steps, width: 800 }).querySelectorAll("rect.step-band title")].map((t) => t.textContent);
  assert.deepEqual(titles, [units(`the pass: ${steps[0].span ?? ""}`)]);
  // the control: the marked fixture report's bands keep "step N"
  const report = fixture();
  const marked = views.hostSteps(report.hosts[0], report.display.hosts[0]);
  const bands = [...charts.memoryChart({ ...memOf(report), gpu: 0 }, { steps: marked, width: 800 }).querySelectorAll("rect.step-band title")];
  assert.ok(bands.length && bands.every((t, i) => t.textContent.startsWith(`step ${marked[i].step}: `)), bands.map((t) => t.textContent).join(" | "));
});

test("the GPU's memory chart names what holds it as the server named it for the job (h37-memwords40)", () => {
  // the display's `categories` (report/view.memory_labels: a job of forward passes only holds no optimizer state)
  // win over the legend's training names; a report without them (served before a61) falls back to the legend
  const report = fixture();
  const mem = { ...memOf(report), gpu: 0, breakdown: { held: 3 * 2 ** 30, activations: 2 ** 30 } };
  const shown = report.display.hosts[0].gpus[0].memory;
  const forward = (shown.categories || []).map((c) => (c.id === "held" ? { ...c, label: "Held across steps (parameters, caches)" } : c));
  assert.ok(forward.length, "the display names the chart's categories");
  const text = (s) => views.memoryView(report.hosts[0], { gpu: 0, memory: mem }, { ...ctx, legend: legend() }, s, report.display.hosts[0])
    .querySelector("svg.memory-chart").textContent;
  assert.match(text({ ...shown, categories: forward }), /Held across steps \(parameters, caches\)/);
  assert.doesNotMatch(text({ ...shown, categories: forward }), /optimizer state/);
  assert.match(text({ ...shown, categories: undefined }), /optimizer state/);
});
