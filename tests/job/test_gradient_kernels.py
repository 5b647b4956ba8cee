"""A capture of kernels alone (no op events) still shows training by what its kernels compute (the h36 survey's miss
9): ``wild/mi210_gpu_only`` -- one bf16 ResNet training iteration on an MI210, runtime calls and kernels only -- was
"GPU work of an unknown kind" though its kernels are batch-norm backward and MIOpen weight-gradient convolutions.

The names below are real kernels (``tests/fixtures/wild``, the shared H100 sets, cuDNN's, MIOpen's and TensorFlow's
naming); the
negatives are the data-gradient kernels a transposed convolution's forward runs too, and forward kernels."""

from __future__ import annotations

from functools import cache

import pytest

from tb_gpu_advisor import devices
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

GRADIENTS = [
    "void at::native::batch_norm_backward_kernel<c10::BFloat16, c10::BFloat16, float, int>(at::GenericPackedTensorAccessor)",
    "void at::native::(anonymous namespace)::max_pool_backward_nchw<c10::BFloat16, float>(c10::BFloat16 const*)",
    "igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2_ta1x4x1x4_1x4x1x64_tb1x4x1x2_1x4x1x64_gkgs",
    "naive_conv_ab_nonpacked_wrw_nchw_float_double_float",
    "sm80_xmma_wgrad_implicit_gemm_indexed_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4",
    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float)",
    "triton_per_fused_native_layer_norm_backward_0",
    "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128>>(Flash_bwd_params)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float>(float*, float const*)",
    # TensorFlow's own gradient kernels, named for their ``...Grad`` op: the first from VerticalResearchGroup/casio's
    # NeRF training export (``nerf/output-file.sqlite``, TF 1.15 on an A100; survey h37-survey12)
    "tensorflow::functor::ReluGradHalfKernelVector(const Eigen::half *, const Eigen::half *, Eigen::half *, int)",
    "void tensorflow::BiasGradNHWC_SharedAtomics<float>(int, const float *, float *, int, int)",
]
NOT_GRADIENTS = [
    "sm80_xmma_dgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc",  # also ConvTranspose's forward
    "igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x128x32_wt16x64x4_ws1x1_wr1x1_ta1x4x1x1_1x8x1x32_mh_gkgs",  # idem, MIOpen
    "igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x128x32_wt16x64x4_ws1x1_wr1x1_ta1x4x1x1_1x8x1x32_gkgs",
    "void at::native::batch_norm_transform_input_kernel<c10::BFloat16, c10::BFloat16, float, true, int>(...)",
    "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1",
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)",
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn",
    # the same export's forward kernels, TensorFlow's namespace without a gradient op
    "void tensorflow::BiasNHWCKernel<Eigen::half>(int, const T1 *, const T1 *, T1 *, int)",
    "void tensorflow::functor::ColumnReduceKernel<const Eigen::half *, Eigen::half *, cub::Sum>(T1, T2, int, int, T3)",
]


@pytest.mark.parametrize("name", GRADIENTS)
def test_a_gradient_kernel_is_known_by_its_name(name):
    assert devices.gradient_kernel_one(name)


@pytest.mark.parametrize("name", NOT_GRADIENTS)
def test_forward_and_data_gradient_kernels_are_no_evidence_of_training(name):
    assert not devices.gradient_kernel_one(name)


@cache
def _job(run: str) -> dict:
    s = next(s for s in wild_sessions() if s.run == run)
    return session_report(s).to_dict()["hosts"][0]["job"]


def test_a_kernels_only_training_capture_is_training():
    job = _job("mi210_gpu_only")
    assert job["kind"] == "training", job
    assert "batch_norm_backward_kernel" in job["kind_evidence"] and "igemm_wrw" in job["kind_evidence"]


@pytest.mark.parametrize("run", ["compiled_mi300x_attn", "nsfw_vit_h100", "sglang_b300_decode"])
def test_forward_passes_stay_what_they_are(run):
    assert _job(run)["kind"] in ("inference", "serving")
