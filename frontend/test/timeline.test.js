import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fixture, HOSTILE, legend, STATIC } from "./dom_env.js";

const tl = await import(new URL("timeline.js", STATIC));
const views = await import(new URL("views.js", STATIC));
const { units } = await import(new URL("dom.js", STATIC));
// a real /window answer: the demo input_bound finding's first window (tests/support/plugin_fixtures.py), hostile names
const windowFixture = () => JSON.parse(readFileSync(new URL("./fixtures/window.json", import.meta.url), "utf8"));
const sel = { run: "input_bound", session: "2026_01_01_00_00_00", legend: legend() };
const LEGEND = legend();
const num = (el, name) => Number(el.getAttribute(name));

test("the timeline draws every lane and event inside the plot, at the width it is given", () => {
  const data = windowFixture();
  const svg = tl.timelineChart(data, { width: 900 });
  assert.equal(svg.getAttribute("width"), "900");
  const lanes = [...svg.querySelectorAll("g.lane")];
  assert.equal(lanes.length, data.lanes.length);
  assert.ok(lanes.some((g) => g.dataset.kind === "gpu") && lanes.some((g) => g.dataset.kind === "host"));
  const rects = [...svg.querySelectorAll("rect.ev")];
  assert.equal(rects.length, data.lanes.reduce((n, l) => n + l.events.length, 0));
  const labelW = Math.min(220, Math.max(110, 900 * 0.2));
  for (const r of rects) {
    assert.ok(num(r, "x") >= labelW - 1e-6 && num(r, "x") + num(r, "width") <= 900 - 8 + 1, r.outerHTML.slice(0, 120));
    assert.ok(r.querySelector("title").textContent.includes(" — "));
  }
  // the kernels and copies of the GPU lane, the host's input wait
  assert.ok(svg.querySelector("rect.ev.k-kernel") && svg.querySelector("rect.ev.k-memcpy_h2d") && svg.querySelector("rect.ev.k-input"));
  // axis ticks are times inside the window, as the finding's window counts them
  const ticks = [...svg.querySelectorAll(".time-axis text.axis:not(.step-label)")].map((t) => t.textContent);
  assert.ok(ticks.length >= 3 && ticks.every((t) => / ms$/.test(t)), ticks);
});

test("the finding's wait is highlighted and lies within the window; other idle time is drawn, not highlighted", () => {
  const data = windowFixture();
  const svg = tl.timelineChart(data, { width: 800, legend: LEGEND, focus: tl.focusCategories("input_bound", LEGEND) });
  const focus = [...svg.querySelectorAll("rect.idle.focus")];
  assert.ok(focus.length >= 1);
  for (const r of focus) {
    assert.equal(r.dataset.category, "input_wait");
    assert.ok(Number(r.dataset.start) >= data.start_ms && Number(r.dataset.end) <= data.end_ms);
    assert.match(r.querySelector("title").textContent, /waiting for input/);
  }
  const others = [...svg.querySelectorAll("rect.idle:not(.focus)")];
  assert.ok(others.length >= 1 && others.every((r) => r.dataset.category !== "input_wait"));
  // the band covers the GPU's lanes only, not the host threads
  const gpuLane = [...svg.querySelectorAll("g.lane-gpu")].at(-1).querySelector("line.lane-rule");
  const hostLane = [...svg.querySelectorAll("g.lane-host")].at(-1).querySelector("line.lane-rule");
  assert.ok(num(focus[0], "y") + num(focus[0], "height") <= num(gpuLane, "y1") + 1);
  assert.ok(num(focus[0], "y") + num(focus[0], "height") < num(hostLane, "y1"));
  // a rule with no wait of its own highlights every kind of GPU idle time
  const all = tl.timelineChart(data, { legend: LEGEND, focus: tl.focusCategories("some_other_rule", LEGEND) });
  assert.equal(all.querySelectorAll("rect.idle.focus").length, data.idle.length);
});

