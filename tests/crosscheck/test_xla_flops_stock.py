"""Our XLA FLOP rows against the stock tool's (xprof ``op_profile``) on the real H100 capture without command buffers.

The stock tool computes each HLO op's FLOPs with XLA's own cost analysis, from the same HLO: where it attributes
them to a kernel, it must agree with our formulas.  It gives FLOPs only where kernels name their op (no CUDA
graph), and it gives an op's FLOPs to *each* of the op's kernels: cuBLAS-Lt calls launch a ``Memset`` and the GEMM,
so it counts them twice (docs/xla-flops.md).  Asserting both keeps that page true when either tool changes.
"""

from __future__ import annotations

import glob
from concurrent.futures import ProcessPoolExecutor

import pytest

from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tests.support.paths import SHARED_PROFILES
from tests.support.real_checks import stock_available
from tests.support.stock_tool import stock_tools

RUN = SHARED_PROFILES / "real-h100-jax" / "healthy_bf16_nocb"
MODULE = "jit_train_step"


def _capture() -> str:
    found = glob.glob(str(RUN / "plugins" / "profile" / "*" / "*.xplane.pb"))
    if len(found) != 1:
        pytest.skip("../shared/profiles/real-h100-jax/healthy_bf16_nocb is absent")
    return found[0]


@pytest.fixture(scope="module")
def both() -> tuple[dict[str, float], dict[str, float]]:
    """(ours, stock): FLOPs per module execution of each train-step op with FLOPs."""
    if not stock_available():
        pytest.skip("stock converter (xprof / tensorboard-plugin-profile) not installed")
    path = _capture()
    with ProcessPoolExecutor(1) as pool:  # the converter is C++ that keeps state and logs: its own process
        prof = pool.submit(stock_tools, [path], ("op_profile",)).result()["op_profile"]
    t = read_trace(path)
    execs = int(t.h.name_mask(lambda n: n == f"{MODULE}:XLA GPU module").sum())
    fo = t.flop_ops
    ours = {o: float(f) for m, o, f in zip(fo.module, fo.op_name, fo.flops) if m == MODULE}
    prog = next(p for p in prof["byProgram"]["children"] if p["name"].startswith(MODULE + "("))
    stock = {op["name"]: op["metrics"]["rawFlops"] / execs for cat in prog["children"] for op in cat["children"]
             if op["metrics"].get("rawFlops")}
    return ours, stock


def test_every_op_we_count_has_stock_flops(both):
    ours, stock = both
    assert len(ours) == 11 and set(ours) <= set(stock)


def test_the_triton_gemm_fusion_agrees(both):
    """One kernel per execution: the stock tool's FLOPs are ours plus the element-wise update fused after the dot."""
    ours, stock = both
    assert stock["gemm_fusion_dot"] == pytest.approx(ours["gemm_fusion_dot"], rel=0.002)


def test_the_stock_tool_counts_each_cublas_call_once_per_kernel(both):
    ours, stock = both
    cublas = [op for op in ours if op != "gemm_fusion_dot"]
    assert len(cublas) == 10
    for op in cublas:
        assert stock[op] == pytest.approx(2 * ours[op], rel=1e-6), op
