"""Peak memory of ``tb-gpu-advisor report`` on hostile and dense files, the stock converter beside it (issue #21 item 8).

    python benchmarks/memory.py                      # the three files below, ours and the stock tool
    python benchmarks/memory.py --dense-size 93MB --repeat 3 --skip-stock

Why end to end through ``report``: that is what a user runs, so the number includes the interpreter, the
imports, the discovery of the logdir, the memory guard and the rendering, not only ``analyze_host``
(``benchmarks/run.py`` and ``stages.py`` measure that part and its stages).  Each measurement is a fresh
process reaped with ``os.wait4``: its peak RSS is the kernel's own high-water mark of that process.

The files:

* **empty events, XPlane, 10 MB**: a host and a GPU line of 2.5 M events each with no field set
  (``synthetic.hostile.empty_events``), 2 bytes per event: nothing to analyse.  Target: under 300 MB.
  The 50 MB file (12.5 M per line) shows the cost does not grow with such events.
* **empty events, PyTorch, 10 and 50 MB**: a ``traceEvents`` array of 3.3 M (16.5 M) ``{}``.
* **dense 8-GPU capture**: the ``dense`` shape of the benchmark corpus (``benchmarks/corpus.py``: 39k events
  per MB, the shape of a user's 93 MB capture).  Target: peak <= 2x the file.

The stock row runs xprof's ``overview_page`` conversion on the same XPlane file (a private hard link: it writes
cache files next to its input), as ``run.py`` does; it reads no PyTorch trace.  Our ``report`` runs with the
report cache off, so every run analyses.  Results are printed as one markdown table and saved as
``<cache-dir>/memory-<time>.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [HERE, REPO]

from procfs import status_kb  # noqa: E402
from run import (  # noqa: E402  (benchmarks/ is on the path now)
    Measurement,
    _child_env,
    _code_version,
    _link_or_copy,
    ensure_capture,
    parse_size,
    run_child,
    run_process,
)

SESSION = "2024_01_01_00_00_00"
#: Targets of issue #21 item 8.
EMPTY_LIMIT_MB = 300
DENSE_RATIO = 2.0


@dataclass
class Case:
    """One file measured: where it is, how to lay it out as a logdir, what it must stay under."""

    label: str
    path: str
    fmt: str  # "xplane" | "kineto"
    events: int
    target: str  # in words, for the table
    limit_bytes: float | None = None  # peak RSS the target allows, None: none
    above_imports: float | None = None  # or: bytes the peak may lie above the RSS of the imports alone
    stock: bool = True  # run the stock converter on it (not on the 50 MB empty file: 10 MB of it takes 3.2 GB)


#: Writes the hostile files in a child process: the parent must stay small, since a child's peak RSS counts
#: the parent's pages it was forked with (``ru_maxrss`` survives ``exec``).
_WRITE = r"""
import sys
path, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == "xplane":
    from synthetic import hostile
    data = hostile.empty_events(n)
else:
    data = ('{"traceEvents": [' + ",".join(["{}"] * n) + "]}").encode()
with open(path, "wb") as f:
    f.write(data)
"""


def _write(path: str, kind: str, n: int) -> None:
    if not os.path.exists(path):
        m, code, _, err = run_process(f"write {kind}", [sys.executable, "-c", _WRITE, path, kind, str(n)], 600, 1 << 40)
        if code != 0:
            raise RuntimeError(f"writing {path} failed: {err.strip()[-300:]}")


def _empty_xplane(folder: str, mb: int) -> Case:
    n = 250_000 * mb  # per line: 2 bytes an event, two lines
    path = os.path.join(folder, f"empty_events_{mb}MB.xplane.pb")
    _write(path, "xplane", n)
    size = os.path.getsize(path)
    if mb == 10:
        return Case(f"empty events, XPlane, {mb} MB", path, "xplane", 2 * n, f"< {EMPTY_LIMIT_MB} MB",
                    EMPTY_LIMIT_MB * 1e6)
    # nothing per event: what is left is the plane being read (its bytes, 2 per event)
    return Case(f"empty events, XPlane, {mb} MB", path, "xplane", 2 * n, "imports + <= 1.5x the file",
                above_imports=1.5 * size, stock=False)


def _empty_kineto(folder: str, mb: int) -> Case:
    n = 330_000 * mb  # "{}," is 3 bytes
    path = os.path.join(folder, f"empty_events_{mb}MB.pt.trace.json")
    _write(path, "kineto", n)
    # nothing per event: a bounded chunk of decoded objects and the read buffer, whatever the file's size
    return Case(f"empty events, PyTorch, {mb} MB", path, "kineto", n, "imports + <= 64 MB", above_imports=64e6)


def _dense(cache_dir: str, size: str, timeout_s: float, mem_cap: int) -> Case:
    path, _ = ensure_capture(cache_dir, size, parse_size(size), timeout_s, mem_cap, shape="dense")
    counted = run_child("read", ["read", path], timeout_s, mem_cap)  # events, as our reader counts them
    events = int(counted.detail.get("events") or 0)
    size_b = os.path.getsize(path)
    return Case(f"dense 8-GPU capture ({size})", path, "xplane", events, f"<= {DENSE_RATIO:g}x the file",
                DENSE_RATIO * size_b)


def _logdir(case: Case, root: str) -> str:
    """A logdir holding only ``case``'s file (a hard link), laid out as its format is written."""
    logdir = os.path.join(root, "logdir")
    shutil.rmtree(logdir, ignore_errors=True)
    if case.fmt == "xplane":
        folder = os.path.join(logdir, "plugins", "profile", SESSION)
        name = "host.xplane.pb"
    else:
        folder = os.path.join(logdir, "run")
        name = "worker0.1700000000000000000.pt.trace.json"
    os.makedirs(folder)
    _link_or_copy(case.path, os.path.join(folder, name))
    return logdir


