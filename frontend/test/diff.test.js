import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { HOSTILE, STATIC } from "./dom_env.js";

const diffViews = await import(new URL("diff.js", STATIC));
const model = await import(new URL("model.js", STATIC));
// a real diff (tests/plugin_fixtures.py: demo input_bound -> input_bound_fixed), base label hostile
const fixture = () => JSON.parse(readFileSync(new URL("./fixtures/diff.json", import.meta.url), "utf8"));

const { units } = await import(new URL("dom.js", STATIC));
// a real diff of two memory snapshots (tests/support/plugin_fixtures.py: the same forward-only job with autograd on and
// under inference mode, synthetic.memsnapshot.forward_only)
const memoryFixture = () => JSON.parse(readFileSync(new URL("./fixtures/diff_memory.json", import.meta.url), "utf8"));

test("verdict and calibration lines are the CLI's (the document's display), never written here", () => {
  const d = fixture();
  const el = diffViews.diffView(d);
  assert.equal(el.dataset.verdict, "faster");
  const verdict = el.querySelector(".diff-verdict").textContent;
  assert.equal(verdict, units(d.display.verdict));
  assert.match(verdict, /^Step time: 10\.1 ms -> 4\.15 ms \(-5\.92 ms, -58\.8%\): faster \(noise ±\d+ µs\)$/);
  const cal = el.querySelector(".calibration").textContent;
  const title = d.findings.find((f) => f.rule === "input_bound").title;
  assert.ok(cal.startsWith(`Fixed '${title}': predicted saving`), cal);  // the finding's words, never its rule id
  assert.equal(cal, d.display.calibration.map(units).join(""));
  assert.match(cal, /no other finding got worse/);
});

test("findings diff: one row per matched rule with severity and saving before -> after, named by title", () => {
  const d = fixture();
  const rows = [...diffViews.diffView(d).querySelectorAll("table.diff-table")[0].querySelectorAll("tbody tr")];
  assert.equal(rows.length, d.findings.length);
  const cells = [...rows[0].querySelectorAll("td")].map((td) => td.textContent);
  assert.deepEqual(cells, d.display.tables[0].rows[0].map(units));
  assert.equal(cells[3], d.findings[0].title);
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
  // the server's tables in its order (the breakdown is drawn as bars); one whose every row read no change is one line
  const tables = d.display.tables.filter((t) => t.id !== "breakdown");
  assert.deepEqual(captions, tables.filter((t) => t.rows.length).map((t) => units(t.title)));
  assert.deepEqual([...el.querySelectorAll("p.no-change")].map((p) => p.textContent),
    tables.filter((t) => !t.rows.length && t.unchanged).map((t) => units(t.unchanged)));
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

test("every number on the view is the server's text: changing the numbers beside it changes nothing on screen", () => {
  // property: the view writes no number of its own (JavaScript's toFixed rounds a tie up, Python to even: 10.25 ms is
  // "10.2 ms" in the CLI), so any values under the same display draw the same text; only the bars' lengths follow them
  for (const make of [fixture, memoryFixture]) {
    const text = (d) => [...diffViews.diffView(d).querySelectorAll("p, li, td, caption, th")].map((e) => e.textContent).join("\n");
    const want = text(make());
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const scramble = (x) => {
      if (Array.isArray(x)) return x.map(scramble);
      if (x && typeof x === "object") return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, k === "display" ? v : scramble(v)]));
      return typeof x === "number" ? [10.25, 0.125, 2.675, 1e9 + 0.5, -0.045][Math.floor(rnd() * 5)] : x;
    };
    for (let i = 0; i < 20; i++) {
      const d = scramble(make());
      d.generated_at = make().generated_at;
      assert.equal(text(d), want);
    }
  }
});

test("a tie is written as the CLI writes it (was: the tab's toFixed rounded 10.25 ms up to 10.3 ms)", () => {
  const d = fixture();
  d.step = { ...d.step, base_ms: 10.25 };
  d.display = { ...d.display, verdict: d.display.verdict.replace(/^Step time: [^ ]+ ms/, "Step time: 10.2 ms") };
  assert.match(diffViews.diffView(d).querySelector(".diff-verdict").textContent, /^Step time: 10\.2 ms -> /);
});

test("two memory snapshots: compared by memory, the CLI's tables, no step table and no blank card", () => {
  const d = memoryFixture();
  const el = diffViews.diffView(d);
  assert.equal(el.dataset.verdict, "unknown");
  assert.equal(el.querySelector(".diff-verdict").textContent, units(d.display.verdict));
  assert.match(el.querySelector(".diff-verdict").textContent, /not compared: both sides record memory and no GPU work/);
  const mem = el.querySelector("table[data-table='memory']");
  const rows = [...mem.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
  assert.deepEqual(rows, d.display.tables.find((t) => t.id === "memory").rows);
  assert.ok(rows.some((r) => r[0] === "peak allocated"));
  assert.ok(el.querySelector("table[data-table='memory_sites']"));
  const cal = el.querySelector(".memory-calibration").textContent;
  assert.equal(cal, d.display.memory_calibration.join(""));
  assert.match(cal, /^Fixed .* predicted to free .* GiB .* realised .* GiB less peak reserved/);
  // nothing of the step: no bars, no headline card of n/a beside n/a, no kernel or GPU table
  assert.equal(el.querySelectorAll("svg.diff-bars").length, 0);
  for (const id of ["headline", "kernel_classes", "kernels", "ops", "gpus"]) assert.equal(el.querySelectorAll(`[data-table='${id}']`).length, 0, id);
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
  for (const d of [fixture(), memoryFixture()]) {
    const heads = [...diffViews.diffView(d).querySelectorAll("table.diff-table thead th")].map((th) => th.textContent.trim());
    assert.ok(heads.length >= 8 && heads.every(Boolean), heads.join(" | "));
  }
  const heads = [...diffViews.diffView(fixture()).querySelectorAll("table.diff-table thead th")].map((th) => th.textContent.trim());
  assert.ok(heads.includes("better or worse"));
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

test("the breakdown bars are labelled with the server's texts", () => {
  const d = fixture();
  const svg = diffViews.breakdownBars(d.breakdown, { width: 640, labels: d.display.bars });
  const input = [...svg.querySelectorAll("g.group[data-group='input'] text.axis")].map((t) => t.textContent);
  assert.deepEqual(input, [`base ${units(d.display.bars.input.base)}`, `new ${units(d.display.bars.input.new)}`]);
});
