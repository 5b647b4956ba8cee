"""§1.3 Mixed precision: almost no device time in 16-bit kernels.

Metric: ``headline.sixteen_bit_time_share`` (fp16 + bf16 share of kernel
time; the stock tool suggests mixed precision below 10% and counts bf16 as
32-bit -- the Advisor counts both), graded with the fp8/int8 share added: an
8-bit kernel is reduced precision too, no fp32 kernel to move to 16 bit.  Only on GPUs with Tensor Cores and when
matmul/conv work is a real part of the compute.  Critical when 32-bit
MatMul/Conv kernels are at least half of device compute.  Saving: 32-bit
TC-eligible kernel time × (1 - 1/speedup) + other 32-bit kernel time ×
(1 - 1/memory_bound_speedup) (half the bytes).
"""

from __future__ import annotations

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._kernels import (fp32_cuda_core_speedup, gemm_speedup, kernel_mix, known_us,
                                           per_step_ms, sixteen_bit_dtype, tensor_core_gpus, fp16_reason)
from tb_gpu_advisor.rules.base import Ctx, T, action, finding, grade, ms, pct, rule, saving, share_metric, short, table

ID = "mixed_precision_off"
_VERIFY = action("Enable it alone first and verify the gain, then check the findings on Tensor Core use and on "
                 "dimensions (multiples of 8).")


def quiet_reason(m) -> str | None:
    """Why a low 16-bit share is not a finding: no Tensor Core GPU; a program whose framework has no precision to
    set (the check never runs: ``rules.evaluate`` skips what ``Framework.applies`` denies); too little MatMul/Conv
    work to matter.

    Why the framework's reason before the MatMul/Conv share: the share is of the kernels a library's names mark as
    GEMMs, and a native program's own kernels carry none -- its one kernel ``mat_mult``, 100% of the kernel time,
    read "MatMul/Conv kernels are 0.0% of the kernel time" (h37-words24, wild/matmul_rtx3060_laptop_pinned_sync)."""
    ctx = Ctx(m)
    yes, _ = tensor_core_gpus(m)
    if not yes:
        return f"no GPU with {ctx.vendor.TERMS['matrix_units']} in this capture: 16-bit kernels would not use them"
    if not ctx.fw.applies(ID):
        return ctx.fw.not_applicable[ID]
    k = kernel_mix(m)
    known = known_us(k)
    if known > 0 and k.eligible_us / known < T("mixed_precision_off.min_eligible_share"):
        return (f"MatMul/Conv kernels are {pct(k.eligible_us / known)} of the kernel time, under the "
                f"{pct(T('mixed_precision_off.min_eligible_share'))} at which precision limits the {ctx.step_noun}")
    return None


