"""Where a trace viewer draws each step, read from the viewer's own input: what a report's windows must hold.

Why: a window is only useful if the viewer that opens the file shows the step it names inside it (issue #21
item 1: links opened 10 ms early on real captures because the Advisor counted from the first event).  So the
steps are read from the stock tools' own output, never from the Advisor's reader:

* XPlane: the stock converter's trace-viewer JSON (``xspace_to_tool_data(..., "trace_viewer")``, what the
  Profile tab's trace viewer loads): the derived ``Steps`` line of each GPU; and the ``<host>.trace.json.gz``
  the profiler wrote beside a JAX capture (the same rendering, host step markers kept): ``train`` events with
  ``step_num``.  Times are the JSON's ``ts`` (us), which the viewer shows as they are.
* PyTorch: the trace file itself, as Perfetto and chrome://tracing draw it: ``ProfilerStep#N`` spans, from the
  trace's earliest event.

Every function returns ms in the viewer's time base: ``{step: (start_ms, end_ms)}``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

Span = tuple[float, float]
#: windows are rounded to 3 decimals of a ms
TOL_MS = 0.001
_GPU = re.compile(r"/device:GPU:(\d+)$")
_PROFILER_STEP = re.compile(r"^ProfilerStep#(\d+)$")
#: host step annotations of old (``Operator``) and new (``user_annotation``, ``cpu_op``) PyTorch schemas
_HOST_CATS = {"user_annotation", "cpu_op", "Operator"}


def load_json(path: str | Path) -> dict[str, Any]:
    """A Chrome-trace JSON file, gzipped or not."""
    with (gzip.open if str(path).endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def stock_trace_viewer(xplane: str) -> dict[str, Any]:
    """The stock converter's trace-viewer JSON of one ``.xplane.pb`` (on a temp copy: it writes caches beside it)."""
    from xprof.convert.raw_to_tool_data import xspace_to_tool_data

    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, os.path.basename(xplane))
        shutil.copy(xplane, dst)
        raw, _ = xspace_to_tool_data([dst], "trace_viewer", {"use_saved_result": False})
    return json.loads(raw)


def _names(doc: dict[str, Any]) -> tuple[dict[Any, str], dict[tuple[Any, Any], str]]:
    """(pid -> process name, (pid, tid) -> thread name) of a Chrome trace's metadata events."""
    procs, threads = {}, {}
    for e in doc.get("traceEvents", []):
        if e.get("ph") == "M" and e.get("name") == "process_name":
            procs[e["pid"]] = str(e.get("args", {}).get("name", ""))
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e.get("tid"))] = str(e.get("args", {}).get("name", ""))
    return procs, threads


def _span(e: dict[str, Any], zero_us: float = 0.0) -> Span:
    ts = float(e["ts"]) - zero_us
    return ts / 1e3, (ts + float(e.get("dur", 0))) / 1e3


def xplane_gpu_steps(doc: dict[str, Any]) -> dict[int, dict[int, Span]]:
    """GPU id -> step -> span of the ``Steps`` line the stock converter derives on each GPU.

    The step is the number the event is named by (``train 3``, ``3``), else its ``group_id``.
    """
    procs, threads = _names(doc)
    out: dict[int, dict[int, Span]] = {}
    for e in doc.get("traceEvents", []):
        if e.get("ph") != "X" or threads.get((e["pid"], e.get("tid"))) != "Steps":
            continue
        gpu = _GPU.search(procs.get(e["pid"], ""))
        last = str(e.get("name", "")).split()[-1:]
        step = int(last[0]) if last and last[0].isdigit() else int(e.get("args", {}).get("group_id", -1))
        if gpu is not None and step >= 0:
            out.setdefault(int(gpu.group(1)), {})[step] = _span(e)
    return out


def xplane_host_steps(doc: dict[str, Any]) -> dict[int, Span]:
    """Step -> span of the host step markers (``step_num`` events on a ``/host:`` process: JAX's ``train``)."""
    procs, _ = _names(doc)
    out: dict[int, Span] = {}
    for e in doc.get("traceEvents", []):
        num = (e.get("args") or {}).get("step_num")
        if e.get("ph") == "X" and num is not None and procs.get(e["pid"], "").startswith("/host:"):
            out[int(num)] = _span(e)
    return out


def first_event_ms(doc: dict[str, Any]) -> float:
    """The earliest complete event's start in ms: two renderings in one time base agree on it."""
    return min(float(e["ts"]) for e in doc["traceEvents"] if e.get("ph") == "X") / 1e3


