"""Benchmark the Advisor against the stock xprof converter on large 8-GPU captures.

    python benchmarks/run.py [--sizes 100MB,1GB] [--cache-dir .bench] [--quick]
                             [--shapes tf,dense] [--stages]
                             [--file PATH ...] [--timeout S] [--repeat N]
                             [--skip-stock] [--skip-http] [--fetches 50]

For each size it generates (or reuses, from ``--cache-dir``) a realistic
single-host 8-GPU capture with the corpus generator, then measures -- every
task in its own fresh process, one after the other -- wall time and peak RSS
of: a bare protobuf parse (the floor), our reader, our read + metrics +
findings (``analyze_host``), the stock converter's ``overview_page`` and
``kernel_stats`` (on a private copy: it writes cache files next to its
input), and the warm report fetch over HTTP from a real ``tensorboard``
process with the plugin installed.  It prints a markdown table with the
machine's details and the issue-5 targets marked pass/miss, and saves it
(and a JSON twin) under ``--cache-dir``.  See docs/benchmarks.md.

Peak RSS comes from ``os.wait4(pid)``: the kernel's exact high-water mark of
that one child (``ru_maxrss``), not a sampled value.  ``RUSAGE_CHILDREN``
would be the max over *all* children reaped so far, so a small task measured
after a big one would inherit the big one's peak.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CHILD = os.path.join(HERE, "bench_child.py")
sys.path[:0] = [HERE, REPO]

from procfs import status_kb  # noqa: E402  (benchmarks/ is on the path now)

#: Targets from issue 5.
TARGET_RATIO = 0.25  # our cold analysis time / stock overview_page time
TARGET_RSS_X = 3.0  # our peak RSS / file size
TARGET_P50_MS = 50.0  # warm report fetch, median
SESSION = "2026_01_01_00_00_00"
STOCK_TOOLS = ("overview_page", "kernel_stats")


# -- measuring one child process -----------------------------------------------


@dataclass
class Measurement:
    """One task in one fresh process."""

    label: str
    status: str = "ok"  # ok | timeout | memory-cap | error | skipped
    wall_s: float | None = None  # process wall: start-up + imports + work
    work_s: float | None = None  # the task alone, as the child timed it
    cpu_s: float | None = None  # user + system CPU of the child
    maxrss: int | None = None  # bytes, kernel high-water mark
    rss_before: int | None = None  # bytes, after imports, before the work
    detail: dict = field(default_factory=dict)
    note: str = ""


def _vm_kb(pid: int, key: str) -> int | None:
    return status_kb(key, f"/proc/{pid}/status")


def run_child(label: str, args: list[str], timeout_s: float, mem_cap: int, env: dict | None = None) -> Measurement:
    """Run ``bench_child.py ARGS`` in a fresh interpreter; never waits past ``timeout_s``.

    Reaped with ``os.wait4`` so its rusage is its own.  While it runs, VmRSS
    is polled only to kill it above ``mem_cap`` (this machine has no swap:
    an OOM kill could hit some other process).
    """
    m, returncode, stdout, stderr = run_process(label, [sys.executable, CHILD, *args], timeout_s, mem_cap, env)
    if m.status != "ok":
        return m
    lines = [ln for ln in stdout.strip().splitlines() if ln.startswith("{")]
    if returncode != 0 or not lines:
        m.status = "error"
        tail = (stderr.strip().splitlines() or ["exit code %s" % returncode])[-1]
        m.note = tail[:160]
        return m
    res = json.loads(lines[-1])
    m.work_s = res["work_s"]
    m.rss_before = res["rss_before_kb"] * 1024
    m.detail = res["detail"]
    return m


def run_process(label: str, argv: list[str], timeout_s: float, mem_cap: int,
                env: dict | None = None, cwd: str | None = None) -> tuple[Measurement, int, str, str]:
    """Run ``argv`` as a fresh process: (its Measurement -- wall, CPU, peak RSS, status --, exit code, stdout,
    stderr).  Reaped with ``os.wait4``, so the peak is the kernel's own high-water mark of that process."""
    m = Measurement(label)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd or REPO, env=env or _child_env())
        delay, killed = 0.002, None
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            elapsed = time.perf_counter() - t0
            rss_kb = _vm_kb(proc.pid, "VmRSS") or 0
            if killed is None and elapsed > timeout_s:
                killed = "timeout"
            elif killed is None and rss_kb * 1024 > mem_cap:
                killed = "memory-cap"
            if killed:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by us, tell Popen
        m.wall_s = time.perf_counter() - t0
        m.cpu_s = ru.ru_utime + ru.ru_stime
        m.maxrss = ru.ru_maxrss * 1024
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if killed:
        m.status = killed
        m.note = (f"killed after {m.wall_s:.0f} s" if killed == "timeout"
                  else f"killed at RSS > {mem_cap / 2**30:.1f} GiB")
    return m, proc.returncode, stdout, stderr


