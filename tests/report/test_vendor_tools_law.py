"""``vendor-words`` over calls and tools (h37-words32; ``tests/support/contradictions.vendor_words_problems``): a
host is told only its own vendor's calls and tools.  The law held CUDA's calls and tools off AMD hosts
(``_CUDA_TOOLS``, h37-rocsteps) but not ROCm's off NVIDIA and Intel hosts: a HIP launch (``hipLaunchKernelGGL``), a
hipCUB reduction or a rocBLAS batched call in an NVIDIA host's fix went unseen -- and ``small_grid`` now names each
vendor's launch and library calls.  The twin (``_ROCM_TOOLS``) holds on real reports of both vendors and fails on a
fix of the other vendor's.
"""

from __future__ import annotations

import copy

import pytest

from tb_gpu_advisor.devices import amd, nvidia
from tb_gpu_advisor.model.schema import Report
from tests.support.contradictions import vendor_words_problems
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

_RUNS = ["mpi_saxpy_a100_rank0", "hf_qwen_h100", "xdit_sd35_mi300x_denoise"]


def _with_fix(r: Report, fix, rule: str | None = "small_grid") -> Report:
    """``r`` with ``fix`` added to its ``rule`` finding (None: its first finding that has fixes): the law reads every
    finding's fixes alike, so any finding carries the planted one."""
    r = copy.deepcopy(r)
    f = next(f for h in r.hosts for f in h.findings if (f.rule == rule if rule else f.actions))
    f.actions = [*f.actions, fix]
    return r


@pytest.mark.parametrize("run", _RUNS)
def test_small_grids_vendor_fixes_are_the_hosts_own(run):
    assert vendor_words_problems(run_report(FIXTURES / "wild", run)) == []


@pytest.mark.parametrize("fix", ["more_blocks", "library_blocks"])
def test_rocms_calls_on_an_nvidia_host_are_caught(fix):
    r = _with_fix(run_report(FIXTURES / "wild", "mpi_saxpy_a100_rank0"), amd.FIXES[fix])
    got = vendor_words_problems(r)
    assert any("on an NVIDIA GPU" in v and ("hip" in v or "rocblas" in v) for v in got), got  # main: none


def test_cudas_calls_on_an_amd_host_are_caught():
    """Control: the older half of the law -- cuBLAS's batched call in an AMD host's fix."""
    # the run's small grids no longer save enough to be a finding once capped by the host-bound forward pass
    # (h37-idle64): the fix is planted in its first finding with fixes
    r = _with_fix(run_report(FIXTURES / "wild", "xdit_sd35_mi300x_denoise"), nvidia.FIXES["library_blocks"], rule=None)
    assert vendor_words_problems(run_report(FIXTURES / "wild", "xdit_sd35_mi300x_denoise")) == []
    assert any("cublasGemmStridedBatched" in v for v in vendor_words_problems(r))
