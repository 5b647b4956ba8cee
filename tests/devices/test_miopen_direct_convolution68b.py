"""MIOpen's direct convolutions run on the vector ALUs, not the Matrix Cores (h37-flops68b; h37-flops68's *Left*:
"MIOpen's ``naive_conv_*`` direct kernels stay GEMM-family").

Cause: AMD's GEMM family matched ``naive_conv`` and ``MIOpen...Conv``/``MIOpenCv``, so MIOpen's reference kernels
(its fallback where no other solver takes a layer) and its OpenCL direct solvers were matrix-unit-eligible work: a
16-bit layer MIOpen fell back to ``naive_conv_ab_nonpacked_fwd_*_ushort_double_ushort`` for was "16-bit MatMul/Conv
kernels that miss the Matrix Cores", and their time MFU's matmul/conv time -- and NVIDIA's ``conv1x1`` fragment read
``MIOpenConv1x1`` as Tensor Core work.  These kernels are loops of multiplies and adds (no MFMA instruction: plain
C++ for the naive ones, OpenCL C for the rest).  Now ``amd.direct_convolution_one`` keeps them out of the GEMM
family; their class is a reduction by what they compute, as cuDNN's grouped direct kernels' (h37-flops68).

The names are MIOpen's as logs and profiles print them: ``naive_conv_ab_nonpacked_fwd_nchw_ushort_double_ushort`` and
its ``ncdhw`` form (a rocprof kernel table of a diffusion model's VAE on a ROCm iGPU, 80% and 17% of its time),
``..._int8_t_int32_t_int8_t`` (MIOpen's driver log, solver ``ConvDirectNaiveConvFwd`` on gfx900),
``..._float_double_float`` (a MIOpen issue thread's hang), the weight-gradient one (tests/job/test_gradient_kernels);
the OpenCL ones are the kernel names MIOpen's ``ConvOclDirect*`` solvers set (``MIOpenConvUni``, ``MIOpenConv1x1``,
``MIOpenCvD3x3_WSR0``, ``MIOpenGroupConvUni``).  The controls are kept captures' MFMA convolutions.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices, frameworks

NAIVE = ["naive_conv_ab_nonpacked_fwd_nchw_ushort_double_ushort", "naive_conv_ab_nonpacked_fwd_ncdhw_ushort_double_ushort",
         "naive_conv_ab_nonpacked_fwd_nchw_int8_t_int32_t_int8_t", "naive_conv_ab_nonpacked_fwd_nchw_float_double_float",
         "naive_conv_ab_nonpacked_wrw_nchw_float_double_float", "naive_conv_fwd_nchw_float_double_float"]
#: ``MIOpenCDFGen`` (``ConvOclDirectFwdGen``'s kernel): main read it as no library's kernel (its name has no ``Conv``
#: for AMD's GEMM pattern), so ``small_grid`` told the program to fix the grid MIOpen sizes (h37-roof68)
OPENCL = ["MIOpenConvUni", "MIOpenConv1x1", "MIOpenCvD3x3_WSR0", "MIOpenGroupConvUni", "MIOpenCDFGen"]
DIRECT = NAIVE + OPENCL

#: MFMA convolutions: CK's grouped implicit GEMM (wild/ddp_mi300x_actckpt's, its name's head) and MIOpen's igemm
CONTROLS = [
    "_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_28GridwiseGemm_xdl",
    "igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt256x64x8_wt64x16x4_ws1x1_wr2x2_ta1x1x8x1_1x8x1x32_tb1x1x2x1_1x8x1x32_me",
]


@pytest.mark.parametrize("name", DIRECT)
def test_a_miopen_direct_convolution_is_no_gemm(name):
    # main: gemm_kernel_one True for each (``naive_conv``, ``MIOpen...Conv``, ``MIOpenCv`` in AMD's GEMM pattern)
    assert not devices.gemm_kernel_one(name)
    assert not frameworks.gemm_kernel([name])[0]
    assert devices.direct_convolution_one(name)
    assert not devices.tensor_core_one(name)  # main: True for MIOpenConv1x1 (NVIDIA's cuDNN ``conv1x1`` fragment)
    assert devices.library_kernel_one(name)  # still MIOpen's, whose grid MIOpen sizes
    assert not devices.own_convolution_one(name)


@pytest.mark.parametrize("name", DIRECT)
def test_its_class_is_a_reduction_by_its_work(name):
    assert devices.kernel_class(name, tensor_core=devices.tensor_core_one(name),
                                tc_eligible=bool(frameworks.gemm_kernel([name])[0]), elementwise=False,
                                collective=False) == "reduction"


@pytest.mark.parametrize("name", CONTROLS)
def test_control_mfma_convolutions_stay_matrix_work(name):
    assert devices.gemm_kernel_one(name) and devices.tensor_core_one(name)
    assert not devices.direct_convolution_one(name)
