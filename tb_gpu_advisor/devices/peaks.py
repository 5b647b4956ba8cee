"""Peak dense throughput per GPU model and dtype, and peak memory bandwidth, each with where it comes from.

Why a module of its own: a finding that says "12% of peak" is only as good as its peak, and a peak nobody can trace
to a document cannot be argued with.  Every :class:`Peak` carries its source in words.

How a peak is found, in order:

1. **The table** (:data:`MODELS`): the model the trace's device name names (Kineto's ``deviceProperties.name``,
   XPlane's ``gpu_device_name``), with the vendor's datasheet or whitepaper figure.  Always the *dense* figure: NVIDIA
   prints its Tensor Core rates with 2:4 structured sparsity (twice the dense rate, with an asterisk); those are
   halved here, never used.  Where the name does not say the variant (an ``NVIDIA H100`` without PCIe, NVL or HBM3;
   an ``NVIDIA A100`` without its memory size; ROCm's ``AMD Instinct MI250X/MI250``), the SM count, then the clock,
   then (for bandwidth) the trace's own bandwidth tell the variants apart; when none does, the *lowest* variant's
   figure is used and the source says so, so that a finding never overstates the gap to peak.
2. **An AMD device named generically** (ROCm's ``AMD Radeon Graphics``, XPlane's ``AMD``): the table's model of the
   same architecture (GFX name) and CU count.  ROCm names its devices that way often; its XPlane ``memory_bandwidth``
   is not to be trusted either (2.66 TB/s on the MI300X fixture, whose datasheet says 5.3).
3. **An estimate** for any other GPU: SM (CU) count x clock x the per-SM (per-CU) dense rate of its generation
   (:data:`GENERATIONS`), said as ``estimated: ...``.  Bandwidth falls back to what the trace's device plane says.

Dtypes: TF32, fp16, bf16, fp8 and int8 are Tensor Core (Matrix Core) rates; fp32 and fp64 are the highest dense rate
the GPU publishes for them: the FP64 Tensor Core on GA100 and Hopper, the FP32 / FP64 Matrix rate on CDNA, else the
vector units; the source names which.  A dtype the GPU does not run (bf16 on V100 and T4, fp8 before Hopper and Ada,
TF32 before Ampere) has no peak: None, never a made-up number.  A device that is a partition of its model (MIG, an
MI300X in CPX mode) reports fewer SMs than the table: its compute peak is scaled by the ratio (bandwidth is not).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

from tb_gpu_advisor.devices import amd, intel, nvidia
from tb_gpu_advisor.devices.codes import P_BF16, P_FP8, P_FP16, P_FP32, P_FP64, P_INT8, P_TF32, PRECISIONS

#: The dtypes with a peak, in the order the docs list them.
DTYPES = (P_FP64, P_FP32, P_TF32, P_FP16, P_BF16, P_FP8, P_INT8)
#: Variants told apart by clock when the tabled boost clock is within this fraction of the trace's.
CLOCK_MATCH = 0.03
#: Variants told apart by bandwidth when the tabled figure is within this fraction of the trace's.
BANDWIDTH_MATCH = 0.10
#: No CPU computes a matmul faster than this, FLOP/s (8-bit operands: twice it).  The fastest CPU matrix units: Intel's
#: AMX does 1,024 bf16 FLOP per core and cycle (2,048 int8 ops), so a two-socket Xeon 6980P (Granite Rapids, 2 x 128
#: cores at 2.0 GHz) peaks at ~0.52 PFLOP/s bf16 -- twice that here, a margin no CPU server's matmul reaches.  Why it
#: matters: an op that returns sooner than this rate allows for its FLOPs did not compute them on the host; it queued
#: them on an accelerator (``job.kind``: GPU work whose records the capture lacks is not the CPU's work).
CPU_PEAK_FLOPS = 1e15


@dataclass(frozen=True)
class Peak:
    """One peak: dense FLOP/s (int8: op/s; for bandwidth, bytes/s), where the number comes from, and the table entry
    it was read from (None when estimated or read from the trace)."""

    value: float
    source: str
    model: str | None


@dataclass(frozen=True)
class Generation:
    """What one SM (AMD: one CU) of an architecture does per clock, dense, by dtype: ``rates[p] = (ops, units)``."""

    name: str
    unit: str  # "SM" or "CU"
    rates: dict[int, tuple[int, str]]


@dataclass(frozen=True)
class Model:
    """One table entry: a product's published dense peaks (per package, as printed) and how to recognise its name."""

    model: str  # "H100 SXM"
    family: re.Pattern  # any name of the family (``\\bH100\\b``)
    variant: re.Pattern | None  # a name that says this variant; None for a family of one
    generation: str  # key of GENERATIONS
    flops: dict[int, float]  # dtype -> dense FLOP/s per package; a dtype the document does not give is absent
    bandwidth: float  # bytes/s per package
    doc: str  # the document, in words
    sm_count: int | None = None  # SMs (CUs) of one device, as the runtime counts them
    boost_hz: float | None = None  # the clock the document's vector figures are computed at (the maximum boost)
    devices: int = 1  # devices the package appears as (MI250X, MI250: 2 GCDs, each one device)
    memory_bytes: int | None = None  # device memory of one device, where it tells variants apart (a Max 1550 stack)

    def per_device(self, precision: int) -> float:
        """The dense peak of one device; inf where the document gives none (never the lowest of a choice)."""
        return self.flops[precision] / self.devices if precision in self.flops else math.inf


def _t(**tflops: float | None) -> dict[int, float]:
    """Published TFLOP/s (TOP/s) by dtype name -> FLOP/s by dtype code; None: the document gives no figure."""
    codes = {"fp64": P_FP64, "fp32": P_FP32, "tf32": P_TF32, "fp16": P_FP16, "bf16": P_BF16, "fp8": P_FP8,
             "int8": P_INT8}
    return {codes[k]: v * 1e12 for k, v in tflops.items() if v is not None}


def _re(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.I)


_TC, _CUDA, _UNITS, _MC = "Tensor Core", "CUDA cores", "units", "Matrix Core"
_XMX, _XVE = "XMX", "vector engines"

