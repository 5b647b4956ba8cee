import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { fixture, HOSTILE, legend, STATIC } from "./dom_env.js";

const views = await import(new URL("views.js", STATIC));
const ctx = { root: "http://localhost:6006/prefix/", stockRun: "run1/2024_01_01_00_00_00", hosts: ["worker0", "worker1"] };

test("scorecard shows the four headline numbers with direction and status", () => {
  const report = fixture();
  const el = views.reportView(report, ctx);
  const cards = [...el.querySelectorAll(".scorecard .card")];
  assert.equal(cards.length, 4);
  assert.deepEqual(cards.map((c) => c.querySelector(".card-label").textContent), report.headline.map((m) => m.label));
  assert.equal(cards[0].querySelector(".card-value").textContent, "42.0%");
  assert.ok(cards[0].classList.contains("status-critical"));
  assert.match(cards[0].textContent, /higher is better/);
  assert.match(cards[1].textContent, /lower is better/);
});

test("findings keep the server's ranking and show saving, guide, actions, links", () => {
  const report = fixture();
  const el = views.reportView(report, ctx);
  const findings = [...el.querySelectorAll(".finding")];
  assert.equal(findings.length, report.findings.length);
  assert.deepEqual(findings.map((f) => f.dataset.findingId), report.findings.map((f) => f.id));
  const first = findings[0];
  assert.match(first.querySelector(".saving").textContent, /12\.4 ms\/step \(31% of step\)/);
  assert.match(first.textContent, /1\.2\.2 Small GPU kernels/);
  assert.equal(first.querySelectorAll("pre.snippet").length, 1);
  assert.equal(first.querySelectorAll("button.copy").length, 1);
  const trace = first.querySelector("a.trace");
  assert.equal(trace.target, "_top");
  const url = new URL(trace.href);
  assert.equal(url.pathname, "/prefix/data/plugin/profile/trace_viewer_index.html");
  assert.equal(url.searchParams.get("trace_data_url"), "/prefix/data/plugin/profile/data?run=run1%2F2024_01_01_00_00_00&tag=trace_viewer%40&host=worker0");
  assert.ok(Number(url.searchParams.get("view_start")) < 120 && Number(url.searchParams.get("view_end")) > 160);
  const tools = [...first.querySelectorAll("a.link:not(.trace)")].map((a) => new URL(a.href));
  assert.deepEqual(tools.map((u) => u.searchParams.get("tool")), ["trace_viewer@", "kernel_stats", "overview_page"]);
  assert.ok(tools.every((u) => u.hash === "#profile" && u.pathname === "/prefix/" && u.searchParams.get("run") === "run1/2024_01_01_00_00_00"));
});

test("hostile profile text is rendered as text, never as markup", () => {
  const el = views.reportView(fixture(), ctx);
  document.body.append(el);
  assert.equal(el.querySelectorAll("script, img, [onerror]").length, 0);
  assert.ok(el.textContent.includes(HOSTILE));
  const cells = [...el.querySelectorAll("td")].filter((td) => td.textContent === HOSTILE);
  assert.ok(cells.length >= 2);
  el.remove();
});

test("per-host sections: folded under the findings, charts, and read errors and no-GPU explained", () => {
  const report = fixture();
  report.hosts[1].error = "truncated protobuf <b>x</b>";
  report.hosts[0].gpus = [];
  const el = views.reportView(report, ctx);
  const hosts = el.querySelectorAll(".host");
  assert.equal(hosts.length, 2);
  assert.equal(hosts[0].tagName, "DETAILS");
  assert.equal(hosts[0].open, false); // folded: the findings come first
  assert.match(hosts[0].querySelector("summary").textContent, /^Host worker0 .*no GPU — charts and tables$/);
  assert.ok(hosts[0].querySelector(".no-gpu"));
  assert.ok(hosts[0].querySelector("figure.chart-figure svg.chart"));
  assert.equal(hosts[1].tagName, "SECTION"); // a read error is not folded away
  assert.equal(hosts[1].getAttribute("role"), "alert");
  assert.match(hosts[1].textContent, /truncated protobuf <b>x<\/b>/);
  assert.equal(hosts[1].querySelectorAll("b").length, 0);
  // the findings come before the per-host detail
  assert.ok(el.querySelector(".findings").compareDocumentPosition(el.querySelector(".hosts")) & window.Node.DOCUMENT_POSITION_FOLLOWING);
});

test("a host read from a damaged file is open, with what was lost first, and the verdict is the server's", () => {
  const report = fixture();
  report.healthy = false;
  report.verdict = "partial: the file is damaged (the trace is cut off at byte 780,644, inside an event: was it still being written?) — no check fired on what was read";
  report.hosts[0].damage = ["the trace is cut off at byte 780,644, inside an event: was it still being written?"];
  const el = views.reportView(report, ctx);
  assert.match(el.querySelector(".verdict").textContent, /^partial: the file is damaged/); // no ✓
  const hosts = el.querySelectorAll(".host");
  assert.equal(hosts[0].open, true);
  const box = hosts[0].querySelector(".host-body").firstElementChild;
  assert.ok(box.classList.contains("damaged"));
  assert.equal(box.getAttribute("role"), "alert");
  assert.match(box.textContent, /cut off at byte 780,644/);
  assert.equal(hosts[1].open, false); // a whole file stays folded
  assert.equal(hosts[1].querySelector(".damaged"), null);
  // the damage text once on the screen (issue #36): not again in the verdict nor in the notes
  report.notes = [`${report.hosts[0].host}: the file is damaged and was only partly read: ${report.hosts[0].damage[0]}`];
  const again = views.reportView(report, ctx);
  assert.equal(again.textContent.split("cut off at byte 780,644").length - 1, 1);
});

