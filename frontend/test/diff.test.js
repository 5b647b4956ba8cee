import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { HOSTILE, STATIC } from "./dom_env.js";

const diffViews = await import(new URL("diff.js", STATIC));
const model = await import(new URL("model.js", STATIC));
// a real diff (tests/plugin_fixtures.py: demo input_bound -> input_bound_fixed), base label hostile
const fixture = () => JSON.parse(readFileSync(new URL("./fixtures/diff.json", import.meta.url), "utf8"));

test("verdict and calibration lines say what the CLI says", () => {
  const d = fixture();
  const el = diffViews.diffView(d);
  assert.equal(el.dataset.verdict, "faster");
  const verdict = el.querySelector(".diff-verdict").textContent;
  assert.match(verdict, /^Step time 10\.1 ms → 4\.15 ms \(−5\.92 ms, −58\.8%\): faster \(noise ±\d+ µs\)$/);
  const cal = el.querySelector(".calibration").textContent;
  const title = d.findings.find((f) => f.rule === "input_bound").title;
  assert.ok(cal.startsWith(`Fixed '${title}': predicted saving`), cal);  // the finding's words, never its rule id
  const c = d.calibration;  // the words are the fixture's numbers as the CLI writes them (3 significant digits), the ratio in whole per cent
  assert.ok(cal.includes(`: predicted saving ${c.predicted_ms.toFixed(2)} ms/step, realised ${c.realised_ms.toFixed(2)} ` +
                         `ms/step (${Math.round(c.ratio * 100)}% of predicted, within ±25%)`), cal);
  assert.match(cal, /no other finding got worse/);
});

test("findings diff: one row per matched rule with severity and saving before -> after, named by title", () => {
  const d = fixture();
  const rows = [...diffViews.diffView(d).querySelectorAll("table.diff-table")[0].querySelectorAll("tbody tr")];
  assert.equal(rows.length, d.findings.length);
  const cells = [...rows[0].querySelectorAll("td")].map((td) => td.textContent);
  assert.deepEqual(cells, ["fixed", "critical → –", `${d.findings[0].base_saving_ms.toFixed(2)} ms → –`, d.findings[0].title]);
  assert.ok(!cells.includes(d.findings[0].rule));  // no internal rule id on the screen (issue #36)
  assert.ok(rows[0].classList.contains("finding-fixed"));
});

test("breakdown bars: base and new per group on one scale", () => {
  const d = fixture();
  const svg = diffViews.breakdownBars(d.breakdown, { width: 640 });
  const bars = [...svg.querySelectorAll("rect.bar")];
  const byGroup = {};
  for (const r of bars) {
    const g = r.closest("g").dataset.group;
    (byGroup[g] ||= {})[r.dataset.side] = { w: Number(r.getAttribute("width")), v: Number(r.dataset.value) };
  }
  assert.ok(byGroup.input && byGroup.compute, Object.keys(byGroup).join(","));
  const input = d.breakdown.find((c) => c.key === "input");
  assert.equal(byGroup.input.base.v, input.base);
  // one scale: width / value is the same for every bar drawn wider than the 1 px minimum
  const ratios = bars.map((r) => Number(r.getAttribute("width")) / Number(r.dataset.value)).filter((x, i) => Number(bars[i].getAttribute("width")) > 1);
  assert.ok(ratios.length >= 3);
  for (const x of ratios) assert.ok(Math.abs(x - ratios[0]) < 1e-6 * ratios[0], `${x} vs ${ratios[0]}`);
  assert.ok(byGroup.input.base.w > 10 * Math.max(byGroup.input.new.w, 1e-9) || byGroup.input.new.w <= 1);
});

test("every section is there, and profile text stays text", () => {
  const d = fixture();
  const el = diffViews.diffView(d, { onClose: () => {} });
  const captions = [...el.querySelectorAll("caption")].map((c) => c.textContent);
  // the fixture's fix changed no kernel: those tables say so in one line each instead of listing "+0.0" rows
  const unchanged = (t) => d[t].every((c) => c.status === "changed" && Math.abs(c.delta) < 0.05);
  const want = [["Kernel time by class (µs/step)", "kernel_classes"], ["Largest kernel changes (µs/step)", "kernels"],
    ["Largest op changes (kernel µs/step)", "ops"]];
  assert.deepEqual(captions, ["Findings", "Headline", ...want.filter(([, t]) => !unchanged(t)).map(([c]) => c), "GPUs"]);
  assert.deepEqual([...el.querySelectorAll("p.no-change")].map((p) => p.textContent.split(":")[0]),
    want.filter(([, t]) => unchanged(t)).map(([c]) => c));
  assert.equal(el.querySelector(".side-label").textContent, `input_bound ${HOSTILE}`);
  assert.equal(el.querySelectorAll("script, img").length, 0);
  assert.ok(el.querySelector("button.close-diff"));
});

