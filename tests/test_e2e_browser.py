"""End to end: a real ``tensorboard`` process, real headless Chromium, the Advisor tab.

Needs Debian's Chromium and the playwright Python package (which only drives
it; it never downloads a browser here)::

    apt-get install -y chromium chromium-driver
    pip install playwright        # never `playwright install`

Expectations (which rule tops each scenario) are read from
``demo_logs/README.md``, the table the demo generator writes. Screenshots go
to ``$E2E_SCREENSHOT_DIR`` or a temporary folder; the path is printed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import parse_qs, urlparse

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(REPO, "demo_logs")
CHROMIUM = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic",
]
HOW_TO_INSTALL = "apt-get install -y chromium chromium-driver && pip install playwright (never `playwright install`)"

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

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
        f.write("[tensorboard_plugins]\ngpu_advisor = tb_gpu_advisor.plugin_entry:GpuAdvisorLoader\n")
    return tmp


def _installed() -> bool:
    from importlib import metadata

    return any(ep.name == "gpu_advisor" for ep in metadata.entry_points(group="tensorboard_plugins"))


@pytest.fixture(scope="module")
def tensorboard_url():
    tmp = tempfile.mkdtemp(prefix="advisor-e2e-")
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR=os.path.join(tmp, "cache"))
    paths = [REPO] + ([] if _installed() else [_entry_point_dir(os.path.join(tmp, "ep"))])
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    # Serve a copy: the stock profile plugin writes cache files next to the profiles it converts.
    logdir = shutil.copytree(DEMO, os.path.join(tmp, "logdir"))
    cmd = [sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--port", "0", "--reload_interval", "0"]
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
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def shots():
    folder = os.environ.get("E2E_SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="advisor-screens-")
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
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
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


def select_run(frame, run: str) -> None:
    frame.locator("select[aria-label='Run']").select_option(run)
    frame.locator(f"body[data-state='ready'][data-run='{run}']").wait_for(timeout=60000)


def test_scorecard_and_top_finding_per_scenario(tensorboard_url, page, shots):
    expected = expected_top_findings()
    scenarios = sorted(expected)  # every demo run whose README row states an expected top finding
    assert len(scenarios) >= 3, f"demo_logs/README.md lists too few scenarios: {expected}"
    t0 = time.monotonic()
    page.goto(tensorboard_url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame)
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
        assert frame.locator("svg.chart").count() >= 1, run
        page.screenshot(path=os.path.join(shots, f"advisor_{run}.png"), full_page=False)
        frame.locator("section.hosts").scroll_into_view_if_needed()
        page.screenshot(path=os.path.join(shots, f"advisor_{run}_charts.png"), full_page=False)
    assert not page.errors, page.errors


def test_selection_is_in_the_url_and_restores(tensorboard_url, page, shots):
    page.goto(tensorboard_url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame)
    select_run(frame, "input_bound")
    assert "p.gpu_advisor.run=input_bound" in page.url
    shared = page.url
    page.goto("about:blank")
    page.goto(shared)
    frame = advisor_frame(page)
    frame.locator("body[data-state='ready'][data-run='input_bound']").wait_for(timeout=60000)
    assert frame.locator("select[aria-label='Run']").input_value() == "input_bound"


def test_trace_viewer_link_opens_stock_profile_tab(tensorboard_url, page, shots):
    page.goto(tensorboard_url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame)
    select_run(frame, "launch_bound")
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
    page.wait_for_timeout(3000)
    page.screenshot(path=os.path.join(shots, "profile_tab_from_link.png"))


def test_windowed_trace_link_loads_trace_viewer(tensorboard_url, page, shots):
    page.goto(tensorboard_url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame)
    select_run(frame, "launch_bound")
    link = frame.locator("a.trace").first
    href = link.get_attribute("href")
    assert "view_start=" in href and "trace_viewer_index.html" in href
    with page.expect_response(lambda r: "/data/plugin/profile/data" in r.url and "trace_viewer" in r.url, timeout=60000) as resp:
        link.click()
    assert resp.value.status == 200
    page.wait_for_timeout(4000)
    page.screenshot(path=os.path.join(shots, "trace_viewer_window.png"))


def test_keyboard_and_dark_mode(tensorboard_url, browser, shots):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme="dark")
    page = ctx.new_page()
    page.goto(tensorboard_url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame)
    select_run(frame, "multi_gpu_gpu0_oversubscribed")
    bg = frame.locator("body").evaluate("b => getComputedStyle(b).backgroundColor")
    assert bg == "rgb(32, 33, 36)", bg
    frame.locator("select[aria-label='Run']").focus()
    page.keyboard.press("Tab")
    focused = frame.locator(":focus").evaluate("e => e.getAttribute('aria-label')")
    assert focused == "Session"
    page.screenshot(path=os.path.join(shots, "advisor_dark_multi_gpu.png"))
    ctx.close()


def test_export_markdown_downloads_the_server_rendering(tensorboard_url, page, shots):
    """Export Markdown saves /report.md (render.to_markdown, as the CLI), not a browser-side rendering."""
    import urllib.request

    page.goto(tensorboard_url + "#gpu_advisor")
    frame = advisor_frame(page)
    wait_ready(frame)
    select_run(frame, "multi_host")
    with page.expect_download(timeout=60000) as dl:
        frame.locator("button", has_text="Export Markdown").click()
    path = os.path.join(shots, "export_multi_host.md")
    dl.value.save_as(path)
    assert dl.value.suggested_filename.endswith(".md")
    session = frame.locator("select[aria-label='Session']").input_value()
    with urllib.request.urlopen(f"{tensorboard_url}data/plugin/gpu_advisor/report.md?run=multi_host&session={session}") as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/markdown")
        served = r.read().decode("utf-8")
    with open(path, encoding="utf-8") as f:
        assert f.read() == served
    assert served.startswith("## GPU Advisor: run `multi_host`")
    assert not page.errors, page.errors