#: Dense ops per clock per SM (CU), from the architecture whitepapers' per-SM tables (NVIDIA: Volta, Turing, GA100,
#: GA10x, Ada, Hopper; AMD: CDNA 1-3 instruction throughput), checked against every tabled model by
#: ``tests/devices/test_peaks.py``.  Blackwell's are its datasheet figures over 148 SMs at ~1.9 GHz (NVIDIA publishes
#: no per-SM table for it).  GA10x and Ada are the data-center parts' rates: GeForce cards (and the L40) run
#: fp16/bf16 with fp32 accumulation at half of them.
GENERATIONS: dict[str, Generation] = {
    # Kepler GK210 (sm_37, the Tesla K80's two dies): per SMX 192 single-precision CUDA cores and 64 double-precision
    # units, an FMA each a clock; no Tensor Cores and no fp16 arithmetic (NVIDIA's Kepler GK110/GK210 whitepaper)
    "Kepler GK210": Generation("Kepler GK210", "SM", {P_FP64: (128, _UNITS), P_FP32: (384, _CUDA)}),
    "Volta": Generation("Volta", "SM", {P_FP64: (64, _UNITS), P_FP32: (128, _CUDA), P_FP16: (1024, _TC)}),
    "Turing": Generation("Turing", "SM", {P_FP64: (4, _UNITS), P_FP32: (128, _CUDA), P_FP16: (1024, _TC),
                                          P_INT8: (2048, _TC)}),
    # Turing's TU116 / TU117 (the GeForce GTX 16 series, MX450 / MX550, T400-T2000: ``nvidia.NO_TENSOR_CORE_TURING``):
    # the same SM without Tensor Cores, fp16 on dedicated units at twice the fp32 rate (NVIDIA's GTX 1660 Ti launch
    # figures: 5.4 fp32, 10.9 fp16 TFLOP/s); its int8 (dp4a on the CUDA cores) has no published figure: left out
    "Turing TU11x": Generation("Turing TU11x", "SM", {P_FP64: (4, _UNITS), P_FP32: (128, _CUDA),
                                                      P_FP16: (256, "fp16 units")}),
    "Ampere GA100": Generation("Ampere GA100", "SM", {
        P_FP64: (128, _TC), P_FP32: (128, _CUDA), P_TF32: (1024, _TC), P_FP16: (2048, _TC),
        P_BF16: (2048, _TC), P_INT8: (4096, _TC)}),
    "Ampere GA10x": Generation("Ampere GA10x", "SM", {
        P_FP64: (4, _UNITS), P_FP32: (256, _CUDA), P_TF32: (512, _TC), P_FP16: (1024, _TC), P_BF16: (1024, _TC),
        P_INT8: (2048, _TC)}),
    "Ada": Generation("Ada", "SM", {
        P_FP64: (4, _UNITS), P_FP32: (256, _CUDA), P_TF32: (512, _TC), P_FP16: (1024, _TC), P_BF16: (1024, _TC),
        P_FP8: (2048, _TC), P_INT8: (2048, _TC)}),
    "Hopper": Generation("Hopper", "SM", {
        P_FP64: (256, _TC), P_FP32: (256, _CUDA), P_TF32: (2048, _TC), P_FP16: (4096, _TC),
        P_BF16: (4096, _TC), P_FP8: (8192, _TC), P_INT8: (8192, _TC)}),
    "Blackwell": Generation("Blackwell", "SM", {
        P_FP64: (128, "Tensor Core (the rate of its vector units too)"), P_FP32: (256, _CUDA), P_TF32: (4096, _TC),
        P_FP16: (8192, _TC), P_BF16: (8192, _TC), P_FP8: (16384, _TC), P_INT8: (16384, _TC)}),
    "CDNA": Generation("CDNA", "CU", {
        P_FP64: (64, "vector"), P_FP32: (256, "Matrix"), P_FP16: (1024, _MC), P_BF16: (512, _MC),
        P_INT8: (1024, _MC)}),
    "CDNA2": Generation("CDNA2", "CU", {
        P_FP64: (256, "Matrix"), P_FP32: (256, "Matrix"), P_FP16: (1024, _MC), P_BF16: (1024, _MC),
        P_INT8: (1024, _MC)}),
    "CDNA3": Generation("CDNA3", "CU", {
        P_FP64: (256, "Matrix"), P_FP32: (256, "Matrix (and vector)"), P_TF32: (1024, _MC),
        P_FP16: (2048, _MC), P_BF16: (2048, _MC), P_FP8: (4096, _MC), P_INT8: (4096, _MC)}),
    # CDNA 4 (gfx950): the MI355X datasheet's figures over 256 CUs at 2.4 GHz; no XF32 (TF32-like) mode
    "CDNA4": Generation("CDNA4", "CU", {
        P_FP64: (128, "vector"), P_FP32: (256, "vector"), P_FP16: (4096, _MC), P_BF16: (4096, _MC),
        P_FP8: (8192, _MC), P_INT8: (8192, _MC)}),
    # Xe-HPC (Intel Data Center GPU Max, Ponte Vecchio): per Xe core 8 vector engines of 512 bits (16 fp32 or fp64
    # lanes, an FMA each: 256 FLOP/clk) and 8 XMX engines of 4,096 bits (4,096 fp16/bf16 FLOP/clk, half that in TF32,
    # twice in int8); no fp8, no fp64 on XMX (Intel's Max Series technical overview, ID 766085; docs/peaks.md)
    "Xe-HPC": Generation("Xe-HPC", "Xe core", {
        P_FP64: (256, _XVE), P_FP32: (256, _XVE), P_TF32: (2048, _XMX), P_FP16: (4096, _XMX), P_BF16: (4096, _XMX),
        P_INT8: (8192, _XMX)}),
}
#: NVIDIA generation by compute capability; sm_72, sm_87 (Jetson), sm_103 (B300) and sm_120 (RTX 50) have rates of
#: their own and are left out rather than guessed, and so is sm_35 (GK110: the Tesla K20/K40's double precision at a
#: third of single, a GeForce GTX 780's at a twenty-fourth).  sm_37 is GK210 alone: the Tesla K80.
NVIDIA_GENERATION = {(3, 7): "Kepler GK210", (7, 0): "Volta", (7, 5): "Turing", (8, 0): "Ampere GA100", (8, 6): "Ampere GA10x",
                     (8, 9): "Ada", (9, 0): "Hopper", (10, 0): "Blackwell"}
#: AMD generation by GFX architecture.
AMD_GENERATION = {"gfx908": "CDNA", "gfx90a": "CDNA2", "gfx942": "CDNA3", "gfx950": "CDNA4"}

