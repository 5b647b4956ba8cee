"""A training job's burst of copies alone is part of an iteration, never one (issue #37 class 1, h37-left30).

The real class: Aphelack/efficient-dl-systems ``week02_fast_pipelines/homework/task3/torch_profiler_avg_batch.json``
@7e6cd43 (MIT, kept: ``wild/vit_a4000_avg_batch``) -- CUDA activities only: the batch's 154 MB pageable H2D copy,
14 ms with nothing recorded (the host's own code), then the labels' 2 kB copy, the forward, ``loss.item()``'s sync,
one backward and the update.  The GPU's idle after the batch copy cut it into two bursts, and the copy's name (a
direction and memory kinds, shared by the labels' copy) passed for repeated work: main read 2 steps of 58.2 ms.
Truth from the file itself (json): one ``nll_loss_backward`` kernel -- one backward, one iteration -- and the span
from the first event to the last.  Control: ``wild/mordred_rtx6000_hashjoin``, a hash-join benchmark (no training
job) whose uploads run alone before queries in several bursts, keeps its bursts (``wild/streams_pinned_copies`` until
h37-onepass32, whose kernels all run in one burst: ``tests/steps/test_one_pass_copy_bursts.py``).
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

TRACE = FIXTURES / "wild" / "vit_a4000_avg_batch" / "vit_a4000.1436345.pt.trace.json.gz"


def _report(path: Path, fmt: str = "kineto"):
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, fmt))
    assert rep.error is None, rep.error
    return rep


def test_a_batch_upload_burst_joins_its_iteration():
    events = [e for e in json.loads(gzip.decompress(TRACE.read_bytes()))["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") != "Trace"]
    kernels = [e for e in events if e["cat"] == "kernel"]
    assert sum("nll_loss_backward" in e["name"] for e in kernels) == 1  # one loss backward: one iteration
    first_kernel = min(e["ts"] for e in kernels)
    uploads = [e for e in events if e["cat"] == "gpu_memcpy" and e["ts"] < first_kernel]
    assert max(e["args"]["bytes"] for e in uploads) > 150e6  # the batch, uploaded before any kernel
    span = (max(e["ts"] + e["dur"] for e in events) - min(e["ts"] for e in events)) / 1000
    rep = _report(TRACE)
    assert rep.steps["count"] == 1, rep.steps
    assert "copies alone" in rep.steps["note"], rep.steps["note"]
    (row,) = [r for r in rep.step_rows if r.gpu is None]
    assert row.step_ms == pytest.approx(span, rel=0.01), (row.step_ms, span)


def test_copies_alone_in_a_program_that_is_no_training_job_stay_a_burst():
    """Control: a hash-join benchmark (no backward, no update: not a training job) uploads its tables, then runs its
    queries' kernels in several bursts; its bursts are read as before.  (streams_pinned_copies was this control until
    h37-onepass32: all its kernels run in one burst, so its first burst of uploads alone is part of its one pass.)"""
    path = FIXTURES / "wild" / "mordred_rtx6000_hashjoin" / "report1.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        (first_copy,), (first_kernel,) = (con.execute(q).fetchone() for q in (
            "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_MEMCPY", "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"))
    assert first_kernel - first_copy > 1e9  # seconds of uploads (and a stdin wait) before any kernel
    rep = _report(path, "nsys")
    assert rep.job["kind"] != "training", rep.job
    assert (rep.steps["source"], rep.steps["count"]) == ("gpu_busy_clusters", 6), rep.steps
    assert "copies alone" not in rep.steps["note"], rep.steps["note"]


def test_copies_alone_in_a_program_that_is_no_training_job_are_not_joined_as_an_iterations_upload():
    """Control: a vector add over streams (no backward, no update: not a training job) starts with a burst of two
    uploads; no training job's join reads it.  Its two bursts -- the uploads, then the rest with all 4 ``add_parallel``
    kernels -- were 2 "steps" on main by the uploads' name alone; the program is one vector add split over 4 streams,
    run once, and since h37-hostalloc32 bursts that share only copies' names, no kernel, are no repeats: one pass."""
    path = FIXTURES / "wild" / "streams_pinned_copies" / "report1.sqlite"
    rep = _report(path, "nsys")
    assert rep.job["kind"] != "training", rep.job
    assert (rep.steps["source"], rep.steps["count"]) == ("whole_capture", 1), rep.steps
    assert "copies alone" not in rep.steps["note"] and "only work they share is copies" in rep.steps["note"], rep.steps


