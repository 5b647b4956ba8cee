"""Attention's helper kernels are no matmul, and trtllm-gen's narrow inputs are its precision (issue #37, h37-attnkern).

* A fused-attention library's backward launches helpers around its dQ/dK/dV kernel: FlashAttention's
  ``flash_bwd_dot_do_o_kernel`` (the row-wise dot of dO and O), ``flash_bwd_clear_dkvaccum_kernel``,
  ``flash_bwd_convert_dq_kernel`` / ``_dkv_kernel`` (casts of the fp32 accumulators), FlashAttention 3's
  ``FlashAttnBwdPreprocess`` / ``FlashAttnBwdPostprocessConvertdQ``, Composable Kernel's ``FmhaBwdOGradDotOKernel`` and
  ``FmhaBwdConvertQGradKernel``.  They carry their family's prefix (``flash_bwd``, ``fmha``), which made them Tensor
  Core / Matrix Core matmuls on both vendors: ``wild/jax_mi355x`` (Transformer Engine's CK attention on an MI355X)
  counted 14 matmul/conv launches a step, 4 of them these helpers.
* trtllm-gen names its GEMMs ``bmm_<out>_<A><B>_<acc>_...`` and its attention ``fmhaSm100*Kernel_Q<type>...O<type>``:
  4-bit inputs (``MxE2m1``, ``E2m1``) had no precision code, so the generic words read the output's type (bf16) --
  ``wild/vllm_b200_tp8``'s MXFP4 MoE GEMM writing bf16, and its fp8 attention writing bf16 (``QkvE4m3OBfloat16``).

Controls: the main attention kernels (FlashAttention's ``flash_fwd_kernel`` and ``flash_bwd_dq_dk_dv_loop_...``, CK's
``FmhaFwdKernel`` and ``FmhaBwdDQDKDVKernel``, trtllm-gen's and cuDNN's fmha), cuBLAS/cuDNN names, and a trtllm-gen
GEMM of bf16 inputs keep their class and precision.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices.codes import P_BF16, P_FP8
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"

#: FlashAttention 2's backward helpers as PyTorch's SDPA (``pytorch_flash::``) and the flash-attn package
#: (``flash::``) launch them (their ``flash_bwd_launch_template.h``); FlashAttention 3's pre/postprocess kernels.
FLASH_HELPERS = [
    "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, "
    "2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> "
    ">>(pytorch_flash::Flash_bwd_params)",
    "void flash::flash_bwd_convert_dq_kernel<flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 4, false, false, "
    "cutlass::half_t, flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::half_t> >>(flash::Flash_bwd_params, int)",
    "void flash::flash_bwd_convert_dkv_kernel<flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 4, false, false, "
    "cutlass::half_t, flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::half_t> >>(flash::Flash_bwd_params)",
    "void flash::flash_bwd_clear_dkvaccum_kernel<flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 4, false, "
    "false, cutlass::half_t, flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::half_t> >>(flash::Flash_bwd_params)",
    "void cutlass::device_kernel<flash::FlashAttnBwdPreprocess<cute::tuple<cute::C<64>, cute::C<128> >, "
    "cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false> >(flash::FlashAttnBwdPreprocess::Params)",
    "void cutlass::device_kernel<flash::FlashAttnBwdPostprocessConvertdQ<cute::tuple<cute::C<64>, cute::C<128> >, "
    "cutlass::bfloat16_t, float, cutlass::arch::Sm90, 256, cute::TiledMMA<cute::MMA_Atom<cute::SM90_64x128x16_F32BF16"
    "BF16_SS<GMMA::Major::K, GMMA::Major::MN> > >, false, true, false> >(Params)",
]
#: The main attention kernels and library GEMMs: (name, gemm, tensor core), unchanged.
CONTROLS = [
    ("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
     "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, "
     "false, false, true, true, false>(pytorch_flash::Flash_fwd_params)", True, True),
    ("void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, "
     "false, false, cutlass::bfloat16_t, flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, false, "
     "true, false, false, true, true, false>(flash::Flash_bwd_params)", True, True),
    ("fmhaSm100fKernel_QkvBfloat16OBfloat16H128PagedKvCausalP64MultiCtasKvCgaVarSeqQ8Kv128StaticSwapsAbForGen", True,
     True),
    ("fmha_cutlassB_f32_aligned_64x64_k64_dropout_sm80", True, True),
    ("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_1_64x128x128_4x1x1_kernel0_0", True, True),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
     "5x_cublas", True, True),
    ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, float const*)", False, False),
]


def _names(run: str, word: str) -> list[str]:
    (h,) = run_report(WILD, run).hosts
    return sorted({r[0] for r in h.kernels.rows if word in r[0]})


@pytest.mark.parametrize("name", FLASH_HELPERS)
def test_flashattentions_backward_helpers_are_no_matmul(name):
    assert not devices.gemm_kernel_one(name)  # main: True, by the family's flash_bwd / FlashAttention's template
    assert not devices.tensor_core_one(name)


@pytest.mark.parametrize("name, gemm, tc", CONTROLS)
def test_the_attention_kernels_and_library_gemms_keep_their_class_control(name, gemm, tc):
    assert devices.gemm_kernel_one(name) is gemm
    assert devices.tensor_core_one(name) is tc


def test_cks_attention_backward_helpers_on_the_mi355x_are_no_matmul():
    helpers = _names("jax_mi355x", "FmhaBwdOGradDotO") + _names("jax_mi355x", "FmhaBwdConvertQGrad")
    assert len(helpers) == 2
    for name in helpers:  # main: matmul and Matrix Core, by CK's Fmha
        assert not devices.gemm_kernel_one(name) and not devices.tensor_core_one(name)
    for name in _names("jax_mi355x", "FmhaFwdKernel") + _names("jax_mi355x", "FmhaBwdDQDKDVKernel"):  # control
        assert devices.gemm_kernel_one(name) and devices.tensor_core_one(name)


def test_the_mi355x_matmul_class_is_its_matrix_core_kernels_alone():
    (h,) = run_report(WILD, "jax_mi355x").hosts
    cols = h.kernels.columns
    rows = h.kernels.rows
    helpers = [r for r in rows if "FmhaBwdOGradDotO" in r[0] or "FmhaBwdConvertQGrad" in r[0]]
    assert helpers and not any(r[cols.index("matrix core")] or r[cols.index("matrix core eligible")] for r in helpers)
    eligible = [r for r in rows if r[cols.index("matrix core eligible")]]
    (mm,) = [c for c in h.kernel_classes if c["class"] == "matmul/conv"]
    n = h.steps["count"]
    # the class is the eligible kernels' launches and time, a step (main: 14 launches, 4 of them the helpers)
    assert mm["launches_per_step"] * n == sum(r[cols.index("count")] for r in eligible)
    assert mm["kernel_us_per_step"] * n == pytest.approx(sum(r[cols.index("total us")] for r in eligible), rel=1e-6)


#: trtllm-gen names whose inputs are narrower than fp8 or fp8 beside a bf16 output; the last two carry the block-scale
#: sizes (``_bA16_bB16_bC16``) before their tile, as TensorRT-LLM's batchedGemm cubins name them.
TRTLLM_NARROW = [
    "bmm_Bfloat16_E2m1E2m1_Fp32_bA16_bB16_t128x64x512_s3_et128x64_m128x64x64_cga1x1x1_16dp256b_rM_TN_transOut_"
    "schedS_biasM_bN_tma_tmaSf_rgTma_clmp_dynB_sm100f",
    "bmm_E2m1_E2m1E2m1_Fp32_bA16_bB16_bC16_t128x8x512u2_s5_et128x8_m128x8x64_cga1x1x1_16dp256b_rM_TN_transOut_schedS_"
    "biasM_bN_tma_tmaSf_rgTma_clmp_geGlu_dynB_sm100f",
    "fmhaSm100aKernel_QE4m3KvE2m1OE4m3H128PagedKvCausalP32VarSeqQ128Kv128PersistentContext",
]


def test_the_b200s_mxfp4_moe_gemms_and_fp8_attention_read_their_inputs_type():
    (h,) = run_report(WILD, "vllm_b200_tp8").hosts
    cols = h.kernels.columns
    rows = [r for r in h.kernels.rows if r[0].startswith(("bmm_", "fmhaSm100"))]
    # MxE2m1 weights and MxE4m3 activations into an fp8-rate MMA; attention on E4m3 Q, K, V
    assert len(rows) == 4 and all(r[cols.index("precision")] == "fp8" for r in rows)  # main: bf16 for 3 of 4
    for r in rows:
        assert devices.precision_one(r[0]) == P_FP8
        assert r[cols.index("tensor core")] and r[cols.index("TC eligible")]


@pytest.mark.parametrize("name", TRTLLM_NARROW)
def test_trtllm_gens_narrow_inputs_are_its_precision(name):
    assert devices.precision_one(name) == P_FP8  # main: bf16 (the output's) for the first, E4m3 (the output's) ...
    assert devices.tensor_core_one(name) and devices.gemm_kernel_one(name)  # ... and no GEMM for the block-scaled


def test_trtllm_gens_sixteen_bit_kernels_stay_bf16_control():
    (h,) = run_report(WILD, "sglang_b300_decode").hosts
    cols = h.kernels.columns
    rows = [r for r in h.kernels.rows if r[0].startswith(("bmm_", "fmhaSm100"))]
    assert len(rows) == 3 and all(r[cols.index("precision")] == "bf16" for r in rows)
    assert all(devices.precision_one(r[0]) == P_BF16 for r in rows)
