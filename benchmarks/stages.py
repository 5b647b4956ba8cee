"""Peak memory and CPU of ``analyze_host`` by pipeline stage, in bytes per event (issue 12 item 8, issue 38 item 4).

    python benchmarks/stages.py FILE.xplane.pb|FILE.pt.trace.json|FILE.sqlite [--json]

Why bytes per event: memory follows events, not file bytes (a capture of
small events holds ~1.7x the events per MB of ours), so a per-stage figure
per event says which stage to cut whatever the capture's shape.

How: the kernel's peak RSS (``VmHWM``) can be reset by writing ``5`` to
``/proc/self/clear_refs`` (Linux >= 4.0).  The pipeline's entry points are
wrapped (without editing them); at every entry and exit of a wrapped stage
the peak since the last checkpoint is read, charged to every stage still
open, and reset.  So each stage's peak is exact -- the kernel's own
high-water mark, not a sample -- and a nested stage (the event tables inside
the metrics context) is charged to its parent too.  Numbers are above the
RSS after imports (interpreter, numpy, upb, the package): the part that
grows with the capture.  Run it in a fresh process, one file per process.

CPU seconds (``time.process_time``, every thread of the process) are read at the same checkpoints: on this shared
2-core machine the wall clock of a stage moves 2-3x with other people's load, its CPU does not.  After
``analyze_host`` the session's report is merged and written as the CLI's ``--format json`` writes it, so the
table ends with the whole of what a user waits for after the read: "analysis after the read" sums every stage
from launch correlation to the JSON text (issue #38 deliverable 4 asks <= 0.3 s of it at 100 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
for _p in (HERE, REPO):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from procfs import status_kb  # noqa: E402

#: (module, attribute, label, depth): the wrapped stages, in pipeline order; depth indents nested ones.
STAGES: tuple[tuple[str, str, str, int], ...] = (
    ("tb_gpu_advisor.formats", "read", "read (file -> trace model)", 0),
    ("tb_gpu_advisor.formats.xplane.adapter", "read_timeline", "read + decode (timeline columns)", 1),
    ("tb_gpu_advisor.formats.xplane.reader", "_read_plane", "one plane decoded", 2),
    ("tb_gpu_advisor.formats.xplane.reader", "_read_line", "one line decoded", 3),
    ("tb_gpu_advisor.formats.xplane.adapter", "to_trace", "trace model (event tables)", 1),
    ("tb_gpu_advisor.formats.xplane.adapter", "host_events", "host event table", 2),
    ("tb_gpu_advisor.formats.xplane.adapter", "all_device_events", "device event tables", 2),
    ("tb_gpu_advisor.runtime.pipeline", "device_launches", "launch correlation", 0),
    ("tb_gpu_advisor.runtime.pipeline", "detect_job", "job", 0),
    ("tb_gpu_advisor.job", "work_kind", "job: kind", 1),
    ("tb_gpu_advisor.job", "one_time_costs", "job: one-time costs", 1),
    ("tb_gpu_advisor.job", "unseen_gpu_work", "job: unseen GPU work", 1),
    ("tb_gpu_advisor.job", "span_steps", "job: span steps", 1),
    ("tb_gpu_advisor.job", "repeated_launches", "job: repeated launches", 1),
    ("tb_gpu_advisor.runtime.pipeline", "detect_steps", "steps", 0),
    ("tb_gpu_advisor.runtime.pipeline", "compute_host_metrics", "metrics (context + modules)", 0),
    ("tb_gpu_advisor.metrics.compute", "build_context", "metrics context", 1),
    ("tb_gpu_advisor.frameworks.user_ranges", "program_ranges", "the program's own ranges (steps, metrics)", 1),
    ("tb_gpu_advisor.metrics.breakdown", "gpu_step_arrays", "breakdown: per-GPU steps", 1),
    ("tb_gpu_advisor.metrics.breakdown", "step_gaps", "breakdown: gaps", 1),
    ("tb_gpu_advisor.metrics.breakdown", "ranges_in_idle", "breakdown: ranges in idle", 1),
    ("tb_gpu_advisor.metrics.breakdown", "os_waits_in_idle", "breakdown: OS waits in idle", 1),
    ("tb_gpu_advisor.metrics.breakdown", "host_arrays", "breakdown: host rows", 1),
    ("tb_gpu_advisor.metrics.kernels", "precision_totals", "kernels: precision", 1),
    ("tb_gpu_advisor.metrics.ops", "kept_ops", "ops: kept ops", 1),
    ("tb_gpu_advisor.metrics.ops", "placement", "ops: placement", 1),
    ("tb_gpu_advisor.metrics.ops", "op_stats", "ops: op stats", 1),
    ("tb_gpu_advisor.metrics.memcpy", "memcpy_stats", "memcpy", 1),
    ("tb_gpu_advisor.metrics.multigpu", "gpu_metrics", "multigpu", 1),
    ("tb_gpu_advisor.metrics.kernels", "kernel_stats", "kernels: kernel stats", 1),
    ("tb_gpu_advisor.metrics.kernels", "small_kernels", "kernels: small kernels", 1),
    ("tb_gpu_advisor.metrics.kernels", "fusion", "kernels: fusion", 1),
    ("tb_gpu_advisor.metrics.memcpy", "round_trips", "memcpy: round trips", 1),
    ("tb_gpu_advisor.metrics.capture", "capture_quality", "capture quality", 1),
    ("tb_gpu_advisor.metrics.underfill", "underfill", "kernels: too few blocks", 1),
    ("tb_gpu_advisor.metrics.comm", "communication", "communication", 1),
    ("tb_gpu_advisor.metrics.kernels", "kernel_durations", "kernels: durations", 1),
    ("tb_gpu_advisor.metrics.ops", "eager", "ops: eager", 1),
    ("tb_gpu_advisor.metrics.ops", "host_ops", "ops: host ops", 1),
    ("tb_gpu_advisor.metrics.ops", "loss_scaling", "ops: loss scaling", 1),
    ("tb_gpu_advisor.metrics.breakdown", "summarize_gaps", "breakdown: gaps summary", 1),
    ("tb_gpu_advisor.metrics.multigpu", "multi_gpu", "multigpu: summary", 1),
    ("tb_gpu_advisor.metrics.memory", "memory", "memory", 1),
    ("tb_gpu_advisor.metrics.syncs", "host_syncs", "host syncs", 1),
    ("tb_gpu_advisor.metrics.inputs", "host_input", "input", 1),
    ("tb_gpu_advisor.metrics.flops", "flops", "flops", 1),
    ("tb_gpu_advisor.metrics.capture", "applied_fixes", "capture: applied fixes", 1),
    ("tb_gpu_advisor.metrics.capture", "unmet_fixes", "capture: unmet fixes", 1),
    ("tb_gpu_advisor.metrics.compute", "_dispatch", "dispatch", 1),
    ("tb_gpu_advisor.metrics.breakdown", "mean_critical", "breakdown: mean critical", 1),
    ("tb_gpu_advisor.metrics.breakdown", "critical_shares", "breakdown: critical shares", 1),
    ("tb_gpu_advisor.metrics.breakdown", "top_ranges", "breakdown: top ranges", 1),
    ("tb_gpu_advisor.metrics.compute", "release_free_heap", "heap trims (malloc_trim)", 1),
    ("tb_gpu_advisor.rules", "evaluate", "rules", 0),
    ("tb_gpu_advisor.runtime.pipeline", "build_host_report", "report (tables)", 0),
    ("tb_gpu_advisor.runtime.pipeline", "merge_hosts", "report (session merge)", 0),
)
#: Top-level stages that are the read; every other top-level stage is "analysis after the read".
READ_LABELS = ("read (file -> trace model)",)


@dataclass
class StageRow:
    """One stage: peak RSS while it ran and RSS when it returned, both above the post-import baseline."""

    label: str
    depth: int
    calls: int = 0
    seconds: float = 0.0
    cpu_s: float = 0.0  # process CPU (all threads) while it ran
    peak: int = 0  # bytes above baseline
    after: int = 0  # bytes above baseline at its (last) return


def _reset_peak() -> bool:
    """Reset this process's VmHWM to its current RSS; False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _kb(key: str) -> int:
    return (status_kb(key) or 0) * 1024


