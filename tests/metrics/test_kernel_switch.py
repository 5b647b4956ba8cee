"""The GPU's switches between kernels it already holds are booked once, to ``kernel_switch``, whatever the framework.

Truth by construction.  ``synthetic/torchtrace`` scenario ``cuda_graph_tiny``: 300 kernels of 2.5 us per step,
0.8 us apart, all launched by one ``cudaGraphLaunch`` that returned long before, while the host waits in
``cudaStreamSynchronize`` -- a recorded call.  The PyTorch ledger measures launch wait by its dispatch and painted
those bubbles nowhere (``other``: "no runtime call ... covers the host's time").  ``synthetic/nsysexport``
``NsysJob(graph_mode="replay", kernel_gap_us=...)``: the same graph under Nsight, whose ledger measures launch wait
from each kernel's call and booked them held (``unseen``: "The GPU holds work it was given, idle").  A hold of
2 ms between kernels is no switch and stays held.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics


#: how long after its launch call returns a kernel may take to start on an idle GPU (the driver's submission; the
#: ledger's ``LAUNCH_START_PS``, restated): idle before then is no work the GPU held yet
SUBMIT_US = 50.0


@pytest.fixture(scope="module")
def graph_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("graph")
    (path,) = tt.write_run(str(out), "cuda_graph_tiny")
    return path, host_metrics(read(SimpleNamespace(host="node0", path=path, format="kineto")))


def _held_bubbles_us(path: str) -> float:
    """Per kept step (first and last dropped), the idle between consecutive kernels of one graph launch after that
    launch's call returned and the driver submitted -- read off the written trace, not the Advisor's columns."""
    ev = json.load(open(path))["traceEvents"]
    launches = {e["args"]["correlation"]: e["ts"] + e["dur"] for e in ev if e.get("name") == "cudaGraphLaunch"}
    by_launch: dict[int, list[tuple[float, float]]] = {}
    for e in ev:
        if e.get("cat") == "kernel":
            by_launch.setdefault(e["args"]["correlation"], []).append((e["ts"], e["ts"] + e["dur"]))
    per_step = []
    for corr, ks in sorted(by_launch.items()):
        ks.sort()
        ready = launches[corr] + SUBMIT_US
        per_step.append(sum(max(0.0, b[0] - max(a[1], ready)) for a, b in zip(ks, ks[1:])))
    kept = per_step[1:-1]
    return sum(kept) / len(kept)


def _nsys(tmp_path, **kw):  # noqa: ANN001, ANN003, ANN202 - pytest's tmp_path, NsysJob's fields
    path = str(tmp_path / f"r{len(list(tmp_path.iterdir()))}.sqlite")
    write(path, NsysJob(**kw))
    return host_metrics(read(SimpleNamespace(host="node0", path=path, format="nsys")))


def test_a_pytorch_graphs_switches_are_booked_kernel_switch_not_unrecorded(graph_run) -> None:
    path, m = graph_run
    truth_us = _held_bubbles_us(path)
    assert truth_us > 200  # the construction: ~280 bubbles of 0.8 us after the submission
    assert m.breakdown.kernel_switch * 1e3 == pytest.approx(truth_us, rel=0.02)
    # no longer the unrecorded host time (on main ~250 us, a quarter of the step): what is left is the bubbles before
    # the launch's return and submission (~14 us) and the step's few other unrecorded microseconds
    assert m.breakdown.other < 0.1 * m.breakdown.total()
    assert "unexplained_idle" not in {f.rule for f in evaluate(m)}


@pytest.mark.parametrize("autograd_nvtx", [True, False], ids=["pytorch-dispatch", "native"])
def test_an_nsight_graphs_switches_are_booked_kernel_switch_not_held(tmp_path, autograd_nvtx: bool) -> None:
    """Native (no dispatch named): on main held, ``unseen``, and "The GPU holds work it was given"; with PyTorch's
    dispatch named: on main ``other``."""
    m = _nsys(tmp_path, graph_mode="replay", ops=300, kernel_us=2.5, kernel_gap_us=0.8, autograd_nvtx=autograd_nvtx)
    assert m.breakdown.kernel_switch == pytest.approx(299 * 0.8e-3, rel=0.01)  # 299 gaps of 0.8 us a step
    assert m.idle_held == 0.0 and m.breakdown.unseen == 0.0
    assert "capture_quality" not in {f.rule for f in evaluate(m)}


@pytest.mark.parametrize("autograd_nvtx", [True, False], ids=["pytorch-dispatch", "native"])
def test_a_2ms_hold_between_kernels_is_held_work_whatever_the_framework(tmp_path, autograd_nvtx: bool) -> None:
    """A dependency held 2 ms is held work, said so, with PyTorch's dispatch named (``autograd_nvtx``: on main the
    dispatch framework booked it ``other``, and ``idle_bubbles`` took it out of the unrecorded finding silently) or
    not (native: held on main too, the control)."""
    m = _nsys(tmp_path, ops=4, kernel_gap_us=2000, autograd_nvtx=autograd_nvtx)
    assert m.idle_held == pytest.approx(3 * 2.0, rel=0.01)  # 3 holds of 2 ms a step
    assert m.breakdown.unseen == pytest.approx(m.idle_held, abs=0.01)
    quality = [f for f in evaluate(m) if f.rule == "capture_quality"]
    assert quality and quality[0].title == "The GPU holds work it was given, idle"


def test_a_hold_of_the_floor_or_more_is_held_under_it_a_switch(tmp_path) -> None:
    floor = T("launch.kernel_switch_us")
    under = _nsys(tmp_path, graph_mode="replay", ops=20, kernel_us=300, kernel_gap_us=floor * 0.8)
    over = _nsys(tmp_path, graph_mode="replay", ops=20, kernel_us=300, kernel_gap_us=floor * 1.2)
    assert under.breakdown.kernel_switch == pytest.approx(19 * floor * 0.8e-3, rel=0.01)
    assert under.idle_held == 0.0
    assert over.idle_held == pytest.approx(19 * floor * 1.2e-3, rel=0.01)
    assert over.breakdown.kernel_switch == 0.0