_H100 = "NVIDIA H100 Tensor Core GPU datasheet and H100 (Hopper) architecture whitepaper"
_A100 = "NVIDIA A100 Tensor Core GPU datasheet"
_V100 = "NVIDIA Tesla V100 datasheet"
_A100_T = _t(fp64=19.5, fp32=19.5, tf32=156, fp16=312, bf16=312, int8=624)
_H_NVL_T = _t(fp64=60, fp32=60, tf32=417.5, fp16=835.5, bf16=835.5, fp8=1670.5, int8=1670.5)
_MI300_T = _t(fp64=163.4, fp32=163.4, tf32=653.7, fp16=1307.4, bf16=1307.4, fp8=2614.9, int8=2614.9)
_TB = 1e12
_GIB = 1 << 30
#: A variant no device name says (a Max 1550's one stack is named as the whole card): told by counts and memory.
_UNNAMED = re.compile(r"(?!)")
_MAX = "Intel Data Center GPU Max Series specifications (ark.intel.com) and technical overview"

#: The table.  Figures as the documents print them (TFLOP/s, TB/s), dense: sparsity figures halved.  Within a family
#: the variants are asked in this order (H100: NVL, PCIe, then SXM; A100: SXM 80GB, SXM 40GB, 80GB, 40GB).
MODELS: tuple[Model, ...] = (
    Model("H100 NVL", _re(r"\bH100\b"), _re(r"NVL"), "Hopper", _H_NVL_T, 3.9 * _TB,
          "NVIDIA H100 NVL datasheet (sparsity figures halved)", sm_count=132, memory_bytes=94 * _GIB),
    Model("H100 PCIe", _re(r"\bH100\b"), _re(r"PCI"), "Hopper",
          _t(fp64=51.2, fp32=51.2, tf32=378, fp16=756, bf16=756, fp8=1513, int8=1513), 2.0 * _TB, _H100,
          sm_count=114, boost_hz=1755e6, memory_bytes=80 * _GIB),
    Model("H100 SXM", _re(r"\bH100\b"), _re(r"HBM3|SXM"), "Hopper",
          _t(fp64=66.9, fp32=66.9, tf32=494.7, fp16=989.4, bf16=989.4, fp8=1978.9, int8=1978.9), 3.35 * _TB, _H100,
          sm_count=132, boost_hz=1980e6, memory_bytes=80 * _GIB),
    Model("H200 NVL", _re(r"\bH200\b"), _re(r"NVL"), "Hopper", _H_NVL_T, 4.8 * _TB,
          "NVIDIA H200 datasheet, H200 NVL (sparsity figures halved)", sm_count=132, memory_bytes=141 * _GIB),
    Model("H200 SXM", _re(r"\bH200\b"), _re(r"^(?!.*NVL)"), "Hopper",
          _t(fp64=67, fp32=67, tf32=494.5, fp16=989.5, bf16=989.5, fp8=1979, int8=1979), 4.8 * _TB,
          "NVIDIA H200 datasheet, H200 SXM (sparsity figures halved)", sm_count=132, memory_bytes=141 * _GIB),
    # Grace Hopper: the H100 GPU of the superchip, at its own memory (NVIDIA GH200 Grace Hopper Superchip datasheet,
    # sparsity figures halved): 96 GB HBM3 at 4 TB/s ("GH200 480GB", 480 GB being the Grace CPU's LPDDR5X), or
    # 144 GB HBM3e at 4.9 TB/s
    Model("GH200 144GB HBM3e", _re(r"\bGH200\b"), _re(r"144\s*G|HBM3e"), "Hopper",
          _t(fp64=67, fp32=67, tf32=494, fp16=990, bf16=990, fp8=1979, int8=1979), 4.9 * _TB,
          "NVIDIA GH200 Grace Hopper Superchip datasheet, HBM3e (sparsity figures halved)", sm_count=132, memory_bytes=144 * _GIB),
    Model("GH200", _re(r"\bGH200\b"), None, "Hopper",
          _t(fp64=67, fp32=67, tf32=494, fp16=990, bf16=990, fp8=1979, int8=1979), 4.0 * _TB,
          "NVIDIA GH200 Grace Hopper Superchip datasheet, HBM3 (sparsity figures halved)", sm_count=132, memory_bytes=96 * _GIB),
    Model("B200", _re(r"\bB200\b"), None, "Blackwell",
          _t(fp64=37, fp32=75, tf32=1100, fp16=2250, bf16=2250, fp8=4500, int8=4500), 7.7 * _TB,
          "NVIDIA HGX B200 specifications, per GPU (sparsity figures halved)", sm_count=148, memory_bytes=180 * _GIB),
    Model("GB200", _re(r"\bGB200\b"), None, "Blackwell",
          _t(fp64=40, fp32=80, tf32=1250, fp16=2500, bf16=2500, fp8=5000, int8=5000), 8.0 * _TB,
          "NVIDIA GB200 NVL72 specifications, per GPU (sparsity figures halved)"),
    Model("A100 SXM4 80GB", _re(r"\bA100\b"), _re(r"SXM.*80\s*GB|80\s*GB.*SXM"), "Ampere GA100", _A100_T,
          2.039 * _TB, _A100, sm_count=108, boost_hz=1410e6, memory_bytes=80 * _GIB),
    Model("A100 SXM4 40GB", _re(r"\bA100\b"), _re(r"SXM"), "Ampere GA100", _A100_T, 1.555 * _TB, _A100,
          sm_count=108, boost_hz=1410e6, memory_bytes=40 * _GIB),
    Model("A100 PCIe 80GB", _re(r"\bA100\b"), _re(r"80\s*GB"), "Ampere GA100", _A100_T, 1.935 * _TB, _A100,
          sm_count=108, boost_hz=1410e6, memory_bytes=80 * _GIB),
    Model("A100 PCIe 40GB", _re(r"\bA100\b"), _re(r"PCI|40\s*GB"), "Ampere GA100", _A100_T, 1.555 * _TB, _A100,
          sm_count=108, boost_hz=1410e6, memory_bytes=40 * _GIB),
    Model("A10", _re(r"\bA10\b"), None, "Ampere GA10x", _t(fp32=31.2, tf32=62.5, fp16=125, bf16=125, int8=250),
          0.6 * _TB, "NVIDIA A10 Tensor Core GPU datasheet", sm_count=72, boost_hz=1695e6, memory_bytes=24 * _GIB),
    Model("L4", _re(r"\bL4\b"), None, "Ada", _t(fp32=30.3, tf32=60, fp16=121, bf16=121, fp8=242.5, int8=242.5),
          0.3 * _TB, "NVIDIA L4 Tensor Core GPU datasheet (sparsity figures halved)", sm_count=58, boost_hz=2040e6, memory_bytes=24 * _GIB),
    Model("L40S", _re(r"\bL40S\b"), None, "Ada",
          _t(fp32=91.6, tf32=183, fp16=362.05, bf16=362.05, fp8=733, int8=733), 0.864 * _TB,
          "NVIDIA L40S datasheet", sm_count=142, boost_hz=2520e6, memory_bytes=48 * _GIB),
    Model("V100S PCIe", _re(r"\bV100S?\b"), _re(r"V100S"), "Volta", _t(fp64=8.2, fp32=16.4, fp16=130), 1.134 * _TB,
          "NVIDIA V100S datasheet", sm_count=80, boost_hz=1601e6, memory_bytes=32 * _GIB),
    # DGX Station's V100 (``Tesla V100-DGXS-32GB``) is the SXM2 part: its datasheet gives 500 TFLOPS for 4 GPUs
    Model("V100 SXM2", _re(r"\bV100S?\b"), _re(r"SXM2|DGXS"), "Volta", _t(fp64=7.8, fp32=15.7, fp16=125), 0.9 * _TB,
          _V100, sm_count=80, boost_hz=1530e6, memory_bytes=32 * _GIB),
    Model("V100 PCIe", _re(r"\bV100S?\b"), _re(r"PCI"), "Volta", _t(fp64=7.0, fp32=14.0, fp16=112), 0.9 * _TB,
          _V100, sm_count=80, boost_hz=1380e6, memory_bytes=32 * _GIB),
    # two GK210 GPUs on one board, each one CUDA device with 13 SMX and 12 GB (the board's 24 GB, 480 GB/s halved);
    # the board's figures are at its 875 MHz boost clock
    Model("Tesla K80", _re(r"\bK80\b"), None, "Kepler GK210", _t(fp64=2.91, fp32=8.73), 0.48 * _TB,
          "NVIDIA Tesla K80 board specification (BD-07317-001)", sm_count=13, boost_hz=875e6, devices=2,
          memory_bytes=12 * _GIB),
    Model("T4", _re(r"\bT4\b"), None, "Turing", _t(fp32=8.1, fp16=65, int8=130), 0.32 * _TB,
          "NVIDIA T4 Tensor Core GPU datasheet", sm_count=40, boost_hz=1590e6, memory_bytes=16 * _GIB),
    Model("MI355X", _re(r"MI355X"), None, "CDNA4",
          _t(fp64=78.6, fp32=157.3, fp16=2516.6, bf16=2516.6, fp8=5033.2, int8=5033.2), 8.0 * _TB,
          "AMD Instinct MI355X datasheet (sparsity figures halved)", sm_count=256, boost_hz=2400e6),
    Model("MI350X", _re(r"MI350X"), None, "CDNA4",
          _t(fp64=72.1, fp32=144.2, fp16=2306.9, bf16=2306.9, fp8=4613.7, int8=4613.7), 8.0 * _TB,
          "AMD Instinct MI350X datasheet (sparsity figures halved)", sm_count=256, boost_hz=2200e6),
    Model("MI300X", _re(r"MI300X"), None, "CDNA3", _MI300_T, 5.3 * _TB, "AMD Instinct MI300X datasheet",
          sm_count=304, boost_hz=2100e6),
    Model("MI325X", _re(r"MI325X"), None, "CDNA3", _MI300_T, 6.0 * _TB, "AMD Instinct MI325X datasheet",
          sm_count=304, boost_hz=2100e6),
    Model("MI300A", _re(r"MI300A"), None, "CDNA3",
          _t(fp64=122.6, fp32=122.6, tf32=490.3, fp16=980.6, bf16=980.6, fp8=1961.2, int8=1961.2), 5.3 * _TB,
          "AMD Instinct MI300A datasheet", sm_count=228, boost_hz=2100e6),
    Model("MI250X", _re(r"MI250"), _re(r"MI250X(?!/MI250)"), "CDNA2",
          _t(fp64=95.7, fp32=95.7, fp16=383, bf16=383, int8=383), 3.2768 * _TB,
          "AMD Instinct MI250X datasheet (per OAM module)", sm_count=110, boost_hz=1700e6, devices=2),
    Model("MI250", _re(r"MI250"), _re(r"^(?!.*MI250X).*MI250"), "CDNA2",
          _t(fp64=90.5, fp32=90.5, fp16=362.1, bf16=362.1, int8=362.1), 3.2768 * _TB,
          "AMD Instinct MI250 datasheet (per OAM module)", sm_count=104, boost_hz=1700e6, devices=2),
    Model("MI210", _re(r"MI210"), None, "CDNA2", _t(fp64=45.3, fp32=45.3, fp16=181.0, bf16=181.0, int8=181.0),
          1.6384 * _TB, "AMD Instinct MI210 datasheet", sm_count=104, boost_hz=1700e6),
    # Intel Data Center GPU Max 1550: two stacks of 64 Xe cores, each with half the HBM2e.  Level Zero shows each stack
    # as one device (its FLAT hierarchy, the default) or the card as one (COMPOSITE) under the same name: a device's
    # memory tells them apart (a stack holds 64 GiB), else the stack, the lowest figure, is used
    Model("Max 1550 (one stack)", _re(r"\bMax 1550\b"), _UNNAMED, "Xe-HPC",
          _t(fp64=26.2, fp32=26.2, tf32=209.7, fp16=419.4, bf16=419.4, int8=838.9), 1.6384 * _TB,
          _MAX + ": one of the Max 1550's two stacks, half the card's figures", sm_count=64, boost_hz=1600e6,
          memory_bytes=64 * _GIB),
    Model("Max 1550", _re(r"\bMax 1550\b"), _UNNAMED, "Xe-HPC",
          _t(fp64=52.4, fp32=52.4, tf32=419.4, fp16=838.9, bf16=838.9, int8=1677.7), 3.2768 * _TB, _MAX,
          sm_count=128, boost_hz=1600e6, memory_bytes=128 * _GIB),
    Model("Max 1100", _re(r"\bMax 1100\b"), None, "Xe-HPC",
          _t(fp64=22.2, fp32=22.2, tf32=177.8, fp16=355.6, bf16=355.6, int8=711.2), 1.2288 * _TB, _MAX,
          sm_count=56, boost_hz=1550e6, memory_bytes=48 * _GIB),
    Model("MI100", _re(r"MI100"), None, "CDNA", _t(fp64=11.5, fp32=46.1, fp16=184.6, bf16=92.3, int8=184.6),
          1.2288 * _TB, "AMD Instinct MI100 datasheet", sm_count=120, boost_hz=1502e6),
)



