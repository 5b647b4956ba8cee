"""Peaks per GPU model and dtype (issue #20): datasheet figures, dense, each with its source; estimates otherwise.

The table is checked against itself: SM count x boost clock x the generation's per-SM rate must give back every
figure of every model whose SMs and clock are tabled, which catches a sparsity figure (2x), a typo'd digit and a
wrong per-SM rate alike.  Hopper's Tensor Core figures are NVIDIA's at a clock below the maximum boost (1830 MHz of
1980 on the SXM5), so they sit ~8% under the estimate; every other figure within 2%.
"""

from __future__ import annotations

import math

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices import amd, nvidia
from tb_gpu_advisor.devices.codes import (P_BF16, P_FP8, P_FP16, P_FP32, P_FP64, P_INT8, P_OTHER, P_TF32, P_UNKNOWN,
                                          PRECISIONS)
from tb_gpu_advisor.devices.peaks import (AMD_GENERATION, DTYPES, GENERATIONS, MODELS, NVIDIA_GENERATION,
                                          memory_bandwidth, peak_flops)

T = 1e12
TENSOR = (P_TF32, P_FP16, P_BF16, P_FP8, P_INT8)


def _cc(m) -> tuple[int, int] | None:
    """A compute capability of a table entry's generation (what a trace of it would report)."""
    for cc, gen in NVIDIA_GENERATION.items():
        if gen == m.generation:
            return cc
    return {"CDNA": (9, 0), "CDNA2": (9, 0), "CDNA3": (9, 4), "CDNA4": (9, 5)}.get(m.generation)  # Intel: none


# --- the numbers the issue names ------------------------------------------------------------------------------------


def test_h100_sxm_bf16_is_the_dense_989_never_the_sparsity_1979():
    for p in (P_BF16, P_FP16):
        peak = peak_flops("NVIDIA H100 80GB HBM3", (9, 0), p, sm_count=132, clock_hz=1.98e9)
        assert peak.value == pytest.approx(989.4 * T)
        assert peak.model == "H100 SXM"
        assert "dense" in peak.source and "H100" in peak.source and "estimated" not in peak.source


def test_mi300x_fp16_is_1307_4_dense():
    peak = peak_flops("AMD Instinct MI300X", (9, 4), P_FP16)
    assert peak.value == pytest.approx(1307.4 * T)
    assert peak.model == "MI300X" and "AMD Instinct MI300X datasheet" in peak.source


@pytest.mark.parametrize("name,cc,missing", [
    ("Tesla V100-SXM2-16GB", (7, 0), (P_BF16, P_TF32, P_FP8, P_INT8)),
    ("Tesla T4", (7, 5), (P_BF16, P_TF32, P_FP8)),
    ("NVIDIA A100-SXM4-80GB", (8, 0), (P_FP8,)),
    ("NVIDIA A10", (8, 6), (P_FP8,)),
    ("AMD Instinct MI250X", (9, 0), (P_TF32, P_FP8)),
    (None, (7, 0), (P_BF16, P_TF32)),  # unknown Volta: the same answer as the table's
])
def test_a_dtype_the_gpu_does_not_run_has_no_peak(name, cc, missing):
    for p in missing:
        assert peak_flops(name, cc, p, sm_count=80, clock_hz=1.5e9) is None, PRECISIONS[p]


def test_t4_int8_and_hopper_ada_fp8_are_there():
    assert peak_flops("Tesla T4", (7, 5), P_INT8).value == pytest.approx(130 * T)
    assert peak_flops("NVIDIA H100 PCIe", (9, 0), P_FP8).value == pytest.approx(1513 * T)
    assert peak_flops("NVIDIA L4", (8, 9), P_FP8).value == pytest.approx(242.5 * T)


