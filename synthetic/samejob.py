"""One job's captures in two formats, laid out as the tools write them: a Kineto trace and a memory snapshot of each
rank (h37-probe44g).

torchtitan (``torchtitan/tools/profiling.py``, read in session 43's probe43d) writes, at a profiled iteration N,
``<dump>/profile_trace/iteration_N/rank{r}_trace.json`` (``prof.export_chrome_trace``) and
``<dump>/memory_snapshot/iteration_N/rank{r}_memory_snapshot.pickle`` (``torch.cuda.memory._dump_snapshot``), each
rank into the same two folders.  A script that profiles and dumps a snapshot beside it writes both into its run
folder (``layout="run"``).  The formats share no pid or host (a snapshot records neither); they share the machine's
clock: the trace's header says when its first event ran (``baseTimeNanoseconds`` plus its first ``ts``) and its file
when it was exported; the snapshot's file when it was dumped (its history's ``time_us`` are on the same clock).

Truth by construction: the trace and the snapshot of one rank are one process on one GPU (rank r's device r, as
``torch.cuda.set_device(local_rank)`` makes it: the snapshot's segments and history on ordinal r, the trace's
``deviceProperties`` id r, an H100's ``totalGlobalMem``), the snapshot dumped ``gap_s`` after the trace's export (0:
the same iteration's; an hour: another run of the job, not linked).  The snapshot's peak (``training_iterations``,
``mib`` per activation) is the allocator's; its GPU's capacity is the trace's ``totalGlobalMem``.
"""

from __future__ import annotations

import os
from typing import Any

from synthetic import memsnapshot as ms
from synthetic import torchtrace as tt


def write(root: str, layout: str = "torchtitan", ranks: int = 1, gap_s: float = 0.0, mib: int = 2950,
          iteration: int = 10, nsys: bool = False) -> dict[str, Any]:
    """Write each rank's trace and snapshot under ``root`` (``layout``: "torchtitan" or "run"); returns the paths and
    the truth: the GPU's total bytes, the trace's capture span (seconds since 1970) and each snapshot's dump time.
    ``nsys``: the job also ran under ``nsys profile`` (``report.sqlite`` in the trace's folder, its session begun as
    the trace's first event, plus ``gap_s``; ``synthetic.nsysexport.write``)."""
    job = tt.simulate(tt.Scenario(ranks, tt._each(tt._healthy), [], [], "samejob"), steps=4)
    if layout == "torchtitan":
        trace_dir = os.path.join(root, "profile_trace", f"iteration_{iteration}")
        snap_dir = os.path.join(root, "memory_snapshot", f"iteration_{iteration}")
    else:
        trace_dir = snap_dir = root
    os.makedirs(trace_dir, exist_ok=True)
    os.makedirs(snap_dir, exist_ok=True)
    start_s = tt.BASE_NS / 1e9 + tt.T0_US / 1e6
    traces, snaps = [], []
    for r in job:
        doc = tt.trace_doc(r, len(job))
        end_s = start_s + (max([r.host_us] + list(r.streams.values())) - tt.T0_US) / 1e6
        name = f"rank{r.rank}_trace.json" if layout == "torchtitan" else f"{tt._worker(r)}.pt.trace.json"
        path = tt.write_doc(os.path.join(trace_dir, name), doc)
        os.utime(path, (end_s + 1, end_s + 1))  # exported a second after its last event
        traces.append(path)
        sc = ms.training_iterations(iterations=3, layers=24, mib=mib)
        shift = int(end_s * 1e6) - max(e["time_us"] for t in sc.doc["device_traces"] for e in t)
        for t in sc.doc["device_traces"]:
            for e in t:
                e["time_us"] += shift  # the history ends as the trace's window ends: one clock
        _on_device(sc.doc, r.device)
        snap = ms.write(os.path.join(snap_dir, f"rank{r.rank}_memory_snapshot.pickle"
                                     if layout == "torchtitan" else "snapshot.pickle"), sc.doc)
        os.utime(snap, (end_s + 2 + gap_s, end_s + 2 + gap_s))
        snaps.append(snap)
    if nsys:
        _nsys_export(os.path.join(trace_dir, "report.sqlite"), start_s + gap_s)
    return {"traces": traces, "snapshots": snaps, "total_bytes": tt.H100_BYTES, "trace_span_s": (start_s, end_s + 1),
            "devices": [r.device for r in job],
            "reserved_bytes": sum(s["total_size"] for s in ms.training_iterations(iterations=3, layers=24,
                                                                                   mib=mib).doc["segments"])}


def _on_device(doc: dict[str, Any], device: int) -> None:
    """``doc`` (one allocator's, device 0) as the process whose current device is ``device`` dumps it
    (``torch.cuda.set_device(local_rank)``): its segments on that ordinal, its history at that index."""
    for seg in doc["segments"]:
        seg["device"] = device
    doc["device_traces"] = [[] for _ in range(device)] + doc["device_traces"]


def _nsys_export(path: str, start_s: float) -> None:
    """An Nsight export of the job whose session began at ``start_s`` (``TARGET_INFO_SESSION_START_TIME``), written
    when it ended."""
    from synthetic import nsysexport, sqlitefile

    nsysexport.write(path)
    with sqlitefile.connect(path) as con:
        con.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = ?", (int(start_s * 1e9),))
    os.utime(path, (start_s + 5, start_s + 5))
