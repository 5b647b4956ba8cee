"""h37-peak: no rate the report prints as a GPU's exceeds that GPU's peak (``tests/support/properties`` ``peak``).

On main wild/gemm_h200_cuda_unrecorded (an H200 bf16 GEMM benchmark whose CUDA activity was not recorded) read
"`aten::matmul bf16 [2048,4096]x[4096,14336]` returned after 84.7 us for 240.5 GFLOP (2.84 PFLOP/s)": 240.5 GFLOP over
the op's asynchronous return on the host, not its GPU time -- above the H200's own bf16 peak (989.5 TFLOP/s) and its
best of any dtype (1,979).  The job now says the return time and what the FLOPs take at least, and the report names
the GPUs the process listed (``job.gpus_listed``), which the property holds every printed rate to."""

from __future__ import annotations

import copy

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.properties import peak_rate_problems, printed_rates, report_violations
from tests.support.report_store import session_report

#: main's words on wild/gemm_h200_cuda_unrecorded
_MAIN = ("`aten::matmul bf16 [2048,4096]x[4096,14336]` returned after 84.7 us for 240.5 GFLOP (2.84 PFLOP/s), faster "
         "than any CPU computes (at most 1,000 TFLOP/s): it queued its work on a GPU")


def _host(logdir, run=None):
    s = next(s for s in discover(str(logdir)) if run is None or s.run == run)
    r = session_report(s)
    return r, r.hosts[0]


@pytest.fixture(scope="module")
def gemm():
    return _host(FIXTURES / "wild" / "gemm_h200_cuda_unrecorded")


def test_an_ops_return_on_the_host_is_no_gpu_rate(gemm):
    r, h = gemm
    assert h.job["gpus_listed"] == "8 x NVIDIA H200"  # the GPU is known: the rates are held to its peak
    ev = " ".join(h.job["kind_evidence"].split())
    # the duration said for what it is, and what the FLOPs take at least: on the CPU and at the H200's bf16 peak
    assert "returned after 84.7 us for 240.5 GFLOP" in ev
    assert "any CPU takes at least 240.5 us" in ev and "NVIDIA H200 at least 243.1 us at its bf16 peak" in ev
    assert not [x for x in printed_rates(h) if x[0] in ("job", "capture_quality:01_gemm_bf16")]
    assert not peak_rate_problems(h) and not report_violations(r)


def test_the_peak_property_catches_mains_rate(gemm):
    _, h = gemm
    h = copy.deepcopy(h)
    h.job["kind_evidence"] = _MAIN
    bad = peak_rate_problems(h)
    assert len(bad) == 1 and "2.84 PFLOP/s" in bad[0] and "1,979.0 TFLOP/s" in bad[0], bad
    h.job.pop("gpus_listed")  # no GPU known: nothing to hold the rate to
    assert not peak_rate_problems(h)


def test_a_real_rate_under_peak_keeps_its_number():
    """Control: the H100's bf16 GEMMs, timed by their kernels, at 829.7 TFLOP/s of a 989.4 dense peak -- printed and
    held; the same row above the bf16 peak (though under the fp8 one) is caught by its own dtype's."""
    d = SHARED_PROFILES / "real-h100-torch"
    if not d.is_dir():
        pytest.skip(f"real captures not here ({d})")
    r, h = _host(d, "torch_healthy_bf16")
    rates = [v for where, _, v, kind in printed_rates(h) if where.endswith("roofline") and kind == "flops"]
    assert rates and 500e12 < max(rates) < 989.4e12
    assert not peak_rate_problems(h)
    h = copy.deepcopy(h)
    t = h.roofline
    i, k = t.columns.index("TFLOP/s"), t.columns.index("precision")
    row = next(x for x in t.rows if x[k] == "bf16")
    row[i] = 1500.0
    bad = peak_rate_problems(h)
    assert len(bad) == 1 and "bf16 peak" in bad[0], bad
