"""A kernel is a matmul/convolution by what its name says it computes, never by its library's prefix (issue #37,
h37-kernames).

* MIOpen ships batch norm, pooling, activations and tensor ops beside its convolutions: ``devices.amd._GEMM`` took
  any ``MIOpen`` name for a convolution, so ``wild/cold_mi300x_norm`` (10 normalization layers, no matmul) listed
  "6 matmul/conv kernels" -- its ``MIOpenBatchNorm*`` kernels -- in its kernel classes, its Matrix Core columns and
  the MFU card.
* TensorRT-LLM's trtllm-gen GEMMs are named ``bmm_<out>_<A><B>_<acc>_t<tile>_..._m<mma>_..._sm100f``: no ``gemm`` in
  them, so ``wild/sglang_b300_decode``'s MoE GEMMs (3.38 of its 4.77 ms of GEMM time an engine step, SURVEY
  h37-mfugraph) were "other" kernels off the Tensor Cores.  Their first type is the *output*: an fp8 GEMM writing bf16
  (``bmm_Bfloat16_E4m3E4m3_Fp32_...``) has fp8 inputs.

Controls: MIOpen's and Composable Kernel's convolutions and GEMMs of the kept AMD captures, cuDNN's and cuBLAS's
names, and a name that only carries ``bmm``.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices.codes import P_BF16, P_FP8
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"

#: cold_mi300x_norm's MIOpen kernels (every one a batch-norm pass)
MIOPEN_NORM = ["MIOpenBatchNormFwdTrainSpatialMeanVariance", "MIOpenBatchNormFwdTrainSpatialFinalMeanVariance",
               "MIOpenBatchNormFwdTrainSpatialNorm", "MIOpenBatchNormFwdTrainSpatial", "MIOpenBatchNormBwdSpatial"]
#: MIOpen's other non-convolution kernels (MIOpen's kernel names: pooling, activation ``Neuron``, LRN, softmax)
MIOPEN_OTHER = ["MIOpenPoolingForwardNaive", "mloPoolingG", "MIOpenNeuronFwd", "MIOpenLRNWithinChannel",
                "SoftmaxForward", "MIOpenBatchNormFwdInferSpatialEst"]
#: convolutions and GEMMs of the kept AMD captures (ddp_mi300x_actckpt, mi210_gpu_only, rocprof_aiter_mi355x,
#: .robustness's CK batched GEMM) and MIOpen's own solvers' kernel names.  MIOpen's direct convolutions
#: (``naive_conv_*``, ``MIOpenConv1x1``, ``MIOpenCvD3x3_WSR0``, ``MIOpenGroupConvUni``) left this list in h37-flops68b:
#: vector-ALU loops, no GEMM (tests/devices/test_miopen_direct_convolution68b.py)
AMD_GEMMS = [
    "igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt64x32x32_wt16x16x16_ws1x1_wr2x1_ta1x4x1x2_1x8x1x32_tb1x4x1x1_1x8x1x32_vs1_gkgs",
    "igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt256x64x8_wt64x16x4_ws1x1_wr2x2_ta1x1x8x1_1x8x1x32_tb1x1x2x1_1x8x1x32_me",
    "_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_28GridwiseGemm_xdl",
    "void ck::kernel_gemm_xdl_cshuffle_v3_multi_d_blockscale_b_preshuffle<ck::GridwiseGemmMultiD_blockscale_xdl>",
    "void ck_tile::kentry<1, ck_tile::BatchedGemmKernel<ck_tile::GemmSpatiallyLocalTilePartitioner<>>>",
    "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1",
    "miopenGcnAsmConv1x1U", "miopenSp3AsmConv3x3F",
]

#: sglang_b300_decode's two trtllm-gen MoE GEMMs (FC1 with its SwiGLU, FC2)
B300_BMM = ["bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s6_et128x8_m128x8x16_c1x1x1_16dp256b_rM_BN_transOut_"
            "schPd2x1x2x3_bN_ldgsts_ldgstsSf_rgTma_clmp_swiGlu_dynB_sm100f",
            "bmm_Bfloat16_Bfloat16Bfloat16_Fp32_t128x8x128u2_s5_et128x8_m128x8x16_c1x1x1_16dp256b_rM_BN_transOut_"
            "schPd2x1x2x3_bN_rgTma_clmp_dynB_sm100f"]
#: trtllm-gen's fp8 GEMMs as SGLang's DeepSeek runs name them: bf16 or fp8 out, fp8 in
FP8_BMM = ["bmm_Bfloat16_E4m3E4m3_Fp32_t128x16x128_s6_et64x16_m64x16x32_c1x1x1_rM_TN_transOut_noShfl_dsFp8_sm100f",
           "bmm_E4m3_E4m3E4m3_Fp32_t128x8x128u2_s8_et64x8_m64x8x32_cga1x1x1_16dp256b_TN_transOut_noShflA_dsFp8_schedS_"
           "bN_ldgsts_clmp_dynBatch_sm100a"]
NVIDIA_CONTROLS = [  # (name, gemm, tensor core): cuDNN's batch norm is no GEMM, its convolutions and cuBLAS's are
    ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, float const*)", False, False),
    ("sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1", True,
     True),
    ("nvjet_sm103_tst_32x64_64x16_4x1_v_bz_splitK_TNN", True, True),
    ("ampere_sgemm_128x64_nn", True, False),
    ("triton_tem_fused_bmm_0", False, False),  # carries bmm, but is no trtllm-gen name: unchanged
]


@pytest.mark.parametrize("name", MIOPEN_NORM + MIOPEN_OTHER)
def test_miopens_normalization_pooling_and_activation_kernels_are_no_matmul(name):
    assert not devices.gemm_kernel_one(name)
    assert not devices.tensor_core_one(name)


@pytest.mark.parametrize("name", AMD_GEMMS)
def test_amd_convolutions_and_gemms_stay_matmul_control(name):
    assert devices.gemm_kernel_one(name)


def test_the_norm_capture_runs_no_matmul():
    (h,) = run_report(WILD, "cold_mi300x_norm").hosts
    assert "matmul/conv" not in {c["class"] for c in h.kernel_classes}  # main: 6 launches a step, 26 us
    cols = h.kernels.columns
    rows = [r for r in h.kernels.rows if r[0].startswith("MIOpen")]
    assert rows and not any(r[cols.index("matrix core eligible")] for r in rows)
    (mfu,) = [c for c in h.headline if c.id == "mfu"]
    assert "no matmul" in mfu.meaning  # main: "6 matmul/conv kernels ran per step and GPU (26 us) but no op ..."


@pytest.mark.parametrize("name", B300_BMM + FP8_BMM)
def test_trtllm_gen_batched_gemms_are_tensor_core_gemms(name):
    assert devices.gemm_kernel_one(name)
    assert devices.tensor_core_one(name)


def test_a_trtllm_gen_gemms_input_type_is_its_second_field():
    assert [devices.precision_one(n) for n in FP8_BMM] == [P_FP8, P_FP8]  # main: bf16 for the first (its output)
    assert devices.precision_one(B300_BMM[0]) == P_BF16


@pytest.mark.parametrize("name, gemm, tc", NVIDIA_CONTROLS)
def test_nvidia_names_keep_their_class_control(name, gemm, tc):
    assert devices.gemm_kernel_one(name) is gemm
    assert devices.tensor_core_one(name) is tc


def test_the_b300_moe_gemms_count_as_tensor_core_matmuls():
    (h,) = run_report(WILD, "sglang_b300_decode").hosts
    cols = h.kernels.columns
    bmm = [r for r in h.kernels.rows if r[0].startswith("bmm_")]
    assert len(bmm) == 2 and all(r[cols.index("tensor core")] and r[cols.index("TC eligible")] for r in bmm)
    (mm,) = [c for c in h.kernel_classes if c["class"] == "matmul/conv"]
    bmm_us = sum(r[cols.index("total us")] for r in bmm)
    # every bmm launch is in the class (main: 193 launches, 1.40 ms a step; the bmm kernels' 3.38 ms left out)
    assert mm["launches_per_step"] == 289 and mm["us_per_step"] > bmm_us > 3000
