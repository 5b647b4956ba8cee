"""No saving beats physics (issue #37, h37-floor34): a finding's saving on a known GPU leaves the kernel time at least
what its work of known FLOPs and bytes needs at the GPU's peaks.

Why: ``small_grid`` sized "filling the SMs" as (kernel time - floor) x (1 - blocks / SMs) whatever the kernel's bytes,
so on a batch-1 decode whose GEMVs already read their weights near the memory bandwidth it promised a step below the
time those reads take at the bandwidth (a 27B decode on an H100: 3.2 ms of a 19.6 ms step, the weights then read at
~98% of 3.35 TB/s).  The cap lives where every rule's saving passes (``rules.base.saving`` -> ``floor_cap``), the
floor in the roofline's metrics (``metrics.flops``: ``Flops.floor_ms_per_step``).  Truth by construction: the
generator writes each GEMV as its bytes' time at a chosen share of the bandwidth (``synthetic/torchtrace.py``).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import formats
from tb_gpu_advisor.metrics.flops import _floor_ms
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.rules.base import floor_cap
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _metrics(tmp_path: Path, name: str):
    (path,) = tt.write_run(str(tmp_path), name)
    return host_metrics(formats.read(SimpleNamespace(path=path, host=Path(path).stem, format="kineto")))


def _small_grid(m):
    return [f for f in evaluate(m) if f.rule == "small_grid"]


def test_a_decode_near_peak_bandwidth_saves_no_more_than_its_kernels_above_their_bytes(tmp_path):
    """60 GEMVs a step of 64 thread blocks on 132 SMs, each at 97% of the H100's bandwidth: filling the SMs can take at
    most the 3% above their bytes' time off them (0.074 ms of the 2.48 ms of kernels).  On main the grid bound
    stood: "Filling the GPU could take up to 1.18 ms off the step (46.9%)", critical -- a step of 1.3 ms whose
    weight reads alone need 2.4 ms at the bandwidth."""
    sc = tt.SCENARIOS["decode_near_peak_bw"]
    m = _metrics(tmp_path, "decode_near_peak_bw")
    assert m.flops.floor_ms_per_step == pytest.approx(sc.extra["floor_ms"], rel=1e-3)
    headroom = sc.extra["compute_ms"] - sc.extra["floor_ms"]
    fs = _small_grid(m)
    assert all(f.saving.ms_per_step <= headroom + 2e-3 for f in fs)
    assert all(f.severity == "info" for f in fs)
    for f in fs:
        assert "no kernel beats its GPU's peak" in f.saving.assumption


def test_control_the_same_decode_far_from_peak_keeps_its_grid_bound(tmp_path):
    """The same GEMVs at 30% of the bandwidth: 70% of their time is above their bytes' time, more than the grid
    bound, so the saving is the grid bound as before and no floor caveat is said."""
    sc = tt.SCENARIOS["decode_far_from_peak_bw"]
    m = _metrics(tmp_path, "decode_far_from_peak_bw")
    assert sc.extra["idle_sm_ms"] < sc.extra["compute_ms"] - sc.extra["floor_ms"]
    (f,) = _small_grid(m)
    assert f.saving.ms_per_step == pytest.approx(sc.extra["idle_sm_ms"], rel=0.01)
    assert "no kernel beats its GPU's peak" not in f.saving.assumption


def test_the_cap_cuts_kernel_claims_only_and_nothing_without_a_floor():
    """Idle the host causes is no kernel's time: a fix's claim on it is not cut by the GPU's peaks; without a known
    floor (no shapes, or a GPU whose peak is unknown) nothing is cut."""
    claims = [("compute", "gemm_kernels", 3.0), ("launch", "launch", 1.0)]
    assert floor_cap(4.0, claims, 10.0, None) == (4.0, claims, 0.0)
    v, out, cut = floor_cap(4.0, claims, 10.0, 9.5)
    assert cut == pytest.approx(2.5) and v == pytest.approx(1.5)
    assert dict(((g, p), x) for g, p, x in out) == pytest.approx({("compute", "gemm_kernels"): 0.5,
                                                                   ("launch", "launch"): 1.0})
    assert floor_cap(4.0, claims, 10.0, 2.0)[2] == 0.0  # the headroom holds the claim: nothing cut
    # moving 32-bit GEMMs to 16 bit halves their bytes and lifts their peak: the 32-bit floor bounds nothing there (a
    # first try capped real-h100-torch torch_fp32's mixed_precision_off from 27.6 to 7.9 ms by that floor)
    fp32 = [("compute", "tc_eligible_kernels", 3.0)]
    assert floor_cap(3.0, fp32, 10.0, 9.5) == (3.0, fp32, 0.0)


def test_a_floor_needs_a_known_peak_and_takes_the_slower_roof():
    """On a GPU whose peak is unknown nothing is said of its limits; else the bytes' time or the FLOPs' time, whichever
    is longer (a GEMV's bytes, a large GEMM's FLOPs)."""
    assert _floor_ms(10, 1e9, 1e6, None, 1e12) is None
    assert _floor_ms(10, 2 * 8192 * 8192, 2 * 8192 * 8192, 1e15, 3.35e12) == pytest.approx(
        10 * 2 * 8192 * 8192 / 3.35e12 * 1e3)
    assert _floor_ms(1, 2 * 8192 ** 3, 3 * 2 * 8192 ** 2, 1e15, 3.35e12) == pytest.approx(2 * 8192 ** 3 / 1e15 * 1e3)