def cpu_peak_flops(precision: int) -> float:
    """The most FLOP/s any CPU computes a matmul of ``precision`` at (:data:`CPU_PEAK_FLOPS`; 8-bit: twice it)."""
    return CPU_PEAK_FLOPS * (2 if precision in (P_FP8, P_INT8) else 1)


def generation(gpu_name: str | None, cc: tuple[int, int] | None) -> Generation | None:
    """The GPU's generation: AMD's by GFX architecture (product name first), NVIDIA's by compute capability."""
    if amd.is_device(gpu_name):
        return GENERATIONS.get(AMD_GENERATION.get(amd.arch(gpu_name, _cc_text(cc)) or "", ""))
    if intel.is_device(gpu_name):  # no compute capability: the table's model says the generation, else nothing does
        family = _family(gpu_name)
        return GENERATIONS[family[0].generation] if family else None
    key = _cc_key(cc)
    if key == (7, 5) and nvidia.turing_without_tensor_cores(gpu_name, 7.5):  # sm_75 without Tensor Cores (a T1000)
        return GENERATIONS["Turing TU11x"]
    return GENERATIONS.get(NVIDIA_GENERATION.get(key, "")) if key is not None else None


#: How much less memory than its table entry a device may report and still be that model: the driver and ECC hold
#: some back (a T4's 16 GiB reads 14.76 GiB, 15843721216 bytes, with ECC on; an A10's 24 GiB, 22.5).  A table entry's
#: memory is the datasheet's figure read as GiB -- what the driver reports never exceeds it (an A100 80GB reads
#: 79.2 GiB, an H200's 141 GB 140.4 GiB, a B200's 180 GB 179.1 GiB) -- so a device fits an entry whose memory lies
#: in ``[(1 - MEMORY_HELD_BACK) x memory, memory]``.
MEMORY_HELD_BACK = 0.125

