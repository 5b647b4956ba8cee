"""A kernel's time in a step is its part inside the step (h37-smallgrid): ``small_grid`` read "152.8% of the step" on
walk seed 3954 of ``scripts/randjobs.py --forms12`` (a DeepSpeed iteration, gradient accumulation 2, on 4 ranks 50 us
apart, 1.5 ms kernels).  The steps were read on one rank's ``forward`` spans and lent to the GPUs that launched nothing
in them as a 137 us window; a kernel belongs to the step its start falls in, and its whole 1.5 ms was counted in the
137 us step (``GpuCtx.kernel_time_in_steps`` now cuts it at the step's end, as the ledger does)."""

from __future__ import annotations

import tempfile
import types
from pathlib import Path

import numpy as np

from synthetic.randjobs import random_form12_job, write
from tb_gpu_advisor import devices, formats
from tb_gpu_advisor.metrics import underfill
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _metrics(seed: int):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(write(random_form12_job(seed), tmp))
        path = next(folder.rglob("*.sqlite"))
        return host_metrics(formats.read(types.SimpleNamespace(host="h", path=str(path), format="nsys", size=0)))


def _window_ms(m, gpu: int) -> float:
    g = next(x for x in m.gpus if x.gpu == gpu)
    return g.step_ms * m.steps.count


def test_small_grid_time_of_each_gpu_within_its_steps():
    """Seed 3954: each GPU's time in small-grid kernels is at most its kept steps' length (on main GPU1 and GPU2 read
    1.51 ms each in their 0.137 ms step), and the per-step time within the mean step."""
    m = _metrics(3954)
    u = m.underfill
    assert u.gpus, "the job's 128-block GEMMs on 132 SMs are small grids"
    for gu in u.gpus:
        assert gu.underfilled_ms <= _window_ms(m, gu.gpu) + 1e-9, (gu.gpu, gu.underfilled_ms, _window_ms(m, gu.gpu))
    assert u.underfilled_ms_per_step <= m.headline.avg_step_ms + 1e-9, (u.underfilled_ms_per_step, m.headline.avg_step_ms)
    # the GPU whose own launches drew its window holds its kernels whole: 3 of 1.511 ms
    assert max(gu.underfilled_ms for gu in u.gpus) > 4.5


def test_kernels_inside_their_steps_keep_their_whole_time():
    """Controls: seeds 6 and 21 (DeepSpeed, windows drawn by each GPU's own work): no kernel runs past its step, so the
    time in the step is each kernel's whole duration -- the small-grid time is all of the kernel time, as on main."""
    for seed in (6, 21):  # 1 rank; 2 ranks, accumulation 8
        m = _metrics(seed)
        assert m.underfill.gpus
        for gu in m.underfill.gpus:  # every kernel of these jobs is a 128-block GEMM: all of the kernel time
            assert gu.underfilled_ms == gu.kernel_ms, (seed, gu.gpu, gu.underfilled_ms, gu.kernel_ms)
            assert gu.underfilled_ms <= _window_ms(m, gu.gpu)


def test_union_of_two_streams_cut_at_the_step_end():
    """Two streams' small kernels overlapping, the step ending inside the second: their union in the step is the
    stretch up to the step's end, not past it (``underfill._step_ends``)."""
    start, end = np.array([0, 50, 300], np.int64), np.array([100, 250, 400], np.int64)
    d = types.SimpleNamespace(start=start, end=end, kind=np.full(3, devices.KIND_KERNEL, np.int8))
    g = types.SimpleNamespace(d=d, step=np.array([0, 0, -1], np.int16), windows=np.array([[0, 200]], np.int64))
    mask = np.array([True, True, False])
    assert underfill._union_ps(d, mask) == 250
    assert underfill._union_ps(d, mask, underfill._step_ends(g)) == 200