test("each kind of damage is told in the server's words: a cut, records left unread, records that contradict each other (h37-damage65, h37-damage66)", () => {
  const report = fixture();
  report.healthy = false;
  const overlap = "GPU 0's blocks hold 100.0 MiB, more than the 84.0 MiB its segments reserve: blocks that overlap";
  const own = "The file was read to its end, none of it left out, but its records contradict each other, so its numbers are the file's own and may not be the GPU's.";
  report.hosts[0].damage = [overlap];
  report.hosts[0].contradictions = [overlap];
  report.display = { ...(report.display || {}), hosts: [{ ...((report.display || {}).hosts || [])[0],
    damage: { title: "Damaged file: read whole, but its records contradict each other", contradiction: own } }] };
  report.verdict = `damaged: the file's records contradict each other (${overlap}) — no check fired on what was read`;
  let el = views.reportView(report, ctx);
  let box = el.querySelectorAll(".host")[0].querySelector(".host-body").firstElementChild;
  assert.ok(box.classList.contains("damaged"));
  assert.equal(box.querySelector("h4").textContent, "Damaged file: read whole, but its records contradict each other");
  assert.equal(box.querySelector("ul.contradictions").textContent, overlap);
  assert.match(box.textContent, /its numbers are the file's own and may not be the GPU's/);
  assert.doesNotMatch(box.textContent, /past the damage|only partly read/);
  // the verdict points to the host below by the kind of what it quotes, the damage once on the screen
  assert.equal(el.querySelector(".verdict").textContent, "damaged: the file's records contradict each other (what contradicts: in its host below) — no check fired on what was read");
  // records skipped in a file read to its end: their own words, never the cut's
  const skipped = "1 events without a numeric time or not objects were skipped";
  report.hosts[0].damage = [skipped, overlap];
  report.hosts[0].unreadable = [skipped];
  report.display.hosts[0].damage = { title: "Damaged file: read to its end, but some of its records could not be read, and its records contradict each other",
    unreadable: "The file was read to its end, but the reader skipped these records: every number leaves those records out, and nothing lies past them.",
    contradiction: "What was read also contradicts itself, so its numbers are the file's own and may not be the GPU's." };
  report.verdict = `partial: some of the file's records could not be read (${skipped}) — no check fired on what was read`;
  el = views.reportView(report, ctx);
  box = el.querySelectorAll(".host")[0].querySelector(".host-body").firstElementChild;
  assert.equal(box.querySelector("ul.unreadable").textContent, skipped);
  assert.equal(box.querySelector("ul.contradictions").textContent, overlap);
  assert.match(box.textContent, /nothing lies past them/);
  assert.doesNotMatch(box.textContent, /past the damage|only partly read/);
  assert.match(el.querySelector(".verdict").textContent, /\(what could not be read: in its host below\)/);
  // a report without the kinds (before schema 1.5) nor the words: its entries listed, none told as another kind
  delete report.hosts[0].contradictions;
  delete report.hosts[0].unreadable;
  delete report.display.hosts[0].damage;
  box = views.reportView(report, ctx).querySelectorAll(".host")[0].querySelector(".host-body").firstElementChild;
  assert.equal(box.querySelector("h4").textContent, "Damaged file");
  assert.equal(box.querySelectorAll("ul.cuts li").length, 2);
  assert.doesNotMatch(box.textContent, /contradict/);
});

test("the tab groups a host's damage by its typed records (schema 1.7), not by matching its words (h37-damage67)", () => {
  const report = fixture();
  report.healthy = false;
  // two entries with the same words, of two kinds: string matching told both as one kind; the records tell each
  const same = "GPU 0: 3 entries";
  report.hosts[0].damage = [same, same];
  report.hosts[0].contradictions = [same];
  report.hosts[0].unreadable = [];
  report.hosts[0].damage_records = [
    { kind: "cut", what: "work_budget", detail: same, file: "", offset: null, record: null },
    { kind: "contradiction", what: "blocks_overlap", detail: same, file: "", offset: null, record: null },
  ];
  report.verdict = `partial: the file is damaged (${same}) — no check fired on what was read`;
  const box = views.reportView(report, ctx).querySelectorAll(".host")[0].querySelector(".host-body").firstElementChild;
  assert.equal(box.querySelectorAll("ul.cuts li").length, 1);
  assert.equal(box.querySelectorAll("ul.contradictions li").length, 1);
});

test("host facts name the capture's framework; the tab has no framework API strings of its own", () => {
  const report = fixture();
  report.hosts[0].capture.framework = "jax";
  report.hosts[0].capture.framework_name = "JAX"; // the server's display name (frameworks/ registry)
  report.hosts[0].gpus = [];
  report.hosts[1].capture.framework = "tensorflow";
  report.hosts[1].capture.framework_name = "TensorFlow";
  const hosts = views.reportView(report, ctx).querySelectorAll(".host");
  assert.match(hosts[0].querySelector(".host-facts").textContent, /^JAX capture · /);
  assert.doesNotMatch(hosts[0].querySelector(".no-gpu").textContent, /tf\.|jax\./);
  assert.match(hosts[1].querySelector(".host-facts").textContent, /^TensorFlow capture · /);
  report.hosts[1].capture.framework = "pytorch"; // reports without a display name show the id
  delete report.hosts[1].capture.framework_name;
  assert.match(views.reportView(report, ctx).querySelectorAll(".host")[1].querySelector(".host-facts").textContent, /^pytorch capture · /);
  delete report.hosts[1].capture.framework; // reports cached before the field existed
  assert.doesNotMatch(views.reportView(report, ctx).querySelectorAll(".host")[1].textContent, /undefined/);
  // table titles come from the report (Table.title), with a row count
  const tables = [...views.reportView(fixture(), ctx).querySelectorAll(".host .table-details > summary")].map((x) => x.textContent);
  const t = fixture().hosts[0].kernels;
  assert.ok(tables.includes(`${t.title} (${t.rows.length} row${t.rows.length === 1 ? "" : "s"})`), tables);
});

test("only the top finding is open, with its saving and its fix before the facts and evidence", () => {
  const el = views.reportView(fixture(), ctx);
  const findings = [...el.querySelectorAll(".finding")];
  assert.deepEqual(findings.map((f) => f.open), findings.map((_, i) => i === 0));
  const body = findings[0].querySelector(".finding-body");
  const order = [...body.children].map((c) => c.className || c.tagName.toLowerCase());
  assert.ok(order.indexOf("actions") < order.indexOf("facts") && order.indexOf("facts") < order.indexOf("table-wrap"), order);
  assert.ok(findings[0].querySelector("summary .saving"));
});

