"""The GPUs' compute imbalance leaves out a GPU whose kept steps hold none of the compute it ran (h37-walk24's branch,
``metrics.multigpu.compute_held_gpus``), by an input built to reach it (h37-probe47f).

That branch lost its only input when ranks' merged bursts stopped being framed by one rank's range (h37-probe46f:
``tests/metrics/test_imbalance_steps_hold_compute.py`` now reads one pass holding every GPU's GEMMs).  It is still
reachable where a GPU's work lies outside the loop's steps by the program's own structure: one process whose loop
(``prof.step()`` each step, 8 GEMMs of 200 us and a sync on GPU0) runs after a set-up on GPU1 (4 GEMMs of 300 us: its
weights initialised there, then moved).  GPU1 is active (it ran kernels in the window) and computes nothing in any
step; set beside GPU0's 1.6 ms a step it read as "GPU0 computes 1.60 ms per step vs 0 us on GPU1 (100.0%
imbalance)" -- a replica doing less, where no replica exists.  The control: GPU1 running one GEMM in each step is
compared, and GPU0's 8 to its 1 is an imbalance the rule says.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthetic.torchtrace import GEMM_FWD, Rank, Scenario, write_run
from tb_gpu_advisor import formats
from tb_gpu_advisor.rules import gpu_imbalance
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _loop(setup: bool, per_step_on_1: int):  # noqa: ANN202 - a Scenario body
    def body(ranks: list[Rank], n: int) -> None:
        r = ranks[0]
        if n == 2 and setup:  # before the first step: a set-up on GPU1
            r.device = 1
            for _ in range(4):
                r.kernel("aten::mm", GEMM_FWD, 300.0)
            r.sync()
            r.device = 0

        def step(r: Rank) -> None:
            for _ in range(8):
                r.kernel("aten::mm", GEMM_FWD, 200.0)
            r.device = 1
            for _ in range(per_step_on_1):
                r.kernel("aten::mm", GEMM_FWD, 200.0)
            r.device = 0
            r.sync()

        r.step(n, step)
    return body


def _metrics(tmp_path, setup: bool, per_step_on_1: int):  # noqa: ANN001, ANN202 - HostMetrics
    (path,) = write_run(str(tmp_path), Scenario(1, _loop(setup, per_step_on_1), [], [], "loop"), steps=8, run="loop")
    m = host_metrics(formats.read(SimpleNamespace(host="h", path=path, format="kineto", size=0)))
    return m[0] if isinstance(m, tuple) else m


def test_a_gpu_whose_work_lies_outside_the_steps_is_not_compared(tmp_path) -> None:  # noqa: ANN001
    m = _metrics(tmp_path, setup=True, per_step_on_1=0)
    assert m.steps.source == "profiler_step" and m.steps.count == 6
    by_gpu = {g.gpu: g for g in m.gpus}
    assert by_gpu[1].active and by_gpu[1].kernel_count == 0  # 4 GEMMs in the window, none in a step
    assert m.multi_gpu.active_gpus == [0, 1] and m.multi_gpu.compute_gpus == [0]
    assert m.multi_gpu.compute_imbalance is None
    assert gpu_imbalance.check(m) == []  # without the branch: "GPU0 computes 1.60 ms per step vs 0 us on GPU1"


def test_a_gpu_computing_in_the_steps_is_compared(tmp_path) -> None:  # noqa: ANN001
    """Control: GPU1 runs 1 GEMM of 200 us a step beside GPU0's 8: both compared, (1.6 - 0.2) / 1.6 imbalance."""
    m = _metrics(tmp_path, setup=True, per_step_on_1=1)
    assert m.multi_gpu.compute_gpus == [0, 1]
    assert m.multi_gpu.compute_imbalance == pytest.approx(1.4 / 1.6, rel=0.01)
    (f,) = gpu_imbalance.check(m)
    assert f.gpu == 0 and f.metric.detail["compute_ms"] == pytest.approx({"0": 1.6, "1": 0.2}, rel=0.01)