def ours(case: Case, root: str, timeout_s: float, mem_cap: int, env: dict | None = None,
         code: str | None = None) -> Measurement:
    """``tb-gpu-advisor report LOGDIR --format json`` in a fresh process, report cache off; ``env``: more
    variables (``TB_GPU_ADVISOR_PURE_PYTHON=1``: the pure-Python XPlane decoder); ``code``: another checkout's
    package runs (its folder first on the path and the working folder), e.g. main's for a before/after."""
    logdir = _logdir(case, root)
    argv = [sys.executable, "-m", "tb_gpu_advisor.cli", "report", logdir, "--format", "json", "--output", os.devnull]
    more = {"TB_GPU_ADVISOR_CACHE_DIR": "off", **(env or {})}
    if code:
        more["PYTHONPATH"] = code + os.pathsep + _child_env()["PYTHONPATH"]
    m, code_, _, stderr = run_process("ours: report", argv, timeout_s, mem_cap, _child_env(more), cwd=code)
    if m.status == "ok":
        # "... host 'h' could not be analysed: <path>: <why>" -> <why>
        errors = [ln.split("could not be analysed: ", 1)[-1].split(": ", 1)[-1] for ln in stderr.splitlines()
                  if "error:" in ln]
        m.note = f"exit {code_}" + (f": {errors[0][:70]}" if errors else "")
        if code_ not in (0, 1, 2) or "Traceback" in stderr:
            m.status = "error"
    return m


def stock(case: Case, root: str, timeout_s: float, mem_cap: int) -> Measurement:
    """xprof's ``overview_page`` on a private link of the XPlane file (it writes caches next to its input)."""
    if case.fmt != "xplane":
        return Measurement("stock: overview_page", status="skipped", note="reads XPlane only")
    if not case.stock:
        return Measurement("stock: overview_page", status="skipped", note="not run: 3.2 GB at 10 MB")
    folder = os.path.join(root, "stock")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    copy = os.path.join(folder, "host.xplane.pb")
    _link_or_copy(case.path, copy)
    try:
        return run_child("stock: overview_page", ["stock", copy, "overview_page"], timeout_s, mem_cap)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def import_baseline(timeout_s: float, mem_cap: int) -> int:
    """Peak RSS of a process that only imports what ``report`` imports: the share no file causes."""
    argv = [sys.executable, "-c", "import tb_gpu_advisor.cli.main, tb_gpu_advisor.runtime.pipeline"]
    m, _, _, _ = run_process("imports", argv, timeout_s, mem_cap)
    return m.maxrss or 0