test("a table prints the server's cells (the report's display), never its own rounding of the values", () => {
  const report = fixture();
  const el = views.reportView(report, ctx);
  // each finding's evidence: the titles and cells the text report prints (render.table_text: "6.10", "4,200")
  report.findings.forEach((f, i) => f.evidence.forEach((t, j) => {
    const table = [...el.querySelectorAll(`.finding[data-finding-id="${f.id}"] table`)][j];
    const cells = [...table.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent));
    assert.deepEqual(cells, report.display.findings[i].evidence[j].rows.map((r) => r.map(units)));
    assert.deepEqual([...table.querySelectorAll("th")].map((th) => th.textContent), report.display.findings[i].evidence[j].columns.map(unitsTitle));
  }));
  // a column of sub-ms times: in µs, its title saying so, as the CLI prints it (render.table_text)
  const us = views.tableView({ title: "t", columns: ["gpu", "first kernel offset us"], rows: [[0, 0.0008]] }, [["0", "0.8"]]);
  assert.deepEqual([...us.querySelectorAll("th")].map((x) => x.textContent), ["gpu", "first kernel offset µs"]);
  // a host's kernel table alike; numbers keep their class, long names their hover
  const kernels = [...el.querySelectorAll(".host")[0].querySelectorAll("table")].find((t) => t.querySelector("caption").textContent === "Top kernels");
  assert.deepEqual([...kernels.querySelectorAll("tbody td")].map((td) => td.textContent), report.display.hosts[0].tables.kernels.rows[0]);
  assert.deepEqual([...kernels.querySelectorAll("tbody td")].map((td) => td.classList.contains("num")), [false, true, true]);
  // a column no row fills is left out; the cells follow the columns kept
  const t = views.tableView({ title: "t", columns: ["a", "empty", "b"], rows: [["x", null, 0.125]] }, [["x", "-", "0.12"]]);
  assert.deepEqual([...t.querySelectorAll("th")].map((x) => x.textContent), ["a", "b"]);
  assert.deepEqual([...t.querySelectorAll("td")].map((x) => x.textContent), ["x", "0.12"]);
});

test("charts are drawn for the width they get and redrawn when it changes", () => {
  const report = fixture();
  const el = views.reportView(report, { ...ctx, chartWidth: 1200 });
  const fig = el.querySelector("figure.chart-figure");
  assert.equal(fig.querySelector("svg").getAttribute("viewBox").split(" ")[2], "1200");
  assert.equal(views.fitChart(fig, 0), false); // hidden (folded): keep
  assert.equal(views.fitChart(fig, 1201), false); // unchanged
  assert.equal(views.fitChart(fig, 900), true);
  assert.equal(fig.querySelectorAll("svg").length, 1);
  assert.equal(fig.querySelector("svg").getAttribute("viewBox").split(" ")[2], "900");
});

test("healthy report says so", () => {
  const report = fixture();
  report.findings = [];
  report.healthy = true;
  const el = views.reportView(report, ctx);
  assert.ok(el.querySelector(".findings.healthy"));
  assert.match(el.querySelector(".verdict").textContent, /Healthy: no check of the guide fired/);
});

test("empty states tell the user what to do, with a capture snippet per framework", () => {
  // the snippets come from the server's framework list (/runs "frameworks"), one group per framework
  const frameworks = [{ id: "a", name: "Alpha", capture: "alpha.profile(logdir)" },
    { id: "b", name: "Beta", capture: "with beta.trace(logdir): ..." }];
  const empty = views.messageView("no-profiles", "", frameworks);
  assert.match(empty.textContent, /alpha\.profile\(logdir\)/);
  assert.match(empty.textContent, /beta\.trace/);
  assert.deepEqual([...empty.querySelectorAll(".snippet-group h4")].map((x) => x.textContent), ["Alpha", "Beta"]);
  assert.equal(empty.querySelectorAll("button.copy").length, 2);
  assert.match(views.messageView("no-logdir").textContent, /--logdir/);
  const err = views.messageView("error", "boom <i>");
  assert.equal(err.getAttribute("role"), "alert");
  assert.equal(err.querySelectorAll("i").length, 0);
});

test("a logdir that lists nothing because of what was left out leads with that reason (was: 'No GPU profiles found yet')", () => {
  const frameworks = [{ id: "a", name: "Alpha", capture: "alpha.profile(logdir)" }];
  const empty = { title: "No GPU profiles read: 3 symlinks in the logdir not followed",
    text: "run_a, run_b, run_c are symlinks inside the logdir, and symlinks are followed only when asked: --gpu_advisor_follow_symlinks" };
  const el = views.messageView("no-profiles", "", frameworks, empty);
  assert.equal(el.querySelector("h2").textContent, empty.title);
  assert.match(el.querySelector("p").textContent, /--gpu_advisor_follow_symlinks/);
  assert.doesNotMatch(el.textContent, /No GPU profiles found yet/);
  assert.equal(el.querySelector("details.how-to-capture").open, false); // how to capture: folded under the reason
  const note = views.skippedNote([{ path: "run_a", reason: "a symlink: not followed" }], { open: true });
  assert.equal(note.open, true);
  assert.equal(views.skippedNote([{ path: "x", reason: "y" }]).open, false);
});

test("a card value longer than a number is drawn smaller (the 16-bit card wrapped to three lines at 1024 px)", () => {
  const card = (display) => views.metricCard({ id: "sixteen_bit_share", label: "16-bit kernel time", value: 1, unit: "share", display,
    good_direction: "higher", status: "good", meaning: "m", threshold: 0.5 });
  assert.equal(card("72.4% known: 100.0% 16-bit").querySelector(".card-value").className, "card-value long");
  assert.equal(card("100.0%").querySelector(".card-value").className, "card-value");
});

