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
from tb_gpu_advisor.metrics.context import GpuCtx
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


def _gpu(start, end, step, windows) -> GpuCtx:
    d = types.SimpleNamespace(start=np.array(start, np.int64), end=np.array(end, np.int64),
                              kind=np.full(len(start), devices.KIND_KERNEL, np.int8))
    return GpuCtx(d=d, launch=np.full(len(start), -1), step=np.array(step, np.int16),
                  windows=np.array(windows, np.int64), active=True)


def test_union_of_two_streams_cut_where_the_kept_steps_end():
    """Two streams' small kernels overlapping, the kept step ending inside the second: their union in the steps is the
    stretch up to the step's end, not past it (``underfill._step_ends``)."""
    g = _gpu([0, 50, 300], [100, 250, 400], [0, 0, -1], [[0, 200]])
    mask = np.array([True, True, False])
    assert underfill._union_ps(g.d, mask) == 250
    assert underfill._union_ps(g.d, mask, underfill._step_ends(g)) == 200


def test_a_kernel_across_a_boundary_of_tiled_steps_keeps_its_time():
    """Control (wild/resnet_rtx2080ti_slow_workers: steps tiling the GPU's time, one kernel a step running into the
    next): the part past the boundary is inside the next kept step and stays counted; only the part past the last
    kept window of a run of back-to-back windows is cut."""
    g = _gpu([50, 180, 450], [150, 260, 600], [0, 0, 2], [[0, 200], [200, 300], [400, 500]])
    g.d.kind[:] = devices.KIND_KERNEL
    assert g.kept_reach().tolist() == [300, 300, 500]
    assert g.kernel_time_in_steps().tolist() == [100, 80, 50]