test("the waits and idle categories are the server's: a rule or category it adds needs no edit here", () => {
  // as served: the rules main added (cold_start, allocator_churn) speak of their own waits
  assert.deepEqual(tl.focusCategories("cold_start", LEGEND), ["startup"]);
  assert.deepEqual(tl.focusCategories("allocator_churn", LEGEND), ["allocator"]);
  assert.deepEqual(tl.focusCategories("eager_execution", LEGEND), ["launch_wait", "host_compute"]);
  assert.deepEqual(tl.idleCategories(LEGEND), ["kernel_switch", "startup", "stream_handoff", "unseen", "profiler", "allocator", "input_wait", "host_compute", "launch_wait", "managed_read", "other"]);
  // a legend with a new rule and a new idle category, as a server with them would send
  const more = { ...LEGEND, idle: [...LEGEND.idle, { id: "page_faults", label: "GPU idle: page faults" }],
    rule_waits: { ...LEGEND.rule_waits, page_fault_storm: ["page_faults"] } };
  const data = windowFixture();
  data.idle = [...data.idle, { gpu: data.idle[0].gpu, start_ms: data.start_ms, end_ms: data.start_ms + 0.01, category: "page_faults" }];
  const svg = tl.timelineChart(data, { legend: more, focus: tl.focusCategories("page_fault_storm", more) });
  const focus = [...svg.querySelectorAll("rect.idle.focus")];
  assert.deepEqual(focus.map((r) => r.dataset.category), ["page_faults"]);
  assert.match(focus[0].querySelector("title").textContent, /GPU idle: page faults/);
  assert.match(tl.timelineLegend(data, ["page_faults"], more).querySelector("li.focus").textContent, /page faults \(this finding\)/);
});

test("profile text stays text: hostile kernel and thread names are Text nodes and titles", () => {
  const data = windowFixture();
  const fig = tl.timelineFigure(data, data.window, { rule: "input_bound" }, { ...sel, format: "xplane" }, 800);
  document.body.append(fig);
  assert.equal(fig.querySelectorAll("script, img, [onerror]").length, 0);
  assert.ok([...fig.querySelectorAll("title")].some((t) => t.textContent.startsWith(HOSTILE)));
  const label = [...fig.querySelectorAll("text.lane-label")].find((t) => t.querySelector("title").textContent.includes(HOSTILE));
  assert.ok(label && label.firstChild.nodeType === 3, "a lane label is a Text node, cut, with the whole name as its title");
  fig.remove();
});

test("lanes stack nested calls in rows and the legend names what is drawn", () => {
  const data = windowFixture();
  const host = data.lanes.find((l) => l.kind === "host" && l.rows > 1);
  assert.ok(host, "the fixture's host thread has nested calls");
  const svg = tl.timelineChart(data, { width: 700 });
  const g = [...svg.querySelectorAll("g.lane-host")].find((x) => x.querySelector("text title").textContent === host.label);
  const ys = new Set([...g.querySelectorAll("rect.ev")].map((r) => r.getAttribute("y")));
  assert.equal(ys.size, host.rows);
  const shown = tl.timelineLegend(data, ["input_wait"], LEGEND);
  assert.match(shown.textContent, /kernel/);
  assert.match(shown.querySelector("li.focus").textContent, /waiting for input \(this finding\)/);
});

test("a bounded window says what it left out; an empty one says nothing was recorded", () => {
  const data = windowFixture();
  data.note = "20 of 134 events shown: the 114 shortest (under 12 us) are left out to keep the answer small.";
  const fig = tl.timelineFigure(data, data.window, { rule: "input_bound" }, sel, 600);
  assert.match(fig.querySelector(".timeline-note").textContent, /20 of 134 events shown/);
  const empty = tl.timelineFigure({ ...data, lanes: [], idle: [], note: "" }, data.window, { rule: "input_bound" }, sel, 600);
  assert.equal(empty.querySelector("svg"), null);
  assert.match(empty.textContent, /Nothing was recorded/);
});

test("time ticks are round and inside the window", () => {
  const t = tl.timeTicks(22.086, 32.252, 5);
  assert.ok(t.length >= 4 && t.every((x) => x >= 22.086 && x <= 32.252));
  const step = t[1] - t[0];
  assert.ok([1, 2, 2.5, 5].includes(step) && t.every((x) => Number.isInteger(x / step)), String(t));
  assert.deepEqual(tl.timeTicks(5, 5), [5]);
});

