"""Shared kernel arithmetic for the precision / Tensor Core rules (§1.2.3, §1.3)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.devices import LOW_PRECISIONS as SIXTEEN_BIT
from tb_gpu_advisor.metrics.types import HostMetrics

UNKNOWN = "unknown"


@dataclass
class KernelMix:
    compute_us: float = 0.0  # all non-collective kernel time, kept steps, all GPUs
    unknown_us: float = 0.0  # of which precision unknown (XLA fusions, Triton GEMMs): neither 16- nor 32-bit
    eligible_unknown_us: float = 0.0  # TC-eligible kernels of unknown precision (Triton GEMMs)
    eligible_us: float = 0.0  # TC-eligible op kernels (GEMM/conv)
    eligible_tc_us: float = 0.0
    eligible_no_tc_32_us: float = 0.0  # eligible, no Tensor Cores, 32-bit (fp32/tf32/fp64/other)
    eligible_no_tc_16_us: float = 0.0  # eligible, no Tensor Cores, 16-bit (the fp16 fallback case)
    eligible_32_us: float = 0.0  # eligible, 32-bit, any kernel
    other_32_us: float = 0.0  # not eligible (element-wise, reductions, ...), 32-bit
    no_tc_32: list = field(default_factory=list)  # KernelStat rows
    no_tc_16: list = field(default_factory=list)
    eligible_rows: list = field(default_factory=list)
    tc_unknown: list = field(default_factory=list)  # eligible rows whose Tensor Core use is unknown (a user's WMMA)


def kernel_mix(m) -> KernelMix:
    """The kept steps' non-collective kernel time by precision, Tensor Core eligibility and use: what the precision and
    Tensor Core checks grade and save.  Each call counts its time inside the kept steps (``KernelStat.step_us``), as
    the step's ledger does: a call running past the last kept step is not the steps' time to save."""
    k = KernelMix()
    for s in m.kernels:
        if s.collective:
            continue
        us = s.step_us  # a part of the steps: the calls' time inside them (their whole may run past the last)
        k.compute_us += us
        if s.precision == UNKNOWN:
            k.unknown_us += us
            if s.tc_eligible:
                k.eligible_unknown_us += us
            continue
        if not s.tc_eligible:
            if s.precision not in SIXTEEN_BIT:
                k.other_32_us += us
            continue
        k.eligible_us += us
        k.eligible_rows.append(s)
        sixteen = s.precision in SIXTEEN_BIT
        if not sixteen:
            k.eligible_32_us += us
        if s.tensor_core:
            k.eligible_tc_us += us
        elif frameworks.matrix_unit_unknown_one(s.name):  # a program's own kernel named for the Tensor Cores, a GEMM of no dtype: only its
            k.tc_unknown.append(s)                      # instructions could say, so it is no fallback, nor a use
        elif sixteen:
            k.eligible_no_tc_16_us += us
            k.no_tc_16.append(s)
        else:
            k.eligible_no_tc_32_us += us
            k.no_tc_32.append(s)
    return k


def align_elements(precision: str) -> int:
    """The element multiple a Tensor Core GEMM of ``precision`` wants (``devices.tc_align_elements``); a kernel whose
    dtype has no fixed width is held to a 16-bit element's, as the kernels these rules cite are 16-bit ones."""
    return devices.tc_align_elements(precision) or devices.tc_align_elements("fp16")


def alignment_words(rows) -> str:
    """What the cited kernels' dtypes need: "bf16 dims must be multiples of 8", "fp16 dims ... of 8, fp8 dims ... 16"."""
    by_mult: dict[int, list[str]] = {}
    for p in dict.fromkeys(s.precision for s in sorted(rows, key=lambda s: -s.total_us)):
        by_mult.setdefault(align_elements(p), []).append(p)
    parts = [f"{' and '.join(ps)} dims must be multiples of {n}" for n, ps in by_mult.items()]
    each = "" if len(parts) == 1 else " each"
    return ", ".join(parts) + f" elements ({devices.TC_ALIGN_BYTES} bytes{each})"


