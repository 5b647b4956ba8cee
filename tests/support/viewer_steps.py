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
_GPU = re.compile(r"/device:GPU:(\d+)$")
_PROFILER_STEP = re.compile(r"^ProfilerStep#(\d+)$")
#: host step annotations of old (``Operator``) and new (``user_annotation``, ``cpu_op``) PyTorch schemas
_HOST_CATS = {"user_annotation", "cpu_op", "Operator"}


def load_json(path: str | Path) -> dict[str, Any]:
    """A Chrome-trace JSON file, gzipped or not."""
    with (gzip.open if str(path).endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def stock_trace_viewer(xplane: str) -> dict[str, Any]:
    """The stock converter's trace-viewer JSON of one ``.xplane.pb`` (run on a temp copy: it writes caches beside it)."""
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
