"""Where does ``analyze_host`` spend CPU time and memory?  (The evidence behind docs/benchmarks.md.)

    python benchmarks/profile_analyze.py FILE.xplane.pb [--top 25] [--no-memory]

Why CPU time: the benchmark machine is shared and small (2 cores); wall
clock attributions move by 2x with other people's load, CPU seconds do not.
So cProfile runs with ``time.process_time`` as its timer.

The memory part wraps the reader's and the metrics' entry points (without
editing them) and prints VmRSS / VmHWM (the process's peak) after each
stage, in a separate fresh run so cProfile's own bookkeeping is not counted.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from collections import defaultdict
from typing import Any, Callable

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from procfs import status_kb  # noqa: E402  (run as a script: benchmarks/ is sys.path[0])


def _vm(key: str) -> float:
    """MB of /proc/self/status field ``key``."""
    return (status_kb(key) or 0) / 1024 * 1.048576


def _host(path: str) -> Any:
    from tb_gpu_advisor.discover.logdir import HostFile

    st = os.stat(path)
    return HostFile(host="bench", path=path, size=st.st_size, mtime_ns=st.st_mtime_ns)


def cpu_profile(path: str, top: int) -> None:
    """cProfile of one cold analyze_host, CPU-timed; top functions and per-area totals."""
    from tb_gpu_advisor.runtime.pipeline import analyze_host

    host = _host(path)
    pr = cProfile.Profile(time.process_time)
    c0, t0 = time.process_time(), time.perf_counter()
    pr.enable()
    analyze_host(host)
    pr.disable()
    print(f"analyze_host under cProfile: {time.process_time() - c0:.2f} CPU s, {time.perf_counter() - t0:.2f} wall s")
    st = pstats.Stats(pr)
    # Per-area self time: which part of the package (or numpy/upb under it) burns the CPU.
    area: dict[str, float] = defaultdict(float)
    for (fname, _line, func), (_cc, _nc, tt, _ct, callers) in st.stats.items():  # type: ignore[attr-defined]
        area[_area(fname, func, callers)] += tt
    total = sum(area.values())
    print("\nself CPU time by area (numpy/builtin calls charged to the tb_gpu_advisor module that called them):")
    for k, v in sorted(area.items(), key=lambda kv: -kv[1])[:20]:
        print(f"  {v:7.2f} s  {100 * v / total:5.1f}%  {k}")
    print("\ncumulative (top):")
    st.sort_stats("cumulative").print_stats(top)
    print("self (top):")
    st.sort_stats("tottime").print_stats(top)


def _area(fname: str, func: str, callers: dict) -> str:
    """Module of ``fname`` inside the package; for numpy/builtins, the package module that called it most."""
    if "tb_gpu_advisor" in fname:
        return fname.split("tb_gpu_advisor/")[-1]
    best, best_t = None, -1.0
    for (cf, _cl, _cfn), stats in callers.items():
        t = stats[2] if isinstance(stats, tuple) else 0.0
        if t > best_t:
            best, best_t = cf, t
    if best and "tb_gpu_advisor" in best:
        return best.split("tb_gpu_advisor/")[-1] + " (numpy/builtins)"
    return "numpy/other (" + (best.rsplit("/", 1)[-1] if best else func) + ")"


def memory_stages(path: str) -> None:
    """RSS and peak RSS after each stage of one analyze_host, in this fresh process."""
    import tb_gpu_advisor.formats.xplane.reader as rd
    import tb_gpu_advisor.metrics.compute as mc
    import tb_gpu_advisor.runtime.pipeline as an
    from tb_gpu_advisor.common import fsio

    rows: list[tuple[str, float, float, float]] = []
    t0 = time.perf_counter()

    def mark(label: str) -> None:
        rows.append((label, time.perf_counter() - t0, _vm("VmRSS"), _vm("VmHWM")))

    def wrap(mod: Any, name: str, label: str) -> None:
        fn: Callable | None = getattr(mod, name, None)
        if fn is None:  # the reader changes; a missing stage is just not shown
            return

        def inner(*a: Any, **k: Any) -> Any:
            out = fn(*a, **k)
            mark(label)
            return out

        setattr(mod, name, inner)

    mark("start (imports done)")
    wrap(fsio, "read_bytes", "file bytes read")
    wrap(rd, "_read_plane", "plane decoded")
    wrap(rd, "parse_timeline", "timeline built")
    wrap(mc, "build_context", "metrics context built")
    wrap(an, "compute_host_metrics", "metrics computed")
    wrap(an, "build_host_report", "report built")
    import tb_gpu_advisor.metrics.breakdown as bd

    wrap(bd, "gpu_step_arrays", "gpu step arrays (one GPU)")
    wrap(bd, "step_gaps", "step gaps (one GPU)")
    an.analyze_host(_host(path))
    print(f"\nmemory by stage (MB; file {os.path.getsize(path) / 1e6:,.0f} MB):")
    print(f"  {'stage':28s} {'t s':>7s} {'RSS':>8s} {'peak':>8s}")
    for label, t, rss, hwm in rows:
        print(f"  {label:28s} {t:7.2f} {rss:8,.0f} {hwm:8,.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--memory-only", action="store_true")
    args = ap.parse_args()
    if args.memory_only:
        memory_stages(args.file)
        return
    if not args.no_memory:
        # A fresh interpreter, so the peak is the analysis's own and not cProfile's.
        import subprocess

        subprocess.run([sys.executable, os.path.abspath(__file__), args.file, "--memory-only"], check=False)
    cpu_profile(args.file, args.top)


if __name__ == "__main__":
    main()
