"""Kernel time by class is each microsecond of the step once, however many streams run at once (h37-classsum33).

``report.build.kernel_class_summary`` summed every kernel's duration inside the kept steps.  On one stream that is the
GPU's kernel time; on concurrent streams a microsecond counts once per kernel running in it, and the classes outgrow
the step they are parts of: extra-p/extrap's ParallelKernelsTest (kept as ``wild/extrap_parallel_kernels_gtx1060``,
a GTX 1060 Max-Q running ``test0`` .. ``test4`` on five streams, one pass of 776.994 ms) read "kernel class other
895646.8 us/step in a 776.994 ms step" -- the ``part<=whole`` law of ``tests/support/properties.py`` failed on it, in
``tests/report/test_properties.py``'s walk, since the capture was kept.  Now each instant of the kernels' time is shared
among the kernels running then (``model.columns.shared_durations``, ``KernelStat.shared_us``): the classes add up to
the GPU's kernel-busy time inside the steps, as the ledger paints it (the capture's ``device_compute``, 467.9 ms).

Truth by construction: :func:`synthetic.torchtrace.write_concurrent_streams` (a GEMM beside three element-wise kernels,
each on a stream of its own, started together).  On main its classes read 6000 and 2000 us/step in a 2.1 ms step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthetic.torchtrace import write_concurrent_streams
from tb_gpu_advisor.model.columns import shared_durations
from tests.support.cli_report import first_host

KEPT = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "extrap_parallel_kernels_gtx1060"


def _classes_ms(host: dict) -> dict[str, float]:
    return {c["class"]: c["us_per_step"] / 1000.0 for c in host["kernel_classes"]}


def test_five_streams_of_kernels_are_no_more_than_the_pass():
    """The real capture: one pass of 776.994 ms, its kernels 847.6 ms in ``main->process`` alone (five streams) --
    the class holds the GPU's kernel-busy time inside the pass, the ledger's ``device_compute``, not the sum."""
    host = first_host(KEPT)
    step = host["gpus"][0]["step_ms"]
    classes = _classes_ms(host)
    assert sum(classes.values()) <= step, (classes, step)  # main: other 895.6 ms in a 777.0 ms pass
    ledger = host["breakdown_ms"]
    assert sum(classes.values()) == pytest.approx(ledger["device_compute"] + ledger["collectives"], rel=1e-3)


@pytest.mark.parametrize("streams", [1, 4])
def test_concurrent_streams_share_the_time_they_overlap(tmp_path, streams):
    """By construction: ``streams`` kernels of 2 ms at once a step -- 2 ms of the step's kernel time, shared equally,
    so the GEMM's class holds 2/``streams`` ms and the element-wise class the rest (one stream: the control, where
    sharing changes nothing)."""
    (tmp_path / "run").mkdir()
    truth = write_concurrent_streams(str(tmp_path / "run" / "w.pt.trace.json"), streams=streams)
    host = first_host(tmp_path)
    classes = _classes_ms(host)
    assert host["steps"]["count"] >= truth["steps"] - 2  # every step alike: a kept one holds the truth
    for cls, ms in truth["class_ms"].items():
        if ms:
            assert classes[cls] == pytest.approx(ms, rel=1e-3), classes  # main: 6.0 and 2.0 ms at 4 streams
    assert sum(classes.values()) == pytest.approx(truth["kernel_busy_ms"], rel=1e-3)
    assert sum(classes.values()) <= host["gpus"][0]["step_ms"]


def test_shares_add_up_to_the_union_and_never_exceed_a_duration():
    """The sweep itself, on random intervals: the shares add up to the union's measure, each at most its duration."""
    rng = np.random.default_rng(33)
    s = rng.integers(0, 10_000, 500)
    e = s + rng.integers(0, 800, 500)
    share = shared_durations(s, e)
    covered = np.zeros(11_000, bool)
    for a, b in zip(s.tolist(), e.tolist()):
        covered[a:b] = True
    assert share.sum() == pytest.approx(covered.sum())
    assert (share <= e - s + 1e-9).all() and (share >= 0).all()
