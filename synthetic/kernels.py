"""Kernel names as real NVIDIA/TensorFlow captures show them, by role and precision.

Names follow cuBLAS/cuDNN/Eigen/NCCL naming (``ampere_fp16_s16816gemm...``,
``sm80_xmma_gemm_f16f16...``, ``volta_sgemm_128x64_nn``, Eigen meta kernels,
``ncclKernel_AllReduce_RING_LL_Sum_float``).  Note that ``sm80_xmma_gemm_f16f16``
and the bf16 kernels do not contain ``half``/``fp16``: the stock tool counts
them as 32-bit (a blind spot the corpus measures).
"""

from __future__ import annotations

from dataclasses import replace

from synthetic.tfcapture import Kernel

_GEMM_DETAILS = "regs:232 static_shared:0 dynamic_shared:73728 grid:16,8,1 block:256,1,1 occ_pct:12.5"
_EW_DETAILS = "regs:16 static_shared:0 dynamic_shared:0 grid:432,1,1 block:256,1,1 occ_pct:100"


def _eigen(op: str, scalar: str) -> str:
    return (
        "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<"
        f"Eigen::TensorMap<Eigen::Tensor<{scalar}, 1, 1, long>, 16, Eigen::MakePointer>, "
        f"Eigen::TensorCwiseBinaryOp<Eigen::internal::{op}<{scalar} const, {scalar} const>, "
        f"Eigen::TensorMap<Eigen::Tensor<{scalar} const, 1, 1, long>, 16, Eigen::MakePointer> const, "
        f"Eigen::TensorMap<Eigen::Tensor<{scalar} const, 1, 1, long>, 16, Eigen::MakePointer> const> const> const, "
        "Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<...>, long)"
    )


GEMM_FP16_TC = Kernel("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", 180, "fp16", True, True, _GEMM_DETAILS)
GEMM_FP16_XMMA = Kernel(
    "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
    150, "fp16", True, True, _GEMM_DETAILS,
)
GEMM_BF16_TC = Kernel(
    "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
    160, "bf16", True, True, _GEMM_DETAILS,
)
GEMM_FP16_VOLTA_TC = Kernel("volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn", 200, "fp16", True, True, _GEMM_DETAILS)
SGEMM_VOLTA = Kernel("volta_sgemm_128x64_nn", 420, "fp32", False, True,
                     "regs:126 static_shared:12544 dynamic_shared:0 grid:32,16,1 block:256,1,1 occ_pct:25")
SGEMM_VOLTA_TN = Kernel("volta_sgemm_64x64_tn", 300, "fp32", False, True,
                        "regs:122 static_shared:8448 dynamic_shared:0 grid:64,16,1 block:64,1,1 occ_pct:25")
# fp16 GEMM without Tensor Cores: what cuBLAS falls back to when dims are not multiples of 8.
HGEMM_FALLBACK = Kernel("ampere_fp16_sgemm_fp16_128x64_nn", 520, "fp16", False, True,
                        "regs:126 static_shared:0 dynamic_shared:24576 grid:32,16,1 block:128,1,1 occ_pct:25")

EW_ADD_HALF = Kernel(_eigen("scalar_sum_op", "Eigen::half"), 14, "fp16", details=_EW_DETAILS)
EW_MUL_HALF = Kernel(_eigen("scalar_product_op", "Eigen::half"), 12, "fp16", details=_EW_DETAILS)
EW_ADD_F32 = Kernel(_eigen("scalar_sum_op", "float"), 14, "fp32", details=_EW_DETAILS)
EW_MUL_F32 = Kernel(_eigen("scalar_product_op", "float"), 12, "fp32", details=_EW_DETAILS)
EW_ADD_BF16 = Kernel(_eigen("scalar_sum_op", "Eigen::bfloat16"), 14, "bf16", details=_EW_DETAILS)
BIAS_RELU_HALF = Kernel("void tensorflow::functor::BiasNHWCKernel<Eigen::half>(int, Eigen::half const*, Eigen::half const*, Eigen::half*, int)",
                        12, "fp16", details=_EW_DETAILS)
ADAM_F32 = Kernel("void tensorflow::functor::ApplyAdamKernel<float>(int, float*, float*, float*, float const*, float const*, float const*, float const*, float const*, float const*, float const*, bool)",
                  16, "fp32", details=_EW_DETAILS)
SOFTMAX_F32 = Kernel("void tensorflow::(anonymous namespace)::GenerateNormalizedProb<float, float, 4>(float const*, float const*, float const*, float*, int, int, bool)",
                     25, "fp32", details=_EW_DETAILS)
# one XLA-fused kernel standing for a chain of element-wise ops (TF's cluster names its kernels fusion_N)
XLA_FUSION = Kernel("fusion_12", 40, "fp16", details=_EW_DETAILS)
NCCL_ALLREDUCE = Kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 250, "fp32",
                        details="regs:96 static_shared:4736 dynamic_shared:0 grid:4,1,1 block:288,1,1 occ_pct:9")


def sized(kernel: Kernel, us: float, shape: str | None = None) -> Kernel:
    """The same kernel with another duration (and optionally a ``shape`` stat)."""
    return replace(kernel, us=us, shape=shape if shape is not None else kernel.shape)
