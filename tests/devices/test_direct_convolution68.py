"""cuDNN's grouped direct convolutions are CUDA-core work, not Tensor-Core-eligible GEMMs (h37-flops68; h37-huntn67's
*Left*: "cuDNN's grouped kernels stay GEMM work by their ``conv2d``").

Cause: NVIDIA's GEMM family matched the generic ``conv2d`` of ``cudnn::cnn::conv2d_grouped_direct_kernel``, so the
kernel cuDNN runs depthwise and grouped layers with (and layers whose channels give a GEMM nothing to tile) was
matrix-unit-eligible work: in fp32 part of ``tensor_core_unused``'s "enable mixed precision" time, in 16 bits
"16-bit MatMul/Conv kernels that miss the Tensor Cores", and MFU's matmul/conv kernel time.  The kernel sums each
output's window in registers; its name claims no Tensor Core engine.  Now ``nvidia.direct_convolution_one`` keeps it
(every direction, cuDNN 7's global names and cuDNN 8/9's ``cudnn::cnn::`` ones) out of ``devices.gemm_kernel_one``,
and its class is a reduction by what it computes (as pooling's), not by the ``reduced_divisor`` in its arguments.

The names are real: cuDNN 7 ones from TensorFlow 2.4 Keras profiles (aoberai/chess-engine
``logs/fit/20210616-112936/.../aoberai.kernel_stats.pb``: ``gradient_tape/model/conv2d_6/Conv2D/Conv2DBackpropInput``
and ``conv2d_2/.../Conv2DBackpropFilter``), cuDNN 8's from a TF 2 U-Net profile's kernel stats
(``functional_1/conv2d_1/Conv2D``), cuDNN 9's from an nsys summary (``cudnn_other`` row); the controls are the same
profiles' implicit-GEMM, Winograd-free and SASS GEMM kernels, which stay matmul/conv work.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices, frameworks

#: cuDNN 7 (global), TF 2.4 on an RTX 2060 Max-Q (aoberai/chess-engine), data and weight gradients
CUDNN7_DGRAD = ("void dgrad2d_grouped_direct_kernel<float, float, float, true, 0, 1, (cudnnTensorFormat_t)0>"
                "(cudnnTensorStruct, float const*, cudnnFilterStruct, float const*, cudnnConvolutionStruct, "
                "cudnnTensorStruct, float*, float, float, cudnn::reduced_divisor, cudnn::reduced_divisor, "
                "cudnn::reduced_divisor, cudnn::reduced_divisor, cudnn::reduced_divisor, cudnn::reduced_divisor, "
                "cudnn::reduced_divisor)")
CUDNN7_WGRAD = ("void wgrad2d_grouped_direct_kernel<float, float, float, (cudnnTensorFormat_t)0>(cudnnTensorStruct, "
                "float const*, cudnnTensorStruct, float const*, cudnnConvolutionStruct, cudnnFilterStruct, float*, "
                "float, float, cudnn::reduced_divisor, cudnn::reduced_divisor, cudnn::reduced_divisor, "
                "cudnn::reduced_divisor, cudnn::reduced_divisor, cudnn::reduced_divisor, int)")
#: cuDNN 8, a TF 2 Keras profile on an Ampere GPU (forward)
CUDNN8_FPROP = ("void cudnn::cnn::conv2d_grouped_direct_kernel<float, float, float, float, float, float, true, false, "
                "0, 0, 0>(cudnnTensorStruct, float const*, cudnnFilterStruct, float const*, cudnnConvolutionStruct, "
                "cudnnTensorStruct, float*, float, float, cudnn::reduced_divisor, cudnn::reduced_divisor, "
                "cudnn::reduced_divisor, cudnn::reduced_divisor, cudnn::reduced_divisor, int, float const*, "
                "float const*, cudnnActivationStruct)")
#: cuDNN 9 (an nsys summary), and its 16-bit forward as PyTorch runs a depthwise layer with it
CUDNN9_DGRAD = ("void cudnn::cnn::dgrad2d_grouped_direct_kernel<float, int, float, float, (bool)0, (bool)1, (int)1, "
                "(int)0>(cudnn::cnn::DgradGroupedDirectParams, float const*, float const*, float*)")
CUDNN9_FPROP_BF16 = ("void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, true, false, false, 0, 0, int, "
                     "float, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, __nv_bfloat16>"
                     "(cudnn::cnn::GroupedDirectFpropParams, __nv_bfloat16 const*, __nv_bfloat16 const*, "
                     "__nv_bfloat16*, float, float, float const*, float const*, __nv_bfloat16 const*, "
                     "__nv_bfloat16 const*, cudnnActivationStruct)")
DIRECT = [CUDNN7_DGRAD, CUDNN7_WGRAD, CUDNN8_FPROP, CUDNN9_DGRAD, CUDNN9_FPROP_BF16]

#: the same profiles' GEMM-form convolutions: they stay matmul/conv work
CONTROLS = [
    "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>(int, int, int, float const*, "
    "int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, "
    "float const*, int, int)",
    "void cudnn::cnn::wgrad_alg0_engine<float, 512, 6, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, "
    "float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
    "volta_scudnn_128x64_relu_interior_nn_v1",
    "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, "
    "float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, "
    "int)",
    "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize64x64x64_stage4_warpsize2x2x1_g1_"
    "tensor16x8x16_kernel",
]


@pytest.mark.parametrize("name", DIRECT)
def test_a_grouped_direct_convolution_is_no_gemm(name):
    # main: True for each -- NVIDIA's generic ``conv2d`` (or ``dgrad``/``wgrad``) made it matrix-unit-eligible work
    assert not devices.gemm_kernel_one(name)
    assert not frameworks.gemm_kernel([name])[0]
    assert devices.direct_convolution_one(name)
    assert not devices.tensor_core_one(name)
    # still a library's kernel, whose grid the library sizes
    assert devices.library_kernel_one(name)


@pytest.mark.parametrize("name", DIRECT)
def test_its_class_is_a_reduction_by_its_work(name):
    """What it computes (a weighted sum of each output's window), as pooling's class; main: "matmul/conv"."""
    assert devices.named_work_kind(name) == "reduction"
    assert devices.kernel_class(name, tensor_core=False, tc_eligible=bool(frameworks.gemm_kernel([name])[0]),
                                elementwise=False, collective=False) == "reduction"


@pytest.mark.parametrize("name", CONTROLS)
def test_control_gemm_form_convolutions_stay_matmul_work(name):
    assert devices.gemm_kernel_one(name)
    assert devices.kernel_class(name, tensor_core=devices.tensor_core_one(name), tc_eligible=True, elementwise=False,
                                collective=False) == "matmul/conv"


def test_control_a_tensor_core_direct_name_keeps_its_engine():
    """A name that says its engine runs on the Tensor Cores keeps that reading, whatever else it says."""
    name = "sm80_xmma_fprop_grouped_direct_hmma_f16f16_f16f32_kernel"  # constructed: no capture shows one
    assert devices.tensor_core_one(name)
    assert devices.gemm_kernel_one(name)


def test_depthwise_kernels_are_reductions_too():
    """ATen's and TensorFlow's depthwise kernels left the GEMM family in h37-huntn67 as "other"."""
    for name in ("void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<3, float, int>"
                 "(at::GenericPackedTensorAccessor<float, 4ul, at::DefaultPtrTraits, int>)",
                 "void tensorflow::DepthwiseConv2dGPUKernelNHWC<float, 3, 3, 1>(tensorflow::DepthwiseArgs, "
                 "float const*, float const*, float*, int)"):
        assert devices.named_work_kind(name) == "reduction"