#: The most memory one GPU is taken to hold: 16 TiB, tens of times any tabled model's (:data:`MODELS`: a B200's 180
#: GB; no GPU holds a terabyte).  A figure past it -- a capacity record's "total", a reader's device size -- is no
#: GPU's: a number of some other meaning.  A device fact, so the devices stage holds it (it sat in
#: ``formats/snapshot/capacity``, h37-capfile33 -> h37-hipcode34).
MAX_DEVICE_BYTES = 1 << 44


@dataclass(frozen=True)
class LookAlike:
    """A GPU the table lacks whose compute capability's generation, SM count and memory are a table entry's: its
    datasheet facts, so that a device that names itself not is never inferred to be the entry it only resembles."""

    model: str
    generation: str
    sm_count: int
    memory_bytes: int


#: GPUs the table lacks that share an entry's generation, SMs and memory (their datasheets): an unnamed device with
#: these properties may be either, and stays unknown.
LOOK_ALIKES: tuple[LookAlike, ...] = (
    LookAlike("L40", "Ada", 142, 48 * _GIB),  # the L40S's AD102 with its SMs and 48 GB
    LookAlike("RTX 6000 Ada Generation", "Ada", 142, 48 * _GIB),
    LookAlike("H800 PCIe", "Hopper", 114, 80 * _GIB),  # the H100 PCIe's GH100 with its SMs and 80 GB
    LookAlike("H800 SXM5", "Hopper", 132, 80 * _GIB),  # the H100 SXM's
)


def _fits(tabled: int | None, mem: float) -> bool:
    """A device of ``mem`` bytes may be a GPU of ``tabled`` (None: memory not tabled, so it may)."""
    return tabled is None or (1 - MEMORY_HELD_BACK) * tabled <= mem <= tabled


def inferred_model(cc: tuple[int, int] | None, sm_count: int | None, memory_bytes: int | None) -> str | None:
    """The name of the one NVIDIA table entry a device that names itself not fits -- its compute capability's
    generation, its SM count and its memory (:data:`MEMORY_HELD_BACK`) -- saying it was inferred; None where a
    property is missing, the fitting entry's memory is not tabled, or more than one GPU fits: two entries (an A100
    SXM4 80GB and PCIe 80GB: 8.0, 108 SMs, 80 GiB), or an entry and a GPU the table lacks (:data:`LOOK_ALIKES`: an
    L40 has the L40S's 142 SMs and 48 GB).

    Why: a TF 2.x XPlane of a T4 carries no name stat, only ``compute_cap`` 7.5, 40 SMs and 14.8 GiB (h37-survey65's
    ECBM4040 logdirs); the report showed "GPU:0" and estimated its peaks.  Never a guess between GPUs, and never for
    a device the table lacks: an RTX 2070 SUPER (7.5, 40 SMs, 8 GiB) fits no entry, an RTX 4090 (8.9, 128 SMs) none."""
    key, sms, mem = _cc_key(cc), _positive(sm_count), _positive(memory_bytes)
    gen = NVIDIA_GENERATION.get(key) if key is not None else None
    if gen is None or sms is None or mem is None:
        return None
    fits = [m for m in MODELS if m.generation == gen and m.sm_count == sms and _fits(m.memory_bytes, mem)]
    alike = [a for a in LOOK_ALIKES if a.generation == gen and a.sm_count == sms and _fits(a.memory_bytes, mem)]
    if len(fits) != 1 or alike or fits[0].memory_bytes is None:
        return None
    m = fits[0]
    return (f"NVIDIA {m.model}{INFERRED_FROM}compute capability {key[0]}.{key[1]}, {int(sms)} SMs, "
            f"{mem / _GIB:.1f} GiB)")


#: How :func:`inferred_model` marks a name it inferred: the model, then this and the properties it was read from.
INFERRED_FROM = " (inferred from "


