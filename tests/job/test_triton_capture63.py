"""Triton Inference Server, recognised by its backends' NVTX (h37-nvtx62), is told how to record a Triton server's
window, not a program's (issue #37 class 2; h37-nvtx62 *Left* 5).

A server is profiled from outside: Nsight records its backends' per-batch ranges (``ProcessRequests <instance>``, in
a build with ``--enable-nvtx``), and a window opened at its launch holds its model loading and first batches.  Base
told it Nsight's generic window options around ``./app`` (``cudaProfilerStart()`` in code the user does not own);
now Triton's own: a session ``nsys launch`` holds open, recorded with ``nsys start`` / ``nsys stop`` under a steady
``perf_analyzer`` load.  Truth by construction: ``synthetic.nsysexport.NsysJob`` with the backend's ranges."""

from __future__ import annotations

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host, ran_report


def _triton(tmp_path, steps: int) -> dict:
    p = tmp_path / "triton.sqlite"
    nx.write(str(p), nx.NsysJob(steps=steps, step_range="ProcessRequests resnet50_0_0", autograd_nvtx=False,
                                extra_ranges=("Execute resnet50_0_0", "ReadOutputTensors resnet50_0_0"),
                                range_starts=(20,)))
    return p


def test_triton_capture_advice_is_tritons(tmp_path):
    """The job's capture advice: Triton's Nsight session under a steady load.  Fails on base (``./app``)."""
    host = first_host(_triton(tmp_path, 12))
    job = host["job"]
    assert job["engine"] == "Triton Inference Server", job
    advice = job["capture_advice"]
    assert "nsys launch" in advice and "tritonserver" in advice and "nsys start" in advice, advice
    assert "perf_analyzer" in advice and "./app" not in advice, advice


def test_too_few_batches_are_told_tritons_window(tmp_path):
    """Three batches kept: the capture-quality finding's fix is Triton's recipe, not ``--capture-range=
    cudaProfilerApi`` around ``./app``.  Fails on base."""
    run = tmp_path / "few"
    run.mkdir()
    _triton(run, 3)
    rep = ran_report(run)[1]
    cq = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    assert cq, [f["rule"] for f in rep["findings"]]
    code = "\n".join(a.get("code") or a.get("snippet") or "" for f in cq for a in f.get("actions") or ())
    assert "nsys start --session=triton" in code and "./app" not in code, cq