def _child_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(extra or {})
    return env


def best_of(label: str, args: list[str], repeat: int, timeout_s: float, mem_cap: int) -> Measurement:
    """Median work time (and the largest peak RSS) of ``repeat`` fresh processes."""
    runs = [run_child(label, args, timeout_s, mem_cap) for _ in range(repeat)]
    ok = [r for r in runs if r.status == "ok"]
    if not ok:
        return runs[0]
    ok.sort(key=lambda r: r.work_s or 0.0)
    med = ok[len(ok) // 2]
    med.maxrss = max(r.maxrss or 0 for r in ok)
    if repeat > 1:
        med.note = (med.note + f" median of {len(ok)}").strip()
    return med


# -- the corpus ----------------------------------------------------------------


def parse_size(text: str) -> int:
    """'100MB' -> 100_000_000 (decimal units, as file managers print them)."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([KMG]?)B?\s*", text.upper())
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (e.g. 100MB, 1GB, 300KB)")
    return int(float(m.group(1)) * {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}[m.group(2)])


def ensure_capture(cache_dir: str, label: str, target: int, timeout_s: float, mem_cap: int,
                   shape: str = "tf") -> tuple[str, dict]:
    """Path of the generated capture for ``target`` bytes of ``shape``; generated only if not cached.

    Key: target size, recipe parameters and a digest of the generator's
    sources, so a changed generator never hands back a stale file.
    """
    from corpus import generator_digest

    params = {"target_bytes": target, "layers": 12, "seed": 0}
    if shape != "tf":
        params["shape"] = shape
    key = hashlib.sha256(json.dumps({**params, "gen": generator_digest()}, sort_keys=True).encode()).hexdigest()[:16]
    folder = os.path.join(cache_dir, "corpus")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"bench_{label}{'' if shape == 'tf' else '-' + shape}_{key}.xplane.pb")
    meta_path = path + ".json"
    if os.path.exists(path) and os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        meta["cached"] = True
        return path, meta
    m = run_child(f"generate {label}", ["generate", path, json.dumps(params)], timeout_s, mem_cap)
    if m.status != "ok":
        raise RuntimeError(f"generating {label} failed: {m.status} {m.note}")
    meta = {**m.detail, "generate_s": m.wall_s, "generate_maxrss": m.maxrss, "cached": False}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return path, meta


# -- the warm HTTP fetch ---------------------------------------------------------


def _plugin_installed() -> bool:
    from importlib import metadata

    eps = metadata.entry_points()
    group = eps.select(group="tensorboard_plugins") if hasattr(eps, "select") else eps.get("tensorboard_plugins", ())
    return any(ep.name == "gpu_advisor" for ep in group)


def _install_shim(folder: str) -> str:
    """A dist-info folder declaring our entry point, for a checkout that is not pip-installed.

    TensorBoard finds dynamic plugins through ``importlib.metadata`` entry
    points; putting this folder on PYTHONPATH is exactly what an install
    does, without touching site-packages.
    """
    info = os.path.join(folder, "tb_gpu_advisor_bench_shim-0.0.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: tb-gpu-advisor-bench-shim\nVersion: 0.0\n")
    with open(os.path.join(info, "entry_points.txt"), "w") as f:
        f.write("[tensorboard_plugins]\ngpu_advisor = tb_gpu_advisor.serve.plugin_entry:GpuAdvisorLoader\n")
    return folder


def _get(url: str, timeout: float = 30.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def http_bench(path: str, workdir: str, timeout_s: float, fetches: int) -> dict:
    """Start ``tensorboard --logdir <tmp> --port 0``, wait for the report, time ``fetches`` warm GETs.

    A fresh cache dir makes the first request compute for real; that time
    (first request to first 200) is reported as "cold via HTTP".  The warm
    fetches each open a new connection, as a conservative client would.
    """
    res: dict[str, Any] = {"status": "ok"}
    logdir = os.path.join(workdir, "logdir")
    sess_dir = os.path.join(logdir, "bench", "plugins", "profile", SESSION)
    os.makedirs(sess_dir, exist_ok=True)
    host_file = os.path.join(sess_dir, os.path.basename(path))
    _link_or_copy(path, host_file)
    extra = {"TB_GPU_ADVISOR_CACHE_DIR": os.path.join(workdir, "advisor_cache")}
    env = _child_env(extra)
    if not _plugin_installed():
        shim = _install_shim(os.path.join(workdir, "shim"))
        env["PYTHONPATH"] = shim + os.pathsep + env["PYTHONPATH"]
        res["plugin"] = "dist-info shim on PYTHONPATH (checkout not pip-installed)"
    else:
        res["plugin"] = "installed entry point"
    err_path = os.path.join(workdir, "tensorboard.log")
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--port", "0", "--host", "127.0.0.1"],
            stdout=err, stderr=subprocess.STDOUT, env=env, cwd=workdir,
        )
    try:
        base = _wait_for_url(proc, err_path, 120.0)
        if base is None:
            res.update(status="error", note="tensorboard did not start: " + _tail(err_path))
            return res
        res["startup_s"] = base[1]
        url = base[0].rstrip("/") + "/data/plugin/gpu_advisor"
        code, body = _get(url + "/runs")
        if code != 200:
            res.update(status="error", note=f"/runs answered {code}")
            return res
        runs = json.loads(body)["runs"]
        run = next(r for r in runs if r["run"] == "bench")
        sess = run["sessions"][0]
        q = urllib.parse.urlencode({"run": "bench", "session": sess["session"], "host": sess["hosts"][0]["host"]})
        report_url = f"{url}/report?{q}"
        t0 = time.perf_counter()
        polls = 0
        while True:
            code, body = _get(report_url, timeout=timeout_s)
            polls += 1
            if code != 202:
                break
            if time.perf_counter() - t0 > timeout_s:
                res.update(status="timeout", note=f"still 202 after {timeout_s:.0f} s")
                return res
            time.sleep(0.1)
        res["cold_http_s"] = time.perf_counter() - t0
        res["polls"] = polls
        if code != 200:
            res.update(status="error", note=f"report answered {code}: {body[:160].decode(errors='replace')}")
            return res
        res["report_bytes"] = len(body)
        times = []
        for _ in range(fetches):
            t = time.perf_counter()
            code, body = _get(report_url)
            times.append((time.perf_counter() - t) * 1000)
            if code != 200:
                res.update(status="error", note=f"warm fetch answered {code}")
                return res
        times.sort()
        res["p50_ms"] = statistics.median(times)
        res["p95_ms"] = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        res["fetches"] = fetches
        res["tb_peak_rss"] = (_vm_kb(proc.pid, "VmHWM") or 0) * 1024
        return res
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_for_url(proc: subprocess.Popen, log: str, timeout_s: float) -> tuple[str, float] | None:
    t0 = time.perf_counter()
    pat = re.compile(r"TensorBoard \S+ at (http://\S+) ")
    while time.perf_counter() - t0 < timeout_s:
        if proc.poll() is not None:
            return None
        with open(log, errors="replace") as f:
            m = pat.search(f.read())
        if m:
            return m.group(1), time.perf_counter() - t0
        time.sleep(0.1)
    return None


def _tail(path: str) -> str:
    with open(path, errors="replace") as f:
        lines = f.read().strip().splitlines()
    return lines[-1][:200] if lines else "(no output)"


def _link_or_copy(src: str, dst: str) -> None:
    """Hard link when possible (a 1 GB copy is seconds and disk); the stock tool only adds files."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


# -- machine -------------------------------------------------------------------


def machine() -> dict[str, str]:
    """What the numbers were measured on."""
    from importlib import metadata

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = (status_kb("MemTotal", "/proc/meminfo") or 0) / 2**20
    avail = (status_kb("MemAvailable", "/proc/meminfo") or 0) / 2**20
    try:
        from google.protobuf.internal import api_implementation

        pb_impl = api_implementation.Type()
    except Exception:  # noqa: BLE001
        pb_impl = "?"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "code": _code_version(),
        "CPU": cpu,
        "cores": f"{usable} usable ({os.cpu_count()} online)",
        "RAM": f"{mem:.1f} GiB ({avail:.1f} GiB available at start, no swap)" if not _has_swap()
        else f"{mem:.1f} GiB ({avail:.1f} GiB available at start)",
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "OS": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "numpy": version("numpy"),
        "protobuf": f"{version('protobuf')} ({pb_impl})",
        "xprof": version("xprof"),
        "tensorboard": version("tensorboard"),
    }