@rule(ID, "§1.3", "Mixed precision is off: kernels run in fp32",
      thresholds=("mixed_precision_off.warning", "mixed_precision_off.critical", "mixed_precision_off.min_eligible_share",
                  "mixed_precision.speedup", "mixed_precision.speedup_sm80", "mixed_precision.memory_bound_speedup"),
      quiet=quiet_reason, card="sixteen_bit_share")
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    yes, _ = tensor_core_gpus(m)
    share16 = m.headline.sixteen_bit_time_share
    k = kernel_mix(m)
    known = known_us(k)
    if not yes or share16 is None or known <= 0:
        return []
    # over the kernel time of known precision: XLA fusions and Triton GEMMs name no dtype
    eligible_share = k.eligible_us / known
    if eligible_share < T("mixed_precision_off.min_eligible_share"):
        return []
    # fp8/int8 kernels are reduced precision too: an fp8 GEMM (Composable Kernel's ``ck::f8_fnuz_t`` with ``float``
    # accumulators) is no 32-bit kernel to move to 16 bit (survey h37-rocprof2: aiter's fp8 GEMM on an MI355X)
    eight = m.headline.eight_bit_time_share or 0.0
    low = share16 + eight
    sev = grade(low, "mixed_precision_off.warning")
    if sev is None:
        return []
    if k.eligible_32_us / known >= T("mixed_precision_off.critical"):
        sev = "critical"
    sp, spm, sp_cc = T("mixed_precision.speedup"), T("mixed_precision.memory_bound_speedup"), fp32_cuda_core_speedup(m)
    # from the GPU's peaks and the GEMMs' rooflines where known (issue #20); the fixed factors otherwise
    roof_cc, roof_tf = gemm_speedup(m, "fp32"), gemm_speedup(m, "tf32")
    sp_cc, sp = (roof_cc[0] if roof_cc else sp_cc), (roof_tf[0] if roof_tf else sp)
    t32_ms = per_step_ms(m, k.eligible_32_us)
    # CUDA-core fp32 kernels gain the architecture's factor; 32-bit kernels already on Tensor Cores (TF32) gain sp
    cuda_ms = min(t32_ms, per_step_ms(m, k.eligible_no_tc_32_us))
    t32_save = cuda_ms * (1 - 1 / sp_cc) + (t32_ms - cuda_ms) * (1 - 1 / sp)
    other_ms = per_step_ms(m, k.other_32_us)
    top = sorted((s for s in k.eligible_rows if s.precision not in ("fp16", "bf16", "int8", "fp8")),
                 key=lambda s: -s.total_us)[:10]
    cc = ", ".join(sorted({f"{devices.said_name(g.name)} ({_arch(g)})" for g in yes if g.compute_capability})) or "the GPU"
    return [finding(
        ctx, ID, sev,
        f"Only {pct(low)} of device compute time is in 16-bit{' or 8-bit' if eight else ''} kernels (stock tool "
        f"suggests mixed precision below "
        f"10%) while MatMul/Conv kernels take {pct(k.eligible_us / k.compute_us)} of it ({ms(t32_ms)} {ctx.per_step} in "
        f"32-bit) on {cc}."
        + (f" The 16-bit share is of the kernel time of known precision; {pct(k.unknown_us / k.compute_us)} has no dtype in its "
           f"name (compiler fusions, library helper kernels) and is left out." if k.unknown_us > 0 else ""),
        metric=share_metric("sixteen_bit_time_share", "16-bit share of device compute", share16,
                            "mixed_precision_off.warning", severity=sev,
                            detail={"fp16_time_share": m.headline.fp16_time_share,
                                    "bf16_time_share": m.headline.bf16_time_share,
                                    "tc_eligible_share": eligible_share,
                                    "unknown_precision_share": k.unknown_us / k.compute_us}),
        saving=saving(ctx, t32_save + other_ms * (1 - 1 / spm),
                      f"32-bit MatMul/Conv kernels run {sp_cc:.3g}x faster in 16 bit on Tensor Cores"
                      + (f" ({sp:.3g}x for those {ctx.vendor.TERMS['fp32_on_matrix_units']})" if t32_ms > cuda_ms else "")
                      + f" and other 32-bit kernels {spm:g}x faster with half the bytes"
                      + (f"; {roof_cc[1]}" if roof_cc else ""),
                      [("compute", "tc_eligible_kernels", t32_save),
                       ("compute", "non_matmul_kernels", other_ms * (1 - 1 / spm))]),
        evidence=[table("Largest 32-bit MatMul/Conv kernels ({kept}, all GPUs)", ["kernel", "op", "op type", "precision", "count", "total ms",
                                                               ctx.vendor.TERMS["matrix_unit"].lower()],
                        [[short(s.name), s.op_name or "-", s.op_type, s.precision, s.count, s.total_us / 1000.0, s.tensor_core]
                         for s in top])],
        actions=ctx.fw.fix(f"{ID}:{sixteen_bit_dtype(m)}", gpu_fp16=fp16_reason(m, ctx.vendor.TERMS)) + [_VERIFY],
    )]


def _arch(g) -> str:  # noqa: ANN001 - a GpuMetrics
    """``sm9.0`` for NVIDIA, ``gfx942`` for AMD."""
    label = devices.arch_label(g.name, g.compute_capability)
    return label if label and label.startswith("gfx") else f"sm{g.compute_capability}"