def kineto_steps(doc: dict[str, Any]) -> tuple[dict[int, Span], dict[int, dict[int, Span]]]:
    """(host step -> span, GPU -> step -> span) of a PyTorch trace's ``ProfilerStep#N``, from the trace's start.

    The start is the earliest timestamp of any event (the profiler's own ``PyTorch Profiler`` span), where
    Perfetto's and chrome://tracing's timelines begin.  GPU spans: ``gpu_user_annotation`` events, per
    ``args.device`` (their pid where it is absent).
    """
    ev = doc["traceEvents"]
    zero = min(float(e["ts"]) for e in ev if "ts" in e)
    host: dict[int, Span] = {}
    gpu: dict[int, dict[int, Span]] = {}
    for e in ev:
        m = _PROFILER_STEP.match(str(e.get("name", ""))) if e.get("ph") == "X" else None
        if m is None:
            continue
        step = int(m.group(1))
        if e.get("cat") == "gpu_user_annotation":
            dev = (e.get("args") or {}).get("device", e.get("pid"))
            gpu.setdefault(int(dev), {})[step] = _span(e, zero)
        elif e.get("cat") in _HOST_CATS:
            host[step] = _span(e, zero)
    return host, gpu


# --------------------------------------------------------------------------- windows against them


def hosts(report: dict[str, Any] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every host report of a CLI JSON report (one session's object, or a list of them)."""
    return [h for r in (report if isinstance(report, list) else [report]) for h in r["hosts"]]


def step_windows(host: dict[str, Any]) -> list[dict[str, Any]]:
    """The host's finding windows that name a step."""
    return [w for f in host["findings"] for w in f["windows"] if w.get("step") is not None]


def xplane_steps(path: str) -> dict[str, Any]:
    """The stock viewer's steps of one capture: its GPUs' ``Steps`` lines and, beside a JAX capture, host markers."""
    doc = stock_trace_viewer(path)
    beside = Path(path.removesuffix(".xplane.pb") + ".trace.json.gz")
    host: dict[int, Span] = {}
    if beside.is_file():
        side = load_json(beside)
        # the profiler's own rendering must be in the viewer's time base for its markers to stand for the viewer's
        a, b = first_event_ms(side), first_event_ms(doc)
        assert abs(a - b) < TOL_MS, (path, a, b)
        host = xplane_host_steps(side)
    return {"host": host, "gpu": xplane_gpu_steps(doc)}


def _kineto_steps(path: str) -> dict[str, Any]:
    host, gpu = kineto_steps(load_json(path))
    return {"host": host, "gpu": gpu}


def _expected(w: dict[str, Any], steps: dict[str, Any]) -> list[dict[int, Span]]:
    """The viewer's step tables the window must hold its step in.

    A host-wide window: the host's step markers where the viewer has them, else the step on every GPU's line
    that has it (a grouped TensorFlow capture: the host-wide step spans them all).  A GPU's window: its line.
    """
    n, gpu = w["step"], w.get("gpu")
    if gpu is not None and n in steps["gpu"].get(gpu, {}):
        return [steps["gpu"][gpu]]
    if steps["host"]:
        return [steps["host"]]
    return [t for t in steps["gpu"].values() if n in t]


def _why_not_held(w: dict[str, Any], table: dict[int, Span]) -> str | None:
    """Why the window does not hold its step in ``table`` (the viewer's), None when it does."""
    n, a, b = w["step"], w["start_ms"], w["end_ms"]
    if n not in table:
        return f"step {n} is not in the viewer"
    s, e = table[n]
    if str(w["label"]).startswith("gap after step"):
        return None if a - TOL_MS <= e <= b + TOL_MS else f"[{a}, {b}] misses the end of step {n} at {e:.3f}"
    if a > s + TOL_MS or b < e - TOL_MS:
        return f"[{a}, {b}] does not hold step {n} at [{s:.3f}, {e:.3f}]"
    others = [k for k, (s2, e2) in table.items() if k != n and a - TOL_MS <= s2 and e2 <= b + TOL_MS]
    return f"[{a}, {b}] also holds steps {others}" if others else None


def check_windows(report: dict[str, Any], steps_of: dict[str, dict[str, Any]]) -> tuple[int, list[str]]:
    """(windows checked, failures) of a report whose hosts' files have their viewer steps in ``steps_of``."""
    checked, bad = 0, []
    for host in hosts(report):
        for w in step_windows(host):
            tables = _expected(w, steps_of[host["path"]])
            if not tables:
                bad.append(f"{host['host']} {w['label']}: step {w['step']} is not in the viewer")
            for t in tables:
                why = _why_not_held(w, t)
                if why:
                    bad.append(f"{host['host']} {w['label']}: {why}")
            checked += 1
    return checked, bad


def viewer_steps(path: str) -> dict[str, Any]:
    """The viewer's steps of one profile file: ``{"host": {step: span}, "gpu": {gpu: {step: span}}}``."""
    return xplane_steps(path) if path.endswith(".xplane.pb") else _kineto_steps(path)