def test_unknown_sm90_gpu_is_estimated_from_sms_and_clock():
    peak = peak_flops("NVIDIA H20", (9, 0), P_BF16, sm_count=100, clock_hz=1.5e9)
    assert peak.value == pytest.approx(100 * 1.5e9 * 4096)
    assert peak.source.startswith("estimated:") and "100 SMs" in peak.source and "1.50 GHz" in peak.source
    assert "Hopper" in peak.source and peak.model is None


def test_no_estimate_without_clock_or_generation():
    assert peak_flops("NVIDIA H20", (9, 0), P_BF16, sm_count=100) is None  # Kineto writes no clock
    assert peak_flops("NVIDIA RTX PRO 6000", (12, 0), P_BF16, sm_count=188, clock_hz=2.6e9) is None  # sm_120
    assert peak_flops(None, None, P_BF16, sm_count=100, clock_hz=1.5e9) is None


def test_malformed_compute_capability_says_nothing():
    for cc in ([9, 0], (9,), ("9", "0"), 9.0):
        peak = peak_flops("NVIDIA H20", cc, P_BF16, sm_count=100, clock_hz=1.5e9)
        assert (peak.value if peak else None) == (100 * 1.5e9 * 4096 if cc == [9, 0] else None)
    assert peak_flops("AMD", ("x", 4), P_FP16, sm_count=304) is None


def test_other_and_unknown_precision_have_no_peak():
    for p in (P_OTHER, P_UNKNOWN, 99):
        assert peak_flops("NVIDIA H100 80GB HBM3", (9, 0), p) is None


def test_hostile_counts_are_ignored_not_multiplied():
    for bad in (float("nan"), float("inf"), -1, 0, True, "132"):
        assert peak_flops("NVIDIA H20", (9, 0), P_BF16, sm_count=bad, clock_hz=1.5e9) is None
        assert peak_flops("NVIDIA H20", (9, 0), P_BF16, sm_count=100, clock_hz=bad) is None


# --- the table --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [m for m in MODELS if m.sm_count and m.boost_hz], ids=lambda m: m.model)
def test_sms_x_clock_x_per_sm_rate_gives_back_the_datasheet(m):
    gen = GENERATIONS[m.generation]
    for p, published in m.flops.items():
        estimate = m.sm_count * m.boost_hz * gen.rates[p][0]
        tolerance = 0.10 if m.generation == "Hopper" and p in TENSOR else 0.02
        assert estimate == pytest.approx(published / m.devices, rel=tolerance), f"{m.model} {PRECISIONS[p]}"


@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.model)
def test_tensor_figures_are_dense_against_the_vector_fp32(m):
    """Entries without a tabled clock too: a Tensor Core figure over the fp32 one is the generation's per-SM ratio
    within 20% (the NVL cards run their Tensor Cores at a lower clock); a sparsity figure would be 2x."""
    gen = GENERATIONS[m.generation]
    for p in set(m.flops) & set(TENSOR):
        ratio = m.flops[p] / m.flops[P_FP32]
        assert ratio == pytest.approx(gen.rates[p][0] / gen.rates[P_FP32][0], rel=0.20), f"{m.model} {PRECISIONS[p]}"


@pytest.mark.parametrize("m", MODELS, ids=lambda m: m.model)
def test_every_entry_names_its_source_and_only_dtypes_its_generation_runs(m):
    assert set(m.flops) <= set(GENERATIONS[m.generation].rates), m.model
    assert m.bandwidth > 0 and m.doc
    for p in DTYPES:
        peak = peak_flops(m.model, _cc(m), p, sm_count=m.sm_count, clock_hz=m.boost_hz)
        if p in m.flops:
            assert peak.source.startswith(m.doc) and m.model in peak.source and "dense" in peak.source
            assert math.isfinite(peak.value) and peak.value > 0
        elif peak is not None:
            assert peak.source.startswith("estimated:") and "gives no" in peak.source
    assert memory_bandwidth(m.model, _cc(m)).source.startswith(m.doc)