def _median_peak(fn, repeat: int, *args) -> Measurement:
    """The run with the median peak RSS of ``repeat`` fresh processes (all must succeed to be compared)."""
    runs = [fn(*args) for _ in range(repeat)]
    ok = [r for r in runs if r.status == "ok" and r.maxrss]
    if len(ok) < len(runs) or not ok:
        return runs[0]
    ok.sort(key=lambda r: r.maxrss)
    med = ok[len(ok) // 2]
    if repeat > 1:
        med.note = (med.note + f"; median of {repeat} (peaks {', '.join(f'{r.maxrss / 1e6:.0f}' for r in ok)} MB)")
    return med


def _mb(n: float | None) -> str:
    return "–" if n is None else f"{n / 1e6:,.0f}"


def _x(n: float | None, size: int) -> str:
    return "–" if n is None else f"{n / size:.2f}x"


def _peak(m: Measurement) -> str:
    if m.status == "ok":
        return _mb(m.maxrss)
    if m.status == "skipped":
        return f"n/a ({m.note})"
    return f"{m.status}: {m.note}"


def render(cases: list[tuple[Case, Measurement, Measurement]], baseline: int, info: str) -> str:
    """The markdown table of one run, and one verdict line per target."""
    lines = [info, "",
             f"RSS of a process that only imports the CLI: {_mb(baseline)} MB (part of every row of ours).", "",
             "| file | size MB | events | ours: `report` peak RSS MB | ours / file | ours above imports, B/event "
             "| target | result | ours CPU s | stock `overview_page` peak RSS MB | stock / file | ours: outcome |",
             "|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---|"]
    for case, o, s in cases:
        size = os.path.getsize(case.path)
        limit = case.limit_bytes if case.above_imports is None else baseline + case.above_imports
        ok = o.status == "ok" and (limit is None or (o.maxrss or 0) <= limit)
        result = ("**pass**" if ok else "**fail**") if limit is not None else ("ok" if ok else "**fail**")
        per_event = (f"{max((o.maxrss or 0) - baseline, 0) / case.events:.1f}" if o.status == "ok" and case.events
                     else "–")
        lines.append(f"| {case.label} | {size / 1e6:,.1f} | {case.events:,} | {_peak(o)} | "
                     f"{_x(o.maxrss, size) if o.status == 'ok' else '–'} | {per_event} | {case.target} | {result} | "
                     f"{o.cpu_s:.1f} | {_peak(s)} | "
                     f"{_x(s.maxrss, size) if s.status == 'ok' else '–'} | {o.note} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dense-size", default="93MB", help="size of the dense capture (default %(default)s: the user's)")
    ap.add_argument("--empty-mb", default="10,50", help="sizes of the empty-event files, MB (default %(default)s)")
    ap.add_argument("--cache-dir", default=os.path.join(REPO, ".bench"), help="generated files and results")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per measured process")
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per measurement of ours; median peak "
                    "reported (the stock tool runs once)")
    ap.add_argument("--skip-stock", action="store_true", help="do not run the stock converter")
    ap.add_argument("--only", choices=("empty", "dense"), help="only the empty-event files, or only the dense capture")
    args = ap.parse_args(argv)
    avail = (status_kb("MemAvailable", "/proc/meminfo") or 8 << 20) * 1024
    mem_cap = int(0.85 * avail)
    folder = os.path.join(args.cache_dir, "memory")
    os.makedirs(folder, exist_ok=True)
    cases = []
    if args.only != "dense":
        for mb in (int(x) for x in args.empty_mb.split(",") if x):  # 10 and 50: the cost of 5x the events
            cases += [_empty_xplane(folder, mb), _empty_kineto(folder, mb)]
    if args.only != "empty":
        cases.append(_dense(args.cache_dir, args.dense_size, args.timeout, mem_cap))
    info = (f"Run of {time.strftime('%Y-%m-%d %H:%M')}, code {_code_version()}, "
            f"{os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    baseline = import_baseline(args.timeout, mem_cap)
    rows = []
    with tempfile.TemporaryDirectory(dir=args.cache_dir) as root:
        for case in cases:
            print(f"measuring {case.label} ({os.path.getsize(case.path) / 1e6:,.1f} MB) ...", file=sys.stderr, flush=True)
            o = _median_peak(ours, args.repeat, case, root, args.timeout, mem_cap)
            # the stock tool once: it takes 30x our time on these files, and its peak barely moves between runs
            s = (Measurement("stock: overview_page", status="skipped", note="--skip-stock") if args.skip_stock
                 else stock(case, root, args.timeout, mem_cap))
            rows.append((case, o, s))
    text = render(rows, baseline, info)
    print(text)
    out = os.path.join(args.cache_dir, f"memory-{time.strftime('%Y%m%d-%H%M%S')}.md")
    with open(out, "w") as f:
        f.write(text)
    with open(out[:-3] + ".json", "w") as f:
        json.dump({"baseline": baseline, "rows": [{"file": c.label, "path": c.path, "bytes": os.path.getsize(c.path),
                                                    "events": c.events, "ours": vars(o), "stock": vars(s)}
                                                   for c, o, s in rows]}, f, indent=1, default=str)
    print(f"saved {os.path.relpath(out, REPO)}", file=sys.stderr)
    failed = [c.label for c, o, _ in rows if o.status != "ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