class Tracker:
    """Charges the peak RSS between checkpoints to every open stage (see the module docstring)."""

    def __init__(self) -> None:
        self.baseline = _kb("VmRSS")
        self.rows: dict[str, StageRow] = {}
        self.open: list[StageRow] = []
        self.overall = 0
        self.resettable = _reset_peak()

    def checkpoint(self) -> int:
        """Peak since the last checkpoint (above baseline), charged to the open stages; then reset."""
        peak = _kb("VmHWM") - self.baseline
        for row in self.open:
            row.peak = max(row.peak, peak)
        self.overall = max(self.overall, peak)
        _reset_peak()
        return peak

    def wrap(self, fn: Callable, label: str, depth: int) -> Callable:
        row = self.rows.setdefault(label, StageRow(label, depth))

        def inner(*a: Any, **k: Any) -> Any:
            self.checkpoint()
            self.open.append(row)
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:
                row.seconds += time.perf_counter() - t0
                row.cpu_s += time.process_time() - c0
                row.calls += 1
                self.checkpoint()
                self.open.remove(row)
                row.after = _kb("VmRSS") - self.baseline

        return inner


def install(tracker: Tracker) -> None:
    """Wrap every stage of :data:`STAGES` that this version of the package has (a missing one is skipped)."""
    import importlib

    for mod_name, attr, label, depth in STAGES:
        mod = importlib.import_module(mod_name)
        fn = getattr(mod, attr, None)
        if fn is not None:
            setattr(mod, attr, tracker.wrap(fn, label, depth))