def test_dtype_support_agrees_with_the_vendor_modules():
    for cc, gen in NVIDIA_GENERATION.items():
        rates = GENERATIONS[gen].rates
        assert (P_BF16 in rates) == nvidia.has_bf16(cc[0] + cc[1] / 10), gen
        assert (P_TF32 in rates) == nvidia.has_tf32(cc[0] + cc[1] / 10), gen
    for arch, gen in AMD_GENERATION.items():
        assert (P_TF32 in GENERATIONS[gen].rates) == amd.has_tf32(None, {"gfx908": "9.0", "gfx90a": "9.0",
                                                                             "gfx942": "9.4", "gfx950": "9.5"}[arch]) or gen == "CDNA"


# --- names as traces write them -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name,model", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H100 PCIe", "H100 PCIe"), ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA H200", "H200 SXM"), ("NVIDIA H200 NVL", "H200 NVL"), ("NVIDIA B200", "B200"), ("NVIDIA GB200", "GB200"),
    ("NVIDIA GH200 480GB", "GH200"), ("NVIDIA GH200 144G HBM3e", "GH200 144GB HBM3e"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"), ("NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB"),
    ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"), ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"),
    ("Tesla V100-SXM2-16GB", "V100 SXM2"), ("Tesla V100-SXM2-32GB", "V100 SXM2"), ("Tesla V100-DGXS-32GB", "V100 SXM2"),
    ("Tesla V100-PCIE-32GB", "V100 PCIe"), ("Tesla V100S-PCIE-32GB", "V100S PCIe"), ("Tesla T4", "T4"),
    ("NVIDIA L4", "L4"), ("NVIDIA L40S", "L40S"), ("NVIDIA A10", "A10"),
    ("AMD Instinct MI300X", "MI300X"), ("AMD Instinct MI300X VF", "MI300X"), ("AMD Instinct MI325X", "MI325X"),
    ("AMD Instinct MI300A", "MI300A"),
    ("AMD Instinct MI250X", "MI250X"), ("AMD Instinct MI250", "MI250"), ("AMD Instinct MI210", "MI210"),
    ("AMD Instinct MI100", "MI100"),
    # look-alikes that are other GPUs
    ("NVIDIA A10G", None), ("NVIDIA A100X", None), ("NVIDIA L40", None),
    ("NVIDIA H800", None), ("NVIDIA L4000", None), ("Tesla T40", None),
])
def test_names_as_traces_write_them(name, model):
    peak = memory_bandwidth(name, None)
    assert (peak.model if peak else None) == model


def test_ambiguous_h100_takes_sms_then_clock_else_the_lowest():
    plain = peak_flops("NVIDIA H100", (9, 0), P_BF16)
    assert plain.model == "H100 PCIe" and "lowest" in plain.source and "H100 SXM" in plain.source
    assert peak_flops("NVIDIA H100", (9, 0), P_BF16, sm_count=114).model == "H100 PCIe"
    by_clock = peak_flops("NVIDIA H100", (9, 0), P_BF16, sm_count=132, clock_hz=1.98e9)
    assert by_clock.model == "H100 SXM" and "132 SMs" in by_clock.source and "1980 MHz" in by_clock.source


def test_ambiguous_a100_bandwidth_takes_the_trace_s_figure_to_tell():
    assert memory_bandwidth("NVIDIA A100", (8, 0), measured=2.04e12).model == "A100 SXM4 80GB"
    assert memory_bandwidth("NVIDIA A100", (8, 0)).value == pytest.approx(1.555e12)


def test_rocm_mi250x_mi250_name_is_told_by_its_cus():
    assert peak_flops("AMD Instinct MI250X/MI250", (9, 0), P_FP16, sm_count=110).model == "MI250X"
    assert peak_flops("AMD Instinct MI250X/MI250", (9, 0), P_FP16, sm_count=104).model == "MI250"


def test_mi250x_device_is_one_gcd_half_the_module():
    peak = peak_flops("AMD Instinct MI250X", (9, 0), P_FP16, sm_count=110)
    assert peak.value == pytest.approx(383 * T / 2) and "GCD" in peak.source
    assert memory_bandwidth("AMD Instinct MI250X", (9, 0)).value == pytest.approx(3.2768e12 / 2)


