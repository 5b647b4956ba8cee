"""End to end: a real ``tensorboard`` process, real headless Chromium, the Advisor tab.

Needs Debian's Chromium and the playwright Python package (which only drives
it; it never downloads a browser here)::

    apt-get install -y chromium chromium-driver
    pip install playwright        # never `playwright install`

Expectations (which rule tops each scenario) are read from
``demo_logs/README.md``, the table the demo generator writes. Screenshots
(1400x1000, the size the layout is checked at) go to ``$E2E_SCREENSHOT_DIR``
or ``.e2e-screenshots/`` in the repository (git-ignored); the path is printed.
Each state the tab can be in has one: the first view (newest run with GPU
activity, top finding with its saving and fix above the fold), every demo
scenario's top and its folded-out charts, the per-GPU comparison, TensorBoard's
dark and light toggle, the empty state and the computing state.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from tests.support.paths import REPO

REPO = str(REPO)
DEMO = os.path.join(REPO, "demo_logs")
CHROMIUM = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic",
]
VIEWPORT = {"width": 1400, "height": 1000}
CPU_ONLY_RUNS = ("real_tf_cpu_custom", "real_tf_cpu_keras/train")
HOW_TO_INSTALL = "apt-get install -y chromium chromium-driver && pip install playwright (never `playwright install`)"

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None
    PlaywrightTimeout = TimeoutError

_MISSING = (
    f"playwright missing: {HOW_TO_INSTALL}" if sync_playwright is None
    else f"{CHROMIUM} missing: {HOW_TO_INSTALL}" if not os.path.exists(CHROMIUM)
    else None
)
if _MISSING and os.environ.get("E2E_REQUIRED") == "1":  # CI: a skipped browser test is a failure
    raise RuntimeError(f"E2E_REQUIRED=1 but {_MISSING}")
pytestmark = [
    pytest.mark.skipif(_MISSING is not None, reason=_MISSING or ""),
    pytest.mark.skipif(not os.path.isdir(DEMO), reason="demo_logs/ missing"),
]


def expected_top_findings() -> dict[str, str | None]:
    """run -> expected top rule (None: no warnings expected) from demo_logs/README.md."""
    with open(os.path.join(DEMO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    out: dict[str, str | None] = {}
    for m in re.finditer(r"^\| `([^`]+)` \|[^|]*\| ([^|]+) \|", text, re.M):
        value = m.group(2).strip()
        if value == "-":
            continue
        out[m.group(1)] = None if value.startswith("none") else value
    return out


def _entry_point_dir(tmp: str) -> str:
    """A dist-info that registers the plugin's entry point without installing the package."""
    dist = os.path.join(tmp, "tb_gpu_advisor_e2e-0.0.dist-info")
    os.makedirs(dist)
    with open(os.path.join(dist, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: tb-gpu-advisor-e2e\nVersion: 0.0\n")
    with open(os.path.join(dist, "entry_points.txt"), "w") as f:
        f.write("[tensorboard_plugins]\ngpu_advisor = tb_gpu_advisor.serve.plugin_entry:GpuAdvisorLoader\n")
    return tmp


def _installed() -> bool:
    from importlib import metadata

    return any(ep.name == "gpu_advisor" for ep in metadata.entry_points(group="tensorboard_plugins"))


def _start_tensorboard(tmp: str, logdir: str, *flags: str):
    """A real ``tensorboard`` serving ``logdir`` with the plugin of this checkout (and ``flags``); yields its URL, then
    stops it."""
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR=os.path.join(tmp, "cache"))
    paths = [REPO] + ([] if _installed() else [_entry_point_dir(os.path.join(tmp, "ep"))])
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--port", "0", "--reload_interval", "0", *flags]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=tmp)
    url, lines = None, []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and url is None:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            break
        lines.append(line)
        m = re.search(r"TensorBoard \S+ at (http://\S+?/) ", line)
        if m:
            url = m.group(1)
    if url is None:
        proc.kill()
        pytest.fail("tensorboard did not start:\n" + "".join(lines))
    # Keep draining its log: a full stderr pipe would block the server mid-request.
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    try:
        # the tab served is this checkout's (not another installed copy of the package)
        for name in ("index.js", "static/diff.js"):
            with urllib.request.urlopen(f"{url}data/plugin/gpu_advisor/{name}") as r:
                with open(os.path.join(REPO, "tb_gpu_advisor", "serve", "static", os.path.basename(name)), "rb") as f:
                    assert r.read() == f.read(), f"tensorboard serves another copy of {name} than {REPO}"
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def tensorboard_url():
    tmp = tempfile.mkdtemp(prefix="advisor-e2e-")
    # Serve a copy: the stock profile plugin writes cache files next to the profiles it converts.
    logdir = shutil.copytree(DEMO, os.path.join(tmp, "logdir"))
    try:
        yield from _start_tensorboard(tmp, logdir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def shots():
    folder = os.environ.get("E2E_SCREENSHOT_DIR") or os.path.join(REPO, ".e2e-screenshots")
    os.makedirs(folder, exist_ok=True)
    print(f"\nE2E screenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser, tmp_path):
    ctx = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    yield page
    ctx.close()


def advisor_frame(page):
    page.wait_for_selector("iframe[src*='gpu_advisor']", timeout=30000)
    return page.frame_locator("iframe[src*='gpu_advisor']")


def wait_ready(frame, timeout: float = 60000):
    frame.locator("body[data-state='ready']").wait_for(timeout=timeout)


def select_run(frame, run: str, timeout: float = 60000) -> None:
    frame.locator("select[aria-label='Run']").select_option(run)
    frame.locator(f"body[data-state='ready'][data-run='{run}']").wait_for(timeout=timeout)


def open_advisor(page, url: str, run: str | None = None):
    """The Advisor tab of the TensorBoard at ``url`` opened and its first report ready (then ``run``'s, where
    given): its frame."""
    page.goto(url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame)
    if run is not None:
        select_run(frame, run)
    return frame


def export(page, frame, button: str, path: str) -> tuple[str, str]:
    """Clicks the tab's ``button`` ("Export JSON", "Export Markdown") and saves its download at ``path``: (the saved
    text, the file name the tab suggested)."""
    with page.expect_download(timeout=60000) as dl:
        frame.locator("button", has_text=button).click()
    dl.value.save_as(path)
    with open(path, encoding="utf-8") as f:
        return f.read(), dl.value.suggested_filename


def show_window(frame, rule: str):
    """Shows the first ``rule`` finding's window on its timeline (the finding unfolded where folded): (the finding,
    the drawn timeline's geometry: :data:`TIMELINE_GEOMETRY`)."""
    finding = frame.locator(f".finding[data-rule='{rule}']").first
    if finding.get_attribute("open") is None:
        finding.locator("summary").first.click()
    finding.locator("button.show-window").first.click()
    svg = finding.locator("figure.timeline-figure svg.timeline")
    svg.wait_for(timeout=60000)
    return finding, svg.evaluate(TIMELINE_GEOMETRY)


def open_hosts(frame, charted: bool = True) -> None:
    """Unfolds every host's detail (folded under the findings by default); ``charted``: waits for its step chart (a
    host that times no GPU step -- a CPU-only capture, marked or not -- draws none)."""
    hosts = frame.locator("details.host")
    for i in range(hosts.count()):
        hosts.nth(i).locator("summary").first.click()
    shown = "details.host[open] figure.chart-figure svg" if charted else "details.host[open]"
    frame.locator(shown).first.wait_for(timeout=10000)


def _inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return (inner["x"] >= outer["x"] - slack and inner["y"] >= outer["y"] - slack
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack)


def _overlaps(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


CHART_GEOMETRY = """svg => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  return {
    svg: box(svg), figure: box(svg.closest('figure')),
    texts: [...svg.querySelectorAll('text')].map(t => ({text: t.textContent, cls: t.getAttribute('class') || '', ...box(t)})),
    bars: [...svg.querySelectorAll('rect.bar')].map(box),
    panels: [...svg.querySelectorAll('g.gpu-panel')].map(g => g.getAttribute('data-gpu')),
  };
}"""


#: Resolves once a chart figure is drawn at its own content width (``views.fitChart``: its ResizeObserver redraws the
#: figure's svg when an opened <details> or a scrollbar changes that width) and stayed so for two frames; at most 10 s.
SETTLED = """fig => new Promise((done) => {
  const t0 = performance.now();
  const fitted = () => {
    const s = getComputedStyle(fig);
    const w = Math.floor(fig.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight));
    return Math.abs(w - Number(fig.dataset.width)) < 2 && fig.querySelector('svg') !== null;
  };
  let calm = 0;
  const tick = () => {
    calm = fitted() ? calm + 1 : 0;
    if (calm >= 2 || performance.now() - t0 > 10000) done(calm >= 2); else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""


def settled_chart(fig) -> None:
    """Waits for a chart figure to stop redrawing its svg.  The figure itself stays; its svg is replaced on a resize,
    so a test reads the svg through the figure in one evaluate (``in_figure``), never through a handle to the svg,
    which a redraw under load detaches ("Element is not attached to the DOM")."""
    assert fig.evaluate(SETTLED), "the chart kept redrawing for 10 s"


def in_figure(script: str, svg: str = "svg") -> str:
    """``script`` (a function of an svg) applied to the figure's current ``svg`` element, resolved in the same call."""
    return f"fig => ({script})(fig.querySelector({svg!r}))"


def check_charts(frame, run: str) -> None:
    """Charts use the full width, keep every label inside and readable, and do not repeat a single GPU."""
    hosts = frame.locator("details.host[open]")
    for h in range(hosts.count()):
        host = hosts.nth(h)
        one_gpu = "1 GPU:" in host.locator(".host-facts").inner_text()
        svgs = host.locator("figure.chart-figure svg")
        assert svgs.count() >= 1, run
        for i in range(svgs.count()):
            g = svgs.nth(i).evaluate(CHART_GEOMETRY)
            assert g["svg"]["width"] >= 0.97 * g["figure"]["width"] and g["svg"]["width"] > 1000, (run, g["svg"], g["figure"])
            for t in g["texts"]:
                assert _inside(t, g["svg"]), (run, "label clipped", t, g["svg"])
                assert t["height"] >= 11, (run, "label too small", t)
            for t in (t for t in g["texts"] if "band-label" in t["cls"]):
                assert not any(_overlaps(t, b) for b in g["bars"]), (run, "band label over the bars", t)
            if one_gpu:
                assert len(g["panels"]) <= 1, (run, g["panels"])
        if one_gpu:
            assert "All GPUs (mean)" not in host.inner_text(), run


def served_report(tensorboard_url: str, run: str, session: str, **settings: str) -> dict:
    """The server's JSON report of one session (what the tab rendered; ``settings``: the tab's, as query
    parameters), polled past "computing"."""
    url = f"{tensorboard_url}data/plugin/gpu_advisor/report?{urlencode({'run': run, 'session': session, **settings})}"
    deadline = time.monotonic() + 60
    while True:
        with urllib.request.urlopen(url) as r:
            if r.status != 202 or time.monotonic() > deadline:
                assert r.status == 200, (url, r.status)
                return json.load(r)
        time.sleep(0.2)


def _squeeze(text: str) -> str:
    """Text with runs of white space as one space and the CLI's "us" as the tab's "µs" (dom.units)."""
    return re.sub(r"(\d)( ?)us\b", r"\1\2µs", re.sub(r"\s+", " ", text)).strip()


def assert_the_clis_words(frame, tensorboard_url: str, run: str) -> None:
    """One value on one screen (h37-ui11): the verdict, every finding's saving and the "If every fix lands" line the
    tab shows for ``run`` are, word for word, what the CLI's text or markdown of the same report says -- its numbers
    to the CLI's digits (was "step ~112 ms instead of 116 ms" under the verdict's "116.5 ms"), of one step where the
    host kept one (was "4.6 ms/step (4.0% of the step)" where the CLI said "4.62 ms (4% of the step)")."""
    from tb_gpu_advisor.model.schema import Report
    from tb_gpu_advisor.report import render

    body = frame.locator("body")
    report = Report.from_dict(served_report(tensorboard_url, run, body.get_attribute("data-session")))
    cli = _squeeze(render.to_text(report, top=None)) + "\n" + _squeeze(render.to_markdown(report, top=None))
    verdict = frame.locator("p.verdict").inner_text().removeprefix("✓ ").removesuffix(" — no GPU in this capture")
    shown = [] if any(h.damage for h in report.hosts) else [verdict]  # a damaged host's verdict points below instead
    shown += frame.locator(".finding .saving").all_inner_texts() + frame.locator("p.achievable").all_inner_texts()
    assert frame.locator(".finding .saving").count() == sum(bool(f.saving or f.saving_bytes) for f in report.findings
                                                            if f.rule != "healthy"), run
    for text in shown:
        assert _squeeze(text) in cli, (run, text)


def assert_top_finding_above_the_fold(page, frame, run: str, tensorboard_url: str) -> None:
    """At 1400x1000 the top problem, its saving and its first fix are on screen without scrolling.

    What must be there comes from the server's report, not from the page: a top finding with a saving or an
    action that the page lost fails here (was: the saving and the fix were checked only if the page had them)."""
    body = frame.locator("body")
    top = served_report(tensorboard_url, body.get_attribute("data-run"), body.get_attribute("data-session"))["findings"][0]
    first = frame.locator(".finding").first
    assert first.get_attribute("open") is not None, run
    assert first.get_attribute("data-finding-id") == top["id"], (run, top["id"])
    wanted = [first.locator(".finding-title")]
    if top["saving"]:
        wanted.append(first.locator(".saving"))
    if top["actions"]:
        wanted.append(first.locator(".actions li").first.locator("p").first)
    for loc in wanted:
        assert loc.count() == 1, (run, loc)
        box = loc.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], (run, loc, box)


def test_opens_on_the_newest_run_with_gpu_activity(tensorboard_url, page, shots):
    with urllib.request.urlopen(f"{tensorboard_url}data/plugin/gpu_advisor/runs") as r:
        listing = json.load(r)
    has_gpu = {(x["run"], s["session"]): s["has_gpu"] for x in listing["runs"] for s in x["sessions"]}
    newest = max((s["mtime_ms"], x["run"]) for x in listing["runs"] for s in x["sessions"])[1]
    assert newest in CPU_ONLY_RUNS, f"the demo's newest capture should be CPU-only for this test: {newest}"
    assert {has_gpu[(r, "2026_11_21_11_26_13")] for r in CPU_ONLY_RUNS} == {False}
    frame = open_advisor(page, tensorboard_url)
    run = frame.locator("body").get_attribute("data-run")
    assert run not in CPU_ONLY_RUNS and has_gpu[(run, frame.locator("body").get_attribute("data-session"))] is True, run
    assert frame.locator(".finding[open]").count() == 1
    assert frame.locator("details.host[open]").count() == 0  # per-host detail folded under the findings
    assert_top_finding_above_the_fold(page, frame, run, tensorboard_url)
    page.screenshot(path=os.path.join(shots, "01_first_view_newest_gpu_run.png"))
    # a CPU-only capture is still there to pick, and says so
    select_run(frame, "real_tf_cpu_custom")
    assert frame.locator(".finding").first.get_attribute("data-rule") == "capture_quality"
    assert "no GPU" in frame.locator(".verdict").inner_text()
    open_hosts(frame, charted=False)  # its marked steps time no GPU step (h37-tidy29): no step chart to draw
    assert frame.locator("details.host .no-gpu").count() == 1
    assert frame.locator("details.host[open] figure.chart-figure svg").count() == 0
    page.screenshot(path=os.path.join(shots, "cpu_only_capture.png"))
    assert not page.errors, page.errors


def test_scorecard_and_top_finding_per_scenario(tensorboard_url, page, shots):
    expected = expected_top_findings()
    scenarios = sorted(expected)  # every demo run whose README row states an expected top finding
    assert len(scenarios) >= 3, f"demo_logs/README.md lists too few scenarios: {expected}"
    t0 = time.monotonic()
    frame = open_advisor(page, tensorboard_url)
    print(f"\nfirst report rendered {time.monotonic() - t0:.2f}s after opening the tab")
    for run in scenarios:
        select_run(frame, run)
        cards = frame.locator(".scorecard .card")
        assert cards.count() >= 4, run  # the guide's four numbers (the analyzer may add more)
        for i in range(cards.count()):
            assert cards.nth(i).locator(".card-value").inner_text().strip() not in ("", "–"), run
        findings = frame.locator(".finding")
        want = expected[run]
        if want is None:
            bad = frame.locator(".finding.sev-critical, .finding.sev-warning")
            assert bad.count() == 0, f"{run}: expected no warnings"
        else:
            assert findings.first.get_attribute("data-rule") == want, run
        assert_the_clis_words(frame, tensorboard_url, run)
        if findings.count():  # a healthy run numbers no finding: its verdict says Healthy
            assert_top_finding_above_the_fold(page, frame, run, tensorboard_url)
        else:
            assert "Healthy" in frame.locator(".verdict").inner_text(), run
        page.screenshot(path=os.path.join(shots, f"advisor_{run}.png"), full_page=False)
        open_hosts(frame)
        check_charts(frame, run)
        text = frame.locator("main").inner_text()
        assert "0.000" not in text and not re.search(r"share\s+0\.\d", text), run  # µs, and shares as percentages
        frame.locator("details.host").first.scroll_into_view_if_needed()
        frame.locator("details.host").first.evaluate("d => d.scrollIntoView({block: 'start'})")
        page.screenshot(path=os.path.join(shots, f"advisor_{run}_charts.png"), full_page=False)
    assert not page.errors, page.errors


def test_multi_gpu_comparison_is_readable(tensorboard_url, page, shots):
    frame = open_advisor(page, tensorboard_url, "multi_gpu_gpu0_oversubscribed")
    # the evidence table: busy share as a percentage next to the others, sub-ms offsets in µs
    table = frame.locator(".finding").first.locator("table").first
    heads = table.locator("th").all_inner_texts()
    row = table.locator("tbody tr").first.locator("td").all_inner_texts()
    assert row[heads.index("busy share")].endswith("%"), (heads, row)
    assert "first kernel offset µs" in heads and "." in row[heads.index("first kernel offset µs")], (heads, row)
    open_hosts(frame)
    fig = frame.locator("figure.chart-figure", has=frame.locator("svg.gpu-chart"))
    sizes = fig.locator("svg text").evaluate_all("ts => ts.map(t => parseFloat(getComputedStyle(t).fontSize))")
    assert min(sizes) >= 11, sizes
    step = frame.locator("svg.step-chart").first
    assert step.locator("g.gpu-panel").count() == 5  # all GPUs (mean) + 4 GPUs
    fig.scroll_into_view_if_needed()
    page.screenshot(path=os.path.join(shots, "multi_gpu_comparison.png"))


def _set_tensorboard_theme(page, choice: str) -> None:
    """TensorBoard's own header toggle: Browser default / Light / Dark."""
    page.locator("button[aria-label='Menu for changing light or dark theme']").click()
    page.get_by_role("menuitem", name=choice).click()


def test_follows_tensorboards_dark_mode_toggle(tensorboard_url, browser, shots):
    ctx = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    page = ctx.new_page()
    frame = open_advisor(page, tensorboard_url, "multi_gpu_gpu0_oversubscribed")
    bg = lambda: frame.locator("body").evaluate("b => getComputedStyle(b).backgroundColor")  # noqa: E731
    assert bg() == "rgb(255, 255, 255)"
    _set_tensorboard_theme(page, "Dark")  # the browser still prefers light
    page.wait_for_function("document.body.classList.contains('dark-mode')")
    frame.locator("html.theme-dark").wait_for(state="attached", timeout=5000)
    assert bg() == "rgb(32, 33, 36)"
    page.screenshot(path=os.path.join(shots, "dark_mode_tensorboard_toggle.png"))
    open_hosts(frame)
    frame.locator("details.host").first.evaluate("d => d.scrollIntoView({block: 'start'})")
    page.screenshot(path=os.path.join(shots, "dark_mode_charts.png"))
    # the browser prefers dark but TensorBoard is set to light: the tab is light
    page.emulate_media(color_scheme="dark")
    _set_tensorboard_theme(page, "Light")
    frame.locator("html.theme-light").wait_for(state="attached", timeout=5000)
    assert bg() == "rgb(255, 255, 255)"
    ctx.close()
    # TensorBoard's default ("browser default") reads the browser's scheme when it loads; the tab follows it
    ctx = browser.new_context(viewport=VIEWPORT, color_scheme="dark")
    page = ctx.new_page()
    frame = open_advisor(page, tensorboard_url)
    page.wait_for_function("document.body.classList.contains('dark-mode')")
    frame.locator("html.theme-dark").wait_for(state="attached", timeout=5000)
    # keyboard: every control is reachable
    frame.locator("select[aria-label='Run']").focus()
    page.keyboard.press("Tab")
    assert frame.locator(":focus").evaluate("e => e.getAttribute('aria-label')") == "Session"
    ctx.close()


def test_empty_and_computing_states(tensorboard_url, page, shots):
    # no profiles yet: capture instructions for each framework
    def no_runs(route):  # the server's own listing (its frameworks' capture snippets), with the runs removed
        listing = route.fetch().json()
        route.fulfill(status=200, content_type="application/json", body=json.dumps({**listing, "runs": []}))

    page.route("**/data/plugin/gpu_advisor/runs", no_runs)
    page.goto(tensorboard_url + "#gpu_advisor")
    frame = advisor_frame(page)
    frame.locator("body[data-state='no-profiles']").wait_for(timeout=30000)
    text = frame.locator("main").inner_text()
    assert "jax.profiler.trace" in text and "tf.keras.callbacks.TensorBoard" in text, text
    page.screenshot(path=os.path.join(shots, "empty_no_profiles.png"))
    page.unroute("**/data/plugin/gpu_advisor/runs")
    # computing: the server's "analysing N hosts" progress reads as one sentence
    page.route("**/data/plugin/gpu_advisor/report?*", lambda route: route.fulfill(
        status=202, content_type="application/json",
        body=json.dumps({"state": "computing", "progress": 0.4, "message": "analysing 2 hosts in 2 worker process(es)"})))
    page.goto("about:blank")
    page.goto(tensorboard_url + "#gpu_advisor")
    frame = advisor_frame(page)
    status = frame.locator(".state.computing")
    status.wait_for(timeout=30000)
    assert status.inner_text().strip().startswith("Analyzing 2 hosts in 2 worker process(es)…"), status.inner_text()
    assert "analysing" not in status.inner_text().lower()
    page.screenshot(path=os.path.join(shots, "computing.png"))
    page.unroute("**/data/plugin/gpu_advisor/report?*")
    assert not page.errors, page.errors


def test_selection_is_in_the_url_and_restores(tensorboard_url, page, shots):
    frame = open_advisor(page, tensorboard_url, "input_bound")
    assert "p.gpu_advisor.run=input_bound" in page.url
    shared = page.url
    page.goto("about:blank")
    page.goto(shared)
    frame = advisor_frame(page)
    frame.locator("body[data-state='ready'][data-run='input_bound']").wait_for(timeout=60000)
    assert frame.locator("select[aria-label='Run']").input_value() == "input_bound"


def test_trace_viewer_link_opens_stock_profile_tab(tensorboard_url, page, shots):
    frame = open_advisor(page, tensorboard_url, "launch_bound")
    link = frame.locator(".finding").first.locator("a.link", has_text="Profile: trace viewer")
    href = link.get_attribute("href")
    # the stock Profile tab opens and loads that run's trace for that host
    with page.expect_response(lambda r: "/data/plugin/profile/data" in r.url and "trace_viewer" in r.url, timeout=60000) as resp:
        link.click()
    q = parse_qs(urlparse(href).query)
    assert urlparse(href).fragment == "profile", href
    assert q["run"] == ["launch_bound/2026_01_01_00_00_00"] and q["tool"] == ["trace_viewer@"] and q["host"] == ["worker0"], href
    # xprof then rewrites the address to its own form (?run=..&tag=trace_viewer@&hosts=..)
    page.wait_for_function("new URLSearchParams(location.search).get('run') === 'launch_bound/2026_01_01_00_00_00'", timeout=30000)
    data_q = parse_qs(urlparse(resp.value.url).query)
    assert data_q["run"] == ["launch_bound/2026_01_01_00_00_00"] and data_q["host"] == ["worker0"], resp.value.url
    assert resp.value.status == 200
    # for the screenshot only: the Profile tab's fetches done, at most 3 s (was a fixed 3 s sleep)
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_load_state("networkidle", timeout=3000)
    page.screenshot(path=os.path.join(shots, "profile_tab_from_link.png"))


def test_windowed_trace_link_loads_trace_viewer(tensorboard_url, page, shots):
    frame = open_advisor(page, tensorboard_url, "launch_bound")
    link = frame.locator("a.trace").first
    href = link.get_attribute("href")
    assert "view_start=" in href and "trace_viewer_index.html" in href
    with page.expect_response(lambda r: "/data/plugin/profile/data" in r.url and "trace_viewer" in r.url, timeout=60000) as resp:
        link.click()
    assert resp.value.status == 200
    # the viewer has built its model of the trace (was a fixed 4 s sleep before the screenshot)
    page.wait_for_function(_VIEWER_LOADED, timeout=60000)
    page.screenshot(path=os.path.join(shots, "trace_viewer_window.png"))


#: The stock viewer (``trace_viewer_index.html``) holds its model of the loaded trace.
_VIEWER_LOADED = "() => { const el = document.querySelector('tf-trace-viewer'); return !!(el && el._traceViewer && el._traceViewer.model); }"

#: The stock viewer's own state after a windowed link opened it: its viewport (ms) and, in its loaded model, every
#: slice named for a step ("train 3" on the host thread and on the GPU's derived Steps line, or "3").
_VIEWER_STATE = """(step) => {
  const el = document.querySelector('tf-trace-viewer');
  const tv = el && el._traceViewer;
  if (!tv || !tv.model) return null;
  const named = new RegExp('^(\\\\w+ )?' + step + '$');
  const slices = [];
  for (const t of tv.model.getAllThreads()) {
    for (const s of t.sliceGroup.slices) {
      if (named.test(s.title)) slices.push({thread: t.name, title: s.title, start: s.start, end: s.start + s.duration});
    }
  }
  return {view: el._trackViewRange(tv.trackView), first: tv.model.bounds.min, slices};
}"""


def test_windowed_link_shows_its_step_on_a_late_starting_capture(tensorboard_url, page, shots):
    """Issue #21 item 1: the link's window holds the step it names, as the stock viewer itself draws it -- on a
    capture whose first event comes 12 ms after the capture's start (the viewer's 0), as in real captures.  Read
    from the viewer's own model and viewport in the browser: counting from the first event opened it 12 ms early."""
    frame = open_advisor(page, tensorboard_url, "input_bound")
    link = frame.locator("a.trace").first
    step = int(re.search(r"step (\d+)", link.inner_text()).group(1))
    q = parse_qs(urlparse(link.get_attribute("href")).query)
    lo, hi = float(q["view_start"][0]), float(q["view_end"][0])
    with page.expect_response(lambda r: "/data/plugin/profile/data" in r.url and "trace_viewer" in r.url, timeout=60000):
        link.click()
    # the viewer has loaded the step and applied the link's view (it starts on a default view of its own)
    page.wait_for_function(f"""() => {{ const s = ({_VIEWER_STATE})({step});
        return s !== null && s.slices.length > 0
          && Math.abs(s.view.min - {lo}) < 1e-3 && Math.abs(s.view.max - {hi}) < 1e-3; }}""", timeout=60000)
    state = page.evaluate(_VIEWER_STATE, step)
    page.screenshot(path=os.path.join(shots, "trace_viewer_step_window.png"))
    assert state["first"] > 5.0, f"the capture should start late for this test: first event at {state['first']} ms"
    view = state["view"]
    outside = [s for s in state["slices"] if s["start"] < view["min"] or s["end"] > view["max"]]
    assert not outside, f"step {step} drawn outside the opened view {view}: {outside}"
    assert any(s["thread"] == "Steps" for s in state["slices"]), state["slices"]  # the GPU's step, not only the host's


def test_export_markdown_downloads_the_server_rendering(tensorboard_url, page, shots):
    """Export Markdown saves /report.md (render.to_markdown, as the CLI), not a browser-side rendering."""
    import urllib.request

    frame = open_advisor(page, tensorboard_url, "multi_host")
    saved, name = export(page, frame, "Export Markdown", os.path.join(shots, "export_multi_host.md"))
    assert name.endswith(".md")
    session = frame.locator("select[aria-label='Session']").input_value()
    with urllib.request.urlopen(f"{tensorboard_url}data/plugin/gpu_advisor/report.md?run=multi_host&session={session}") as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/markdown")
        served = r.read().decode("utf-8")
    assert saved == served
    assert served.startswith("## GPU Advisor: run `multi_host`")
    assert not page.errors, page.errors


def test_compare_with_shows_the_diff_keeps_it_in_the_url_and_exports_it(tensorboard_url, page, shots):
    """"Compare with…": input_bound_fixed against input_bound shows the CLI's diff (input stall fixed, predicted
    next to realised); the link reopens it; JSON export is the /diff document."""
    import json
    import urllib.request

    page.set_viewport_size({"width": 1400, "height": 1000})
    frame = open_advisor(page, tensorboard_url, "input_bound_fixed")
    session = frame.locator("select[aria-label='Session']").input_value()
    frame.locator("select[aria-label='Compare with…']").select_option(json.dumps(["input_bound", session]).replace(" ", ""))
    frame.locator("body[data-state='ready'][data-compare]").wait_for(timeout=60000)
    diff = frame.locator(".diff")
    assert diff.get_attribute("data-verdict") == "faster"
    assert "faster" in frame.locator(".diff-verdict").inner_text()
    first = frame.locator("table.diff-table").first.locator("tbody tr").first.inner_text()
    assert first.startswith("fixed") and "Input-bound" in first and "input_bound" not in first, first  # its title
    cal = frame.locator(".calibration").inner_text()
    assert cal.startswith("Fixed 'Input-bound") and "predicted saving" in cal and "realised" in cal, cal
    assert frame.locator("svg.diff-bars rect.bar").count() >= 4
    # the CLI prints the same numbers
    with urllib.request.urlopen(f"{tensorboard_url}data/plugin/gpu_advisor/diff?base_run=input_bound&base_session={session}"
                                f"&new_run=input_bound_fixed&new_session={session}") as r:
        served = json.loads(r.read().decode("utf-8"))
    assert served["calibration"]["findings"] == ["input_bound"]
    page.screenshot(path=os.path.join(shots, "diff_view.png"))
    # the selection is in the address bar: a shared link reopens the same diff
    assert "p.gpu_advisor.cmp_run=input_bound" in page.url, page.url
    shared = page.url
    page.goto("about:blank")
    page.goto(shared)
    frame = advisor_frame(page)
    frame.locator("body[data-state='ready'][data-compare]").wait_for(timeout=60000)
    assert frame.locator(".diff").get_attribute("data-verdict") == "faster"
    exported = json.loads(export(page, frame, "Export JSON", os.path.join(shots, "export_diff.json"))[0])
    assert {k: v for k, v in exported.items() if k != "generated_at"} == {k: v for k, v in served.items() if k != "generated_at"}
    # back to the report alone
    frame.locator("button.close-diff").click()
    frame.locator("body[data-state='ready']:not([data-compare])").wait_for(timeout=30000)
    assert frame.locator(".verdict").count() == 1 and frame.locator("section.findings").count() == 1
    assert not page.errors, page.errors


REAL_JAX_SET = os.path.join(os.path.dirname(REPO), "shared", "profiles", "real-h100-jax")
#: the two real H100 JAX captures whose fix is known (issue #11): the same model with the input stall removed, as runs
#: of the mixed logdir (:func:`mixed_url`: its JAX run is the pair's base)
REAL_PAIR = ("jax_input_bound", "jax_healthy_bf16")


def test_compare_real_captures_shows_the_cli_diff(mixed_url, browser, shots):
    """Issue #11's done-when in the tab: real H100 input_bound -> healthy_bf16 says the input stall was fixed, with
    the realised saving next to the predicted one, the same document as `tb-gpu-advisor diff --format json`; the
    view follows TensorBoard's dark mode.  The pair are two runs of the mixed logdir (one TensorBoard: the pair had a
    server of its own, over a logdir of the two runs alone, and its base is the mixed logdir's JAX run); the picker
    lists every other run of the logdir, and the CLI's document is of that logdir."""
    import contextlib
    import io

    from tb_gpu_advisor.cli import main as cli

    url, logdir = mixed_url, _MIXED_LOGDIRS[-1]
    base, new = REAL_PAIR
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["diff", logdir, "--base", base, "--new", new, "--format", "json"]) == 0
    expected = json.loads(out.getvalue())
    ctx = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame, timeout=120000)
    select_run(frame, new)
    options = frame.locator("select[aria-label='Compare with…'] option").all_inner_texts()
    with urllib.request.urlopen(f"{url}data/plugin/gpu_advisor/runs") as r:
        others = [x["run"] if len(x["sessions"]) == 1 else f"{x['run']} / {s['session']}"
                  for x in json.load(r)["runs"] for s in x["sessions"] if x["run"] != new]
    assert base in others and options == ["— none —", *others], options  # every other run/session, not the one shown
    frame.locator("select[aria-label='Compare with…']").select_option(label=base)
    frame.locator(f"body[data-state='ready'][data-compare^='{base}/']").wait_for(timeout=120000)
    verdict = frame.locator(".diff-verdict").inner_text()
    # the CLI's numbers to the CLI's digits (17.9 ms -> 2.39 ms, -15.5 ms, -86.7%: common/fmt, h37-ui11)
    assert verdict.startswith("Step time: 17.9 ms -> 2.39 ms (-15.5 ms, -86.7%): faster"), verdict
    assert verdict == expected["display"]["verdict"].replace(" us", " µs")  # the CLI's line, written by the server
    assert frame.locator(".side-label").all_inner_texts() == [expected["base"]["label"], expected["new"]["label"]]
    rows = frame.locator("table.diff-table").first.locator("tbody tr")
    assert rows.count() == len(expected["findings"])
    cells = rows.first.locator("td").all_inner_texts()
    assert cells[0] == "fixed" and cells[3] == expected["findings"][0]["title"], cells  # the title, not the rule id
    cal = frame.locator(".calibration").inner_text()
    assert re.match(r"Fixed 'Input-bound[^']*': predicted saving 14\.9 ms/step, realised 15\.5 ms/step = \d+% of "
                    r"predicted \(within ±25%\)", cal), cal
    # the bars fill the page and are redrawn (not shrunk: labels keep their size) when it narrows
    fit = lambda: frame.locator("figure.diff-figure").evaluate(  # noqa: E731
        "f => [f.getBoundingClientRect().width, Number(f.querySelector('svg').getAttribute('width'))]")
    fig_w, svg_w = fit()
    assert 0.97 * fig_w <= svg_w <= fig_w + 1 and svg_w > 1000, (fig_w, svg_w)
    page.set_viewport_size({"width": 1000, "height": 1000})
    page.wait_for_function("() => { const s = document.querySelector('iframe[src*=gpu_advisor]').contentDocument"
                           ".querySelector('figure.diff-figure svg'); return s && Number(s.getAttribute('width')) < 1000; }",
                           timeout=5000)
    fig_w, svg_w = fit()
    assert 0.97 * fig_w <= svg_w <= fig_w + 1, (fig_w, svg_w)
    page.set_viewport_size(VIEWPORT)
    # bars: base and new per group on one scale, input drawn for base only
    bars = frame.locator("svg.diff-bars g[data-group='input'] rect.bar")
    widths = {b.get_attribute("data-side"): float(b.get_attribute("width")) for b in bars.all()}
    assert widths["base"] > 100 and widths["new"] <= 1, widths
    # the tab's document is the CLI's
    exported = json.loads(export(page, frame, "Export JSON", os.path.join(shots, "export_diff_real.json"))[0])
    drop = lambda d: {k: v for k, v in d.items() if k != "generated_at"}  # noqa: E731
    assert drop(exported) == drop(expected)
    # TensorBoard's reload (its button, or the reload timer) keeps an unchanged diff on screen: no redraw, no jump
    frame.locator(".diff").evaluate("d => { d.dataset.before = 'reload'; }")
    scrolled = frame.locator("body").evaluate("() => { window.scrollTo(0, 400); return window.scrollY; }")
    assert scrolled > 100, scrolled
    page.wait_for_timeout(1100)  # the next /diff answer has another generated_at second
    with page.expect_response(lambda r: "/data/plugin/gpu_advisor/diff?" in r.url, timeout=30000):
        page.locator("button.reload-button").click()
    page.wait_for_timeout(300)
    assert frame.locator(".diff[data-before='reload']").count() == 1, "the diff was redrawn on reload"
    assert frame.locator("body").evaluate("() => window.scrollY") == scrolled
    assert base in export(page, frame, "Export Markdown", os.path.join(shots, "export_diff_real.md"))[0]
    page.screenshot(path=os.path.join(shots, "diff_view_real.png"))
    _set_tensorboard_theme(page, "Dark")
    frame.locator("html.theme-dark").wait_for(state="attached", timeout=5000)
    assert frame.locator("body").evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(32, 33, 36)"
    colors = frame.locator(".diff-verdict, .calibration, table.diff-table td").evaluate_all(
        "els => els.map(e => getComputedStyle(e).color)")
    assert all(c not in ("rgb(0, 0, 0)", "rgb(32, 33, 36)") for c in colors), colors  # no dark text on the dark page
    page.get_by_role("menu").wait_for(state="hidden", timeout=5000)  # TensorBoard's theme menu has faded out
    page.screenshot(path=os.path.join(shots, "diff_view_dark.png"))
    assert not errors, errors
    ctx.close()


REAL_TORCH_SET = os.path.join(os.path.dirname(REPO), "shared", "profiles", "real-h100-torch")
#: run in the mixed logdir -> (source folder, framework the report must name, rule that must top it)
MIXED_RUNS = {
    "tf_input_bound": (os.path.join(DEMO, "input_bound"), "tensorflow", "input_bound"),
    "jax_input_bound": (os.path.join(REAL_JAX_SET, "input_bound"), "jax", "input_bound"),
    "torch_input_bound": (os.path.join(REAL_TORCH_SET, "torch_input_bound"), "pytorch", "input_bound"),
    "torch_tiny_ops": (os.path.join(REAL_TORCH_SET, "torch_tiny_ops"), "pytorch", "launch_bound"),
}


_MIXED_LOGDIRS: list[str] = []


@pytest.fixture(scope="module")
def mixed_url():
    """TensorBoard over one logdir holding a TensorFlow, a JAX and two PyTorch runs (issue #10's done-when), and the
    real JAX pair's fixed run (:data:`REAL_PAIR`: its base is the JAX run; copied: discovery follows symlinks only
    inside the logdir)."""
    from tb_gpu_advisor.discover.logdir import discover

    sources = [src for src, _, _ in MIXED_RUNS.values()] + [os.path.join(REAL_JAX_SET, "healthy_bf16")]
    if not all(os.path.isdir(src) for src in sources):
        pytest.skip(f"real captures not found under {os.path.dirname(REAL_TORCH_SET)}")

    def fill(logdir: str) -> None:
        _MIXED_LOGDIRS.append(logdir)
        for run, (src, _, _) in MIXED_RUNS.items():
            shutil.copytree(src, os.path.join(logdir, run))
        shutil.copytree(os.path.join(REAL_JAX_SET, "healthy_bf16"), os.path.join(logdir, REAL_PAIR[1]))
        for folder, _, files in os.walk(logdir):  # the shared sets are read-only; the copy must be removable
            for path in [folder] + [os.path.join(folder, f) for f in files]:
                os.chmod(path, os.stat(path).st_mode | 0o200)
        # each run is read as in a logdir of its own: no session joins another's ranks or job
        joined = [(s.run, s.rank_runs, s.same_job, s.merged) for s in discover(logdir)
                  if s.rank_runs or s.same_job or s.merged]
        assert not joined, joined

    yield from _served("mixed", fill)


def _served(name: str, fill, *flags: str):  # noqa: ANN001 - fill(logdir) writes the logdir
    """A fixture's body: TensorBoard (with ``flags``) over a fresh logdir that ``fill`` writes; yields its URL, then
    cleans up."""
    tmp = tempfile.mkdtemp(prefix=f"advisor-e2e-{name}-")
    logdir = os.path.join(tmp, "logdir")
    os.makedirs(logdir, exist_ok=True)
    fill(logdir)
    server = _start_tensorboard(tmp, logdir, *flags)
    try:
        yield next(server)
    finally:
        server.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_mixed_logdir_shows_tensorflow_jax_and_pytorch_runs(mixed_url, page, shots):
    """Every run of a logdir mixing XPlane and PyTorch traces is listed with its format and analysed with its own
    framework's wording; a PyTorch run gets no link into the stock Profile tab (which cannot open its trace), and
    the tab says why."""
    with urllib.request.urlopen(f"{mixed_url}data/plugin/gpu_advisor/runs") as r:
        listing = json.load(r)
    formats = {x["run"]: {s.get("format") for s in x["sessions"]} for x in listing["runs"]}
    assert set(MIXED_RUNS) <= set(formats), formats
    for run, (_, fw, _) in MIXED_RUNS.items():
        assert formats[run] == {"kineto" if fw == "pytorch" else "xplane"}, (run, formats[run])
    page.goto(mixed_url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame, timeout=120000)
    for run, (_, fw, top) in MIXED_RUNS.items():
        select_run(frame, run)
        body = frame.locator("body")
        report = served_report(mixed_url, run, body.get_attribute("data-session"))
        assert {h["capture"]["framework"] for h in report["hosts"]} == {fw}, run
        first = frame.locator(".finding").first
        assert first.get_attribute("data-rule") == top, (run, first.get_attribute("data-rule"))
        text = frame.locator("main, body").first.inner_text()
        if fw == "pytorch":
            assert not re.search(r"TensorFlow|tf\.data|\bJAX\b|\bXLA\b", text), run
            assert first.locator("a[href*='trace_viewer']").count() == 0, run  # the stock viewer cannot open it
            assert "stock Profile tab cannot open PyTorch trace files" in first.inner_text(), run  # ... and the tab says so
        else:
            assert first.locator("a[href*='trace_viewer']").count() >= 1, run
        assert_top_finding_above_the_fold(page, frame, run, mixed_url)
        assert_the_clis_words(frame, mixed_url, run)
        page.screenshot(path=os.path.join(shots, f"mixed_{run}.png"))
    assert not page.errors, page.errors


FOLD = {"width": 1024, "height": 768}
CARD_GEOMETRY = """els => els.map(e => { const r = e.getBoundingClientRect(); const v = e.querySelector('.card-value');
  const vr = v.getBoundingClientRect(); return {top: Math.round(r.top), value: v.textContent, valueHeight: vr.height,
  lineHeight: parseFloat(getComputedStyle(v).lineHeight) || 1.45 * parseFloat(getComputedStyle(v).fontSize)}; })"""


def assert_verdict_and_first_finding_above_the_fold(frame, report: dict, run: str, rows: int | None = 2) -> None:
    """At 1024x768: the cards wrap to ``rows`` rows (the case of issue 27 item 9), each card's value takes at most
    two lines, and the verdict, the first finding's title and its saving are on screen without scrolling."""
    cards = frame.locator(".scorecard .card").evaluate_all(CARD_GEOMETRY)
    if rows is not None:
        assert len({c["top"] for c in cards}) == rows, (run, [(c["top"], c["value"]) for c in cards])
    for c in cards:
        assert c["valueHeight"] <= 2 * c["lineHeight"] + 2, (run, "card value over two lines", c)
    verdict = frame.locator(".verdict").first
    assert report["verdict"] in verdict.inner_text(), run
    wanted = [verdict]
    if not report["healthy"]:
        first = frame.locator(".finding").first
        wanted.append(first.locator(".finding-title"))
        if report["findings"][0].get("saving"):
            wanted.append(first.locator(".saving"))
    for loc in wanted:
        box = loc.bounding_box()
        assert box and 0 <= box["y"] and box["y"] + box["height"] <= FOLD["height"], (run, loc, box)


def test_verdict_and_first_finding_above_the_fold_at_1024x768_with_two_rows_of_cards(mixed_url, browser, shots):
    """Issue 27 item 9: at 1024x768 six headline cards wrap to two rows; the verdict and the first finding (its title
    and saving) must still show without scrolling -- on TensorFlow, JAX and PyTorch captures, real ones with a long
    16-bit card ("72.1% known: 100.0% 16-bit") among them."""
    ctx = browser.new_context(viewport=FOLD, color_scheme="light")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(mixed_url + "#gpu_advisor")
        frame = advisor_frame(page)
        wait_ready(frame, timeout=120000)
        for run in MIXED_RUNS:
            select_run(frame, run)
            report = served_report(mixed_url, run, frame.locator("body").get_attribute("data-session"))
            page.screenshot(path=os.path.join(shots, f"fold_1024x768_two_rows_{run}.png"))
            assert_verdict_and_first_finding_above_the_fold(frame, report, run)
    finally:
        ctx.close()
    assert not errors, errors


def _generated_runs(logdir: str) -> None:
    """Every generated run the tests below open, each in its own run folder of one logdir (one TensorBoard serves
    them all; each test selects its run, so none depends on which run the tab opens on or on another test):

    - ``ddp_2x8_slow_rank``: a 2-node x 8-GPU PyTorch DDP job whose rank 11 (node1 GPU 3) is 1.4x slower;
    - ``multi_host``: two MultiWorkerMirroredStrategy workers of two GPUs each (synthetic scenario);
    - ``small_gemms``: a PyTorch run of 48 small bf16 GEMMs per step (issue #20);
    - ``ddp_slow_allreduce``: a 4-GPU PyTorch DDP run whose one NCCL AllReduce per step takes 2.5 ms;
    - ``memory_activation_heavy``: a PyTorch run recorded with profile_memory=True (activations most of an 82% peak);
    - ``oom_run``: a memory snapshot dumped at an OOM; ``snapshot_alone``: a real snapshot, healthy;
    - ``autograd`` and ``inference``: one forward-only job's snapshots (:func:`_two_snapshots`)."""
    from synthetic import memsnapshot as ms
    from synthetic import scenarios as S
    from synthetic import torchtrace as tt

    for run in ("ddp_2x8_slow_rank", "small_gemms", "ddp_slow_allreduce", "memory_activation_heavy"):
        tt.write_run(logdir, run, steps=8)
    S.multi_host().write(logdir, run="multi_host")
    ms.write(os.path.join(logdir, "oom_run", "rank0_oom.pickle"), ms.oom_activations().doc)
    # a real snapshot alone, healthy (snapshots_wild: an inference forward under inference_mode, MIT)
    os.makedirs(os.path.join(logdir, "snapshot_alone"))
    shutil.copyfile(os.path.join(FIXTURES, "snapshots_wild", "forward_no_grad_cs336.pickle.gz"),
                    os.path.join(logdir, "snapshot_alone", "forward_no_grad_cs336.pickle.gz"))
    _two_snapshots(logdir)


@pytest.fixture(scope="module")
def generated_url():
    """TensorBoard over :func:`_generated_runs`' and :func:`_nsys_runs`' logdir (one server for the eight tests that
    read generated runs and Nsight runs: each used to start its own over a logdir of its runs alone, and the Nsight
    runs had one of their own)."""
    from tb_gpu_advisor.discover.logdir import discover

    def fill(logdir: str) -> None:
        _generated_runs(logdir)
        _nsys_runs(logdir)
        # each run is read as in a logdir of its own: no session joins another's ranks or job (a shared logdir that
        # linked two runs would change their reports)
        joined = [(s.run, s.rank_runs, s.same_job, s.merged) for s in discover(logdir)
                  if s.rank_runs or s.same_job or s.merged]
        assert not joined, joined

    yield from _served("generated", fill)


def open_run(page, url: str, run: str):
    """The Advisor tab of the TensorBoard at ``url`` opened on ``run`` (a loaded machine's first report may take
    two minutes): its frame."""
    page.goto(url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame, timeout=120000)
    select_run(frame, run, timeout=120000)
    return frame


def test_ranks_view_shows_every_rank_and_the_straggler_first(generated_url, page, shots):
    """Issue #19: the tab's ranks view -- a stacked bar per rank (compute, exposed communication, the rest), the
    straggler on top, named by the top finding -- for a job spread over two host files."""
    frame = open_run(page, generated_url, "ddp_2x8_slow_rank")
    first = frame.locator(".finding").first
    assert first.get_attribute("data-rule") == "rank_straggler"
    ranks = frame.locator("section.ranks")
    assert ranks.locator("h2").inner_text() == "Ranks (16)"
    bars = ranks.locator("svg g.rank")
    assert bars.count() == 16 and bars.first.get_attribute("data-rank") == "rank 11 (node1/GPU3)"
    assert bars.first.locator("rect.cat-collectives").count() == 1 and "rank 11 (node1/GPU3)" in first.inner_text()
    ranks.scroll_into_view_if_needed()
    page.screenshot(path=os.path.join(shots, "ranks_view.png"))
    assert not page.errors, page.errors


def test_one_process_gpus_are_headed_gpus_not_ranks(generated_url, page):
    """h37-left20: a rank is a process; the tab heads the GPUs of two TensorFlow workers "GPUs (4)", as the CLI's
    "4 GPUs in 2 processes on 2 hosts" (main headed them "Ranks (4)")."""
    frame = open_run(page, generated_url, "multi_host")
    section = frame.locator("section.ranks")
    assert section.locator("h2").inner_text() == "GPUs (4)"
    assert not page.errors, page.errors


def test_verdict_and_first_finding_are_above_the_fold_at_1024x768(tensorboard_url, browser, shots):
    """Issue #21 item 2: at 1024x768 the verdict line and the first finding's title show without scrolling; the
    verdict is the server's own words (the CLI prints the same); a healthy run says Healthy as its verdict and
    numbers no finding."""
    ctx = browser.new_context(viewport={"width": 1024, "height": 768}, color_scheme="light")
    page = ctx.new_page()
    try:
        frame = open_advisor(page, tensorboard_url)
        for run in ("launch_bound", "ideal"):
            select_run(frame, run)
            body = frame.locator("body")
            report = served_report(tensorboard_url, run, body.get_attribute("data-session"))
            verdict = frame.locator(".verdict")
            assert report["verdict"] in verdict.inner_text(), run
            page.screenshot(path=os.path.join(shots, f"fold_1024x768_{run}.png"))
            wanted = [verdict] + ([] if report["healthy"] else [frame.locator(".finding .finding-title").first])
            for loc in wanted:
                box = loc.bounding_box()
                assert box and 0 <= box["y"] and box["y"] + box["height"] <= 768, (run, box)
            if report["healthy"]:
                assert frame.locator(".finding").count() == 0 and "Healthy" in verdict.inner_text()
    finally:
        ctx.close()


def test_mfu_card_and_roofline_chart(generated_url, page, shots):
    """Issue #20: the MFU card reads the served report's value with its FLOPs and peak; mfu_low comes first; the
    host's roofline chart draws the GEMM shape under the roof, marked slow, its share of the roofline on hover."""
    frame = open_run(page, generated_url, "small_gemms")
    body = frame.locator("body")
    report = served_report(generated_url, "small_gemms", body.get_attribute("data-session"))
    card = next(c for c in report["headline"] if c["id"] == "mfu")
    shown = frame.locator(".card[aria-label='Model FLOPs utilisation']")
    assert card["display"] in shown.inner_text() and card["status"] == "critical"
    assert frame.locator(".finding").first.get_attribute("data-rule") == "mfu_low"
    host = frame.locator("details.host").first
    host.locator("summary").first.click()
    figure = host.locator("figure.chart-figure:has(svg.roofline)")
    figure.scroll_into_view_if_needed()  # the figure, not its svg: a redraw replaces the svg only
    settled_chart(figure)
    # a narrower window redraws the svg (what a late scrollbar or a loaded machine's late ResizeObserver does): the
    # checks below read the redrawn chart, re-queried, once it settled
    drawn = int(figure.get_attribute("data-width"))
    page.set_viewport_size({"width": VIEWPORT["width"] - 80, "height": VIEWPORT["height"]})
    settled_chart(figure)
    assert int(figure.get_attribute("data-width")) < drawn
    chart = host.locator("svg.roofline")  # re-queried by every call below
    dots = chart.locator("circle.gemm")
    assert dots.count() == 1 and "gemm-low" in dots.first.get_attribute("class")
    row = report["hosts"][0]["roofline"]["rows"][0]
    assert f"{row[8] * 100:.1f}% of its roofline" in dots.first.locator("title").text_content()
    assert chart.locator("polyline.roof").count() == 1
    # issue 27 item 9: ticks on both axes (was: one each), the roof and the ridge labelled, labels inside and apart
    mfu = card["detail"]
    peak_t = (mfu.get("dtype_peak_flops") or mfu["peak_flops"]) / 1e12
    assert chart.locator(".roof-label").text_content() == f"{mfu['dtype']} peak {peak_t:.0f} TFLOP/s"
    assert re.fullmatch(r"ridge [0-9.]+k? FLOP/byte", chart.locator(".ridge-label").text_content())
    g = figure.evaluate(in_figure(CHART_GEOMETRY, "svg.roofline"))
    ticks = {cls: [t for t in g["texts"] if cls in t["cls"]] for cls in ("x-tick", "y-tick")}
    assert len(ticks["x-tick"]) >= 3 and len(ticks["y-tick"]) >= 3, ticks
    labels = [t for t in g["texts"] if t["text"]]
    for t in labels:
        assert _inside(t, g["svg"]), ("label outside the chart", t)
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not _overlaps(a, b), ("labels overlap", a, b)
    page.screenshot(path=os.path.join(shots, "roofline.png"))
    assert not page.errors, page.errors


# -- a finding's step timeline (issue #21 item 4) ------------------------------------------------------------------

TIMELINE_GEOMETRY = """svg => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  return {
    svg: box(svg), figure: box(svg.closest('figure')), start: Number(svg.dataset.start), end: Number(svg.dataset.end),
    lanes: [...svg.querySelectorAll('g.lane')].map(g => ({kind: g.dataset.kind, label: g.querySelector('text title').textContent})),
    focus: [...svg.querySelectorAll('rect.idle.focus')].map(r => ({...box(r), start: Number(r.dataset.start),
                                                                   end: Number(r.dataset.end), category: r.dataset.category})),
    events: svg.querySelectorAll('rect.ev').length,
    texts: [...svg.querySelectorAll('text')].map(t => ({text: t.textContent, ...box(t)})),
  };
}"""

#: ui.perfetto.dev as a test stands in for it (no network here): answers PING with PONG as Perfetto does, and shows
#: what it was sent in its title.
FAKE_PERFETTO = """<!doctype html><title>waiting</title><script>
addEventListener('message', (e) => {
  if (e.data === 'PING') { e.source.postMessage('PONG', '*'); return; }
  const p = e.data && e.data.perfetto;
  if (!p) return;
  let events = -1;
  try { events = JSON.parse(new TextDecoder().decode(p.buffer)).traceEvents.length; } catch (err) {}
  document.title = `got ${p.buffer.byteLength} bytes, ${events} events: ${p.title}`;
});
</script>"""

TIMELINE_CASES = {  # run -> the finding whose first window is drawn, and the demo file behind its host
    "input_bound": ("input_bound", "input_bound/plugins/profile/2026_01_01_00_00_00/worker0.xplane.pb"),
    "pytorch_input_bound": ("input_bound", "pytorch_input_bound/node0_4100.1795380384283992405.pt.trace.json"),
}


@pytest.mark.parametrize("run", sorted(TIMELINE_CASES))
def test_step_timeline_shows_the_findings_window_with_its_wait_highlighted(tensorboard_url, page, shots, run):
    """Issue #21 item 4, XPlane and PyTorch alike: "Show step N" draws the finding's window inline -- a GPU stream and
    a host thread as lanes, the input wait highlighted inside the window -- and the trace downloads and opens in
    Perfetto (a stand-in page speaking Perfetto's PING/PONG protocol)."""
    rule, rel = TIMELINE_CASES[run]
    page.context.route("https://ui.perfetto.dev/**", lambda route: route.fulfill(status=200, content_type="text/html",
                                                                                  body=FAKE_PERFETTO))
    frame = open_advisor(page, tensorboard_url, run)
    body = frame.locator("body")
    report = served_report(tensorboard_url, run, body.get_attribute("data-session"))
    window = next(f for f in report["findings"] if f["rule"] == rule)["windows"][0]
    finding, g = show_window(frame, rule)
    assert (g["start"], g["end"]) == (window["start_ms"], window["end_ms"])
    kinds = {lane["kind"] for lane in g["lanes"]}
    assert kinds == {"gpu", "host"}, g["lanes"]
    assert g["events"] > 10
    assert g["svg"]["width"] >= 0.97 * g["figure"]["width"] and g["svg"]["width"] > 900, (g["svg"], g["figure"])
    label_w = min(220, max(110, g["svg"]["width"] * 0.2))
    assert g["focus"], "the finding's wait is highlighted"
    for r in g["focus"]:
        assert r["category"] == "input_wait"
        assert window["start_ms"] - 1e-6 <= r["start"] < r["end"] <= window["end_ms"] + 1e-6, (r, window)
        assert r["x"] >= g["svg"]["x"] + label_w - 1 and r["x"] + r["width"] <= g["svg"]["x"] + g["svg"]["width"] + 1, r
    assert max(r["width"] for r in g["focus"]) > 50  # a stall you can see, not a sliver
    for t in g["texts"]:
        assert _inside(t, g["svg"]), ("label clipped", t, g["svg"])
    finding.locator("figure.timeline-figure").scroll_into_view_if_needed()
    page.screenshot(path=os.path.join(shots, f"timeline_{run}.png"))

    with page.expect_download() as dl:
        finding.locator("a.download-trace").first.click()
    with open(os.path.join(DEMO, rel), "rb") as f:
        original = f.read()
    assert dl.value.suggested_filename == os.path.basename(rel)
    with open(dl.value.path(), "rb") as f:
        assert f.read() == original

    with page.expect_popup() as popup:
        finding.locator("button.open-perfetto").click()
    perfetto = popup.value
    perfetto.wait_for_function("document.title.startsWith('got ')", timeout=20000)
    title = perfetto.title()
    if run.startswith("pytorch"):  # the PyTorch trace itself: Perfetto reads it natively
        assert title.startswith(f"got {len(original)} bytes"), title
    else:  # XPlane, which Perfetto cannot read: the window drawn, as a Chrome JSON trace
        assert re.match(r"got \d+ bytes, (\d+) events", title) and int(title.split(", ")[1].split()[0]) > g["events"], title
    assert "Opened in Perfetto" in finding.locator(".perfetto-status").inner_text()
    perfetto.close()


def _allreduce(frame):
    return frame.locator(".finding[data-rule='allreduce_slow']")


def test_settings_parameter_count_judges_the_allreduce_and_stays_in_the_url(generated_url, page, shots):
    """Issue #21 item 5: TensorBoard has no --params, so the tab has a Settings field.  Without it the AllReduce is
    measured, not judged, and the finding points at the field; with 25M parameters set there, the finding becomes
    the server's "slower than expected" against 25M x 4 B over the link, and a reload of the page's URL keeps it."""
    ddp_url = generated_url
    frame = open_run(page, ddp_url, "ddp_slow_allreduce")
    body = frame.locator("body")
    run, session = body.get_attribute("data-run"), body.get_attribute("data-session")
    before = next(f for f in served_report(ddp_url, run, session)["findings"] if f["rule"] == "allreduce_slow")
    assert before["title"].startswith("AllReduce time measured, not judged") and before["severity"] == "info"
    finding = _allreduce(frame)
    assert finding.locator(".finding-title").inner_text() == before["title"]
    finding.locator("summary").first.click()  # folded: only the top finding is open
    finding.locator("button.set-setting").click()  # "Set Parameters in Settings": opens the field
    field = frame.locator("details.settings[open] input[data-setting='params']")
    assert field.evaluate("el => el === document.activeElement")
    field.fill("2.5e7")
    field.press("Enter")
    frame.locator("body[data-state='ready'][data-settings='params=25000000']").wait_for(timeout=120000)
    after = next(f for f in served_report(ddp_url, run, session, params="25000000")["findings"]
                 if f["rule"] == "allreduce_slow")
    detail = after["metric"]["detail"]
    assert after["severity"] in ("warning", "critical") and detail["params"] == 25_000_000
    assert detail["expected_ms"] == pytest.approx(25e6 * 4 / detail["bandwidth_bytes_per_s"] * 1e3)
    shown = _allreduce(frame)
    assert shown.locator(".finding-title").inner_text() == after["title"] == "Gradient AllReduce is slower than expected"
    # "... the expected 222 µs for 25M parameters": the server's words, its microseconds in the tab's µs (dom.units)
    tab, served = shown.locator(".summary").inner_text(), re.sub(r"(\d)( ?)us\b", r"\1\2µs", after["summary"])
    assert tab == served
    assert shown.locator("button.set-setting").count() == 0
    assert "p.gpu_advisor.params=25000000" in page.url
    assert frame.locator("details.settings summary").inner_text().strip().endswith("1 set")
    page.screenshot(path=os.path.join(shots, "settings_params.png"))
    shared = page.url
    page.goto("about:blank")
    page.goto(shared)
    frame = advisor_frame(page)
    frame.locator("body[data-state='ready'][data-settings='params=25000000']").wait_for(timeout=120000)
    assert _allreduce(frame).locator(".summary").inner_text() == served
    assert frame.locator("input[data-setting='params']").input_value() == "25000000"
    assert not page.errors, page.errors


NSYS_SET = os.path.join(os.path.dirname(REPO), "shared", "profiles", "nsys")
FIXTURES = os.path.join(REPO, "tests", "fixtures")


#: the Nsight runs of the generated logdir (:func:`_nsys_runs`), beside a PyTorch run
NSYS_RUNS = ("nsys_input_bound", "torch_input_bound", "one_pass", "no_gpu_window", "h100_fsdp_window")


def _nsys_runs(logdir: str) -> None:
    """Nsight Systems runs: the real H100 window (copies fill the GPUs) and a generated input-bound loop with NVTX
    step ranges, beside a PyTorch run (issue 28's done-when).  Runs of the generated logdir (:func:`generated_url`:
    they had a TensorBoard of their own; each test selects its runs)."""
    from synthetic.nsysexport import NsysJob, write

    os.makedirs(os.path.join(logdir, "nsys_input_bound"))
    write(os.path.join(logdir, "nsys_input_bound", "train.sqlite"), NsysJob(steps=8, input_ms=4.0))
    shutil.copytree(os.path.join(DEMO, "pytorch_input_bound"), os.path.join(logdir, "torch_input_bound"))
    # kept real exports of kinds the tab met later (h37-ui11): a one-pass CUDA program, a window with no GPU work
    shutil.copytree(os.path.join(FIXTURES, "wild", "mcts_rtx3080_one_pass"), os.path.join(logdir, "one_pass"))
    os.makedirs(os.path.join(logdir, "no_gpu_window"))
    shutil.copyfile(os.path.join(FIXTURES, "nsys_windows", "tracing_off_julia.sqlite"),
                    os.path.join(logdir, "no_gpu_window", "tracing_off_julia.sqlite"))
    src = os.path.join(NSYS_SET, "h100_fsdp_window")
    if os.path.isdir(src):
        shutil.copytree(src, os.path.join(logdir, "h100_fsdp_window"))
        for folder, _, files in os.walk(os.path.join(logdir, "h100_fsdp_window")):  # read-only set: the copy removable
            for path in [folder] + [os.path.join(folder, f) for f in files]:
                os.chmod(path, os.stat(path).st_mode | 0o200)


def test_an_nsight_run_shows_its_findings_and_its_step_timeline(generated_url, page, shots):
    """An Nsight run is listed as one, its top finding is first, the tab says its windows are in Nsight's time base
    (no Perfetto or stock-viewer promise), "Show step N" draws the finding's window with GPU and host lanes and the
    input wait highlighted, and Download trace gives back the export itself."""
    page.goto(generated_url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame, timeout=120000)
    runs = ["nsys_input_bound"] + (["h100_fsdp_window"] if os.path.isdir(NSYS_SET) else [])
    for run, top in zip(runs, ("input_bound", "excessive_memcpy")):
        select_run(frame, run)
        first = frame.locator(".finding").first
        assert first.get_attribute("data-rule") == top, (run, first.get_attribute("data-rule"))
        assert first.locator("a[href*='trace_viewer']").count() == 0
        assert "open in Nsight Systems" in first.inner_text() and "Perfetto" not in first.inner_text()
        page.screenshot(path=os.path.join(shots, f"nsys_{run}.png"))
    select_run(frame, "nsys_input_bound")
    report = served_report(generated_url, "nsys_input_bound", frame.locator("body").get_attribute("data-session"))
    window = next(f for f in report["findings"] if f["rule"] == "input_bound")["windows"][0]
    finding, g = show_window(frame, "input_bound")
    assert (g["start"], g["end"]) == (window["start_ms"], window["end_ms"])
    assert {lane["kind"] for lane in g["lanes"]} == {"gpu", "host"}, g["lanes"]
    assert g["focus"] and all(r["category"] == "input_wait" for r in g["focus"])
    finding.locator("figure.timeline-figure").scroll_into_view_if_needed()
    page.screenshot(path=os.path.join(shots, "nsys_timeline.png"))
    with page.expect_download() as dl:
        finding.locator("a.download-trace").first.click()
    assert dl.value.suggested_filename == "train.sqlite"
    with open(dl.value.path(), "rb") as f:
        assert f.read(16) == b"SQLite format 3\x00"


def test_a_one_pass_capture_and_a_window_without_gpu_work_read_as_the_cli_says(generated_url, page, shots):
    """h37-ui11, on kept real exports.  Every run's verdict, savings and "If every fix lands" line are the CLI's words.
    A one-pass program (wild/mcts_rtx3080_one_pass) saves "4.62 ms (4% of the pass)" as the CLI says (was "4.6 ms/step
    (4.0% of the step)"; "of the step" before h37-words21: the capture marks no step).  A window with CUDA tracing off (nsys_windows/tracing_off_julia): its facts say "capture of a
    program whose framework went unseen (CUDA tracing was off ...)" (h37-review29; was "a GPU program with no ML framework"), no empty kernel-duration
    chart, no cause of the tab's own under the finding's ("CUPTI", "a machine where the framework sees the GPU"), and
    no "Set Model FLOPs" where no kernel ran."""
    page.goto(generated_url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame, timeout=120000)
    listed = [o.get_attribute("value") for o in frame.locator("select[aria-label='Run'] option").all()]
    runs = [run for run in NSYS_RUNS if run in listed]  # the Nsight runs (h100_fsdp_window where ../shared is)
    assert {"one_pass", "no_gpu_window"} <= set(runs), listed
    for run in runs:  # every run of the Nsight logdir (now runs of the generated one): one value on one screen
        select_run(frame, run)
        assert_the_clis_words(frame, generated_url, run)
    select_run(frame, "one_pass")
    saving = frame.locator(".finding .saving").first.inner_text()
    assert "of the pass)" in saving and "/step" not in saving, saving  # one pass, no step marked (h37-words21)
    page.screenshot(path=os.path.join(shots, "nsys_one_pass.png"))
    select_run(frame, "no_gpu_window")
    frame.locator("details.host").first.locator("summary").first.click()
    host = frame.locator("details.host[open]").first
    # a GPU side unrecorded names no framework it could not see (h37-review29: was "a GPU program with no ML framework")
    assert host.locator(".host-facts").inner_text().startswith(
        "capture of a program whose framework went unseen (CUDA tracing was off"), host.locator(".host-facts").inner_text()
    assert "Kernel durations" not in host.inner_text()
    box = host.locator(".no-gpu").inner_text()
    assert "CUPTI" not in box and "sees the GPU" not in box, box
    assert frame.locator("button.set-setting").count() == 0
    assert "tracing" in frame.locator(".finding").first.inner_text().lower()  # the finding says why there is no GPU work
    page.screenshot(path=os.path.join(shots, "nsys_no_gpu_window.png"), full_page=True)
    assert not page.errors, page.errors


# -- where the GPU memory goes (issue #29) ---------------------------------------------------------------------------

def test_memory_chart_peak_table_and_the_oom(generated_url, page, shots):
    """The activation-heavy run: checkpointing is the first finding, with the bytes it frees; the report's memory
    table and the host's chart (allocated, reserved, capacity, the peak marked at the served peak, labels inside);
    its "Show step" draws the GPU's memory under the lanes.  The snapshot's run: the OOM first, the failed request
    and what was live then, drawn as text."""
    memory_url = generated_url
    frame = open_run(page, memory_url, "memory_activation_heavy")
    body = frame.locator("body")
    report = served_report(memory_url, "memory_activation_heavy", body.get_attribute("data-session"))
    mem = report["hosts"][0]["gpus"][0]["memory"]
    first = frame.locator(".finding").first
    assert first.get_attribute("data-rule") == "activation_memory"
    assert "frees ~" in first.locator(".saving-bytes").inner_text()
    table = frame.locator("section.memory table")
    # the CLI's peak table, its digits ("82.1%": was the tab's own "82%")
    assert [r.split("\t") for r in table.inner_text().splitlines()[2:]] == report["display"]["memory"]["rows"]
    assert "82.1%" in table.inner_text() and f"step {mem['peak_step']}" in table.inner_text()
    open_hosts(frame)
    chart = frame.locator("details.host[open] svg.memory-chart").first
    fig = frame.locator("details.host[open] figure:has(svg.memory-chart)").first
    fig.scroll_into_view_if_needed()  # the figure, not its svg: a redraw under load replaces the svg (CI of d76135c0)
    settled_chart(fig)
    g = chart.evaluate(CHART_GEOMETRY)
    assert g["svg"]["width"] >= 0.97 * g["figure"]["width"]
    for t in g["texts"]:
        assert _inside(t, g["svg"]), ("label clipped", t, g["svg"])
    assert chart.locator("path.mem-allocated").count() == 1 and chart.locator("path.mem-reserved").count() == 1
    assert chart.locator("line.mem-capacity").count() == 1
    assert float(chart.locator("g.mem-peak").get_attribute("data-ms")) == pytest.approx(mem["peak_ms"])
    assert chart.locator("rect.step-band.peak-step").get_attribute("data-step") == str(mem["peak_step"])
    page.screenshot(path=os.path.join(shots, "memory_chart.png"))
    first.locator("button.show-window").first.click()
    lane = first.locator("svg.timeline g.lane-memory")
    lane.wait_for(timeout=60000)
    assert lane.get_attribute("data-gpu") == "0" and lane.locator("path.mem-allocated").count() == 1
    page.screenshot(path=os.path.join(shots, "memory_step_timeline.png"))
    select_run(frame, "oom_run")
    oom = frame.locator(".finding").first
    assert oom.get_attribute("data-rule") == "oom_snapshot"
    assert "Allocating 1.00 GiB on GPU 0 failed" in oom.inner_text()
    open_hosts(frame)
    block = frame.locator("details.host[open] .oom").first
    assert "could not be allocated" in block.inner_text().lower() and "linear.py:125 forward" in block.inner_text()
    page.screenshot(path=os.path.join(shots, "memory_oom.png"))
    # a snapshot alone measures none of the cards: the tab never says "the numbers above are within their thresholds",
    # nor points at the FLOPs setting (no kernel ran); its words are the CLI's (h37-ui11)
    for run in ("memory_activation_heavy", "oom_run", "snapshot_alone"):
        select_run(frame, run)
        assert_the_clis_words(frame, memory_url, run)
    # a snapshot alone times nothing: its verdict says no memory check fired and why no time check ran, never
    # "Healthy" (h37-review14, ``verdict.memory_only``)
    assert frame.locator("p.verdict").inner_text().startswith("✓ No memory check fired")
    # since h37-snap71 its one finding is the info note of what its peak holds, judged against no capacity
    findings = frame.locator("section.findings").inner_text()
    assert "within their thresholds" not in findings, findings
    assert "judged against no capacity" in findings and "torch.cuda.mem_get_info()" in findings, findings
    assert frame.locator("button.set-setting").count() == 0
    page.screenshot(path=os.path.join(shots, "memory_snapshot_alone.png"))
    assert not page.errors, page.errors


def _linked_runs(logdir: str) -> None:
    """A logdir whose run is a symlink out of it (a demo run copied beside the logdir)."""
    beside = os.path.join(os.path.dirname(logdir), "elsewhere")
    shutil.copytree(os.path.join(DEMO, "input_bound"), os.path.join(beside, "input_bound"))
    os.symlink(os.path.join(beside, "input_bound"), os.path.join(logdir, "outside"), target_is_directory=True)


@pytest.mark.parametrize("flags", [(), ("--gpu_advisor_follow_symlinks",)], ids=["default", "follow-flag"])
def test_a_logdir_of_symlinked_runs_leads_with_why(browser, shots, flags):
    """Issue 27 item 9: a logdir whose runs are symlinks out of it shows that reason as the message (was: "No GPU
    profiles found yet", the reason in a folded note); following symlinks (--gpu_advisor_follow_symlinks) never
    follows one out of the logdir."""
    server = _served("links", _linked_runs, *flags)
    url = next(server)
    ctx = browser.new_context(viewport=FOLD, color_scheme="light")
    page = ctx.new_page()
    try:
        page.goto(url + "#gpu_advisor")
        frame = advisor_frame(page)
        frame.locator("body[data-state='no-profiles']").wait_for(timeout=60000)
        message = frame.locator(".state.message")
        assert message.locator("h2").inner_text() == "No GPU profiles read: 1 symlink out of the logdir"
        assert "'outside' points outside the logdir, and nothing outside it is read" in message.inner_text()
        assert "No GPU profiles found yet" not in frame.locator("body").inner_text()
        assert frame.locator("details.skipped[open]").count() == 1  # what was left out: shown, not folded
        page.screenshot(path=os.path.join(shots, f"symlinked_runs_{'follow' if flags else 'default'}.png"))
    finally:
        ctx.close()
        server.close()


_SNAPSHOT_LOGDIRS: list[str] = []


def _two_snapshots(logdir: str) -> None:
    """The same forward-only job's memory snapshot with autograd on and under inference mode (issue #37 item 5;
    synthetic.memsnapshot.forward_only: truth by construction)."""
    from synthetic import memsnapshot

    _SNAPSHOT_LOGDIRS.append(logdir)
    for run, grad in (("autograd", True), ("inference", False)):
        memsnapshot.write(os.path.join(logdir, run, "rank0.pickle"), memsnapshot.forward_only(grad=grad).doc)


def test_compare_two_memory_snapshots_shows_what_changed_in_memory(generated_url, browser, shots):
    """"Compare with…" on two snapshots: the memory table and the bytes predicted vs realised, every text the CLI's
    (the document's display), and no step table of n/a beside n/a (was: "cannot compare", a headline of n/a)."""
    import contextlib
    import io

    from tb_gpu_advisor.cli import main as cli

    ctx = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    page = ctx.new_page()
    try:
        frame = open_run(page, generated_url, "inference")
        frame.locator("select[aria-label='Compare with…']").select_option(label="autograd")
        frame.locator("body[data-state='ready'][data-compare^='autograd/']").wait_for(timeout=120000)
        # the CLI's document for the same two snapshots: the tab shows its texts
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(["diff", _SNAPSHOT_LOGDIRS[-1], "--base", "autograd", "--new", "inference",
                             "--format", "json", "--cache-dir", "off"]) == 0
        served = json.loads(out.getvalue())
        table = frame.locator("table[data-table='memory'] tbody tr")
        cells = [table.nth(i).locator("td").all_inner_texts() for i in range(table.count())]
        want = next(t for t in served["display"]["tables"] if t["id"] == "memory")["rows"]
        assert cells == want, cells
        assert any(r[0] == "peak allocated" and r[3].startswith("-") for r in cells), cells  # the peak fell
        cal = frame.locator(".memory-calibration").inner_text()
        assert cal.startswith("Fixed 'A forward pass keeps") and "realised" in cal, cal
        verdict = frame.locator(".diff-verdict").inner_text()
        assert "both sides record memory and no GPU work" in verdict, verdict
        assert frame.locator("svg.diff-bars").count() == 0 and frame.locator("[data-table='headline']").count() == 0
        page.screenshot(path=os.path.join(shots, "diff_view_memory.png"))
    finally:
        ctx.close()
