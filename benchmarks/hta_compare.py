"""PyTorch traces: the Advisor's cold analysis against Holistic Trace Analysis, same files, same run (issue #10).

    python benchmarks/hta_compare.py [--sizes 100,1000] [--hta-python PY] [--timeout 900]

Why: HTA is what a PyTorch user would otherwise run on a ``torch.profiler`` trace; the issue's targets are our
time <= 0.25x HTA's and our peak memory <= 2x the file.  Each contender runs in a fresh process (peak RSS is a
per-process high-water mark, and a fresh interpreter is what a first look costs):

* ours: ``tb-gpu-advisor report LOGDIR --format json`` in process (read, steps, metrics, rules, JSON), cache off;
* HTA:  ``TraceAnalysis(trace_dir=...)`` (its parse into pandas) + ``get_temporal_breakdown()``.

Traces: a real H100 trace (``torch_healthy_bf16``) repeated with times, ids and step numbers shifted
(``kineto_parse.make_trace``) to each size.  Wall time is the child's whole life (imports included), work time
the measured part after imports, CPU the child's user + system seconds (its own and its children's); peak is the
child's ``ru_maxrss``.  HTA runs from ``--hta-python`` (an interpreter that has it; default: this one).
``--cache-dir``: take the traces from ``kineto_floor.py``'s cache (its ``h100`` shape is this same trace), written
there once, instead of writing each one anew; ``--json``: also write ``rows.py`` rows (HTA as the peer of the
PyTorch ``h100`` row, and ours as run beside it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import rows as rowlib
from kineto_parse import DEFAULT_SRC, make_trace, source_trace  # noqa: E402

T0 = 1795380384345498510


def child(tool: str, logdir: str) -> None:
    """Run one contender on ``logdir/run`` and print its measurements as JSON."""
    t0 = time.perf_counter()
    if tool == "ours":
        sys.path.insert(0, REPO)
        os.environ["TB_GPU_ADVISOR_CACHE_DIR"] = "off"
        from tb_gpu_advisor.cli import main as cli

        t1 = time.perf_counter()
        rc = cli.main(["report", logdir, "--format", "json", "--output", os.devnull])
        if rc not in (0, 1):  # 1: a finding at --fail-on level, still a full analysis
            sys.exit(rc)
        detail = {"exit": rc}
    else:
        import logging

        logging.disable(logging.WARNING)
        from hta.trace_analysis import TraceAnalysis

        t1 = time.perf_counter()
        a = TraceAnalysis(trace_dir=os.path.join(logdir, "run"))
        tb = a.get_temporal_breakdown(visualize=False)
        detail = {"idle_pctg": float(tb["idle_time_pctg"].iloc[0])}
    work = time.perf_counter() - t1
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    print(json.dumps({"import_s": t1 - t0, "work_s": work, "cpu_s": cpu,
                      "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, **detail}))


def measure(python: str, tool: str, logdir: str, timeout: float) -> dict:
    """One contender in its own process: its JSON plus the process's wall time, or why it has none."""
    t = time.perf_counter()
    try:
        out = subprocess.run([python, os.path.abspath(__file__), "--child", tool, logdir], capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    wall = time.perf_counter() - t
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": f"exit {out.returncode}: {tail[:80]}", "wall_s": wall}
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,1000", help="trace sizes in MB (default %(default)s)")
    ap.add_argument("--src", default=DEFAULT_SRC, help="a real .pt.trace.json or its folder")
    ap.add_argument("--hta-python", default=sys.executable, help="interpreter with HolisticTraceAnalysis")
    ap.add_argument("--timeout", type=float, default=900.0, help="per contender, seconds (default %(default)s)")
    ap.add_argument("--cache-dir", help="kineto_floor.py's trace cache: reuse (or write there) its h100 traces")
    ap.add_argument("--json", help="also write the rows (benchmarks/rows.py) to this file")
    ap.add_argument("--child", nargs=2, metavar=("TOOL", "LOGDIR"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(*a.child)
        return 0
    src = source_trace(a.src)
    if src is None:
        return 2
    print(f"source: {os.path.relpath(src)}; HTA from {a.hta_python}\n")
    print("| trace MB | events | tool | wall s | work s | CPU s | peak MB | peak / file | ours / HTA (wall) |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    table_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (float(x) for x in a.sizes.split(",") if x):
            logdir = os.path.join(tmp, f"{mb:g}MB")
            os.makedirs(os.path.join(logdir, "run"))
            path = os.path.join(logdir, "run", f"w_1.{T0}.pt.trace.json")
            events = _trace(src, mb, path, a.cache_dir)
            size = os.path.getsize(path)
            rows = {tool: measure(sys.executable if tool == "ours" else a.hta_python, tool, logdir, a.timeout)
                    for tool in ("ours", "hta")}
            for tool, r in rows.items():
                _row(size, events, tool, r, rows)
            table_rows.append(as_row(mb, size, rows))
            os.remove(path)
    rowlib.write(a.json, table_rows)
    return 0


def _trace(src: str, mb: float, path: str, cache_dir: str | None) -> int | str:
    """Write (or, from ``kineto_floor.py``'s cache, link) the trace of ``mb`` MB at ``path``: its event count, or
    "cached" where it was linked (counting would cost a parse)."""
    if cache_dir is None or mb != int(mb):
        return make_trace(src, mb, path)
    from kineto_floor import make

    cached = make("h100", int(mb), cache_dir)
    try:
        os.link(cached, path)
    except OSError:
        import shutil

        shutil.copyfile(cached, path)
    return "cached"


def as_row(mb: float, size: int, rows: dict) -> dict:
    """The ``rows.py`` row of one trace: HTA as the peer of the PyTorch ``h100`` row, and ours as run beside it."""
    def m(r: dict, name: str | None = None) -> dict:
        if "error" in r:
            return rowlib.measured(r["error"], wall_s=r.get("wall_s"), name=name)
        return rowlib.measured("ok", r.get("cpu_s"), r["wall_s"], r["peak_kb"] * 1024, name=name)

    return rowlib.row("pytorch", "h100", rowlib.size_label(int(mb * 10**6)), size,
                      peer=m(rows["hta"], "HTA load + temporal breakdown"), peer_ours=m(rows["ours"]))


def _row(size: int, events: int | str, tool: str, r: dict, rows: dict) -> None:
    name = "Advisor (read + full analysis)" if tool == "ours" else "HTA (load + temporal breakdown)"
    events = events if isinstance(events, str) else f"{events:,}"
    if "error" in r:
        print(f"| {size / 1e6:.0f} | {events} | {name} | {r.get('wall_s', float('nan')):.1f} | | | | | {r['error']} |")
        return
    peak = r["peak_kb"] * 1024
    ratio = ""
    if tool == "ours" and "error" not in rows["hta"]:
        ratio = f"{r['wall_s'] / rows['hta']['wall_s']:.2f}x"
    cpu = f"{r['cpu_s']:.1f}" if r.get("cpu_s") is not None else ""
    print(f"| {size / 1e6:.0f} | {events} | {name} | {r['wall_s']:.1f} | {r['work_s']:.1f} | {cpu} | {peak / 1e6:,.0f} | "
          f"{peak / size:.2f}x | {ratio} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