def odd_dims(s) -> list[int] | None:
    """The sizes of a kernel row's recorded GEMM dims (``KernelStat.dims``: its shapes, or its op's tile sizes under
    Kineto) that are no multiple of its dtype's alignment; None where the row records no dims."""
    dims = getattr(s, "dims", None)
    if not dims:
        return None
    mult = align_elements(s.precision)
    return sorted({n for n in dims if n > 1 and n % mult})


def dims_aligned(s) -> bool:
    """A 16-bit kernel off the matrix units whose recorded dims are all aligned: padding cannot be its cause -- the
    library chose that kernel for shapes the matrix units take (MIOpen's Winograd ``dot2`` kernels for 3x3 and 1x1
    convolutions of 64-512 channels, h37-huntk66).  A row with no recorded dims is not known to be aligned."""
    return odd_dims(s) == []


def alignment_multiple(rows) -> int:
    """The multiple that aligns every cited kernel's dims (the largest of their dtypes'; a 16-bit one's for none)."""
    return max((align_elements(s.precision) for s in rows), default=align_elements("fp16"))


def pad_line(name: str, mult: int) -> str:
    """The Python line that rounds ``name`` up to a multiple of ``mult``: the padding fix's code."""
    return f"{name} = (({name} + {mult - 1}) // {mult}) * {mult}"


def known_us(k: KernelMix) -> float:
    """Kernel time whose precision is known: what the precision rules reason over."""
    return k.compute_us - k.unknown_us


def tensor_core_gpus(m) -> tuple[list, list]:
    """(GPUs with Tensor Cores or unknown capability, GPUs known to lack them), active GPUs only."""
    yes, no = [], []
    for g in m.gpus:
        if not g.active:
            continue
        (no if devices.has_matrix_units(g.name, _cc(g.compute_capability)) is False else yes).append(g)
    return yes, no


def sixteen_bit_dtype(m: HostMetrics) -> str:
    """The 16-bit type to advise: ``bf16`` where every active GPU is known to have bf16 Tensor Cores, else float16
    with loss scaling -- which every Tensor Core GPU runs.  A GPU the capture does not describe (a PyTorch 1.8 trace
    has no ``deviceProperties``; its ``volta_*`` kernels ran on a V100) is not promised bf16."""
    yes, _ = tensor_core_gpus(m)
    return "bf16" if yes and all(devices.has_bf16(g.name, compute_capability(g)) for g in yes) else "fp16"


def fp16_reason(m: HostMetrics, terms: dict[str, str]) -> str:
    """Why float16 is advised (``sixteen_bit_dtype``), as the fixes' ``{gpu_fp16}`` says it: a GPU known to lack bf16
    matrix units, or one the capture does not describe -- then the advice is what holds on any of the vendor's GPUs
    with matrix units, and says so instead of claiming what this GPU lacks.  In the vendor's ``terms`` (its
    ``TERMS``: its matrix units, which of its GPUs run bf16): NVIDIA's generation composed here was rewritten by AMD's
    and Intel's ``WORDS`` and reached an Apple GPU and an Ascend NPU as "bfloat16 only on Ampere and newer"
    (h37-inuse63)."""
    yes, _ = tensor_core_gpus(m)
    if yes and all(devices.has_bf16(g.name, compute_capability(g)) is False for g in yes):
        return f"this GPU has fp16 {terms['matrix_units']} but none for bfloat16"
    # what decides the dtype, for a training step and a forward pass alike: loss scaling is a training step's word
    # (h37-review8: the forward pass of nsys/h100_fsdp_window read "bfloat16 needs no loss scaling" in its fix)
    return (f"the capture does not say which GPU this is: float16 runs on every GPU with {terms['matrix_units']}, "
            f"{terms['bf16_gpus']}")


def compute_capability(g) -> float | None:
    """A GPU's compute capability as a number (``"8.0"`` -> 8.0), None when the capture does not say."""
    return _cc(g.compute_capability)


