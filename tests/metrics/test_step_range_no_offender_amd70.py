"""A step read from the program's own range never names that range as the op launching the step's small kernels
(h37-amd70: h37-tiny70's class on ROCm, issue #37 class 4).

A HIP program's roctx ``train_step`` range around each step's launches and ``hipDeviceSynchronize``, read from
rocprofv3's CSV or JSON (``synthetic.rocprofv3trace``): no op is recorded inside the range, so the innermost range
around each ``hipLaunchKernel`` -- a kernel's op -- is the step's own range.  Base dbf6cf15 (and main after tiny70)
read "Top offender: train_step, 4 calls per step taking 12 us": the step itself named as the place inside it that
launches the kernels.  Truth by construction: three steps of four 3 us Tensile GEMMs (MFMA), 2 us apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import rocprofv3trace as rv
from tests.support.contradictions import context_problems
from tests.support.run_report import fresh_report

_GEMM = "Cijk_Ailk_Bljk_SB_MT64x64x8_MI32x32x2x1"


@pytest.mark.parametrize("fmt,gap_ms", [("csv", 0.002), ("json", 0.002)])
def test_a_step_s_own_roctx_range_is_no_offender_of_its_kernels(tmp_path: Path, fmt: str, gap_ms: float) -> None:
    """Fails on dbf6cf15: "Top offender: train_step, 4 calls per step"."""
    rv.write(str(tmp_path / "run"), [[(_GEMM, 3.0)] * 4] * 3, gap_ms=gap_ms, step_range="train_step", fmt=fmt)
    rep = fresh_report(tmp_path)
    (host,) = rep.hosts
    assert host.steps["source"] == "nvtx_range" and host.steps["count"] == 3, host.steps
    (launch,) = [f for f in rep.findings if f.rule == "launch_bound"]
    assert "Top offender: Cijk_Ailk_Bljk" in launch.summary, launch.summary
    assert "train_step" not in launch.summary, launch.summary
    assert not context_problems(rep)