def _code_version() -> str:
    """Commit plus whether the package has uncommitted edits (and when the newest was made): numbers go stale."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                             timeout=10).stdout.strip() or "no git"
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "tb_gpu_advisor"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not dirty:
        return f"git {sha}"
    newest = max((os.path.getmtime(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(REPO, "tb_gpu_advisor"))
                  for f in fs if f.endswith(".py")), default=0.0)
    return f"git {sha} + uncommitted changes in tb_gpu_advisor/ (newest {_dt.datetime.fromtimestamp(newest):%Y-%m-%d %H:%M})"


def _has_swap() -> bool:
    return bool(status_kb("SwapTotal", "/proc/meminfo"))


# -- report --------------------------------------------------------------------


def _mb(n: float | None) -> str:
    return "–" if n is None else f"{n / 1e6:,.0f}"


def _s(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def size_section(label: str, path: str, meta: dict, ms: list[Measurement], http: dict | None) -> tuple[str, list]:
    """Markdown for one file: the measurement table and the targets; also the target verdicts."""
    size = os.path.getsize(path)
    events = next((m.detail.get("events") for m in ms if m.label.startswith("ours: read") and m.detail), None)
    gen = (f"cached, generated earlier in {meta.get('generate_s', 0):.1f} s" if meta.get("cached")
           else f"generated in {meta.get('generate_s', 0):.1f} s")
    head = [f"### {label}: `{os.path.basename(path)}`", "",
            f"{size / 1e6:,.1f} MB, {events:,} events" if events else f"{size / 1e6:,.1f} MB",
            f"({gen}; params {json.dumps(meta.get('params', {}))})" if meta else "(given file)", ""]
    rows = ["| measurement | status | work s | process s | CPU s | peak RSS MB | RSS after imports MB "
            "| peak RSS / file | MB/s | events/s |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in ms:
        ok = m.status == "ok"
        mbps = f"{size / 1e6 / m.work_s:,.0f}" if ok and m.work_s else "–"
        eps = f"{events / m.work_s / 1e6:,.2f} M" if ok and m.work_s and events and m.label.startswith("ours") else "–"
        status = m.status if not m.note else f"{m.status} ({m.note})"
        rows.append(f"| {m.label} | {status} | {_s(m.work_s)} | {_s(m.wall_s)} | {_s(m.cpu_s)} | {_mb(m.maxrss)} "
                    f"| {_mb(m.rss_before)} | {(m.maxrss or 0) / size:.2f}x | {mbps} | {eps} |")
    by = {m.label: m for m in ms}
    verdicts: list[tuple[str, str, str]] = []
    ours = by.get("ours: read + analyze_host")
    stock = by.get("stock: overview_page")
    if ours and stock and ours.status == "ok" and stock.status == "ok":
        r = ours.work_s / stock.work_s
        rc = ours.cpu_s / stock.cpu_s if ours.cpu_s and stock.cpu_s else float("nan")
        verdicts.append(("cold analysis <= 0.25x stock overview_page time",
                         f"{ours.work_s:.2f} s / {stock.work_s:.2f} s = {r:.2f}x (process CPU time: {rc:.2f}x)",
                         _pm(r <= TARGET_RATIO)))
    elif ours and stock and ours.status == "ok" and stock.status in ("timeout", "memory-cap"):
        # The stock run was killed after wall_s, so its time is at least that: an upper bound on the ratio.
        bound = ours.work_s / stock.wall_s
        verdicts.append(("cold analysis <= 0.25x stock overview_page time",
                         f"{ours.work_s:.2f} s / stock > {stock.wall_s:.0f} s ({stock.status}: {stock.note}) "
                         f"= under {bound:.2f}x",
                         _pm(True) if bound <= TARGET_RATIO else "n/a: stock did not finish (ours did)"))
    else:
        verdicts.append(("cold analysis <= 0.25x stock overview_page time", "not measured", "n/a"))
    if ours and ours.status == "ok":
        x = ours.maxrss / size
        verdicts.append(("peak RSS <= 3x file size (read + analyze_host, whole process)",
                         f"{ours.maxrss / 1e6:,.0f} MB / {size / 1e6:,.0f} MB = {x:.2f}x", _pm(x <= TARGET_RSS_X)))
    else:
        verdicts.append(("peak RSS <= 3x file size (read + analyze_host, whole process)", "not measured", "n/a"))
    if http and http.get("status") == "ok":
        verdicts.append(("warm report fetch p50 < 50 ms",
                         f"p50 {http['p50_ms']:.1f} ms, p95 {http['p95_ms']:.1f} ms ({http['fetches']} fetches)",
                         _pm(http["p50_ms"] < TARGET_P50_MS)))
    else:
        verdicts.append(("warm report fetch p50 < 50 ms",
                         "not measured" + (f": {http.get('status')} {http.get('note', '')}" if http else ""), "n/a"))
    other = []
    for tool in STOCK_TOOLS:
        s = by.get(f"stock: {tool}")
        if ours and s and ours.status == "ok" and s.status == "ok":
            other.append(f"ours/stock {tool} = {ours.work_s / s.work_s:.2f}x")
    read = by.get("ours: read")
    floor = by.get("protobuf full parse (floor)")
    if read and floor and read.status == "ok" and floor.status == "ok":
        other.append(f"our read / bare protobuf parse = {read.work_s / floor.work_s:.1f}x")
    if http and http.get("status") == "ok":
        other.append(f"TensorBoard: started in {http['startup_s']:.1f} s, first report (cold, in-process, "
                     f"{http['polls']} polls) {http['cold_http_s']:.2f} s, report {http['report_bytes'] / 1e3:,.0f} kB, "
                     f"TensorBoard peak RSS {http['tb_peak_rss'] / 1e6:,.0f} MB")
    tgt = ["", "| target | measured | result |", "|---|---|---|"]
    tgt += [f"| {a} | {b} | {c} |" for a, b, c in verdicts]
    text = "\n".join(head + rows + tgt + ([""] + [f"- {o}" for o in other] if other else []))
    return text, verdicts


def _pm(ok: bool) -> str:
    return "**pass**" if ok else "**MISS**"


# -- main ----------------------------------------------------------------------


def bench_file(label: str, path: str, meta: dict, args: argparse.Namespace, mem_cap: int) -> tuple[str, dict]:
    """All measurements for one file, in a fixed order (cheap first, so a cap hit late loses least)."""
    ms: list[Measurement] = []
    t, rep = args.timeout, args.repeat

    def note(m: Measurement) -> None:
        ms.append(m)
        print(f"  {m.label:32s} {m.status:10s} work {_s(m.work_s):>7s} s  peak RSS {_mb(m.maxrss):>7s} MB "
              f"{m.note}", flush=True)

    note(best_of("protobuf full parse (floor)", ["parse", path], rep, t, mem_cap))
    note(best_of("ours: read", ["read", path], rep, t, mem_cap))
    note(best_of("ours: read + analyze_host", ["analyze", path], rep, t, mem_cap))
    stages = None
    if args.stages:
        sm = run_child("ours: memory by stage", ["stages", path], t, mem_cap)
        print(f"  {sm.label:32s} {sm.status:10s} work {_s(sm.work_s):>7s} s  peak RSS {_mb(sm.maxrss):>7s} MB "
              f"{sm.note}", flush=True)
        stages = sm.detail if sm.status == "ok" else {"error": f"{sm.status} {sm.note}"}
    if not args.skip_stock:
        for tool in STOCK_TOOLS:
            with tempfile.TemporaryDirectory(dir=args.cache_dir, prefix="stock_") as tmp:
                copy = os.path.join(tmp, os.path.basename(path))
                _link_or_copy(path, copy)
                note(best_of(f"stock: {tool}", ["stock", copy, tool], rep, t, mem_cap))
    http = None
    if not args.skip_http:
        with tempfile.TemporaryDirectory(dir=args.cache_dir, prefix="http_") as tmp:
            http = http_bench(path, tmp, t, args.fetches)
        print(f"  {'warm HTTP fetch':32s} {http.get('status'):10s} "
              + (f"p50 {http['p50_ms']:.1f} ms p95 {http['p95_ms']:.1f} ms" if "p50_ms" in http
                 else http.get("note", "")), flush=True)
    text, verdicts = size_section(label, path, meta, ms, http)
    text += stages_section(stages)
    return text, {"label": label, "path": path, "bytes": os.path.getsize(path), "meta": meta,
                  "measurements": [asdict(m) for m in ms], "http": http, "targets": verdicts, "stages": stages}


def stages_section(stages: dict | None) -> str:
    """Markdown of the memory-by-stage child (``--stages``), or nothing."""
    if not stages:
        return ""
    if "stages" not in stages:
        return f"\n\nMemory by stage: {stages.get('error', 'not measured')}"
    from stages import render

    return "\n\nMemory by stage (peaks above the RSS after imports; `benchmarks/stages.py`):\n\n" + render(stages)


def render_markdown(info: dict[str, str], sections: list[str], stamp: str | None = None) -> str:
    stamp = stamp or _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return "\n".join([f"## Benchmark results ({stamp})", "", "| machine | |", "|---|---|"]
                     + [f"| {k} | {v} |" for k, v in info.items()] + [""] + ["\n\n".join(sections)])


def render_saved(path: str) -> str:
    """The report of a saved run, re-rendered with this version's formatting (no re-measuring)."""
    with open(path) as f:
        saved = json.load(f)
    sections = []
    for rec in saved["files"]:
        ms = [Measurement(**m) for m in rec["measurements"]]
        sections.append(size_section(rec["label"], rec["path"], rec["meta"], ms, rec["http"])[0]
                        + stages_section(rec.get("stages")))
    return render_markdown(saved["machine"], sections, saved.get("stamp"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark the Advisor vs the stock xprof converter (issue 5).")
    ap.add_argument("--sizes", default="100MB,1GB", help="comma-separated capture sizes to generate (default %(default)s)")
    ap.add_argument("--quick", action="store_true", help="only the ~100 MB size")
    ap.add_argument("--shapes", default="tf", help="capture shapes per size, comma-separated: tf (our corpus, ~42 "
                    "bytes per event), dense (~25 bytes per event, ~41k events per MB) (default %(default)s)")
    ap.add_argument("--stages", action="store_true", help="also measure peak memory by pipeline stage, in bytes "
                    "per event (benchmarks/stages.py, one more fresh process per file)")
    ap.add_argument("--file", action="append", default=[], help="benchmark this existing .xplane.pb too (repeatable); "
                    "with --file and no --sizes nothing is generated")
    ap.add_argument("--cache-dir", default=os.path.join(REPO, ".bench"),
                    help="generated captures, temp copies and results (default %(default)s)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per measured process (default %(default)s)")
    ap.add_argument("--mem-cap", type=float, default=None,
                    help="GiB: kill a measured process above this RSS (default 85%% of MemAvailable at start)")
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per task; median reported (default 1)")
    ap.add_argument("--fetches", type=int, default=50, help="warm HTTP fetches (default %(default)s)")
    ap.add_argument("--skip-stock", action="store_true", help="do not run the stock converter")
    ap.add_argument("--skip-http", action="store_true", help="do not start TensorBoard")
    ap.add_argument("--generate-only", action="store_true", help="make (or find) the captures, measure nothing")
    ap.add_argument("--render", metavar="RESULTS_JSON", help="re-print the report of a saved results-*.json, measure nothing")
    args = ap.parse_args(argv)
    if args.render:
        print(render_saved(args.render))
        return 0

    sizes_given = any(a == "--sizes" or a.startswith("--sizes=") for a in (argv if argv is not None else sys.argv[1:]))
    labels = [] if (args.file and not sizes_given and not args.quick) else args.sizes.split(",")
    if args.quick:
        labels = labels[:1] or ["100MB"]
    os.makedirs(args.cache_dir, exist_ok=True)
    args.cache_dir = os.path.abspath(args.cache_dir)
    avail = (status_kb("MemAvailable", "/proc/meminfo") or 8 << 20) * 1024
    mem_cap = int(args.mem_cap * 2**30) if args.mem_cap else int(0.85 * avail)

    info = machine()
    print("machine: " + "; ".join(f"{k} {v}" for k, v in info.items()), flush=True)
    print(f"memory cap per process: {mem_cap / 2**30:.1f} GiB, timeout {args.timeout:.0f} s", flush=True)

    from corpus import SHAPES

    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    bad = [s for s in shapes if s not in SHAPES]
    if bad:
        ap.error(f"unknown shape(s) {', '.join(bad)}: choose from {', '.join(SHAPES)}")
    targets: list[tuple[str, str, dict]] = []
    for size_label in labels:
        for shape in shapes:
            label = size_label.strip() + ("" if shape == "tf" else f"-{shape}")
            t0 = time.perf_counter()
            path, meta = ensure_capture(args.cache_dir, size_label.strip(), parse_size(size_label), args.timeout * 2,
                                        mem_cap, shape)
            how = "cached" if meta.get("cached") else f"generated in {time.perf_counter() - t0:.1f} s"
            print(f"{label}: {path} ({os.path.getsize(path) / 1e6:,.1f} MB, {how}, "
                  f"generator peak RSS {meta.get('generate_maxrss', 0) / 1e6:,.0f} MB; "
                  f"params {json.dumps(meta.get('params'))})", flush=True)
            targets.append((label, path, meta))
    for p in args.file:
        targets.append((os.path.basename(p), os.path.abspath(p), {}))
    if args.generate_only:
        return 0

    sections, records = [], []
    for label, path, meta in targets:
        print(f"{label}:", flush=True)
        text, rec = bench_file(label, path, meta, args, mem_cap)
        sections.append(text)
        records.append(rec)

    info["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    md = render_markdown(info, sections)
    print()
    print(md)
    base = os.path.join(args.cache_dir, "results-" + _dt.datetime.now().strftime("%Y%m%d-%H%M%S"))
    with open(base + ".md", "w") as f:
        f.write(md + "\n")
    with open(base + ".json", "w") as f:
        json.dump({"stamp": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": info, "files": records}, f,
                  indent=1, default=str)
    print(f"\nsaved {base}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