def _repeated(tmp_path: Path, times: int) -> tuple[Path, float]:
    """The kept capture's one iteration run ``times`` times, each copy 20 ms after the last one's end (timestamps
    shifted, correlation ids kept apart): (the file, one iteration's span in ms)."""
    doc = json.loads(gzip.decompress(TRACE.read_bytes()))
    timed = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "Trace"]
    t0 = min(e["ts"] for e in timed)
    span = max(e["ts"] + e["dur"] for e in timed) - t0
    base = [e for e in doc["traceEvents"] if e.get("ph") in ("X", "s", "f", "i") and e.get("cat") != "Trace"]
    for k in range(1, times):
        for e in base:
            c = json.loads(json.dumps(e))
            c["ts"] = e["ts"] + k * (span + 20_000.0)
            if "correlation" in c.get("args", {}):
                c["args"]["correlation"] += k * 10_000_000
            if c.get("ph") in ("s", "f"):
                c["id"] += k * 10_000_000
            doc["traceEvents"].append(c)
    for e in doc["traceEvents"]:
        if e.get("cat") == "Trace":
            e["dur"] = max(e["dur"], times * (span + 20_000.0) + (t0 - e["ts"]))
    path = tmp_path / TRACE.name
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return path, span / 1000


def test_each_upload_burst_joins_the_iteration_it_feeds(tmp_path):
    """By construction: three such iterations, each its batch upload, the host's 14 ms, its compute; the steps are
    the three iterations, each from its upload on (its upload and compute, and the 20 ms to the next upload)."""
    path, span = _repeated(tmp_path, 3)
    rep = _report(path)
    assert (rep.steps["source"], rep.steps["found"]) == ("gpu_busy_clusters", 3), rep.steps
    assert "1 burst of copies alone" not in rep.steps["note"] and "copies alone" in rep.steps["note"], rep.steps
    rows = [r for r in rep.step_rows if r.gpu is None]
    # the window (the ``Trace`` span) ends the last iteration's 20 ms after it, where a fourth upload would start: the
    # last step holds them too, as the writer's truth says of each (main ended it at its own work: ``span``, the mean
    # 4.9% low; h37-laststep)
    assert [r.step_ms for r in rows] == pytest.approx([span + 20.0] * 3, rel=0.01), rows
    assert "runs to the profiler's window's end" in rep.steps["note"], rep.steps["note"]


def test_uploads_of_different_tensors_in_bursts_of_copies_are_no_iterations(tmp_path):
    """A program's one forward uploads its weights, more weights and its input in three bursts of copies alone: the
    same direction, different tensors (0.14 MB, 1 MB, 2.7 kB) -- one pass, not burst steps (h37-wild57n: jakemdaly's
    TorchDCNN ``GPUTrace_l2_bs500_44.csv`` on a Jetson Nano read as 4 "steps" of 33.7 ms).  Truth by construction
    (``synthetic.nvprofcsv.write_one_forward_with_uploads``)."""
    from synthetic import nvprofcsv
    from tests.support.cli_report import first_host

    (tmp_path / "run1").mkdir()
    truth = nvprofcsv.write_one_forward_with_uploads(tmp_path / "run1" / "trace.csv")
    steps = first_host(tmp_path)["steps"]
    assert truth["iterations"] == 0 and steps["source"] == "whole_capture" and steps["count"] == 1



def test_control_the_same_tensor_uploaded_in_each_copy_burst_still_repeats(tmp_path):
    """Named control: the same layout, each burst of copies uploading 0.5 MB (one tensor's size each time) still reads
    as repeating work, as bursts of copies sharing a name did before sizes were read."""
    from synthetic import nvprofcsv
    from tests.support.cli_report import first_host

    (tmp_path / "run1").mkdir()
    nvprofcsv.write_one_forward_with_uploads(tmp_path / "run1" / "trace.csv", upload_mb=(0.5, 0.5, 0.5))
    assert first_host(tmp_path)["steps"]["source"] != "whole_capture"
