"""A capture that lost part of its GPU records says so, and counts no step on the lost part (issue #37 class 1:
"a damaged file is never healthy"; h37-survey31's *Partial loss of GPU records is unsaid*).

By accounting: every launch the runtime accepted runs a kernel, and CUPTI gives the kernel its launch's correlation
id.  Launches without a kernel record that the GPU was shown done with -- each returned after every recorded kernel had
ended (an idle queue), and a host sync began after it and returned inside the capture -- are records the profiler
never wrote; those still queued behind recorded work, or after the window's last sync, are in flight at its edge.

Real trace: ``tests/fixtures/wild/nvllm_gb10_lost_tail/run.sqlite`` (Navi-AI-Lab/nvllm @0e834629, Apache-2.0,
PROVENANCE.md): an Nsight export (``--duration``, no flush at cudaProfilerStop) of a CuTe-DSL kernel harness on a GB10
whose 24,944 accepted launches have 143 kernel records; the 24,801 others all return after the last recorded
kernel's end (711.4 ms).  By construction (``synthetic.nsysexport.write_lost_kernel_records``): a loop whose kernels
stop being recorded half-way, with NVTX steps over the whole loop; the control, a window ending with launches in
flight behind a long last kernel.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

from synthetic import nsysexport as nx
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES


def _wild(run: str) -> dict:
    (s,) = [s for s in discover(str(FIXTURES / "wild")) if s.run == run]
    return analyze_session(s.run, s.session, s.hosts).to_dict()


def _report(path: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli.main(["report", path, "--format", "json", "--cache-dir", "off"])
    return json.loads(out.getvalue())["reports"][0]


def _lost(rep: dict) -> list[dict]:
    return [f for f in rep["findings"] if f["metric"] and f["metric"]["id"] == "lost_launch_share"]


def _text(f: dict) -> str:
    return " ".join([f["title"], f["summary"]] + [a["text"] + " " + (a["snippet"] or "") for a in f["actions"]])


def test_a_real_export_that_lost_its_last_second_of_kernels_says_so():
    """nvllm's harness export: 143 kernels recorded, then 24,801 accepted launches without one, each after the last
    recorded kernel and followed by a finished ``cudaDeviceSynchronize``.  On main: no word of them."""
    rep = _wild("nvllm_gb10_lost_tail")
    (f,) = _lost(rep)
    assert f["severity"] == "warning"
    assert rep["findings"][0]["id"] == f["id"]  # what the capture is comes first: the rest reads the recorded part
    assert "24,801 of the 24,944" in f["summary"] and "711.4 ms" in f["summary"]
    assert abs(f["metric"]["value"] - 24_801 / 24_944) < 1e-3
    text = _text(f)
    assert "--flush-on-cudaprofilerstop" in text and "--capture-range" in text  # Nsight's own options, not torch's
    assert "torch.profiler" not in text


def test_steps_in_the_lost_stretch_are_not_counted(tmp_path):
    """By construction: 40 NVTX steps of 4 kernels each; from step 20 on the launches are accepted and synced but no
    kernel is recorded.  The 20 steps of the lost stretch are dropped (on main they were kept: GPU-less steps read as
    a GPU idling for its host), and the warning names the share and where the stretch begins."""
    path = str(tmp_path / "run.sqlite")
    truth = nx.write_lost_kernel_records(path, ranges=True)
    rep = _report(path)
    host = rep["hosts"][0]
    (f,) = _lost(rep)
    assert f"{truth['lost']:,} of the {truth['launches']:,}" in f["summary"]
    assert f"from {truth['lost_from_ns'] / 1e6:,.1f} ms" in f["summary"]
    steps = host["steps"]
    lost = [d for d in steps["dropped"] if d["reason"].startswith("lost records")]
    assert len(lost) == 20 and steps["found"] == 40
    assert steps["count"] == 40 - 20 - 2  # and the stock rule's first and last of the rest


def test_launches_in_flight_at_the_windows_end_are_not_lost(tmp_path):
    """Control: every kernel of the loop recorded, then a long last kernel and 60 launches queued behind it with no
    sync after them (the window ended first): in flight, not lost -- no finding, no step dropped for it."""
    path = str(tmp_path / "run.sqlite")
    nx.write_lost_kernel_records(path, lost_from=None, in_flight=60, ranges=True)
    rep = _report(path)
    assert not _lost(rep)
    assert not [d for d in rep["hosts"][0]["steps"]["dropped"] if d["reason"].startswith("lost records")]


def test_a_kept_capture_with_unmatched_launches_mid_window_is_not_lost():
    """Control (real): ``vit_a4000_pageable_batch`` holds 233 launches without a kernel record, every one before the
    last recorded kernel's end (queued behind recorded work): no lost-records finding."""
    rep = _wild("vit_a4000_pageable_batch")
    assert not _lost(rep)
