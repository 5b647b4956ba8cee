"""Two captures of different work are not compared as if they were the same (issue #27 item 5)."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.report import diff as diffmod
from tb_gpu_advisor.report import diff_render
from tests.support.paths import SHARED_PROFILES
from tests.support.report_store import session_report

JAX = SHARED_PROFILES / "real-h100-jax"
pytestmark = pytest.mark.skipif(not JAX.is_dir(), reason="../shared/profiles/real-h100-jax not present")


def _report(run: str):
    (s,) = [s for s in discover(str(JAX)) if s.run == run]
    return session_report(s)


def test_the_mlp_against_the_gpt_is_not_comparable_and_is_compared_per_tflop():
    """healthy_bf16 (1.51 TFLOP/step) against gpt_bf16 (5.94): different work, said first, with the per-TFLOP line."""
    d = diffmod.diff_reports(_report("healthy_bf16"), _report("gpt_bf16"))
    assert any("TFLOP per step" in w for w in d.incomparable)
    assert d.per_tflop and d.per_tflop["new_ms_per_tflop"] > d.per_tflop["base_ms_per_tflop"]
    text = diff_render.to_text(d)
    assert text.splitlines()[2].startswith("NOT COMPARABLE")


def test_fp32_against_bf16_mfu_improves_and_the_batch_change_is_said():
    """fp32_highest (batch 2048, 0.756 TFLOP/step) against healthy_bf16 (batch 4096, 1.51): MFU, over the bf16 peak on
    both sides, gets better -- not "73.9% -> 64.0%, worse" (issue #27 item 4) -- and the doubled batch is said, with
    the per-TFLOP comparison the gate then uses (item 5)."""
    d = diffmod.diff_reports(_report("fp32_highest"), _report("healthy_bf16"))
    assert d.incomparable == ["0.756 vs 1.51 TFLOP per step"]
    mfu = next(m for m in d.headline if m.id == "mfu")
    assert mfu.new > 5 * mfu.base and mfu.better is True
    assert d.per_tflop["delta_share"] < -0.9  # 20.2 -> 1.58 ms per TFLOP


TORCH = SHARED_PROFILES / "real-h100-torch"


@pytest.mark.skipif(not TORCH.is_dir(), reason="../shared/profiles/real-h100-torch not present")
def test_the_same_gemms_in_another_dtype_are_the_same_work():
    """torch_fp32 -> torch_healthy_bf16 ran the same [4096,4096]x[4096,4096] GEMMs; the dtype is the fix the diff
    measures, not other work (issue #36: "NOT COMPARABLE ... no GEMM shape in common")."""
    def report(run):
        (s,) = [s for s in discover(str(TORCH)) if s.run == run]
        return session_report(s)

    base, new = report("torch_fp32"), report("torch_healthy_bf16")
    assert {r[2] for r in base.hosts[0].roofline.rows} == {"fp32"} and {r[2] for r in new.hosts[0].roofline.rows} == {"bf16"}
    d = diffmod.diff_reports(base, new)
    assert "no GEMM shape in common" not in d.incomparable, d.incomparable
    assert not diff_render.to_text(d).splitlines()[2].startswith("NOT COMPARABLE")


def test_gemm_work_leaves_the_dtype_out_and_keeps_the_shapes():
    """Other shapes are still other work: only the dtype word goes."""
    from tb_gpu_advisor.model.schema import HostReport, Table

    def host(*labels):
        return HostReport(host="h", path="p", size_bytes=0, roofline=Table("r", ["op and shapes"], [[x] for x in labels]))

    assert diffmod._gemm_work(host("aten::mm fp32 [4096,4096]x[4096,4096]")) == \
        diffmod._gemm_work(host("aten::mm bf16 [4096,4096]x[4096,4096]"))
    assert diffmod._gemm_work(host("__cublas$gemm bf16[16384,1024]x[1024,4096]")) == {"__cublas$gemm [16384,1024]x[1024,4096]"}
    assert not diffmod._gemm_work(host("aten::mm fp32 [128,128]x[128,128]")) & \
        diffmod._gemm_work(host("aten::mm bf16 [4096,4096]x[4096,4096]"))
