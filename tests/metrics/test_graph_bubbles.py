"""The GPU's switches between kernels it already holds are no host time the capture failed to record.

Truth by construction (``synthetic/torchtrace`` scenario ``cuda_graph_tiny``): 300 kernels of 2.5 us per step, 0.8 us
apart, all launched by one ``cudaGraphLaunch`` that returned long before, while the host waits in
``cudaStreamSynchronize`` -- a recorded call.  The PyTorch ledger measures launch wait by the dispatch and painted
those 299 bubbles (~239 us a step) nowhere: ``other``, which the unrecorded-host-time finding read as "no runtime call
... covers the host's time" (a warning on a healthy loop, once h37-left31 let it name 15% of any step).
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
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


def test_bubbles_between_held_kernels_are_measured_as_the_gpus_own(graph_run) -> None:
    path, m = graph_run
    truth_us = _held_bubbles_us(path)
    assert truth_us > 200  # the construction: ~280 bubbles of 0.8 us after the submission
    assert m.idle_bubbles * 1e3 == pytest.approx(truth_us, rel=0.02)
    assert m.idle_bubbles <= m.breakdown.other + 1e-9  # a part of the unpainted idle, never more


def test_no_unrecorded_host_time_is_claimed_for_them(graph_run) -> None:
    rules = {f.rule for f in evaluate(graph_run[1])}
    assert "unexplained_idle" not in rules