test("the window as a Chrome JSON trace: one track per lane, the idle runs, times in µs", () => {
  const data = windowFixture();
  const trace = tl.chromeTrace(data, LEGEND);
  const spans = trace.traceEvents.filter((e) => e.ph === "X");
  const events = data.lanes.reduce((n, l) => n + l.events.length, 0);
  assert.equal(spans.length, events + data.idle.length);
  const first = data.lanes[0].events[0];
  const drawn = spans.find((e) => e.name === first[2]);
  assert.equal(drawn.ts, first[0] * 1000);
  assert.ok(Math.abs(drawn.dur - (first[1] - first[0]) * 1000) < 1e-6);
  const threads = trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name").map((e) => e.args.name);
  assert.ok(threads.includes(data.lanes[0].label) && threads.some((n) => /idle/.test(n)));
});

/** A stand-in for the tab ui.perfetto.dev opens: records what is posted, answers PONG when told. */
function fakePerfetto() {
  const win = { posted: [], closed: false, postMessage(data, origin) { this.posted.push({ data, origin }); } };
  win.pong = () => {
    const ev = new window.Event("message");
    Object.defineProperties(ev, { source: { value: win }, data: { value: "PONG" }, origin: { value: tl.PERFETTO_ORIGIN } });
    window.dispatchEvent(ev);
  };
  return win;
}