def _cc_pair(g) -> tuple[int, int] | None:
    """``"9.0"`` -> (9, 0); None for an AMD GFX name or no capability (the peaks then go by the GPU's name)."""
    try:
        major, minor = str(g.compute_capability).split(".")[:2]
        return int(major), int(minor)
    except (TypeError, ValueError):
        return None


def gemm_speedup(m, source: str) -> tuple[float, str] | None:
    """Speedup of the run's ``source`` (``fp32`` or ``tf32``) GEMMs once they run in the advised 16-bit type, from
    the GPU's own peaks instead of a fixed factor (issue #20), with the assumption in words; None without peaks.

    Each GEMM shape keeps the share of its roofline it reaches now; the roofline's peak becomes the 16-bit one and
    its intensity doubles (half the bytes), so a compute-bound shape gains the ratio of the peaks and a memory-bound
    one about 2x.  Without shapes (an XLA command buffer hides which kernel is which) the GEMMs are taken as
    compute-bound: the ratio of the peaks."""
    yes, _ = tensor_core_gpus(m)
    if not yes:
        return None
    g = yes[0]
    target = sixteen_bit_dtype(m)
    to_p = devices.peak_flops(g.name, _cc_pair(g), devices.P_BF16 if target == "bf16" else devices.P_FP16)
    from_p = devices.peak_flops(g.name, _cc_pair(g), devices.P_TF32 if source == "tf32" else devices.P_FP32)
    if to_p is None or from_p is None or from_p.value <= 0:
        return None
    peaks = f"{target} {to_p.value / 1e12:.0f} vs {source} {from_p.value / 1e12:.0f} TFLOP/s dense on {devices.said_name(g.name)}"
    bw = m.flops.memory_bandwidth
    # the matrix units' shapes: a depthwise row stays on the vector units in 16 bits too (h37-flops68)
    shapes = [x for x in m.flops.top if x.on_matrix_units and x.precision == source and x.intensity
              and x.ms_per_step > 0]
    if shapes and bw:
        now = sum(x.ms_per_step for x in shapes)
        then = sum(x.ms_per_step * min(from_p.value, x.intensity * bw) / min(to_p.value, 2 * x.intensity * bw)
                   for x in shapes)
        return now / then, (f"each {source} GEMM shape keeps its share of its roofline, whose peak becomes {target}'s "
                            f"({peaks}) and whose intensity doubles (half the bytes)")
    return to_p.value / from_p.value, f"the {source} GEMMs are compute-bound and keep their share of the peak ({peaks})"


def fp32_cuda_core_speedup(m) -> float:
    """Speedup assumed for a 32-bit MatMul/Conv kernel on CUDA cores once it runs in 16 bit on Tensor Cores.

    From Ampere on, 16-bit Tensor Cores outpace the fp32 CUDA cores about 16x at peak (Volta about 8x), so one
    conservative factor for every GPU under-predicted the saving measured on a real H100 pair 2x (docs/diff.md).
    The smaller factor holds as soon as one active GPU is older than Ampere or does not say.  Neither exceeds the
    ratio of the GPU's own 16-bit and fp32 peaks where they are known (a GeForce RTX 3060 gains at most 2x: its
    16-bit Tensor Cores accumulate in fp32 at half rate), so no kernel is promised to beat its peak.
    """
    yes, _ = tensor_core_gpus(m)
    factor = T("mixed_precision.speedup")
    if yes and all(devices.has_tf32(g.name, compute_capability(g)) for g in yes):
        factor = T("mixed_precision.speedup_sm80")
    to = devices.P_BF16 if sixteen_bit_dtype(m) == "bf16" else devices.P_FP16
    bounds = [devices.sixteen_bit_gain_bound(g.name, _cc_pair(g), to) for g in yes]
    known = [b for b in bounds if b is not None]
    return min([factor] + known)


def _cc(s) -> float | None:
    try:
        return float(s) if s else None
    except (TypeError, ValueError):
        return None


def per_step_ms(m, total_us: float) -> float:
    """Kernel time summed over the kept steps and the active GPUs, in ms per step on one GPU's critical path
    (``HostMetrics.per_step``, the one division)."""
    return m.per_step(total_us / 1000.0)