test("the tab's JavaScript holds none of the server's lists: rules, idle categories, trace formats", async () => {
  const { readdirSync, readFileSync } = await import("node:fs");
  const { legend } = await import("./dom_env.js");
  const served = legend();
  const names = new Set([...Object.keys(served.rule_waits), ...served.idle.map((c) => c.id), ...served.settings.map((x) => x.key),
    "kineto", "xplane", "nsys", "Waiting for kernel launch", "GPU idle: waiting for input"]);
  ["other", "collectives", "compute"].forEach((x) => names.delete(x)); // class names of the ranks chart's colours
  for (const file of readdirSync(STATIC).filter((f) => f.endsWith(".js"))) {
    const code = readFileSync(new URL(file, STATIC), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
    const quoted = [...code.matchAll(/["'`]([^"'`]+)["'`]/g)].map((m) => m[1]);
    const copies = quoted.filter((q) => names.has(q));
    assert.deepEqual(copies, [], `${file} copies the server's ${copies.join(", ")}`);
  }
});

test("computing view shows progress in one sentence (never 'Analyzing… analysing')", () => {
  const el = views.computingView({ progress: 0.4, message: "reading worker0" });
  assert.equal(el.querySelector("progress").getAttribute("value"), "40");
  assert.equal(el.querySelector("p").textContent, "Analyzing the profile… (reading worker0)");
  assert.equal(views.progressText("analysing 2 hosts in 2 worker process(es)"), "Analyzing 2 hosts in 2 worker process(es)…");
  assert.equal(views.progressText("analyzing worker0 (1/2)"), "Analyzing worker0 (1/2)…");
  assert.equal(views.progressText(""), "Analyzing the profile…");
  assert.equal(views.progressText("done"), "Analyzing the profile…");
});

test("pickers are labelled selects reflecting the selection", () => {
  const runs = [{ run: "a", sessions: [{ session: "s2", hosts: [{ host: "h1" }, { host: "h2" }] }, { session: "s1", hosts: [{ host: "h1" }] }] }];
  const chosen = [];
  const [run, session, host] = views.pickers(runs, { run: "a", session: "s1", host: "" }, (x) => chosen.push(x));
  assert.equal(session.querySelector("select").value, "s1");
  assert.equal(host.querySelectorAll("option").length, 2);
  const sel = session.querySelector("select");
  sel.value = "s2";
  sel.dispatchEvent(new window.Event("change"));
  assert.deepEqual(chosen, [{ run: "a", session: "s2", host: "" }]);
  assert.equal(run.querySelector("select").getAttribute("aria-label"), "Run");
});

test("a finding merged over hosts says on which hosts, once, and links every host's windows", () => {
  const report = fixture();
  const merged = report.findings.filter((f) => (f.hosts || []).length > 1);
  assert.equal(merged.length, 1);
  assert.equal(report.findings.filter((f) => f.rule === merged[0].rule).length, 1);  // not one per host
  const el = views.reportView(report, ctx);
  const node = el.querySelector(`.finding[data-finding-id="${merged[0].id}"]`);
  assert.ok(node);
  assert.equal(node.querySelector(".finding-hosts").textContent, "on 2 hosts: worker0, worker1");
  const where = [...node.querySelectorAll("dt")].find((dt) => dt.textContent === "Where");
  assert.equal(where.nextElementSibling.textContent, "on 2 hosts: worker0, worker1");
  const traces = [...node.querySelectorAll("a.trace")].map((a) => new URL(new URL(a.href).searchParams.get("trace_data_url"), "http://x").searchParams.get("host"));
  assert.deepEqual(traces, ["worker0", "worker1"]);
  assert.equal(node.querySelector("table thead").textContent, "hostms/step");
  // a per-host finding shows its host, no hosts line
  const perHost = el.querySelector('.finding[data-finding-id="launch_bound:worker1:0"]');
  assert.equal(perHost.querySelector(".finding-hosts"), null);
  assert.match(perHost.textContent, /host worker1, GPU 0/);
  assert.equal(views.hostsText({ hosts: ["a"] }), "on 1 host: a");
  assert.equal(views.hostsText({ host: "a" }), "");
});

test("the report says what the step would be if every fix lands, and when savings overlap", () => {
  const report = fixture();
  const el = views.reportView(report, ctx);
  const line = el.querySelector(".achievable");
  assert.ok(line, "achievable line shown");
  // the CLI's line (render.achievable_text: when the savings overlap is its to say, tests/report)
  assert.equal(line.textContent, units(report.display.achievable));
  assert.ok(reportText().text.includes(report.display.achievable));
  assert.equal(views.achievableLine(""), null);
  const f = structuredClone(report.findings[0]);
  f.saving.overlaps = ["xla_not_used:worker0"];
  const one = views.reportView({ ...report, findings: [f] }, ctx);
  // the other finding is not on the screen: a count, never its rule id
  assert.equal(one.querySelector(".overlap").textContent, "Overlaps with 1 other finding: the savings do not add up.");
});

test("a card graded by its finding or held back by its rule says why", () => {
  const base = { id: "host_op_share", label: "Ops placed on host", display: "8.7%", status: "critical", unit: "share" };
  const graded = views.metricCard({ ...base, detail: { graded_by: { rule: "host_op_placement", label: "Host op time share", display: "68.4%" } } });
  assert.match(graded.querySelector(".card-note").textContent, /graded by its finding: Host op time share 68\.4%/);
  const quiet = views.metricCard({ ...base, status: "good", detail: { not_flagged: "MatMul/Conv kernels are 2% of the kernel time" } });
  assert.match(quiet.querySelector(".card-note").textContent, /not flagged: MatMul/);
  assert.equal(views.metricCard({ ...base, detail: {} }).querySelector(".card-note"), null);
});

test("a PyTorch session gets no stock Profile-tab links, and the reason instead", () => {
  const report = fixture();
  const el = views.reportView(report, { ...ctx, stockTool: false, formatName: "PyTorch trace" });
  const first = el.querySelector(".finding");
  assert.equal(first.querySelectorAll("a[href*='trace_viewer']").length, 0);
  assert.match(first.querySelector(".no-links").textContent, /stock Profile tab cannot open PyTorch trace files/);
  // the windows are still listed, for Perfetto (ms from the trace's start)
  const f0 = report.findings[0];
  assert.ok(f0.windows.length >= 1);
  const items = [...first.querySelectorAll("ul.windows li")].map((li) => li.textContent);
  assert.equal(items.length, Math.min(3, f0.windows.length));
  assert.ok(items[0].startsWith(`${f0.windows[0].label}: `), items[0]);
  assert.match(first.querySelector(".no-links").textContent, /from the trace's start/);
  const withLinks = views.reportView(report, ctx).querySelector(".finding");
  assert.ok(withLinks.querySelectorAll("a[href*='trace_viewer']").length >= 1);
});

test("the run picker names PyTorch trace runs", () => {
  assert.equal(views.runLabel({ run: "r1", sessions: [{ session: "s", format: "kineto", format_name: "PyTorch trace", stock_tool: false }] }), "r1 (PyTorch trace)");
  assert.equal(views.runLabel({ run: "r2", sessions: [{ session: "s", format: "xplane", format_name: "XPlane (TensorFlow/JAX)", stock_tool: true }] }), "r2");
  assert.equal(views.runLabel({ run: "r3", sessions: [{ session: "s" }] }), "r3");
});

test("`backticked` names in step notes and summaries become <code>, never markup", () => {
  const report = fixture();
  report.hosts[0].steps = { ...(report.hosts[0].steps || {}), note: "`ProfilerStep#N` spans of 2 ranks; `<b>x</b>` odd ` tick" };
  report.findings[0].summary = "Waits in `cudaStreamSynchronize` each step.";
  const el = views.reportView(report, ctx);
  const note = el.querySelector(".host .note");
  assert.deepEqual([...note.querySelectorAll("code")].map((c) => c.textContent), []); // 3 backticks: unpaired, left as text
  assert.match(note.textContent, /`ProfilerStep#N`/);
  const summary = el.querySelector(".finding .summary");
  assert.deepEqual([...summary.querySelectorAll("code")].map((c) => c.textContent), ["cudaStreamSynchronize"]);
  assert.equal(summary.textContent, "Waits in cudaStreamSynchronize each step.");
  report.hosts[0].steps.note = "`ProfilerStep#N` and `<b>x</b>`";
  const el2 = views.reportView(report, ctx);
  const codes = [...el2.querySelector(".host .note").querySelectorAll("code")].map((c) => c.textContent);
  assert.deepEqual(codes, ["ProfilerStep#N", "<b>x</b>"]);
  assert.equal(el2.querySelectorAll(".host .note b").length, 0);
});

const RANK_COLS = ["rank", "step ms", "compute ms", "exposed comm ms", "other ms", "step less comm ms"];
const rankRows = (n) => Array.from({ length: n }, (_, k) => [`node${k >> 3}/GPU${k & 7}`, 3.5, k === 0 ? 3.3 : 2.4,
  k === 0 ? 0.15 : 1.09, 0.03, k === 0 ? 3.36 : 2.42]);

/** Cells standing in for the server's (display.ranks): each value written out, so the view shows which it printed. */
const rankCells = (rows) => rows.map((r) => r.map((v) => `<${v}>`));

test("ranks view: a stacked bar per rank (compute, exposed comm, other) up to 64 ranks, with the table folded", () => {
  const v = views.ranksView({ title: "Ranks (mean per step)", columns: RANK_COLS, rows: rankRows(16) }, ctx, rankCells(rankRows(16)));
  assert.equal(v.querySelector("h2").textContent, "Ranks (16)");
  const bars = v.querySelectorAll("svg g.rank");
  assert.equal(bars.length, 16);
  assert.equal(bars[0].getAttribute("data-rank"), "node0/GPU0");
  assert.equal(bars[0].querySelectorAll("rect").length, 3);
  // the server's cells, in the chart and the table alike
  assert.equal(bars[0].querySelector("rect.cat-collectives title").textContent, "node0/GPU0: exposed communication <0.15> ms of a <3.5> ms step");
  assert.equal(bars[0].querySelector(".value").textContent, "<3.5> ms");
  assert.equal(v.querySelectorAll("table tbody tr").length, 16);
  assert.equal(v.querySelector("table tbody td.num").textContent, "<3.5>");
  assert.equal(views.ranksView({ title: "x", columns: RANK_COLS, rows: rankRows(1) }, ctx), null);
});

test("ranks heading counts the unrecorded ranks and the job's world, even beside one recorded rank (h37-nvtx63)", () => {
  // one recorded rank (no rank table) beside one unrecorded: the CLI's "2 ranks on 1 host (1 recorded)"
  const one = views.ranksView(null, ctx, [], ["rank 1 (python, pid 13097)"]);
  assert.ok(one, "no ranks section for 1 of 2 recorded ranks");
  assert.equal(one.querySelector("h2").textContent, "Ranks (2, 1 recorded)");
  assert.match(one.textContent, /GPU work not recorded: rank 1 \(python, pid 13097\)/);
  assert.equal(one.querySelectorAll("svg").length, 0);
  // three recorded of a job of 8, one unrecorded: "4 of 8 ranks on 1 host (3 recorded)"
  const some = views.ranksView({ title: "Ranks (mean per step)", columns: RANK_COLS, rows: rankRows(3) }, ctx,
    rankCells(rankRows(3)), ["rank 3 (node0_4103)"], 8);
  assert.equal(some.querySelector("h2").textContent, "Ranks (4 of 8, 3 recorded)");
  assert.equal(some.querySelectorAll("svg g.rank").length, 3);
  // through the report: the labels and world size read off the hosts' job
  const report = fixture();
  report.ranks = null;
  report.hosts[0].job = { ...(report.hosts[0].job || {}), unrecorded_rank_labels: ["rank 1 (python, pid 13097)"], job_ranks: 4 };
  const el = views.reportView(report, ctx);
  assert.equal(el.querySelector("section.ranks h2").textContent, "Ranks (2 of 4, 1 recorded)");
});

test("ranks view of a large job: the distribution and the outliers at both ends, named", () => {
  const v = views.ranksView({ title: "Ranks (mean per step)", columns: RANK_COLS, rows: rankRows(1024) }, ctx, rankCells(rankRows(1024)));
  assert.equal(v.querySelectorAll("svg g.rank").length, 10);
  assert.ok(v.querySelector("svg g.rank-histogram"));
  // the histogram's ends: the least and most exposed ranks' cells
  assert.deepEqual([...v.querySelectorAll("svg g.rank-histogram > text.axis")].map((t) => t.textContent), ["<0.15> ms", "<1.09> ms"]);
  assert.match(v.querySelector("figcaption").textContent, /1024 ranks/);
  assert.equal(v.querySelector("svg g.rank").getAttribute("data-rank"), "node0/GPU0");
});

test("the verdict line is the server's (Report.verdict): the same words as the CLI", () => {
  const report = { ...fixture(), verdict: "1 critical — top: Input-bound (saves ~5.95 ms/step, 59%)", healthy: false };
  const el = views.reportView(report, ctx);
  assert.equal(el.querySelector(".verdict").textContent, "1 critical — top: Input-bound (saves ~5.95 ms/step, 59%)");
});

test("a healthy run's 'healthy' finding is the verdict, not finding #1; n/a cards collapse into one line", () => {
  const report = fixture();
  const healthy = { ...report.findings[0], id: "healthy:w", rule: "healthy", severity: "ok", title: "Healthy: no guide check fired" };
  const el = views.reportView({ ...report, healthy: true, verdict: "Healthy: no check of the guide fired", findings: [healthy] }, ctx);
  assert.equal(el.querySelectorAll(".finding").length, 0);
  assert.ok(el.querySelector(".findings.healthy"));
  const cards = report.headline.map((m, i) => (i === 0 ? { ...m, value: null, display: "n/a", detail: { not_applicable: "JAX has no op placement" } } : m));
  const sc = views.scorecard(cards);
  assert.equal(sc.querySelectorAll(".card").length, report.headline.length - 1);
  const na = sc.querySelector(".na-cards");
  assert.match(na.textContent, new RegExp(`Not applicable to this capture: ${cards[0].label}`));
  assert.equal(na.querySelector("span").getAttribute("title"), "JAX has no op placement");
});

test("skippedNote names every entry the walk left out, with why; nothing when nothing was", () => {
  assert.equal(views.skippedNote([]), null);
  const note = views.skippedNote([{ path: "runC", reason: "a symlink to a place outside the logdir: not read" },
    { path: "runA/config.json", reason: "JSON without traceEvents: not a trace" }]);
  assert.equal(note.querySelector("summary").textContent, "2 entries of the logdir left out");
  const items = [...note.querySelectorAll("li")].map((li) => li.textContent);
  assert.deepEqual(items, ["runC: a symlink to a place outside the logdir: not read",
    "runA/config.json: JSON without traceEvents: not a trace"]);
});

test("tables at 1024 px: numbers never break, long names clamp with the whole name on hover, empty columns go", () => {
  const long = "void cutlass::Kernel<cutlass_80_tensorop_s16816gemm_relu_bf16_128x128_32x3_nn_align8>(Params)";
  const t = { title: "Top GPU kernels", columns: ["kernel", "count", "launch latency us"],
    rows: [[long, 1234567, null], ["short", 2, null]] };
  const el = views.tableView(t);
  assert.deepEqual([...el.querySelectorAll("th")].map((x) => x.textContent), ["kernel", "count"]);
  const first = el.querySelector("tbody tr").querySelectorAll("td");
  assert.equal(first[0].getAttribute("title"), long);
  assert.equal(first[0].className, "name");
  assert.equal(first[1].className, "num");
});

test("the no-stock-links sentence speaks of windows below only when the finding has some", () => {
  assert.match(views.noStockLinks("PyTorch trace", true), /each window below opens as a step timeline/);
  assert.doesNotMatch(views.noStockLinks("PyTorch trace", false), /window below/);
  // Nsight files open in Nsight Systems only: no Perfetto promise, the windows in Nsight's own time base
  assert.match(views.noStockLinks("Nsight Systems", true, "Nsight Systems"), /open in Nsight Systems.*start of the session/);
  assert.doesNotMatch(views.noStockLinks("Nsight Systems", true, "Nsight Systems"), /Perfetto/);
});

test("a low-confidence finding says so in its summary line (issue #36); a high-confidence one says nothing", () => {
  const report = fixture();
  report.findings[0].confidence = "low";
  const el = views.reportView(report, ctx);
  const [first, second] = el.querySelectorAll(".finding");
  assert.match(first.querySelector("summary .confidence").textContent, /low confidence \(steps\)/);
  assert.equal(second.querySelector("summary .confidence"), null);
});

test("the server's microseconds read as µs on the tab's screen (one unit style)", async () => {
  const { units, codeText } = await import(new URL("dom.js", STATIC));
  assert.equal(units("saves ~880 us/step; 12us each; thus us"), "saves ~880 µs/step; 12µs each; thus us");
  const report = fixture();
  report.findings[0].summary = "Copies block the GPU for 612 us of each step, `copy_us` kept";
  const el = views.reportView(report, ctx);
  const summary = el.querySelector(".finding .summary").textContent;
  assert.match(summary, /612 µs of each step/);
  assert.match(summary, /copy_us/);
  assert.deepEqual([...codeText("a `x 3 us` b 4 us")].map((p) => (typeof p === "string" ? p : p.textContent)), ["a ", "x 3 us", " b 4 µs"]);
});

test("an export's file name keeps both sides of a diff whole (was cut at 80 characters)", async () => {
  const { safeName } = await import(new URL("format.js", STATIC));
  const name = safeName("gpu-advisor-diff_real-h100-torch/torch_fp32_2026_11_22_20_46_27_vs_wild-torch/resnet50_num_workers_4_2021_06_09_04_32_09");
  assert.match(name, /torch_fp32_2026_11_22_20_46_27_vs_wild-torch_resnet50_num_workers_4_2021_06_09_04_32_09$/);
  const long = safeName("a".repeat(150) + "_vs_" + "b".repeat(150));
  assert.ok(long.length <= 180 && long.startsWith("aaa") && long.endsWith("bbb"), long);
});

test("an overlap names the other findings by their rank, never by a rule id (issue #36)", () => {
  const report = fixture();
  const [a, b] = report.findings;
  a.saving = { ...(a.saving || { ms_per_step: 1, percent_of_step: 1, assumption: "x" }), overlaps: [b.id] };
  const el = views.reportView(report, ctx);
  const text = el.querySelector(".finding .overlap").textContent;
  assert.equal(text, "Overlaps with finding #2: the savings do not add up.");
  assert.doesNotMatch(text, new RegExp(b.rule));
  assert.equal(views.overlapText({ saving: { overlaps: ["x:y", "z"] } }, {}), "Overlaps with 2 other findings: the savings do not add up.");
});

test("the host line names the step source in words, never its id", () => {
  const hr = { capture: { framework: "jax", framework_name: "JAX", length_ms: 450 }, gpus: [{ name: "H100" }],
    steps: { count: 13, source: "trace_train", source_label: "step markers" } };
  assert.ok(views.hostFacts(hr).includes("13 steps (step markers)"), views.hostFacts(hr));
  // a report cached before the words: the count alone (was: "13 steps (trace_train)")
  const old = views.hostFacts({ ...hr, steps: { count: 1, source: "whole_capture" } });
  assert.ok(old.includes("1 step") && !old.join(" ").includes("whole_capture"), old);
  // a memory snapshot not cut into iterations keeps no step: the tab says what the CLI's header says
  const snap = views.hostFacts({ ...hr, steps: { count: 0, source: "whole_capture", source_label: "the whole capture" } });
  assert.ok(snap.includes("no step timed") && !snap.join(" ").includes("0 steps"), snap);
  // marks that time no GPU step -- the loop's end, a window with CUDA tracing off whose NVTX ranges were counted (the
  // kept wild/tracing_off_nvtx_a10_train: 13 of them) -- are no step on the tab either, as the CLI's header says
  // and a window without GPU work whose host marks its loop (h37-tidy29: h200_jobs/torch_cpu_only's 4 ProfilerSteps
  // on the CPU read "4 steps (ProfilerStep marks)" on the tab beside the CLI's "no step: the window holds no GPU work")
  // (from 0.1.0+a54 the server says why in `job.no_gpu_step`, which the tab reads: h37-tidy30)
  const unrecorded = "the capture did not record the GPU's work";
  for (const job of [{ kind: "no_gpu", gpu_unrecorded: true, no_gpu_step: unrecorded },
    { kind: "training", gpu_unrecorded: true, no_gpu_step: unrecorded },
    { kind: "training", marks_no_job_step: true, no_gpu_step: "the window holds none of the job's steps" },
    { kind: "no_gpu", no_gpu_step: "the window holds no GPU work" }]) {
    const marks = views.hostFacts({ ...hr, job, steps: { count: 13, source: "nvtx_top_range", source_label: "a repeated NVTX range" } });
    assert.ok(marks.includes("no step timed") && !marks.join(" ").includes("13 steps"), marks);
  }
});

test("the tab reads the server's answer that a host times no GPU step, and says a CPU loop's count and time (h37-tidy30)", () => {
  // the job keys alone, without the server's `no_gpu_step`, are no answer the tab derives again: a third reason would
  // have needed a second edit here (`noStepTimed` was the JS twin of report.verdict.no_gpu_step)
  assert.equal(views.noStepTimed({ kind: "no_gpu" }), false);
  assert.equal(views.noStepTimed({ kind: "training", no_gpu_step: "a reason the tab has never seen" }), true);
  // h200_jobs/torch_cpu_only as /report serves it: 4 ProfilerStep marks of ~88 ms on the CPU, no GPU step
  const cpu = { capture: { framework: "pytorch", framework_name: "PyTorch" }, gpus: [],
    job: { kind: "no_gpu", no_gpu_step: "the window holds no GPU work", host_loop: { steps: 4, step_ms: 87.991 } },
    steps: { count: 4, source: "profiler_step", source_label: "ProfilerStep marks" } };
  const facts = views.hostFacts(cpu, { capture: "612 ms", host_loop: "4 marked steps of 88.0 ms on average" });
  assert.deepEqual(facts, ["PyTorch capture", "capture 612 ms", "no GPU step: its loop on the CPU, 4 marked steps of 88.0 ms on average", "no GPU"]);
});

test("the host line of a GPU side unrecorded reads as one account: no step timed, its GPU's work not recorded (h37-tidy30)", () => {
  // wild/tracing_off_nvtx_a10_train as /report serves it (nsys -t nvtx: 15 NVTX iterations, CUDA tracing off)
  const host = { capture: { framework: "native", framework_name: "a program whose framework went unseen (CUDA tracing was off: no op or kernel names one)" },
    gpus: [], job: { kind: "training", gpu_unrecorded: true, no_gpu_step: "the capture did not record the GPU's work" },
    steps: { count: 13, source: "nvtx_top_range", source_label: "a repeated NVTX range" } };
  const facts = views.hostFacts(host, { capture: "3.21 s" });
  assert.deepEqual(facts, ["capture of a program whose framework went unseen (CUDA tracing was off: no op or kernel names one)",
    "capture 3.21 s", "no step timed", "GPU work not recorded"]);
  // each thing said once: no "13 steps" beside "no step timed", no "no GPU" for a GPU whose work went unseen
  const line = facts.join(" · ");
  assert.doesNotMatch(line, /13 steps|no GPU\b/);
  // the control: a host that saw no GPU at all still says so
  assert.ok(views.hostFacts({ ...host, job: { kind: "no_gpu", no_gpu_step: "the window holds no GPU work" } }, {}).includes("no GPU"));
});

test("the host line of a one-pass capture says one pass, no step marked, never '1 step' (h37-tabpass)", () => {
  // a real one-pass capture as /report serves its host (wild/cold_a100_alexnet, tests/support/plugin_fixtures.py)
  const { host, shown } = JSON.parse(readFileSync(new URL("./fixtures/pass.json", import.meta.url), "utf8"));
  const facts = views.hostFacts(host, shown).join(", ");
  assert.match(facts, /one pass, no step marked/);
  assert.doesNotMatch(facts, /\b1 step\b/);
  // the control: one marked step (a ProfilerStep) is still "1 step"
  const marked = views.hostFacts({ ...host, steps: { count: 1, source: "profiler_step", source_label: "ProfilerStep marks" } }, {});
  assert.ok(marked.includes("1 step (ProfilerStep marks)"), marked);
});

test("a table's prose cells use the tab's µs, names stay as written", () => {
  const t = { title: "GPU memory at the peak", columns: ["GPU", "peak at", "kernel"], rows: [[0, "161 us into step 13, 13% of it", "gemm_3us"]] };
  const cells = [...views.tableView(t).querySelectorAll("td")].map((td) => td.textContent);
  assert.deepEqual(cells.slice(1), ["161 µs into step 13, 13% of it", "gemm_3us"]);
});

// -- one value on one screen (h37-ui11, issue #37): the tab prints the numbers the CLI's text and markdown print --------

const { units, unitsTitle } = await import(new URL("dom.js", STATIC));
/** The CLI's text and markdown of the fixture report (tests/support/plugin_fixtures.report_text_fixture_json). */
const reportText = () => JSON.parse(readFileSync(new URL("./fixtures/report_text.json", import.meta.url), "utf8"));
/** Each number with its unit in `text` ("12.4 ms", "31%", "19.5 GiB", "4,200"), in the CLI's ASCII "us". */
const numbers = (text) => [...String(text).replace(/µs/g, "us").matchAll(/(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?: ?(?:ms|us|s|GiB|MiB|KiB|B|%)(?![A-Za-z]))?/g)].map((m) => m[0]);

test("every number the tab prints of a quantity the CLI reports reads with the CLI's digits (report_text.json)", () => {
  const report = fixture();
  const cli = reportText();
  const said = `${cli.text}\n${cli.markdown}`.replace(/µs/g, "us");
  const el = views.reportView(report, { ...ctx, legend: legend() });
  // what the CLI prints too: the achievable step, each finding's saving, the memory it frees, its evidence and its
  // windows, the peak table (the cards' thresholds and the per-host kernel tables are the tab's alone: the same
  // formatters, tests/serve/test_plugin_display.py)
  const printed = [".achievable", ".finding .saving", ".finding .facts dd", ".finding table td",
    ".finding .links a.trace", "section.memory td"].flatMap((sel) => [...el.querySelectorAll(sel)].map((x) => x.textContent));
  assert.ok(printed.length > 20, printed.length);
  let checked = 0;
  for (const text of printed) {
    for (const n of numbers(text)) {
      assert.ok(said.includes(n), `the tab prints "${n}" (in "${text}"), which the CLI's report never writes`);
      checked += 1;
    }
  }
  assert.ok(checked > 30, checked);
  // the savings, whole: the text report's finding line
  for (const [i, f] of report.findings.entries()) {
    const s = report.display.findings[i];
    if (f.saving) assert.ok(cli.text.includes(s.saving), s.saving);
  }
});

test("a finding's saving is the server's words: per step, or of the one step its host kept, the floor as '<0.5%'", () => {
  const report = fixture();
  const el = views.reportView(report, { ...ctx, legend: legend() });
  const shown = [...el.querySelectorAll(".finding")].map((f) => f.querySelector(".saving")?.textContent ?? "");
  const want = report.findings.filter((f) => f.rule !== "healthy").map((f) => {
    const s = report.display.findings[report.findings.indexOf(f)];
    return units(s.saving || s.frees);
  });
  assert.deepEqual(shown, want);
  // the tab adds no words of its own: a display that says "of the step" is printed so (one step kept: report/view)
  const one = fixture();
  one.display.findings[0].saving = "saves ~12.4 ms (31% of the step)";
  assert.equal(views.reportView(one, ctx).querySelector(".finding .saving").textContent, "saves ~12.4 ms (31% of the step)");
});

test("a capture with no GPU work: facts name a program of no framework as one, no empty kernel chart, no cause of the tab's own", () => {
  const report = fixture();
  const hr = report.hosts[0];
  hr.gpus = [];
  hr.capture = { ...hr.capture, framework: "native", framework_name: "a GPU program with no ML framework" };
  hr.kernel_durations_us = { edges_us: [0, 1, 2, null], counts: [0, 0, 0], count: 0 };
  const el = views.hostView(hr, ctx);
  const facts = el.querySelector(".host-facts").textContent;
  assert.match(facts, /^capture of a GPU program with no ML framework · /);
  assert.doesNotMatch(facts, /framework capture/);
  assert.ok(![...el.querySelectorAll("figcaption")].some((c) => /Kernel durations/.test(c.textContent)));  // all bins 0
  const box = el.querySelector(".no-gpu").textContent;
  assert.doesNotMatch(box, /CUPTI|sees the GPU/);  // the findings say why (CUDA tracing off, NVTX only, a start-up window)
  assert.match(box, /The findings above say why/);
  // the controls: a framework's name reads "PyTorch capture"; a host that timed kernels keeps its histogram
  const torch = fixture().hosts[0];
  torch.capture = { ...torch.capture, framework: "pytorch", framework_name: "PyTorch" };
  assert.match(views.hostFacts(torch)[0], /^PyTorch capture$/);
  assert.ok([...views.hostView(torch, ctx).querySelectorAll("figcaption")].some((c) => /Kernel durations/.test(c.textContent)));
});

test("no finding and every card n/a (a memory snapshot alone): the tab never says the numbers are within their thresholds", () => {
  const report = fixture();
  report.findings = [];
  report.healthy = true;
  report.headline = report.headline.map((m) => ({ ...m, value: null, display: "n/a", status: "unknown" }));
  const text = views.reportView(report, ctx).querySelector(".findings").textContent;
  assert.doesNotMatch(text, /within their thresholds/);
  assert.match(text, /None of the numbers above could be measured in this capture/);
  const measured = fixture();  // the control: cards with values keep the sentence
  measured.findings = [];
  assert.match(views.reportView(measured, ctx).querySelector(".findings").textContent, /within their thresholds/);
});

test("a one-pass host's charts say the pass, never steps; a host of steps keeps its step words (h37-onepass2)", () => {
  // a real one-pass capture as /report serves its host (wild/cold_a100_alexnet, tests/support/plugin_fixtures.py)
  const { host, shown } = JSON.parse(readFileSync(new URL("./fixtures/pass.json", import.meta.url), "utf8"));
  const labels = (el) => [...el.querySelectorAll("figcaption, svg > title, .axis")].map((e) => e.textContent);
  const pass = labels(views.hostView(host, { chartWidth: 900 }, shown));
  assert.ok(pass.includes("Time breakdown of the pass"), pass);
  const said = pass.filter((t) => /\b(?:per[- ])?steps?\b/i.test(t));
  assert.deepEqual(said, []);
  // two GPUs of that pass: the comparison's measures are the pass's too
  const two = { ...host, gpus: [host.gpus[0], { ...host.gpus[0], gpu: 1 }] };
  const pair = views.hostView(two, { chartWidth: 1200 }, { ...shown, gpus_table: { columns: [], rows: [] } });
  const gpuTitles = [...pair.querySelectorAll(".gpu-chart text")].map((e) => e.textContent).join(" | ");
  assert.match(gpuTitles, /share of the pass/);
  assert.match(gpuTitles, /Pass time/);
  assert.doesNotMatch(gpuTitles, /\bStep time\b|share of step/);
  // the control: the same host read as steps keeps "Per-step time breakdown", "Step time" and "share of step"
  const steps = views.hostView(two, { chartWidth: 1200 }, { ...shown, one_pass: false, gpus_table: { columns: [], rows: [] } });
  assert.ok(labels(steps).some((t) => t.startsWith("Per-step time breakdown")), labels(steps));
  assert.match([...steps.querySelectorAll(".gpu-chart text")].map((e) => e.textContent).join(" | "), /Step time.*share of step|share of step.*Step time/);
});

test("an inferred GPU's hover and host line say its model; the GPUs table keeps the reasons (h37-surfaces31)", () => {
  // a real host as /report serves it (wild/cold_a100_alexnet), its two GPUs unnamed in the capture and named from
  // their properties as the report names such a GPU (h37-follow30: the ECBM4040 T4 XPlanes), ECC on and off
  const { host, shown } = JSON.parse(readFileSync(new URL("./fixtures/pass.json", import.meta.url), "utf8"));
  const inferred = (gib) => `NVIDIA T4 (inferred from compute capability 7.5, 40 SMs, ${gib} GiB)`;
  const two = { ...host, gpus: [{ ...host.gpus[0], gpu: 0, name: inferred("14.8") }, { ...host.gpus[0], gpu: 1, name: inferred("15.5") }] };
  // the server's display: each GPU's name as a sentence says it (report/view: devices.said_name)
  const said = { ...shown, gpus: [{ gpu: 0, name: "NVIDIA T4", memory: null }, { gpu: 1, name: "NVIDIA T4", memory: null }],
    gpus_table: { columns: [], rows: [] } };
  const el = views.hostView(two, { chartWidth: 1200 }, said);
  const hovers = [...el.querySelectorAll(".gpu-chart rect > title")].map((e) => e.textContent);
  assert.ok(hovers.length >= 2, hovers);
  for (const t of hovers) assert.match(t, /^GPU [01] \(NVIDIA T4\): /);
  assert.ok(views.hostFacts(two, said).includes("2 GPUs: NVIDIA T4"), views.hostFacts(two, said));
  // the control: a report cached before the display gave names keeps the report's own
  assert.ok(views.hostFacts(two, {}).includes(`2 GPUs: ${inferred("14.8")}, ${inferred("15.5")}`));
});