test("Open in Perfetto: PING until PONG, then the trace buffer with its title, to Perfetto's origin only", async () => {
  const win = fakePerfetto();
  const statuses = [];
  let opened = null;
  const done = tl.openInPerfetto(async () => new Uint8Array([1, 2, 3]).buffer, { title: "run/s host", fileName: "w.json", pingMs: 5,
    open: (url) => ((opened = url), win), onStatus: (m) => statuses.push(m) });
  assert.equal(opened, `${tl.PERFETTO_ORIGIN}/#!/`);
  for (let i = 0; i < 200 && win.posted.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(win.posted.length >= 2 && win.posted.every((p) => p.data === "PING" && p.origin === tl.PERFETTO_ORIGIN), JSON.stringify(win.posted));
  win.pong();
  assert.equal(await done, true);
  const last = win.posted.at(-1);
  assert.equal(last.origin, tl.PERFETTO_ORIGIN);
  assert.deepEqual(Object.keys(last.data.perfetto).sort(), ["buffer", "fileName", "title"]);
  assert.equal(last.data.perfetto.title, "run/s host");
  assert.deepEqual([...new Uint8Array(last.data.perfetto.buffer)], [1, 2, 3]);
  assert.match(statuses.at(-1), /Opened in Perfetto/);
  const after = win.posted.length;
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(win.posted.length, after, "no more pings once the trace is sent");
});

test("Open in Perfetto says why it could not: a blocked pop-up, or no answer from Perfetto", async () => {
  const statuses = [];
  assert.equal(await tl.openInPerfetto(async () => new ArrayBuffer(1), { open: () => null, onStatus: (m) => statuses.push(m) }), false);
  assert.match(statuses.at(-1), /blocked the new tab.*Download trace/);
  const silent = fakePerfetto();
  assert.equal(await tl.openInPerfetto(async () => new ArrayBuffer(1), { open: () => silent, timeoutMs: 20, pingMs: 5, onStatus: (m) => statuses.push(m) }), false);
  assert.match(statuses.at(-1), /did not answer.*Download trace/);
  assert.ok(silent.posted.every((p) => p.data === "PING"), "nothing but pings without a PONG");
});

test("Perfetto gets the trace file itself where the server says it opens the format and one small file holds the host, else the window drawn", () => {
  const data = windowFixture();
  const ctx = { ...sel, perfetto: true, hostInfo: { worker0: { host: "worker0", size: 3e5, files: 1 } } };
  const whole = tl.perfettoSource(data, ctx);
  assert.equal(whole.whole, true);
  assert.equal(whole.url, "./trace?run=input_bound&session=2026_01_01_00_00_00&host=worker0");
  assert.equal(tl.perfettoSource(data, { ...ctx, hostInfo: { worker0: { size: 3e5, files: 4 } } }).whole, false);
  assert.equal(tl.perfettoSource(data, { ...ctx, perfetto: false }).whole, false);
  assert.equal(tl.perfettoSource(data, { ...ctx, perfetto: undefined, format: "kineto" }).whole, false); // no format names here
  assert.equal(tl.perfettoSource(data, { ...ctx, hostInfo: { worker0: { size: 1e9, files: 1 } } }).whole, false);
});

/** fetch stand-in: /window answers 202 once, then the fixture; records the URLs asked. */
function fakeFetch(answer = windowFixture()) {
  const asked = [];
  let polls = 0;
  const fn = async (url) => {
    asked.push(url);
    if (polls++ === 0) return { status: 202, ok: true, json: async () => ({ state: "computing", progress: 0.1, message: "reading worker0" }) };
    if (answer instanceof Error) return { status: 500, ok: false, statusText: "x", json: async () => ({ state: "error", error: answer.message }) };
    return { status: 200, ok: true, json: async () => answer };
  };
  fn.asked = asked;
  return fn;
}

const settle = () => new Promise((r) => setTimeout(r, 20));

test("Show step N fetches that window once it is pressed, draws it, and hides it on a second press", async () => {
  const f = fixture().findings[0];
  const data = windowFixture();
  f.rule = "input_bound";
  f.windows = [data.window, { ...data.window, label: "other", start_ms: 50, end_ms: 60, step: 7 }];
  const fetchFn = fakeFetch();
  const el = tl.windowTimelines(f, { ...sel, perfetto: false, fetchFn, chartWidth: 700 });
  document.body.append(el);
  const buttons = [...el.querySelectorAll("button.show-window")];
  assert.deepEqual(buttons.map((b) => b.textContent), [`Show step ${data.window.step}`, "Show step 7"]);
  assert.equal(fetchFn.asked.length, 0, "nothing is fetched before a press");
  assert.ok(el.querySelector(".timeline-panel").hidden);
  buttons[0].click();
  await new Promise((r) => setTimeout(r, 600)); // one 202, one 400 ms poll
  assert.equal(fetchFn.asked.length, 2);
  const q = new URL(fetchFn.asked[0], "http://x/").searchParams;
  assert.deepEqual([q.get("run"), q.get("session"), q.get("host"), Number(q.get("start_ms")), Number(q.get("end_ms"))],
    [sel.run, sel.session, data.window.host, data.window.start_ms, data.window.end_ms]);
  const panel = el.querySelector(".timeline-panel");
  assert.equal(panel.hidden, false);
  assert.ok(panel.querySelector("svg.timeline rect.idle.focus"));
  assert.equal(buttons[0].getAttribute("aria-pressed"), "true");
  assert.match(panel.querySelector(".open-perfetto").textContent, /Open window in Perfetto/);
  buttons[0].click();
  assert.ok(panel.hidden && !panel.querySelector("svg"));
  assert.equal(buttons[0].getAttribute("aria-pressed"), "false");
  const download = el.querySelector("a.download-trace");
  assert.equal(download.getAttribute("href"), `./trace?run=${sel.run}&session=${sel.session}&host=${data.window.host}`);
  assert.ok(download.hasAttribute("download"));
  el.remove();
});

test("a window the server could not read says why, in the panel", async () => {
  const f = { ...fixture().findings[0], windows: [windowFixture().window] };
  const el = tl.windowTimelines(f, { ...sel, fetchFn: fakeFetch(new Error("worker process killed by signal 9")) });
  el.querySelector("button.show-window").click();
  await new Promise((r) => setTimeout(r, 600));
  assert.match(el.querySelector(".timeline-error").textContent, /Could not draw step \d+: worker process killed/);
  await settle();
});

test("the finding view offers the timelines where the tab knows the session, and not in a detached report", () => {
  const report = fixture();
  const ctx = { root: "http://localhost:6006/", stockRun: "run1/s", hosts: ["worker0"] };
  assert.equal(views.reportView(report, ctx).querySelectorAll(".timelines").length, 0);
  const withSession = views.reportView(report, { ...ctx, run: "run1", session: "s" });
  const withWindows = report.findings.filter((f) => f.rule !== "healthy" && f.windows.length).length;
  assert.ok(withWindows >= 1);
  assert.equal(withSession.querySelectorAll(".timelines").length, withWindows);
  const pytorch = views.reportView(report, { ...ctx, run: "run1", session: "s", stockTool: false, formatName: "PyTorch trace" });
  assert.match(pytorch.querySelector(".no-links").textContent, /step timeline here \(Show step\)/);
  assert.ok(pytorch.querySelector(".timelines button.show-window"));
});

test("a finding's windows on several hosts name the host on their buttons (was: three identical 'Show step 10')", () => {
  const w = windowFixture().window;
  const f = { ...fixture().findings[0], windows: ["worker0", "worker1", "worker2"].map((host) => ({ ...w, host, step: 10 })) };
  const el = tl.windowTimelines(f, { ...sel, fetchFn: fakeFetch() });
  const labels = [...el.querySelectorAll("button.show-window")].map((b) => b.textContent);
  assert.deepEqual(labels, ["Show step 10 on worker0", "Show step 10 on worker1", "Show step 10 on worker2"]);
  assert.deepEqual([...el.querySelectorAll("button.show-window")].map((b) => b.dataset.host), ["worker0", "worker1", "worker2"]);
  // one host: no host named; two GPUs of one host in the same step: the GPU named; still alike: numbered
  assert.deepEqual(tl.windowButtonLabels([{ ...w, step: 3 }, { ...w, step: 4 }]), ["Show step 3", "Show step 4"]);
  assert.deepEqual(tl.windowButtonLabels([{ ...w, step: 3, gpu: 0 }, { ...w, step: 3, gpu: 1 }]), ["Show step 3, GPU 0", "Show step 3, GPU 1"]);
  assert.deepEqual(tl.windowButtonLabels([{ ...w, step: 3 }, { ...w, step: 3 }]), ["Show step 3 (1)", "Show step 3 (2)"]);
  // the merged finding of the fixture (input wait on both hosts)
  const merged = fixture().findings.find((x) => (x.hosts || []).length > 1);
  const names = [...tl.windowTimelines(merged, { ...sel }).querySelectorAll("button.show-window")].map((b) => b.textContent);
  assert.equal(new Set(names).size, names.length, names.join(" | "));
});

test("the legend gives each idle category's time as the server summed it over every run, not the drawn runs", () => {
  const data = windowFixture();
  const want = data.idle_ms[0].ms.input_wait;
  // drop all but one drawn run, as the 2,000-run bound does on a busy window: the legend's time must not move
  const kept = data.idle.filter((r) => r.category === "input_wait").slice(0, 1);
  const shown = { ...data, idle: [...kept, ...data.idle.filter((r) => r.category !== "input_wait")] };
  const drawn = kept.reduce((a, r) => a + r.end_ms - r.start_ms, 0);
  assert.ok(Math.abs(drawn - want) > 1e-3 || data.idle.filter((r) => r.category === "input_wait").length === 1);
  const li = tl.timelineLegend(shown, null, LEGEND).querySelector('li[data-category="input_wait"]');
  // as the server wrote it (the window's display.idle_ms, report/timeline.display)
  assert.ok(want > 0);
  assert.ok(li.textContent.endsWith(`: ${units(data.display.idle_ms[0].ms.input_wait)}`), li.textContent);
  // several GPUs: each GPU's own time, named
  const two = { ...data, idle_ms: [{ gpu: 0, ms: { input_wait: 1.5 } }, { gpu: 1, ms: { input_wait: 0.25 } }],
    display: { idle_ms: [{ gpu: 0, ms: { input_wait: "<1.5>" } }, { gpu: 1, ms: { input_wait: "<0.25>" } }] } };
  const li2 = tl.timelineLegend(two, null, LEGEND).querySelector('li[data-category="input_wait"]');
  assert.ok(li2.textContent.endsWith(`: GPU 0 <1.5> · GPU 1 <0.25>`), li2.textContent);
  assert.equal(tl.idleTotals({ idle_ms: [] }, "input_wait"), "");
});

test("a step timeline prints the server's times: each event's, each idle run's, the steps' edges, its span (window.json's display)", () => {
  const data = windowFixture();
  const d = data.display;
  const svg = tl.timelineChart(data, { width: 800, legend: LEGEND });
  // every event's hover ends with its duration and span as the server wrote them, lane by lane
  const lanes = [...svg.querySelectorAll("g.lane:not(.lane-memory)")];
  assert.equal(lanes.length, data.lanes.length);
  lanes.forEach((g, i) => {
    const tips = [...g.querySelectorAll("rect.ev title")].map((t) => t.textContent);
    assert.equal(tips.length, d.lanes[i].length);
    tips.forEach((tip, k) => assert.ok(tip.endsWith(`, ${units(d.lanes[i][k])}`), tip));
  });
  const idle = [...svg.querySelectorAll("rect.idle title")].map((t) => t.textContent);
  assert.ok(idle.length > 0);
  idle.forEach((tip, k) => assert.ok(tip.endsWith(`: ${units(d.idle[k])}`), tip));
  // the figure's caption: the window's span, as the finding names it ("Open in trace viewer: ... (120.0–160.0 ms)")
  const fig = tl.timelineFigure(data, data.window, { rule: "input_bound" }, sel, 800);
  assert.ok(fig.querySelector("figcaption").textContent.includes(units(d.span)), fig.querySelector("figcaption").textContent);
});

// a real one-pass capture (wild/cold_a100_alexnet: no step marked, read as one pass; tests/support/plugin_fixtures.py)
const passFixture = () => JSON.parse(readFileSync(new URL("./fixtures/pass.json", import.meta.url), "utf8"));

test("the axis names a one-pass capture's step 'the pass', a marked step 'step N' (h37-tabpass)", () => {
  const { window: data } = passFixture();
  const svg = tl.timelineChart(data, { width: 900 });
  const said = [...svg.querySelectorAll(".step-edge title, .step-label")].map((t) => t.textContent);
  assert.ok(said.length >= 2, said);  // both edges of the pass lie inside the window
  assert.ok(said.every((t) => t.startsWith("the pass")) && !said.some((t) => /step \d/.test(t)), said.join(" | "));
  // the control: a capture whose steps are marked keeps their numbers
  const marked = tl.timelineChart(windowFixture(), { width: 900 });
  const kept = [...marked.querySelectorAll(".step-edge title, .step-label")].map((t) => t.textContent);
  assert.ok(kept.length && kept.every((t) => /^step \d+/.test(t)), kept.join(" | "));
});

test("a one-pass capture's window buttons and their panel say 'the pass', a marked step's 'step N' (h37-words22)", async () => {
  // the real one-pass finding (wild/cold_a100_alexnet's first finding with a window) as /report serves it
  const { finding } = passFixture();
  const f = { ...fixture().findings[0], rule: finding.rule, windows: finding.windows };
  const names = finding.shown.window_names;
  assert.deepEqual(names, ["the pass"]);  // the server's name (report/view._window_names), not the step id 0
  assert.deepEqual(tl.windowButtonLabels(f.windows, names), ["Show the pass"]);
  const el = tl.windowTimelines(f, { ...sel, fetchFn: fakeFetch(new Error("worker process killed by signal 9")) },
    finding.shown.windows, names);
  const button = el.querySelector("button.show-window");
  assert.equal(button.textContent, "Show the pass");
  button.click();
  // while it reads and when it fails, the panel names the window as its button does
  assert.match(el.querySelector(".timeline-panel [role=status]").textContent, /^Reading benchmark_result for the pass…$/);
  await new Promise((r) => setTimeout(r, 600));
  assert.match(el.querySelector(".timeline-error").textContent, /^Could not draw the pass: worker process killed/);
  assert.doesNotMatch(el.textContent, /step \d/);
  await settle();
  // the control: a marked capture's windows keep their numbers (the fixture report's display names them "step N")
  const report = fixture();
  const k = report.findings.findIndex((x) => x.windows.length);
  const marked = report.display.findings[k].window_names;
  assert.deepEqual(marked, report.findings[k].windows.map((w) => `step ${w.step}`));
  assert.deepEqual(tl.windowButtonLabels(report.findings[k].windows, marked).map((l) => l.replace(/ on .*|, GPU .*| \(\d\)$/, "")),
    marked.map((n) => `Show ${n}`));
});