def said_name(name: str | None) -> str | None:
    """A GPU's name as a sentence says it: an inferred name's model alone (``NVIDIA T4``), its reasons left to the GPUs
    table, which says them once.

    Why: a finding names the GPU it judges in each of its sentences ("do not use the Tensor Cores of ...", "fp16 65
    vs fp32 8 TFLOP/s dense on ..."), and the inferred T4's name carried its 60-character reasons into every one of
    them -- three times in one finding of the ECBM4040 T4 sessions (h37-review30)."""
    if not name:
        return name
    cut = name.find(INFERRED_FROM)
    return name[:cut] if cut > 0 and name.endswith(")") else name


def table_model(name: str | None) -> str | None:
    """The table entry a GPU's name says, by its model ("T4" for both "Tesla T4" and "NVIDIA T4 (inferred from ...)");
    None where the name says no entry, or a family without saying which of its variants.

    Why: two captures of one GPU model name it differently -- PyTorch writes the driver's "Tesla T4", a TF 2.x XPlane
    of a T4 gives no name and the report infers "NVIDIA T4" -- and a comparison of GPUs by their strings called one
    model two (``report diff``, h37-surfaces31).  The table entry is the GPU as every number of the report knows it."""
    said = said_name(name)
    family = _family(said)
    named = next((m for m in family if m.variant is None or m.variant.search(said or "")), None)
    return named.model if named is not None else None


def peak_flops(gpu_name: str | None, cc: tuple[int, int] | None, precision: int, *, sm_count: int | None = None,
               clock_hz: float | None = None, memory_bytes: int | None = None) -> Peak | None:
    """Dense peak of one device for ``precision`` (a ``P_*`` code): the table's, else an estimate; None when the GPU
    does not run the dtype or nothing is known enough to say.  ``memory_bytes`` (the device's memory) only helps tell
    variants apart: a device holds no more memory than its variant has."""
    if precision not in DTYPES:
        return None
    sm_count, clock_hz, memory_bytes = _positive(sm_count), _positive(clock_hz), _positive(memory_bytes)
    found = _match(gpu_name, cc, sm_count, clock_hz, None, key=lambda m: m.per_device(precision),
                   memory_bytes=memory_bytes)
    if found is None:
        gen = generation(gpu_name, cc)
        return _estimate(gen, precision, sm_count, clock_hz, "") if gen is not None else None
    m, note = found
    gen = GENERATIONS[m.generation]
    if precision not in m.flops:  # a dtype the GPU runs but its document does not give (fp64 on L40S, T4)
        return _estimate(gen, precision, sm_count or m.sm_count, clock_hz or m.boost_hz,
                         f"; the {m.doc} gives no {PRECISIONS[precision]} figure for the {m.model}")
    return _tabled(m, gen, precision, sm_count, note)


#: The units of a generation's fp32 rate (:data:`GENERATIONS`) that are its vector units, no matrix unit: NVIDIA's
#: CUDA cores, AMD's and Intel's vector ALUs (CDNA 3's fp32 "Matrix" rate is its vector rate too); CDNA 1-2's fp32
#: figure is their Matrix Cores' alone.
_VECTOR_UNITS = frozenset({_CUDA, _UNITS, "vector", _XVE, "Matrix (and vector)"})


def _fp32_generation(gpu_name: str | None, cc: tuple[int, int] | None, sm_count: int | None, clock_hz: float | None,
                     memory_bytes: int | None) -> Generation | None:
    """The generation of the card whose fp32 figure the vector peaks read (the tabled card :func:`_match` finds by its
    fp32 rate, else the name's or compute capability's generation); None where unknown.  One home for
    :func:`vector_peak_flops` (whether that figure is the vector units') and :func:`vector_peak_16` (its 16-bit
    ratio), so the two never read different generations of one card."""
    found = _match(gpu_name, cc, _positive(sm_count), _positive(clock_hz), None, key=lambda m: m.per_device(P_FP32),
                   memory_bytes=_positive(memory_bytes))
    return GENERATIONS[found[0].generation] if found is not None else generation(gpu_name, cc)


def vector_peak_flops(gpu_name: str | None, cc: tuple[int, int] | None, *, sm_count: int | None = None,
                      clock_hz: float | None = None, memory_bytes: int | None = None) -> Peak | None:
    """The dense fp32 peak of the GPU's vector units (:data:`_VECTOR_UNITS`), where its fp32 figure is theirs; None
    where that figure is a matrix unit's or nothing is known.  Why: work no matrix unit runs (a depthwise
    convolution) is bounded by these units, not by the Tensor Core peak of its dtype.  Their 16-bit rates are
    :func:`vector_peak_16`'s where published (1x the fp32 rate on GA10x and Ada to 4x on GA100, never below), so
    where one is not this figure is a floor of it (``metrics.flops`` reads it so)."""
    gen = _fp32_generation(gpu_name, cc, sm_count, clock_hz, memory_bytes)
    if gen is None or P_FP32 not in gen.rates or gen.rates[P_FP32][1] not in _VECTOR_UNITS:
        return None
    return peak_flops(gpu_name, cc, P_FP32, sm_count=sm_count, clock_hz=clock_hz, memory_bytes=memory_bytes)


#: The vector units' (no matrix unit's) dense 16-bit rates per SM and clock, where the vendor publishes them, as
#: multiples of the generation's fp32 vector rate (:data:`GENERATIONS`): NVIDIA's "Peak FP16/BF16 TFLOPS
#: (non-Tensor)" rows -- Volta (the A100 whitepaper's comparison table, V100 column: FP16 31.4 = 2 x FP32 15.7; no
#: bf16), Turing (Turing whitepaper, Quadro RTX 6000 / RTX 2080 Ti: FP16 2 x FP32; no bf16), GA100 (A100 whitepaper
#: Table 1 and the H100 whitepaper's comparison table: FP16 78 = 4 x 19.5, BF16 39 = 2 x), GA10x (GA102 whitepaper
#: appendix, RTX 3090: FP16 and BF16 35.6 = 1 x FP32), Ada (AD102 whitepaper appendix, RTX 4090: FP16 and BF16
#: 82.6 = 1 x FP32), Hopper (H100 whitepaper: FP16 and BF16 133.8 = 2 x FP32 66.9 on the SXM5).  Not published, so
#: unknown here and never guessed: Blackwell (no non-Tensor 16-bit figure in its datasheets), Kepler (no fp16
#: arithmetic), AMD CDNA 1-4 (the CDNA whitepapers and Instinct datasheets give vector FP64/FP32 and Matrix rates,
#: no vector FP16/BF16 one) and Intel Xe-HPC.
VECTOR_16_BIT: dict[str, dict[int, float]] = {
    "Volta": {P_FP16: 2.0}, "Turing": {P_FP16: 2.0}, "Turing TU11x": {P_FP16: 2.0}, "Ampere GA100": {P_FP16: 4.0, P_BF16: 2.0},
    "Ampere GA10x": {P_FP16: 1.0, P_BF16: 1.0}, "Ada": {P_FP16: 1.0, P_BF16: 1.0}, "Hopper": {P_FP16: 2.0, P_BF16: 2.0},
}