def test_a_partition_gets_its_share_of_the_compute():
    cpx = peak_flops("AMD Instinct MI300X", (9, 4), P_BF16, sm_count=38)
    assert cpx.value == pytest.approx(1307.4 * T / 8) and "38/304" in cpx.source
    mig = peak_flops("NVIDIA A100-SXM4-40GB", (8, 0), P_TF32, sm_count=14)
    assert mig.value == pytest.approx(156 * T * 14 / 108)


def test_a_dtype_the_datasheet_omits_is_estimated_and_says_so():
    peak = peak_flops("NVIDIA L40S", (8, 9), P_FP64)
    assert peak.value == pytest.approx(142 * 2.52e9 * 4)
    assert peak.source.startswith("estimated:") and "L40S datasheet gives no fp64" in peak.source


# --- memory bandwidth -----------------------------------------------------------------------------------------------


def test_bandwidth_from_the_table_then_the_trace():
    assert memory_bandwidth("NVIDIA H100 80GB HBM3", (9, 0), measured=3.35232e12).value == pytest.approx(3.35e12)
    assert memory_bandwidth("NVIDIA H200", (9, 0)).value == pytest.approx(4.8e12)
    unknown = memory_bandwidth("NVIDIA RTX 6000 Ada Generation", (8, 9), measured=960e9)
    assert unknown.value == 960e9 and unknown.source.startswith("from the trace") and unknown.model is None
    assert memory_bandwidth("NVIDIA RTX 6000 Ada Generation", (8, 9)) is None
    assert memory_bandwidth(None, None, measured=float("nan")) is None


def test_generic_amd_name_is_identified_by_architecture_and_cus():
    """ROCm's XPlane says ``AMD`` and 2.66 TB/s for an MI300X (datasheet: 5.3): the table wins, the trace's noted."""
    bw = memory_bandwidth("AMD", (9, 4), measured=2.6624e12, sm_count=304, clock_hz=2.1e9)
    assert bw.value == pytest.approx(5.3e12) and bw.model == "MI300X" and "2,662 GB/s" in bw.source
    assert peak_flops("AMD", (9, 4), P_FP8, sm_count=304).value == pytest.approx(2614.9 * T)
    mi250 = peak_flops("AMD Radeon Graphics", (9, 0), P_FP16, sm_count=104)  # the MI250 fixture's names
    assert mi250.value == pytest.approx(181.0 * T) and "gfx90a" in mi250.source
    assert peak_flops("AMD Radeon Graphics", (9, 0), P_FP16, sm_count=60) is None  # no such Instinct, no clock


def test_reexported_from_the_devices_stage():
    assert devices.peak_flops is peak_flops and devices.memory_bandwidth is memory_bandwidth
    assert devices.Peak.__name__ == "Peak"


def test_the_most_memory_a_gpu_holds_is_a_device_fact_above_every_tabled_gpu() -> None:
    """``MAX_DEVICE_BYTES`` (a capacity record's total past it is no GPU's) lives with the GPUs' table it bounds
    (h37-hipcode34: it sat in ``formats/snapshot/capacity``, main has no ``peaks.MAX_DEVICE_BYTES``): every tabled
    model's memory, and every look-alike's, lies below it by more than tenfold, so a real GPU's total is never refused."""
    from tb_gpu_advisor.devices import peaks
    from tb_gpu_advisor.formats.snapshot import capacity

    tabled = [m.memory_bytes for m in peaks.MODELS if m.memory_bytes] + [m.memory_bytes for m in peaks.LOOK_ALIKES]
    assert tabled and max(tabled) * 10 < peaks.MAX_DEVICE_BYTES
    assert "MAX_DEVICE_BYTES" not in vars(capacity) or capacity.MAX_DEVICE_BYTES is peaks.MAX_DEVICE_BYTES
