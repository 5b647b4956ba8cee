"""Marlin's kernels are mixed-input GEMMs on Tensor Cores: int4 (or int8) weights dequantized in registers and fed,
with the 16-bit activations, to ``mma.sync`` (sm80+; the 2:4 variant to ``mma.sp``).  Survey h37-survey15: vLLM's
GLM-5.2 W4A16 decode on four GH200s (alint77/jupiter-glm52-vllm-worklog, read locally only: no licence) spent 62.7 ms
of rank 0's window in ``marlin_moe_wna16::Marlin<...>``, which main counted as "other" kernels, not matmul -- out of the
kernel-class table, the roofline and every GEMM question.

The names are in the shape the kernels' declarations give them (IST-DASLab/marlin's ``Marlin``; vLLM's
``csrc/quantization/gptq_marlin/kernel.h`` and ``csrc/moe/marlin_moe_wna16/kernel.h``, namespace ``marlin`` /
``marlin_moe_wna16``, template of integer ids and sizes, parameters ``int4 const*`` buffers with ``float const*`` scales
and reduction buffers; ``marlin_24::Marlin_24``), demangled as CUPTI writes them; the integer template values are
illustrative.  Controls: Marlin's own helper kernels (weight repacking, column permutation), which carry ``marlin`` in
a name or namespace and do no matmul.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices.codes import P_BF16, P_FP32

MOE = ("void marlin_moe_wna16::Marlin<5l, 4398046511108l, 5l, 5l, 256, 1, 8, 8, false, 4, 8, false>(int4 const*, "
       "int4 const*, int4*, int4*, int4 const*, float const*, int4 const*, unsigned short const*, int4 const*, "
       "int const*, int const*, int const*, int const*, float const*, int, bool, bool, int, int, int, int, int*, bool, "
       "bool, bool)")
DENSE = ("void marlin::Marlin<5l, 4398046511108l, 5l, 5l, 256, 4, 8, 8, true, 4, -1, false>(int4 const*, int4 const*, "
         "int4*, int4*, int4 const*, float const*, int4 const*, unsigned short const*, int4 const*, int const*, int, "
         "int, int, int, int, int*, bool, bool, bool, int)")
ORIGINAL = "void Marlin<256, 1, 8, 8, 4, 8>(int4 const*, int4 const*, int4*, int4 const*, int, int, int, int*)"
SPARSE = ("void marlin_24::Marlin_24<4, 128, 1, 16, 4, 4, -1>(int4 const*, int4 const*, int4 const*, int4*, "
          "int4 const*, int, int, int, int*)")
BF16 = ("void marlin::Marlin<__nv_bfloat16, 4ul, 256, 1, 16, 4, 4, true, false, 0>(int4 const*, int4 const*, int4*, "
        "int4*, int4 const*, int4 const*, int const*, int, int, int, int, int*, bool)")


@pytest.mark.parametrize("name", [MOE, DENSE, ORIGINAL, SPARSE, BF16])
def test_marlin_kernels_are_tensor_core_gemms(name):
    assert devices.gemm_kernel_one(name)
    assert devices.tensor_core_one(name)


@pytest.mark.parametrize("name", [MOE, DENSE])
def test_their_float_parameters_are_scales_not_fp32_math(name):
    assert devices.precision_one(name) != P_FP32  # 16-bit MMA; the template names no dtype: unknown


def test_a_dtype_in_the_template_is_still_read():
    assert devices.precision_one(BF16) == P_BF16


@pytest.mark.parametrize("name", [
    "void gptq_marlin_repack_kernel<256, 4, false>(unsigned int const*, unsigned int const*, unsigned int*, int, int)",
    "void awq_marlin_repack_kernel<256, 4>(unsigned int const*, unsigned int*, int, int)",
    "void marlin::permute_cols_kernel<4>(int4 const*, int const*, int4*, int, int, int)",
])
def test_marlins_helpers_are_no_gemms(name):
    assert not devices.gemm_kernel_one(name)
    assert not devices.tensor_core_one(name)
