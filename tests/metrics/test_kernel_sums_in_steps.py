"""A sum of kernel times said as a part of the step is the kernels' time inside the kept steps (h37-ledger23).

h37-smallgrid cut ``small_grid``'s kernel time where it leaves the kept steps (``GpuCtx.kernel_time_in_steps``) and
left three other sums of whole durations over the in-step kernels: the element-wise chains that ``xla_not_used`` and
``eager_execution`` save on (``metrics.kernels._chains_on_stream``), ``small_kernels``' time and its offenders' time per
step (``launch_bound``'s "N calls taking X ms"), and the matmul and between times of an unfused attention run.  A kernel
belongs to the step its start falls in, but may run past the kept steps (a host window lent to a GPU, the last kept
step's end): its part past them is no part of any step.  A kernel's own length (is it small? is a gap longer than the
kernels beside it? its average length) stays its whole duration.

Truth by construction: one GPU, kernels back to back on one stream, the kept window ending inside the last kernel of
the step; controls: the same kernels in a window that holds them, and in two tiled windows (the kernel across the
boundary runs inside the next kept step: its whole time stays).
"""

from __future__ import annotations

import types

import numpy as np

from synthetic.nsysexport import ELEMENTWISE_BF16, GEMM_BF16
from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.metrics import attention, kernels
from tb_gpu_advisor.metrics.context import GpuCtx

US = 1_000_000  # ps
SOFTMAX = "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, int, int, int, bool const*, int, bool)"


def _ctx(spans_us: list[tuple[float, float]], names: list[str], windows_us: list[tuple[float, float]]):
    """One GPU's kernels (start, end in us; ``names`` each, one stream), each in the kept window its start falls in
    (-1 outside every window), and the smallest context the kernel modules read."""
    start = np.array([s for s, _ in spans_us]) * US
    end = np.array([e for _, e in spans_us]) * US
    w = np.array(windows_us, dtype=np.float64) * US
    step = np.full(start.size, -1, np.int16)
    for i, (a, b) in enumerate(w):
        step[(start >= a) & (start < b)] = i
    table = sorted(set(names))
    d = types.SimpleNamespace(start=start.astype(np.int64), end=end.astype(np.int64),
                              kind=np.full(start.size, devices.KIND_KERNEL, np.int8),
                              names=table, name=np.array([table.index(n) for n in names], np.int32),
                              stream=np.zeros(start.size, np.int8), op_text=[], op_idx=np.full(start.size, -1, np.int16),
                              launch_cfg=np.zeros(0, np.int8))
    g = GpuCtx(d=d, launch=np.full(start.size, -1), step=step, windows=w.astype(np.int64), active=True)
    steps = len(windows_us)
    return types.SimpleNamespace(
        trace=types.SimpleNamespace(xla_evidence=[], flop_ops=None, spans=None), h=[], blocked_spans=None, gpus=[g],
        memo={}, by_name=lambda classify, n: classify(n), steps=types.SimpleNamespace(count=steps),
        per_step=lambda v: v / steps)


#: four element-wise kernels back to back, the fourth running 30 us past a 100 us step, a fifth after it
CHAIN = [(0, 30), (30, 60), (60, 90), (90, 130), (130, 160)]


def test_a_chain_running_past_the_kept_steps_counts_its_time_inside_them():
    """On main the chain's kernel time was 130 us in a 100 us step (its fourth kernel whole), and fused it saved
    130 - 40 = 90 us of a 100 us step; inside the step it is 100 us, the longest kernel 30 us there."""
    f = kernels.fusion(_ctx(CHAIN, [ELEMENTWISE_BF16] * 5, [(0, 100)]))
    (c,) = f.chains
    assert c.length == 4 and c.occurrences == 1
    assert np.isclose(c.total_ms, 0.100), c.total_ms
    assert np.isclose(c.longest_ms, 0.030), c.longest_ms
    assert c.total_ms <= 0.100 + 1e-12


def test_a_chain_inside_its_steps_keeps_its_whole_time():
    """Controls: a window holding the whole chain, and two tiled windows whose boundary the fourth kernel crosses
    (its part past the boundary lies in the next kept step): the whole 130 us, the longest kernel 40 us, as on main."""
    for windows in ([(0, 130)], [(0, 100), (100, 130)]):
        f = kernels.fusion(_ctx(CHAIN, [ELEMENTWISE_BF16] * 5, windows))
        c = max(f.chains, key=lambda x: x.length)
        assert c.length == 4, windows
        assert np.isclose(c.total_ms, 0.130) and np.isclose(c.longest_ms, 0.040), (windows, c)


def test_small_kernels_time_is_inside_the_steps_and_their_length_their_own():
    """Three 30 us kernels (small: under ``launch.small_kernel_us``) from 0 us in an 80 us step: 80 us of small-kernel
    time in the step (main: 90 us, more than the step), every kernel of the step small; each is still 30 us long."""
    sk = kernels.small_kernels(_ctx([(0, 30), (30, 60), (60, 90)], [ELEMENTWISE_BF16] * 3, [(0, 80)]))
    assert sk.count == 3
    assert np.isclose(sk.time_ms, 0.080), sk.time_ms
    (o,) = sk.top
    assert np.isclose(o.ms_per_step, 0.080) and np.isclose(o.avg_us, 30.0), o
    assert np.isclose(sk.share_of_kernel_time, 1.0)
    control = kernels.small_kernels(_ctx([(0, 30), (30, 60), (60, 90)], [ELEMENTWISE_BF16] * 3, [(0, 100)]))
    assert np.isclose(control.time_ms, 0.090) and np.isclose(control.top[0].ms_per_step, 0.090)


def test_an_attention_run_past_the_kept_steps_counts_its_matmuls_inside_them():
    """matmul 0-40, softmax 40-60, matmul 60-100 us in a 90 us step: 70 us of matmul time in the step (main: 80 us);
    a 120 us window holds the whole 80 us (control)."""
    spans, names = [(0, 40), (40, 60), (60, 100)], [GEMM_BF16, SOFTMAX, GEMM_BF16]
    assert frameworks.elementwise([SOFTMAX]).tolist() == [False] and devices.softmax([SOFTMAX]).tolist() == [True]
    a = attention.unfused_attention(_ctx(spans, names, [(0, 90)]))
    assert a.occurrences == 1 and np.isclose(a.matmul_ms, 0.070) and np.isclose(a.between_ms, 0.020), a
    b = attention.unfused_attention(_ctx(spans, names, [(0, 120)]))
    assert np.isclose(b.matmul_ms, 0.080), b