def vector_peak_16(gpu_name: str | None, cc: tuple[int, int] | None, precision: int, *, sm_count: int | None = None,
                   clock_hz: float | None = None, memory_bytes: int | None = None) -> Peak | None:
    """The dense fp16 or bf16 peak of the GPU's vector units: its fp32 vector peak (:func:`vector_peak_flops`) times
    the published ratio of its generation (:data:`VECTOR_16_BIT`); None where either is unknown.  Why: a 16-bit
    depthwise convolution runs on these units, and its roofline row had no roof at all where the bandwidth's was
    above the fp32 figure -- only a floor of the 16-bit rate (h37-flops68's *Left*)."""
    fp32 = vector_peak_flops(gpu_name, cc, sm_count=sm_count, clock_hz=clock_hz, memory_bytes=memory_bytes)
    gen = _fp32_generation(gpu_name, cc, sm_count, clock_hz, memory_bytes)
    ratio = VECTOR_16_BIT.get(gen.name, {}).get(precision) if gen is not None else None
    if fp32 is None or ratio is None:
        return None
    dtype = PRECISIONS[precision].upper()
    return Peak(fp32.value * ratio, f"{fp32.source}; x {ratio:g} for {dtype} on the same units ({gen.name}: the "
                                    f"vendor's whitepaper, non-Tensor {dtype})", fp32.model)


#: Cards whose 16-bit Tensor Core rate with fp32 accumulation (what autocast's matmuls use) is half the rate of the
#: generation's data-center parts (NVIDIA's GA102 and AD102 whitepapers: "FP16 Tensor TFLOPS with FP32 Accumulate"
#: 71 vs 142 on the RTX 3090, 165 vs 330 on the RTX 4090; the Turing whitepaper likewise for the RTX 2080 Ti).
_HALF_RATE_ACCUMULATE = re.compile(r"GeForce|TITAN RTX|\bL40\b(?!S)", re.I)


def sixteen_bit_gain_bound(gpu_name: str | None, cc: tuple[int, int] | None, precision: int) -> float | None:
    """The most a 32-bit kernel can gain by running in ``precision`` (fp16, bf16) on this GPU: the ratio of its dense
    peaks (the table's, else its generation's per-SM rates, halved on the cards that accumulate 16-bit products in
    fp32 at half rate); None where neither is known.  Why: a saving that assumes a larger gain than the ratio of the
    GPU's own peaks says a kernel beats its peak (RTX 3060 told fp32 kernels run 6x faster in 16 bit, where GA10x's
    per-SM rates give 4x and a GeForce card's fp32 accumulation 2x)."""
    to_p, from_p = peak_flops(gpu_name, cc, precision), peak_flops(gpu_name, cc, P_FP32)
    if to_p is not None and from_p is not None and from_p.value > 0:
        return to_p.value / from_p.value
    gen = generation(gpu_name, cc)
    if gen is None or precision not in gen.rates or P_FP32 not in gen.rates:
        return None
    ratio = gen.rates[precision][0] / gen.rates[P_FP32][0]
    return ratio / 2 if _HALF_RATE_ACCUMULATE.search(gpu_name or "") else ratio


def memory_bandwidth(gpu_name: str | None, cc: tuple[int, int] | None, *, measured: float | None = None,
                     sm_count: int | None = None, clock_hz: float | None = None,
                     memory_bytes: int | None = None) -> Peak | None:
    """Peak memory bandwidth of one device, bytes/s: the table's, else ``measured`` (what the trace's device plane
    says), else None.  ``sm_count`` and ``clock_hz`` only help tell variants apart."""
    measured, sm_count, clock_hz = _positive(measured), _positive(sm_count), _positive(clock_hz)
    found = _match(gpu_name, cc, sm_count, clock_hz, measured, key=lambda m: m.bandwidth / m.devices,
                   memory_bytes=_positive(memory_bytes))
    if found is not None:
        m, note = found
        value = m.bandwidth / m.devices
        source = f"{m.doc}: {m.model} {_bytes(m.bandwidth)} peak memory bandwidth{_halved(m)}{note}"
        if measured is not None and abs(measured / value - 1) > BANDWIDTH_MATCH:
            source += f"; the trace reports {_bytes(measured)}"
        return Peak(value, source, m.model)
    if measured is None:
        return None
    named = f"no table entry for {gpu_name!r}" if gpu_name else "the trace names no GPU"
    return Peak(measured, f"from the trace: its device plane reports {_bytes(measured)} (the driver's memory clock x "
                          f"bus width); {named}", None)


def sm_count(gpu_name: str | None, cc: tuple[int, int] | None) -> tuple[int, str] | None:
    """(SMs or CUs of one device, the document it comes from) where the name says the model, or every variant of its
    family has the same count; None otherwise (a count is never guessed between variants)."""
    family = _family(gpu_name)
    named = next((m for m in family if m.variant is not None and m.variant.search(gpu_name or "")), None)
    cands = [named] if named is not None else [m for m in family if m.variant is None] or family
    counts = {m.sm_count for m in cands}
    if len(counts) != 1 or None in counts:
        return None
    return cands[0].sm_count, f"the {cands[0].model}'s {cands[0].doc}"


def unit_name(gpu_name: str | None, cc: tuple[int, int] | None) -> str:
    """What the vendor calls the GPU's compute unit: "CU" on AMD, "Xe core" on a tabled Intel GPU, "SM" otherwise."""
    gen = generation(gpu_name, cc)
    return gen.unit if gen is not None else ("CU" if amd.is_device(gpu_name) else "SM")


# --- matching a name to the table ---------------------------------------------------------------------------------