def measure(path: str) -> dict:
    """Run one ``analyze_host`` on ``path`` with every stage tracked; returns the numbers."""
    import tb_gpu_advisor.runtime.pipeline as an
    from tb_gpu_advisor.cli.report import format_reports
    from tb_gpu_advisor.discover.logdir import HostFile

    import tb_gpu_advisor.formats as formats

    tracker = Tracker()
    install(tracker)
    events_box: list[int] = []
    tracked_read = formats.read

    def counting_read(*a: Any, **k: Any) -> Any:
        """The formats' read: count the events of what it read."""
        trace = tracked_read(*a, **k)
        events_box.append(len(trace.h) + sum(len(d) for d in trace.devices))
        return trace

    formats.read = counting_read
    # the format whose content check accepts the file (XPlane's checks the name, which a benchmark file may not have)
    fmt = next((f.id for f in formats.REGISTRY.values() if f.id != "xplane" and f.layout.sniff(path) is None), "xplane")
    st = os.stat(path)
    t0 = time.perf_counter()
    rep = an.analyze_host(HostFile(host="bench", path=path, size=st.st_size, mtime_ns=st.st_mtime_ns,
                                   format=fmt))
    wall = time.perf_counter() - t0
    session = an.merge_hosts("bench", "s1", [rep], None)
    json_row = tracker.rows.setdefault("report (JSON text)", StageRow("report (JSON text)", 0))
    tracker.wrap(lambda: format_reports([session], "json", logdir=os.path.dirname(path)), json_row.label, 0)()
    tracker.checkpoint()
    return {
        "path": path, "bytes": st.st_size, "events": events_box[0] if events_box else 0, "work_s": wall,
        "baseline": tracker.baseline, "overall_peak": tracker.overall, "exact": tracker.resettable,
        "error": getattr(rep, "error", None), "stages": [asdict(r) for r in tracker.rows.values() if r.calls],
    }


def render(res: dict) -> str:
    """Markdown table of one :func:`measure` result."""
    ev, size = res["events"] or 1, res["bytes"]
    head = [f"`{os.path.basename(res['path'])}`: {size / 1e6:,.1f} MB, {res['events']:,} events "
            f"({res['events'] / (size / 1e6):,.0f} per MB), analyze_host {res['work_s']:.2f} s; "
            f"RSS after imports {res['baseline'] / 1e6:,.0f} MB" + ("" if res["exact"] else
                                                                     " (VmHWM not resettable: peaks are cumulative)"),
            "",
            "| stage | calls | s | CPU s | peak MB | peak B/event | held after MB |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    rows = []
    for r in res["stages"]:
        label = ("&nbsp;&nbsp;" * r["depth"]) + r["label"]
        rows.append(f"| {label} | {r['calls']} | {r['seconds']:.2f} | {r.get('cpu_s', 0.0):.2f} | {r['peak'] / 1e6:,.0f} "
                    f"| {r['peak'] / ev:.0f} | {r['after'] / 1e6:,.0f} |")
    peak = res["overall_peak"]
    after = after_read_cpu(res["stages"])
    tail = [f"| **whole analysis** | | {res['work_s']:.2f} | | **{peak / 1e6:,.0f}** | **{peak / ev:.0f}** | |",
            f"| **analysis after the read** (top-level stages but the read) | | | **{after:.2f}** | | | |", "",
            f"Whole process peak {(peak + res['baseline']) / 1e6:,.0f} MB = "
            f"{(peak + res['baseline']) / size:.2f}x the file; above imports {peak / size:.2f}x."]
    if res.get("error"):
        tail.append(f"analysis error: {res['error']}")
    return "\n".join(head + rows + tail)


def after_read_cpu(stages: list[dict]) -> float:
    """CPU seconds of the top-level stages after the read: correlation, job, steps, metrics, rules, report, JSON."""
    return sum(r.get("cpu_s", 0.0) for r in stages if r["depth"] == 0 and r["label"] not in READ_LABELS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--json", action="store_true", help="print the raw numbers as one JSON line after the table")
    args = ap.parse_args(argv)
    res = measure(args.file)
    print(render(res))
    if args.json:
        print(json.dumps(res))
    sys.stdout.flush()
    os._exit(0)  # skip teardown: freeing millions of objects is nobody's cost


if __name__ == "__main__":
    sys.exit(main())