test("compare picker lists every other run/session and reports the pick", () => {
  const runs = [{ run: "a", sessions: [{ session: "s2" }, { session: "s1" }] }, { run: "b", sessions: [{ session: "s1" }] }];
  const opts = diffViews.compareOptions(runs, { run: "a", session: "s2" });
  assert.deepEqual(opts.map((o) => o.label), ["— none —", "a / s1", "b"]);
  let picked;
  const label = diffViews.comparePicker(runs, { run: "a", session: "s2" }, { run: "b", session: "s1" }, (c) => (picked = c));
  const sel = label.querySelector("select");
  assert.equal(sel.value, JSON.stringify(["b", "s1"]));
  sel.value = JSON.stringify(["a", "s1"]);
  sel.dispatchEvent(new window.Event("change"));
  assert.deepEqual(picked, { run: "a", session: "s1" });
  sel.value = "";
  sel.dispatchEvent(new window.Event("change"));
  assert.equal(picked, null);
});

test("fetchDiff polls ./diff with base and new until ready", async () => {
  const urls = [];
  const answers = [
    { status: 202, body: { state: "computing", progress: 0.5, message: "a/s: analysing" } },
    { status: 200, body: fixture() },
  ];
  const fn = async (url) => {
    urls.push(url);
    const a = answers.shift();
    return { ok: a.status < 300, status: a.status, json: async () => a.body, text: async () => JSON.stringify(a.body) };
  };
  const progress = [];
  const result = await model.fetchDiff({ run: "a/x", session: "s&1" }, { run: "b", session: "t", host: "h" }, { fetchFn: fn, pollMs: 1, onProgress: (p) => progress.push(p.progress) });
  assert.equal(result.diff.step.verdict, "faster");
  assert.deepEqual(progress, [0.5]);
  const q = new URL(urls[0], "http://x/").searchParams;
  assert.deepEqual(Object.fromEntries(q), { base_run: "a/x", base_session: "s&1", new_run: "b", new_session: "t", host: "h" });
});

test("an unknown step time says why instead of a verdict", () => {
  const d = fixture();
  d.step = { ...d.step, verdict: "unknown", delta_ms: null };
  d.new = { ...d.new, error: "host h could not be analysed: truncated" };
  assert.match(diffViews.verdictText(d), /cannot compare \(host h could not be analysed: truncated\)/);
});

test("a diff answered again (new generated_at only) is the same view; any other change is not", () => {
  const d = fixture();
  const again = { ...fixture(), generated_at: "2099-01-01T00:00:00+00:00" };
  assert.equal(diffViews.diffIdentity(again), diffViews.diffIdentity(d));
  const changed = fixture();
  changed.step.new_ms += 0.001;
  assert.notEqual(diffViews.diffIdentity(changed), diffViews.diffIdentity(d));
});

test("the breakdown figure redraws to its width (window resize)", async () => {
  const views = await import(new URL("views.js", STATIC));
  const fig = diffViews.diffView(fixture(), { width: 640 }).querySelector("figure.diff-figure");
  assert.equal(fig.querySelector("svg").getAttribute("width"), "640");
  assert.equal(views.fitChart(fig, 1200), true);
  const svg = fig.querySelector("svg.diff-bars");
  assert.equal(svg.getAttribute("width"), "1200");
  assert.ok(svg.querySelectorAll("rect.bar").length >= 4);
});

test("every column of the diff's tables is named (was: an unnamed last column)", () => {
  const d = fixture();
  for (const t of ["kernel_classes", "kernels", "ops"]) d[t] = d[t].map((c) => ({ ...c, delta: 1 }));  // every table drawn
  const el = diffViews.diffView(d);
  const heads = [...el.querySelectorAll("table.diff-table thead th")].map((th) => th.textContent.trim());
  assert.ok(heads.length >= 20 && heads.every(Boolean), heads.join(" | "));
  assert.ok(heads.includes("status") && heads.includes("better or worse"));
});

test("the breakdown groups are the server's: named by its legend, every group the diff compares drawn", async () => {
  const { legend } = await import("./dom_env.js");
  const groups = legend().groups;
  assert.ok(["startup", "unseen", "allocator"].every((id) => groups.some((g) => g.id === id)));
  // a diff with time in a group the tab had no list entry for (was dropped: GROUPS knew six groups)
  const changes = [{ key: "input", label: "input", base: 5, new: 1, delta: -4 }, { key: "startup", label: "startup", base: 3, new: 0, delta: -3 },
    { key: "brand_new", label: "brand_new", base: 1, new: 1, delta: 0 }];
  const svg = diffViews.breakdownBars(changes, { width: 640, groups });
  assert.deepEqual([...svg.querySelectorAll("g.group")].map((g) => g.dataset.group), ["input", "startup", "brand_new"]);
  assert.deepEqual([...svg.querySelectorAll("g.group text.chart-label")].map((t) => t.textContent), ["Input", "Start-up", "brand new"]);
  const fig = diffViews.diffView(fixture(), { legend: legend() }).querySelector("figure.diff-figure");
  assert.ok(fig.querySelector("g.group[data-group='input'] text.chart-label").textContent === "Input");
});

test("Compare leaves out kernels whose change is no change (+0.0)", () => {
  const d = fixture();
  d.kernels = [{ key: "same", label: "same", base: 10, new: 10.01, delta: 0.01, status: "changed" },
    { key: "moved", label: "moved", base: 10, new: 12, delta: 2, status: "changed" }];
  const table = [...diffViews.diffView(d).querySelectorAll("table.diff-table")]
    .find((t) => t.querySelector("caption").textContent.startsWith("Largest kernel changes"));
  assert.deepEqual([...table.querySelectorAll("tbody tr")].map((r) => r.querySelector("td").textContent), ["moved"]);
});
