"""PyTorch traces from someone else's machine, in the old Kineto schema (issue #18, class 1 and 2).

Provenance: ``../shared/profiles/wild-torch`` -- the PyTorch profiler tutorial's ResNet-50 samples as the
TensorBoard PyTorch plugin shipped them (pytorch/kineto ``tb_plugin/samples/resnet50_num_workers_{0,4}``, BSD,
June 2021): a Tesla V100-DGXS-32GB, a PyTorch 1.9 nightly, categories ``Operator`` / ``Runtime`` / ``Kernel`` /
``Memcpy`` / ``Memset``, ``async`` flows, ``external id`` in lower case, and file names stamped in milliseconds.
Each run is judged with the checks of ``../shared/tools/score_real.py`` (its TRUTH.json was read off the traces).
"""

from __future__ import annotations

import json

import pytest

from tests.support.real_checks import WILD_TORCH_SET
from tests.support.real_sets import reports_fixture, truth_or_skip, truth_test

TRUTH = truth_or_skip(WILD_TORCH_SET, f"wild PyTorch traces not found at {WILD_TORCH_SET}")
RUNS = sorted(TRUTH)
reports = reports_fixture(WILD_TORCH_SET, RUNS)

test_truth = truth_test(TRUTH)  # the score_real.py checks, one test id per run and check


@pytest.mark.parametrize("run", RUNS)
def test_old_schema_is_read_as_gpu_activity(reports, run):
    """The V100 and its kernels are seen (was: "No GPU activity in the capture"); steps are the ProfilerSteps."""
    rep = reports[run].report
    assert rep is not None, reports[run].error
    (host,) = rep["hosts"]
    (gpu,) = host["gpus"]
    assert gpu["name"] == "Tesla V100-DGXS-32GB" and gpu["kernel_count"] > 1000
    assert host["steps"]["source"] == "profiler_step" and host["steps"]["count"] >= 3
    assert not any(f["rule"] == "capture_quality" and "No GPU activity" in f["title"] for f in rep["findings"])


@pytest.mark.parametrize("run", RUNS)
def test_sessions_are_named_by_their_millisecond_stamps(reports, run):
    """``worker0.1623143089861.pt.trace.json.gz`` is 2021-06-08 09:04:49 UTC, never 1970."""
    rep = reports[run].report
    assert rep["session"].startswith("2021_06_0"), rep["session"]


def test_no_tensor_core_finding_rests_on_non_gemm_kernels(reports):
    """ATen's own kernels under ``aten::addmm`` (a copy of the bias) are no GEMM: no misaligned-dims finding on an
    fp32 model (was: critical, on ``unrolled_elementwise_kernel<copy...>`` read as an int8 GEMM)."""
    for run in RUNS:
        rep = reports[run].report
        assert not [f for f in rep["findings"] if f["rule"] == "misaligned_dims"], run
        kernels = rep["hosts"][0]["kernels"]
        rows = [dict(zip(kernels["columns"], r)) for r in kernels["rows"]]
        assert rows and not [r for r in rows if "at::native" in str(r.get("kernel", "")) and r.get("precision") == "int8"], \
            json.dumps(rows[:3])
