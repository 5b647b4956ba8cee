"""Convolution kernels by what their family computes (h37-conv69; h37-flops68's *Left*).

* MIOpen's GCN assembly (``miopenGcnAsmConv1x1U``), binary Winograd (``miopenSp3AsmConv*``, ``sp3AsmConv*``) and FFT
  (``MIOpenConvFFT_*``) solvers run on the vector ALUs (``v_fma``, ``v_dot2``; written before MFMA): never Matrix
  Core work -- base read ``miopenGcnAsmConv1x1U`` as Tensor Core work through cuDNN's ``conv1x1`` fragment.  They stay
  GEMM-form convolution work the MFMA implicit GEMMs could run (a 16-bit one misses the Matrix Cores, as
  wild/mi300x_conv_backward_replay's truth says).
* A Winograd or FFT convolution multiplies less than its op's direct FLOPs (the op's FLOPs, and MFU's): its units'
  peak bounds that count's rate from below only.  Base dropped such a row as "would run above the GPU's peak: their
  kernels are not all attributed to them" -- a false cause, the kernel is the op's own.

Truth by construction: ``synthetic.torchtrace.write_winograd_conv``, one fp32 3x3 conv a step on an A100 run by
cuDNN's fused Winograd kernel at a direct-FLOP rate of 22.8 TFLOP/s (the CUDA cores' fp32 peak: 19.5; an
F(2x2, 3x3) tile's 2.25x fewer multiplies allow 43.9).  The control: the same rate on an implicit-GEMM kernel,
which multiplies every direct FLOP, is still left out as above the peak (physics).
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace as t
from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

MIOPEN_VALU = ["miopenGcnAsmConv1x1U", "miopenGcnAsmConv1x1WrW", "miopenSp3AsmConv3x3F",
               "miopenSp3AsmConv_v30_3_1_gfx9_fp16_dot2_edc_f3x2_stride1", "sp3AsmConvRxSU", "MIOpenConvFFT_fwd_in"]


@pytest.mark.parametrize("name", MIOPEN_VALU)
def test_miopen_vector_alu_convolutions_are_no_matrix_core_work(name):
    assert not devices.tensor_core_one(name)  # base: True for the two GcnAsmConv1x1 (cuDNN's ``conv1x1`` fragment)
    assert frameworks.gemm_kernel([name])[0]  # GEMM-form convolution work: 16-bit, it misses the Matrix Cores
    assert devices.amd.vector_alu_convolution_one(name)


@pytest.mark.parametrize("name, fewer", [
    ("miopenSp3AsmConv_v30_3_1_gfx9_fp16_dot2_edc_f2x3_stride1", True), ("MIOpenConvFFT_cgemm", True),
    ("cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", True),
    ("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::"
     "WinogradDataParams<float, float>)", True),
    ("void fft2d_r2c_32x32<float, false, 5u, true>(float2*, float const*, int, int, int, int, int, int, int, int, "
     "int, cudnn::reduced_divisor, bool, int2, int, int)", True),
    # the direct and implicit-GEMM families multiply every direct FLOP
    ("miopenGcnAsmConv1x1U", False), ("ampere_scudnn_128x64_relu_xregs_large_nn_v1", False),
    ("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_"
     "tensor16x8x8_execute_kernel__5x_cudnn", False),
    ("igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64_gkgs",
     False),
])
def test_fewer_multiplies_by_family(name, fewer):
    assert devices.fewer_multiplies_one(name) is fewer


def test_a_winograd_row_above_the_units_peak_is_kept_without_a_compute_roof(tmp_path):
    path = tmp_path / "wg.pt.trace.json"
    truth = t.write_winograd_conv(str(path))
    f = host_metrics(read_trace(str(path))).flops
    assert f.trace_flops_per_step == pytest.approx(truth["flops"])  # the op's direct FLOPs stay MFU's
    (row,) = f.top  # base: left out, "their kernels are not all attributed to them"
    assert row.tflops_per_s == pytest.approx(truth["flops"] / (truth["us"] / 1e6) / 1e12)
    assert row.attainable_tflops_per_s is None and row.bound is None  # the bytes' roof (855) is above 19.5
    assert "not all attributed" not in (f.note or "")
    # the least time is the bytes' alone: the direct FLOPs at 19.5 TFLOP/s (1.52 ms) would exceed the kernel's 1.3
    assert f.floor_ms_per_step == pytest.approx(truth["bytes"] / 1.555e12 * 1e3)


def test_control_an_implicit_gemm_above_the_peak_is_still_left_out(tmp_path):
    path = tmp_path / "ig.pt.trace.json"
    t.write_winograd_conv(str(path), kernel="ampere_scudnn_128x64_relu_xregs_large_nn_v1")
    f = host_metrics(read_trace(str(path))).flops
    assert not f.top and "above the GPU's peak" in f.note


def test_a_convolution_with_a_channel_sum_stays_mfu_work_whatever_kernel_ran_it(tmp_path):
    """The split is by the op's shapes (``model.trace.FLOP_KINDS``): a 256-channel conv MIOpen ran with its naive
    direct kernel is the matrix units' kind -- in MFU, its row a ``conv`` against the Matrix Core peak -- and no
    vector FLOPs are said (a control: the same on base)."""
    path = tmp_path / "naive.pt.trace.json"
    truth = t.write_winograd_conv(str(path), kernel="naive_conv_ab_nonpacked_fwd_nchw_float_double_float",
                                  us=20000.0, props=t.MI300X)
    f = host_metrics(read_trace(str(path))).flops
    assert f.trace_flops_per_step == pytest.approx(truth["flops"]) and not f.vector_flops_per_step
    (row,) = f.top
    assert row.kind == "conv" and row.attainable_tflops_per_s is not None