def _match(name: str | None, cc: tuple[int, int] | None, sm_count: int | None, clock_hz: float | None,
           measured: float | None, key: Callable[[Model], float],
           memory_bytes: float | None = None) -> tuple[Model, str] | None:
    """The table entry of a device and a note on how it was chosen ("" when its name says it), or None."""
    family = _family(name)
    if family:
        named = next((m for m in family if m.variant is None or m.variant.search(name)), None)
        if named is not None:
            return named, ""
        return _choose(family, sm_count, clock_hz, measured, key, "the name does not say the variant", memory_bytes)
    if amd.is_device(name) and amd.named_generically(name):
        arch = amd.arch(name, _cc_text(cc))
        gen = AMD_GENERATION.get(arch or "")
        same = [m for m in MODELS if sm_count is not None and m.generation == gen and m.sm_count == sm_count]
        if same:
            return _choose(same, None, clock_hz, measured, key,
                           f"the trace names no model, only its architecture, {arch}, and {sm_count} CUs")
    return None


def _family(name: str | None) -> list[Model]:
    """The table's entries whose family the device's name matches (every variant of it), in table order."""
    return [m for m in MODELS if name and m.family.search(name)]


def _choose(cands: list[Model], sm_count: int | None, clock_hz: float | None, measured: float | None,
            key: Callable[[Model], float], why: str, memory_bytes: float | None = None) -> tuple[Model, str]:
    """One of several variants: by memory, SM count, clock, then bandwidth; the lowest ``key`` of those left
    otherwise.  Memory first: a device never holds more memory than its variant has (no part exceeds its whole), so
    a Max 1550 device with 128 GiB is the whole card, never one of its 64 GiB stacks."""
    unit = GENERATIONS[cands[0].generation].unit
    sieves: list[tuple[Callable[[list[Model]], list[Model]], str]] = []
    if memory_bytes is not None:
        sieves.append((lambda cs: [m for m in cs if m.memory_bytes is None or memory_bytes <= m.memory_bytes * 1.02],
                       f"its {memory_bytes / _GIB:,.0f} GiB of memory"))
    if sm_count is not None:
        sieves.append((lambda cs: [m for m in cs if m.sm_count == sm_count], f"its {sm_count} {unit}s"))
    if clock_hz is not None:
        sieves.append((lambda cs: [m for m in cs if _near(m.boost_hz, clock_hz, CLOCK_MATCH)],
                       f"its {clock_hz / 1e6:.0f} MHz clock"))
    if measured is not None:
        sieves.append((lambda cs: _nearest_bandwidth(cs, measured), f"its {_bytes(measured)} bandwidth"))
    told = []
    for sieve, what in sieves:
        kept = sieve(cands)
        if kept and len(kept) < len(cands):
            cands, told = kept, told + [what]
    pick = min(cands, key=key)
    if len(cands) > 1:
        return pick, f"; {why}: of the {', '.join(m.model for m in cands)}, the lowest figure (the {pick.model}'s)"
    if not told:
        return pick, f"; {why}: the {pick.model}"
    return pick, f"; {why}: {' and '.join(told)} {'say' if len(told) > 1 else 'says'} the {pick.model}"


def _nearest_bandwidth(cands: list[Model], measured: float) -> list[Model]:
    """The variants whose bandwidth is the nearest to the trace's, if near enough (A100 80GB: SXM4 2,039 GB/s,
    PCIe 1,935: a trace's 2,039 is within 10% of both)."""
    near = [m for m in cands if _near(m.bandwidth / m.devices, measured, BANDWIDTH_MATCH)]
    best = min((abs(m.bandwidth / m.devices - measured) for m in near), default=None)
    return [m for m in near if abs(m.bandwidth / m.devices - measured) == best]


def _near(tabled: float | None, seen: float, tolerance: float) -> bool:
    return tabled is not None and abs(tabled / seen - 1) <= tolerance


# --- the figures ----------------------------------------------------------------------------------------------------


def _tabled(m: Model, gen: Generation, precision: int, sm_count: int | None, note: str) -> Peak:
    """The table's figure for one device, scaled down when the device is a partition of the model."""
    value = m.per_device(precision)
    dtype = PRECISIONS[precision].upper()
    source = (f"{m.doc}: {m.model} {dtype} {gen.rates[precision][1]} {_ops(m.flops[precision], precision)}, "
              f"dense (no sparsity){_halved(m)}{note}")
    if sm_count is not None and m.sm_count is not None and sm_count < m.sm_count:
        value *= sm_count / m.sm_count
        source += f"; x {sm_count}/{m.sm_count} {gen.unit}s: the device is a partition (MIG, an AMD partition mode)"
    return Peak(value, source, m.model)


def _estimate(gen: Generation, precision: int, units: int | None, clock_hz: float | None, note: str) -> Peak | None:
    """SM (CU) count x clock x the generation's per-SM dense rate; None without both counts, or a dtype it lacks."""
    if precision not in gen.rates or units is None or clock_hz is None:
        return None
    rate, what = gen.rates[precision]
    op = "OP" if precision == P_INT8 else "FLOP"
    return Peak(units * clock_hz * rate,
                f"estimated: {units} {gen.unit}s x {clock_hz / 1e9:.2f} GHz x {rate} {op}/clk/{gen.unit} "
                f"({gen.name} {PRECISIONS[precision]} dense, {what}){note}", None)


def _halved(m: Model) -> str:
    """How a package of several devices is shared out: AMD calls each die a GCD; NVIDIA's K80 board holds two GPUs."""
    if m.devices <= 1:
        return ""
    return f", halved: each of its {m.devices} {'GCDs' if GENERATIONS[m.generation].unit == 'CU' else 'GPUs'} is one device"


def _ops(value: float, precision: int) -> str:
    return f"{value / 1e12:,.1f} {'TOP/s' if precision == P_INT8 else 'TFLOP/s'}"


def _bytes(value: float) -> str:
    return f"{value / 1e9:,.0f} GB/s"


def _positive(v: float | None) -> float | None:
    """A count or rate the caller passed, None unless a finite positive number (a trace's stats can be anything)."""
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 else None


def _cc_key(cc: object) -> tuple[int, int] | None:
    """``(major, minor)`` of a compute capability given as a pair of ints, else None (a malformed one says nothing)."""
    if isinstance(cc, (tuple, list)) and len(cc) == 2 and all(type(v) is int for v in cc):
        return cc[0], cc[1]
    return None


def _cc_text(cc: object) -> str | None:
    key = _cc_key(cc)
    return f"{key[0]}.{key[1]}" if key is not None else None
